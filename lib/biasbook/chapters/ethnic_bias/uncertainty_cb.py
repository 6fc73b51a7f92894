"""How sure is a CB score? Bootstrap intervals over template x attribute cells, paired tests
(notebook 02's Table 4 and notebook 03's Table 7).

A CB score is a mean over its (template, attribute) cells, so its interval resamples them
(:func:`cb_intervals`; the causal prior of each list fixed), and two models scored in the same
language on the same cells are compared cell by cell, Holm-corrected over every pair
(:func:`cb_differences`). Whether the paper's Table 4 value lies inside is :func:`with_paper`'s
column; :func:`sensitivity_intervals` gives each word-list condition of Table 7 its interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np
import pandas as pd

from biasbook import reporting, stats
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.chapters.ethnic_bias.tables import base, conditions, paper_table4, sensitivity
from biasbook.chapters.ethnic_bias.uncertainty import UNIT, interval_row
from biasbook.results import UNCERTAINTY


def cb_intervals(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """One row per (group, result) of :func:`.tables.cb_table`: the CB score on the base lists
    with its percentile bootstrap interval over the cells (record schema columns).

    Used in: ethnic-bias/02.
    """
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
    (``holds``: the difference is real at ``alpha`` after the correction).

    Used in: ethnic-bias/02.
    """
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
    frame = pd.DataFrame(rows, columns=["language", "model", "versus", "value", *UNCERTAINTY,
                                        "p_value"])
    frame["p_holm"] = stats.holm(frame["p_value"]) if len(frame) else []
    frame["holds"] = frame["p_holm"] < alpha
    return frame


def against_paper(intervals: pd.DataFrame, paper: pd.Series, comparable: bool) -> pd.Series:
    """Per row: whether the paper's CB lies inside our interval, or why it cannot be asked
    (the paper scored BERT; only the ``paper`` profile scores the same models).

    Used in: ethnic-bias/02.
    """
    reason = "" if comparable else "another model"
    return pd.Series([reporting.paper_verdict(paper.get((r.language, r.group), np.nan), r.ci_low,
                                          r.ci_high, reason=reason)
                      for r in intervals.itertuples()], index=intervals.index)


def with_paper(intervals: pd.DataFrame, comparable: bool) -> pd.DataFrame:
    """:func:`cb_intervals` with the paper's Table 4 value (``paper``) and :func:`against_paper`'s
    verdict (``paper vs ours``).

    Used in: ethnic-bias/02.
    """
    paper = paper_table4().set_index(["language", "group"])["cb"]
    return intervals.assign(
        paper=[paper.get((r.language, r.group), np.nan) for r in intervals.itertuples()],
        **{"paper vs ours": against_paper(intervals, paper, comparable)})


def sensitivity_intervals(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                          n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.sensitivity` for every (group, result), each condition's CB score with its
    percentile interval over that condition's cells (the causal prior of each list fixed).

    Used in: ethnic-bias/03.
    """
    frames = []
    for group, result in results:
        intervals = [interval_row(part.variances["variance"].to_numpy(), value=part.cb, unit=UNIT,
                                  level=level, n_resamples=n_resamples, seed=seed)
                     for _, part in conditions(result)]
        frames.append(pd.concat([sensitivity(result, group), pd.DataFrame(intervals)], axis=1))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
