"""The Bordia & Bowman chapter's own data: defining pairs (Appendix A) and the paper's numbers.

Files: ``data/lm-gender-bias/<corpus>.yml`` (the gender-defining pairs of each training corpus) and
``data/lm-gender-bias/paper_results.yml`` (Tables 1-3 and 5-8), read with :mod:`biasbook.datafiles`.
"""

from __future__ import annotations

from biasbook import datafiles

CHAPTER = "lm-gender-bias"


def defining_pairs(corpus: str, *, as_printed: bool = False) -> list[tuple[str, str]]:
    """The paper's Appendix A (male, female) pairs for ``ptb``, ``wikitext-2``, ``cnn-dailymail``.

    Used in: lm-gender-bias/01, lm-gender-bias/02, book/trust.

    Pairs the appendix prints swapped (``wife``/``husband``) are un-swapped unless ``as_printed``.

    >>> defining_pairs("ptb")[12], defining_pairs("ptb", as_printed=True)[12]
    (('husband', 'wife'), ('wife', 'husband'))
    """
    spec = datafiles.load(CHAPTER, corpus)
    swapped = {tuple(p) for p in spec.get("swapped_in_print", [])}
    pairs = [tuple(p) for p in spec["pairs"]]
    return [p if as_printed or p not in swapped else (p[1], p[0]) for p in pairs]


def paper_sweep(corpus: str) -> dict:
    """The paper's Table 1-3 rows for ``corpus`` as ``{lambda: {column: value}}``; ``"train"``
    is the training-corpus row. Corpora the paper does not report give ``{}``.

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    >>> table = paper_sweep("ptb")
    >>> table["train"]["fixed_mu"], table[0.01]["fixed_mu"], table[0.01]["ppl"]
    (0.83, 0.63, 62.83)
    >>> paper_sweep("un-general-debates")
    {}
    """
    sweep = datafiles.paper_results(CHAPTER)["sweep"]
    return {r[0]: dict(zip(sweep["columns"], r, strict=True)) for r in sweep.get(corpus, [])}


def paper_word_bias(corpus: str) -> dict:
    """The paper's word-level table (Tables 5-8) of ``corpus``: ``columns`` (``"train"``, then
    each lambda), ``male`` and ``female`` (``{word: [score per column]}``).

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    >>> table = paper_word_bias("wikitext-2")
    >>> table["columns"][:2], table["male"]["Boston"][0]
    (['train', 0.0], -0.95)
    """
    return datafiles.paper_results(CHAPTER)["word_bias"][corpus]
