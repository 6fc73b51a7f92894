"""Intervals and tests of persona mismatch rates over the topics prompted (notebook 06); what
is resampled is in :mod:`.uncertainty`'s overview."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import reporting, stats, validate
from biasbook.chapters.region_aware.uncertainty import (
    ALPHA,
    COLUMNS,
    LEVEL,
    MIN_UNITS,
    _check,
    _row,
    holm_family,
)

# --- personas (notebook 06) -----------------------------------------------------------------------

def topic_counts(table: pd.DataFrame, *, numerator: str = "mismatch") -> np.ndarray:
    """Per topic of ``table`` (one model's :func:`.personas.personas` rows of one group) and run:
    counts of shape (topics, runs, 2) holding the numerator (a mismatch, or an F persona for
    ``numerator="female"``) and the readable personas, only for topics with a readable persona in
    some run.

    Used in: region-aware/06.
    """
    validate.choice("numerator", numerator, ("mismatch", "female"))
    readable = (table["persona_gender"].fillna("") != "").astype(float)
    hit = (table["mismatch"].eq(True) if numerator == "mismatch"
           else table["persona_gender"].eq("F")).astype(float) * readable
    frame = table.assign(_hit=hit, _readable=readable)
    wide = frame.pivot_table(index=["region", "topic", "topic_gender"], columns="run",
                             values=["_hit", "_readable"], aggfunc="sum", fill_value=0, sort=False)
    runs = sorted(frame["run"].unique())
    counts = np.stack([wide["_hit"][runs].to_numpy(float),
                       wide["_readable"][runs].to_numpy(float)], axis=-1)
    keep = counts[..., 1].sum(axis=1) > 0
    return counts[keep]


def run_mean_ratio(counts: np.ndarray) -> Callable:
    """``statistic(idx, axis=-1)``: the mean over runs of (numerators / readable personas) of the
    topics at positions ``idx`` of ``counts`` (:func:`topic_counts`); a run without a readable
    persona is skipped, as :func:`.personas.mismatch_summary`'s mean skips NaN.

    Used in: region-aware/06.
    """
    counts = np.asarray(counts, dtype=float)

    def statistic(idx, axis=-1):
        picked = counts[np.asarray(idx, dtype=np.intp)]          # (..., n, runs, 2)
        sums = picked.sum(axis=-3)                               # (..., runs, 2)
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # every run empty: NaN
            return np.nanmean(sums[..., 0] / sums[..., 1], axis=-1)

    return statistic


def ratio_interval(counts: np.ndarray, *, level: float = LEVEL, n_resamples: int = 1999,
                   seed: int = 0) -> stats.Interval | None:
    """:func:`run_mean_ratio` with its percentile interval over the topics (each with all its
    runs); ``None`` below :data:`MIN_UNITS` topics.

    Used in: region-aware/06.
    """
    if len(counts) < MIN_UNITS:
        return None
    return stats.interval(np.arange(len(counts), dtype=float), run_mean_ratio(counts),
                          level=level, method="percentile", n_resamples=n_resamples, seed=seed,
                          unit="topics (all runs of each)", vectorized=True)


def ratio_difference(first: np.ndarray, second: np.ndarray, *, level: float = LEVEL,
                     n_resamples: int = 1999, n_permutations: int = 9999, seed: int = 0
                     ) -> tuple[stats.Interval, float]:
    """The rate of ``first``'s topics minus ``second``'s (:func:`topic_counts` arrays of
    different topics): the interval resamples each group's topics apart
    (:func:`biasbook.stats.interval`, ``paired=False``), the two-sided p re-deals the topics
    between the groups (``scipy.stats.permutation_test``, independent samples).

    Used in: region-aware/06.
    """
    both = np.concatenate([first, second])
    rate = run_mean_ratio(both)

    def diff(a, b, axis=-1):
        return rate(a) - rate(b)

    data = (np.arange(len(first), dtype=float), np.arange(len(first), len(both), dtype=float))
    ci = stats.interval(data, diff, level=level, method="percentile", n_resamples=n_resamples,
                        seed=seed, unit="topics (all runs of each)", vectorized=True,
                        paired=False)
    test = sps.permutation_test(data, diff, permutation_type="independent", vectorized=True,
                                n_resamples=n_permutations, alternative="two-sided",
                                rng=np.random.default_rng(seed))
    return ci, float(test.pvalue)


def persona_intervals(table: pd.DataFrame, summary: pd.DataFrame, *,
                      by: Sequence[str] = ("source", "pairs"), level: float = LEVEL,
                      n_resamples: int = 1999, seed: int = 0) -> pd.DataFrame:
    """Notebook 06: ``summary`` (:func:`.personas.mismatch_summary`) with each mismatch rate's
    interval over its topics, all runs of a topic together (:func:`ratio_interval`). Fig. 5
    prints no numbers, so there is no paper check.

    Used in: region-aware/06.
    """
    keys = [*by, "model", "region"]
    rows = []
    for r in summary.itertuples(index=False):
        mask = np.logical_and.reduce([table[k] == getattr(r, k) for k in keys])
        counts = topic_counts(table[mask])
        if len(counts):
            _check(float(run_mean_ratio(counts)(np.arange(len(counts)))), r.mismatch,
                   f"mismatch of {r.model} in {r.region}")
        ci = ratio_interval(counts, level=level, n_resamples=n_resamples, seed=seed)
        rows.append(_row(ci, r.mismatch))
    return reporting.with_interval_text(pd.concat([summary.reset_index(drop=True),
                                pd.DataFrame(rows, columns=COLUMNS)], axis=1))


def persona_differences(table: pd.DataFrame, *, by: Sequence[str] = ("source", "pairs"),
                        level: float = LEVEL, n_resamples: int = 1999,
                        n_permutations: int = 9999, seed: int = 0, alpha: float = ALPHA
                        ) -> pd.DataFrame:
    """Notebook 06's family, per group of ``by`` and model: every two regions' mismatch rates
    (``comparison="mismatch"``) and the share of F personas for F topics against M topics
    (``comparison="female share"``: does the topic's gender move the persona's?), each side
    with at least :data:`MIN_UNITS` topics with a readable persona; Holm over the family
    (:func:`holm_family`).

    Used in: region-aware/06.
    """
    rows = []
    for group, part in table.groupby([*by, "model"], sort=False):
        labels = dict(zip([*by, "model"], group, strict=True))
        regions = {region: topic_counts(p) for region, p in part.groupby("region", sort=False)}
        tests = [("mismatch", a, b, regions[a], regions[b]) for a, b in combinations(regions, 2)]
        genders = {g: topic_counts(p, numerator="female")
                   for g, p in part.groupby("topic_gender", sort=False)}
        if {"F", "M"} <= set(genders):
            tests.append(("female share", "F topics", "M topics", genders["F"], genders["M"]))
        for comparison, a, b, first, second in tests:
            if min(len(first), len(second)) < MIN_UNITS:
                continue
            ci, p = ratio_difference(first, second, level=level, n_resamples=n_resamples,
                                     n_permutations=n_permutations, seed=seed)
            rows.append({**labels, "comparison": comparison, "group": a, "versus": b,
                         **ci.row(), "p_value": p})
    frame = pd.DataFrame(rows, columns=[*by, "model", "comparison", "group", "versus", *COLUMNS,
                                        "p_value"])
    return reporting.with_interval_text(holm_family(frame, alpha=alpha))
