"""biasbook: the shared library of the bias-metrics book.

Modules, one responsibility each:

- :mod:`biasbook.resources`  registry of every named model, corpus, benchmark and word list
- :mod:`biasbook.models`     load offline GGUF models or any Hugging Face model, with a fingerprint
- :mod:`biasbook.scoring`    sentence log-likelihoods and slot probabilities (the hot path)
- :mod:`biasbook.metrics`    bias metrics as pure functions on arrays
- :mod:`biasbook.profiles`   per-chapter parameters for the ``smoke``, ``book``, ``paper`` profiles
- :mod:`biasbook.results`    record a notebook's numbers with provenance, read them back
- :mod:`biasbook.cli`        ``biasbook run / list / compare``
"""

__version__ = "0.1.0"
