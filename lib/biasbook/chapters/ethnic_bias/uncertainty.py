"""How sure is a CB score? Bootstrap intervals over template x attribute cells, paired tests.

CB averages ``Var_n log P'`` over (template, attribute) cells (Eq. 2 of the paper), so the cells
are the items resampled; the targets (countries) stay fixed, since the variance is taken over
them. A causal model's prior is the mean over the attributes scored; each cell keeps the prior of
the full list, so resampling cells does not re-derive it. Two models scored in the same language
on the same cells are compared cell by cell (:func:`biasbook.stats.paired_difference`), and the
family of comparisons is Holm-corrected.

>>> import numpy as np
>>> from biasbook import stats
>>> cells_a, cells_b = np.array([0.9, 0.7, 1.1, 0.8]), np.array([0.2, 0.3, 0.1, 0.4])
>>> d = stats.paired_difference(cells_a, cells_b, unit="cells")
>>> round(d.value, 3), d.exact, round(d.p_value, 3)  # every one of the 16 swaps enumerated
(0.625, True, 0.125)
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np
import pandas as pd

from biasbook import stats
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.chapters.ethnic_bias.tables import base, paper_table4

UNIT = "template x attribute cells"


def cb_intervals(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """One row per (group, result) of :func:`.tables.cb_table`: the CB score on the base lists
    with its percentile bootstrap interval over the cells (record schema columns)."""
    rows = []
    for group, full in results:
        r = base(full)
        cells = r.variances["variance"].to_numpy()
        ci = stats.interval(cells, np.mean, level=level, method="percentile",
                            n_resamples=n_resamples, seed=seed, unit=UNIT)
        # the estimate as cb_table computes it, bit for bit (a mean of the raveled cells
        # may differ in the last digit)
        rows.append({"language": r.language, "model": r.model, "group": group,
                     **ci.row(), "value": r.cb})
    return pd.DataFrame(rows)


def cb_differences(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                   n_resamples: int = 9999, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of models scored in the same language on the same cells: CB(model) -
    CB(versus) with a paired interval, the permutation p and Holm's p over all the pairs
    (``holds``: the difference is real at ``alpha`` after the correction)."""
    by_language: dict[str, list[CBResult]] = {}
    for _, full in results:
        by_language.setdefault(full.language, []).append(base(full))
    rows = []
    for language, scored in by_language.items():
        for a, b in combinations(scored, 2):
            if (a.templates, a.attributes) != (b.templates, b.attributes):
                raise ValueError(f"{a.model} and {b.model} were scored on different cells in "
                                 f"{language}: compare them on the same templates and attributes")
            d = stats.paired_difference(a.variances["variance"].to_numpy(),
                                        b.variances["variance"].to_numpy(), np.mean,
                                        level=level, method="percentile",
                                        n_resamples=n_resamples, seed=seed, unit=UNIT)
            rows.append({"language": language, "model": a.model, "versus": b.model,
                         **d.interval.row(), "p_value": d.p_value})
    columns = ["language", "model", "versus", "value", "ci_low", "ci_high", "ci_level",
               "ci_unit", "ci_units", "ci_method", "p_value"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["p_holm"] = stats.holm(frame["p_value"]) if len(frame) else []
    frame["holds"] = frame["p_holm"] < alpha
    return frame


def against_paper(intervals: pd.DataFrame, paper: pd.Series, comparable: bool) -> pd.Series:
    """Per row: whether the paper's CB lies inside our interval, or why it cannot be asked
    (the paper scored BERT; only the ``paper`` profile scores the same models)."""
    def verdict(row) -> str:
        theirs = paper.get((row.language, row.group), np.nan)
        if np.isnan(theirs):
            return "no paper value"
        if not comparable:
            return "not comparable: another model"
        return "inside" if row.ci_low <= theirs <= row.ci_high else "outside"
    return pd.Series([verdict(r) for r in intervals.itertuples()], index=intervals.index)


def with_paper(intervals: pd.DataFrame, comparable: bool) -> pd.DataFrame:
    """:func:`cb_intervals` with the paper's Table 4 value (``paper``) and :func:`against_paper`'s
    verdict (``paper vs ours``)."""
    paper = paper_table4().set_index(["language", "group"])["cb"]
    return intervals.assign(
        paper=[paper.get((r.language, r.group), np.nan) for r in intervals.itertuples()],
        **{"paper vs ours": against_paper(intervals, paper, comparable)})
