"""The Bordia & Bowman chapter's own data: defining pairs (Appendix A) and the paper's numbers.

Files: ``data/lm-gender-bias/<corpus>.yml`` (the gender-defining pairs of each training corpus) and
``data/lm-gender-bias/paper_results.yml`` (Tables 1-3 and 5-8), read with :mod:`biasbook.datafiles`.
"""

from __future__ import annotations

from biasbook import datafiles

CHAPTER = "lm-gender-bias"


def defining_pairs(corpus: str, *, as_printed: bool = False) -> list[tuple[str, str]]:
    """The paper's Appendix A (male, female) pairs for ``ptb``, ``wikitext-2``, ``cnn-dailymail``.

    Pairs the appendix prints swapped (``wife``/``husband``) are un-swapped unless ``as_printed``.

    >>> defining_pairs("ptb")[12], defining_pairs("ptb", as_printed=True)[12]
    (('husband', 'wife'), ('wife', 'husband'))
    """
    spec = datafiles.load(CHAPTER, corpus)
    swapped = {tuple(p) for p in spec.get("swapped_in_print", [])}
    pairs = [tuple(p) for p in spec["pairs"]]
    return [p if as_printed or p not in swapped else (p[1], p[0]) for p in pairs]
