"""The chapter's corpora: which text each notebook reads, and which defining set goes with it.

One reader for both notebooks (:func:`read`): the pre-tokenized files (PTB, WikiText-2) through
:func:`biasbook.text.corpora.read_tokens`, the raw-text corpora through their readers in
:mod:`biasbook.text.corpora`. Each file, article or speech is one document. Notebook 01 measures
the co-occurrence bias of a corpus (:func:`measured_documents`); notebook 02 trains a language
model on it (:func:`lm_text`), with ``<eos>`` at the end of every line, as PTB and WikiText are
modelled. Without ``<eos>`` the two readings hold the same tokens.

- ``ptb``: 01 measures the train split; 02 trains on it and evaluates on test.
- ``wikitext-2``: only valid and test are offline; 01 measures both, 02 trains on valid and
  evaluates on test.
- ``cnn-dailymail``: the 100-article sample, measured by 01 only (too small to train on).
- ``un-general-debates``: 01 measures ``un_speeches`` speeches of a seeded permutation; 02 trains
  on its first ``un_train_speeches`` and evaluates on the next ``un_valid_speeches``.

The lowercased UN text uses the (lowercase) CNN/Daily Mail defining set.

>>> corpus("un-general-debates").pairs, corpus("ptb").label
('cnn-dailymail', 'PTB')
>>> corpus("imdb")
Traceback (most recent call last):
...
ValueError: unknown corpus 'imdb'; corpora: ptb, wikitext-2, cnn-dailymail, un-general-debates
"""

from __future__ import annotations

from dataclasses import dataclass

from biasbook import resources
from biasbook.chapters.lm_gender_bias.data import defining_pairs
from biasbook.text import corpora as text
from biasbook.text.cooccurrence import gendered_words


@dataclass(frozen=True)
class Corpus:
    """A corpus of the chapter: its registry resource, defining set and display labels.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """

    name: str
    resource: str  # name in the resource registry (record it with ``rec.data``)
    pairs: str  # the Appendix A defining set it is measured with
    label: str  # short label (notebook 02)
    measured: str  # what notebook 01 measures of it
    files: dict[str, tuple[str, ...]] | None = None  # part -> files, for pre-tokenized corpora


CORPORA = {
    "ptb": Corpus("ptb", "ptb", "ptb", "PTB", "PTB train",
                  {"train": ("ptb.train.txt",), "test": ("ptb.test.txt",)}),
    "wikitext-2": Corpus("wikitext-2", "wikitext-2", "wikitext-2", "WikiText-2",
                         "WikiText-2 valid+test",
                         {"valid": ("valid.txt",), "test": ("test.txt",),
                          "valid+test": ("valid.txt", "test.txt")}),
    "cnn-dailymail": Corpus("cnn-dailymail", "cnn-dailymail-sample", "cnn-dailymail",
                            "CNN/Daily Mail", "CNN/DM 100 articles"),
    "un-general-debates": Corpus("un-general-debates", "un-general-debates", "cnn-dailymail",
                                 "UN General Debates", "UN General Debates"),
}
MEASURED_PART = {"ptb": "train", "wikitext-2": "valid+test"}  # notebook 01's text
LM_PARTS = {"ptb": ("train", "test"), "wikitext-2": ("valid", "test")}  # (training, held-out)


def corpus(name: str) -> Corpus:
    """The :class:`Corpus` called ``name``; an unknown name is an error listing the known ones.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; corpora: {', '.join(CORPORA)}")
    return CORPORA[name]


def gender(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(male words, female words) of the defining set that ``name`` is measured with.

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    >>> male, female = gender("ptb")
    >>> "he" in male and "she" in female
    True
    """
    return gendered_words(defining_pairs(corpus(name).pairs))


def read(name: str, part: str = "train", *, eos: bool = False, speeches: int | None = None,
         seed: int = 0, skip: int = 0) -> list[list[str]]:
    """Documents of one part of a corpus; with ``eos``, ``<eos>`` ends every line (paragraph).

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    ``part`` names a split of the pre-tokenized corpora (``ptb``: ``train``, ``test``;
    ``wikitext-2``: ``valid``, ``test``, ``valid+test``); the CNN/Daily Mail sample has only
    ``train``. For the UN General Debates, ``speeches``, ``seed`` and ``skip`` choose the speeches
    (:func:`biasbook.text.corpora.sample_un_speeches`) and ``part`` is not used.
    """
    spec = corpus(name)
    if spec.files is not None:
        if part not in spec.files:
            raise ValueError(f"{name} has the parts {', '.join(spec.files)}, not {part!r}")
        return [text.read_tokens(resources.path(spec.resource, f), eos=eos)
                for f in spec.files[part]]
    if name == "cnn-dailymail":
        if part != "train":
            raise ValueError(f"the CNN/Daily Mail sample has only the part 'train', not {part!r}")
        return text.cnn_dailymail_articles(eos=eos)
    return list(text.un_debate_speeches(speeches, seed=seed, skip=skip, eos=eos).values())


def measured_documents(name: str, *, max_tokens: int | None = None, un_speeches: int | None = None,
                       un_seed: int = 0) -> list[list[str]]:
    """The text notebook 01 measures: see the table above; the leading ``max_tokens`` tokens.

    Used in: lm-gender-bias/01.
    """
    if name == "un-general-debates":
        docs = read(name, speeches=un_speeches, seed=un_seed)
    else:
        docs = read(name, MEASURED_PART.get(name, "train"))
    return text.take_tokens(docs, max_tokens)  # the smoke profile reads prefixes


def lm_text(name: str, *, train_tokens: int | None = None, valid_tokens: int | None = None,
            un_train_speeches: int | None = None, un_valid_speeches: int | None = None,
            un_seed: int = 0) -> tuple[list[list[str]], list[str]]:
    """(training documents, held-out tokens) of notebook 02, ``<eos>`` at the end of every line.

    Used in: lm-gender-bias/02.

    The held-out UN speeches are the next ``un_valid_speeches`` of the same seeded permutation,
    disjoint from the training speeches. ``train_tokens`` caps the training text (leading
    documents), ``valid_tokens`` the held-out stream (``None``: all).
    """
    if name == "un-general-debates":
        train = read(name, eos=True, speeches=un_train_speeches, seed=un_seed)
        held_docs = read(name, eos=True, speeches=un_valid_speeches, seed=un_seed,
                         skip=un_train_speeches)
    elif name in LM_PARTS:
        train_part, held_part = LM_PARTS[name]
        train, held_docs = read(name, train_part, eos=True), read(name, held_part, eos=True)
    else:
        raise ValueError(f"no language-model text for {name!r}; corpora: "
                         f"{', '.join([*LM_PARTS, 'un-general-debates'])}")
    held = [t for doc in held_docs for t in doc]
    train = text.take_tokens(train, train_tokens)
    return train, held[:valid_tokens] if valid_tokens else held
