"""F(emale)- and M(ale)-aligned datasets of each region (Borah et al. 2024, Sec. 4.1, Table 6).

The paper builds, per region, an F-aligned and an M-aligned dataset from "the 52 pairs of
gender-defined words [...] from Bolukbasi et al. (2016) [...] examples that contain these words"
(Appendix G; ``data/region-aware/gender-pairs.yml``). It does not say what happens to an example
that contains words of both lists, but its Table 6 has ``Total = #Female + #Male`` in every
region, so no example is in both datasets. The rule implemented here (``rule="exclusive"``, the
default) is the literal one that needs no further assumption:

- an example is **F-aligned** if it contains at least one female term and no male term,
- **M-aligned** if it contains at least one male term and no female term,
- an example with terms of both lists is in neither dataset (counted as ``both`` in
  :func:`counts`, so the loss is visible), and one with none is not a gendered example at all.

``rule="majority"`` keeps mixed examples and assigns them to the list with more occurrences (a
tie is in neither dataset). Terms are whole words or phrases (``twin brother`` also matches
``twin-brother``), matched case-insensitively by default (the source list is cased because it was
written for cased word vectors: ``He`` and ``he`` are separate pairs; a capital at the start of a
sentence does not change the word). Two pairs of the source contradict its own "[male, female]"
order (``[wives, husbands]``, ``[ex girlfriend, ex boyfriend]``); they are used as printed, as in
the paper, unless ``corrected=True``.

>>> m = TermMatcher(gender_terms())
>>> m.counts("She met her twin-brother and his wife.")
(2, 2)
>>> align(2, 0, "exclusive"), align(2, 1, "exclusive"), align(2, 1, "majority")
('F', '', 'F')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from biasbook import datafiles, validate

CHAPTER = "region-aware"
RULES = ("exclusive", "majority")
GROUPS = ("F", "M")


def gender_terms(*, corrected: bool = False) -> dict[str, list[str]]:
    """The female (``"F"``) and male (``"M"``) terms of Appendix G, in the source's order.

    Used in: region-aware/01, region-aware/03, region-aware/04, region-aware/05, region-aware/06,
        book/class/region-aware.

    ``corrected`` swaps the two pairs whose order contradicts the list's [male, female] layout.

    >>> terms = gender_terms()
    >>> len(terms["M"]), terms["M"][11], gender_terms(corrected=True)["M"][11]
    (52, 'wives', 'husbands')
    """
    data = datafiles.load(CHAPTER, "gender-pairs")
    swapped = {tuple(p) for p in data["reversed_in_source"]} if corrected else set()
    pairs = [(f, m) if (m, f) in swapped else (m, f) for m, f in data["pairs"]]
    return {"F": [f for _, f in pairs], "M": [m for m, _ in pairs]}


def _pattern(terms: Sequence[str], case_sensitive: bool) -> re.Pattern:
    # Longest first, so that "twin brother" is one match and not also "brother".
    alternatives = sorted({t if case_sensitive else t.lower() for t in terms}, key=len,
                          reverse=True)
    body = "|".join(r"[\s\-]+".join(map(re.escape, t.split())) for t in alternatives)
    return re.compile(rf"\b(?:{body})\b")


@dataclass(frozen=True)
class TermMatcher:
    """Counts the female and male terms of a text (whole words and phrases).

    Used in: region-aware/01, region-aware/03, region-aware/04, region-aware/05, region-aware/06,
        book/class/region-aware.
    """

    terms: Mapping[str, Sequence[str]]
    case_sensitive: bool = False

    def __post_init__(self):
        for group in GROUPS:
            validate.word_list(f"terms[{group!r}]", self.terms[group])
        object.__setattr__(self, "_female", _pattern(self.terms["F"], self.case_sensitive))
        object.__setattr__(self, "_male", _pattern(self.terms["M"], self.case_sensitive))

    def counts(self, text: str) -> tuple[int, int]:
        """(female terms, male terms) in ``text``."""
        if not self.case_sensitive:
            text = text.lower()
        return len(self._female.findall(text)), len(self._male.findall(text))


def align(n_female: int, n_male: int, rule: str = "exclusive") -> str:
    """``"F"``, ``"M"`` or ``""`` (in neither dataset) for an example with these term counts.

    Used in: region-aware/01, region-aware/03, region-aware/04, region-aware/05, region-aware/06,
        book/class/region-aware.
    """
    validate.choice("rule", rule, RULES)
    if rule == "exclusive" and n_female and n_male:
        return ""  # terms of both lists
    return "F" if n_female > n_male else "M" if n_male > n_female else ""


def label_documents(docs: Mapping[str, Sequence[str]], *, rule: str = "exclusive",
                    case_sensitive: bool = False, corrected: bool = False) -> pd.DataFrame:
    """Every document that contains a gender term: ``region``, ``text``, ``n_female``,
    ``n_male`` and ``group`` (``"F"``, ``"M"``, or ``""`` for a mixed example left out).

    Used in: region-aware/01, region-aware/03, region-aware/04, region-aware/05, region-aware/06,
        book/class/region-aware.

    >>> frame = label_documents({"X": ["his book", "her book", "a book", "he and she"]})
    >>> frame[["text", "group"]].to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'text': 'his book', 'group': 'M'}, {'text': 'her book', 'group': 'F'},
     {'text': 'he and she', 'group': ''}]
    """
    validate.choice("rule", rule, RULES)
    matcher = TermMatcher(gender_terms(corrected=corrected), case_sensitive)
    rows = []
    for region, texts in docs.items():
        for text in validate.word_list(f"documents of {region}", texts, allow_empty=True):
            n_female, n_male = matcher.counts(text)
            if n_female or n_male:
                rows.append((region, text, n_female, n_male, align(n_female, n_male, rule)))
    return pd.DataFrame(rows, columns=["region", "text", "n_female", "n_male", "group"])


def aligned(labelled: pd.DataFrame, *, max_docs: int | None = None, seed: int = 0
            ) -> pd.DataFrame:
    """The F- and M-aligned examples of each region, at most ``max_docs`` per region.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.

    A region with more examples keeps a seeded uniform sample (so the F/M ratio is kept in
    expectation), in the original order; ``None`` keeps all of them.
    """
    kept = labelled[labelled["group"].isin(GROUPS)]
    parts = []
    for _, group in kept.groupby("region", sort=False):
        if max_docs is not None and len(group) > max_docs:
            rng = np.random.default_rng(seed)
            group = group.iloc[np.sort(rng.choice(len(group), max_docs, replace=False))]
        parts.append(group)
    if not parts:
        return kept.reset_index(drop=True)
    return pd.concat(parts).reset_index(drop=True)


def counts(labelled: pd.DataFrame, used: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 6 of the paper: per region ``total`` (= ``female`` + ``male``), ``female``,
    ``male``, and ``both`` (mixed examples in neither dataset); with ``used`` (the output of
    :func:`aligned`) also how many examples the topic model gets.

    Used in: region-aware/01, region-aware/03.

    >>> frame = label_documents({"X": ["his book", "her book", "her pen", "he and she"]})
    >>> counts(frame).to_dict("records")
    [{'region': 'X', 'total': 3, 'female': 2, 'male': 1, 'both': 1}]
    """
    groups = labelled["group"].replace("", "both")
    table = (pd.crosstab(labelled["region"], groups)
             .reindex(columns=["F", "M", "both"], fill_value=0)
             .rename(columns={"F": "female", "M": "male"}))
    table.insert(0, "total", table["female"] + table["male"])
    if used is not None:
        table["used"] = used.groupby("region").size().reindex(table.index, fill_value=0)
    order = list(dict.fromkeys(labelled["region"]))
    table = table.reindex(order).reset_index()
    table.columns.name = None
    return table.astype({c: int for c in table.columns if c != "region"})
