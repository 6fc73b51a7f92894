"""biasbook: the shared library of the bias-metrics book.

Three layers; a module imports only from its own layer or the ones above it in this list, and
nothing imports :mod:`biasbook.chapters` (``tests/test_layout.py`` checks it).

**Infrastructure** (one way to do each thing):

- :mod:`biasbook.paths`      the checkout, the offline data mirror, the user cache
- :mod:`biasbook.resources`  registry of every named model, corpus, benchmark and word list
- :mod:`biasbook.datafiles`  the project's own data: ``data/<chapter>/<name>.yml``, papers' numbers
- :mod:`biasbook.store`      atomic writes and content-keyed caches
- :mod:`biasbook.processes`  cached jobs shared among worker processes (one per core)
- :mod:`biasbook.validate`   checks at the point of input (modes, word lists)
- :mod:`biasbook.models`     load offline GGUF models or any Hugging Face model, with a fingerprint
- :mod:`biasbook.scoring`    sentence log-likelihoods and slot probabilities (the hot path)
- :mod:`biasbook.profiles`   per-chapter parameters for ``smoke``, ``book``, ``paper``
- :mod:`biasbook.results`    record a notebook's numbers with provenance, read them back
- :mod:`biasbook.stats`      error bars: bootstrap intervals, paired tests, seed spread, Holm
- :mod:`biasbook.reporting`  a number with its interval as tables print it; the paper's number
- :mod:`biasbook.plotting`   the book's figure style and offline world maps
- :mod:`biasbook.cli`        ``biasbook run / list / compare``
- :mod:`biasbook.book_check` checks of the built HTML (equations MathJax cannot typeset)
- :mod:`biasbook.testing`    tiny random-init models and tokenizers for the tests

**Domain packages** (any chapter may use them):

- :mod:`biasbook.text`        corpus readers, tokenisation, windowed co-occurrence counts
- :mod:`biasbook.embeddings`  static word vectors: loading, training, OOV reports, benchmarks

  - :mod:`~biasbook.embeddings.vectors`     pretrained vectors offline, ``from_arrays``, OOV report
  - :mod:`~biasbook.embeddings.wordsets`    WEAT word sets from ``data/word-sets/*.yml``
  - :mod:`~biasbook.embeddings.benchmarks`  similarity, categorisation, analogy benchmarks
- :mod:`biasbook.training`    LSTM language model, continual training, text classifiers
- :mod:`biasbook.metrics`     bias metrics as pure functions on arrays

  - :mod:`~biasbook.metrics.weat`  WEAT statistic, effect size, permutation p-value, test tables;
    the words a test uses and their associations, for intervals over words
  - :mod:`~biasbook.metrics.ripa`  RIPA per word (pair mean or principal direction)
- :mod:`biasbook.mitigation`  debiasing methods

**Chapters**: :mod:`biasbook.chapters` holds one package per paper, its pipeline and tables.
"""

__version__ = "0.1.0"
