"""How sure is an overall C_w? Bootstrap intervals over descriptors and paired model tests.

HERB's C_w averages, through Eq. 3-9, over the 112 descriptors of Appendix A: they are the
items a different but equally plausible list would replace, so they are what is resampled
(:func:`biasbook.stats.interval`, descriptor columns drawn with replacement before Eq. 2's
normalisation). The regions stay fixed: they are the population the metric is about. Two models
are compared on the same resampled descriptors (:func:`biasbook.stats.paired_difference`): the
permutation test swaps a descriptor's column between the two models, which is exchangeable
under "the two models are equally biased".

>>> from biasbook.chapters.herb.regions import region_tree
>>> table = pd.DataFrame({"name": ["A", "B", "C"], "parent": [-1, -1, -1]})
>>> rng = np.random.default_rng(0)
>>> scores = {"m1": rng.normal(size=(3, 12)), "m2": rng.normal(size=(3, 12))}
>>> ci = overall_intervals(region_tree(table), scores, n_resamples=199)
>>> ci[["model", "ci_units", "ci_unit"]].values.tolist()
[['m1', 12, 'descriptors'], ['m2', 12, 'descriptors']]
>>> bool((ci["ci_low"] <= ci["value"]).all() and (ci["value"] <= ci["ci_high"]).all())
True
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from biasbook import stats, validate
from biasbook.chapters.herb.model_scores import ModelScores
from biasbook.chapters.herb.tables import SCALE, bias_summary
from biasbook.metrics.herb import Mode, RegionTree, hierarchical_bias
from biasbook.results import UNCERTAINTY


def _overall(tree: RegionTree, scores: NDArray, mode: Mode):
    """C_w of the root on the descriptor columns an index array picks (one resample)."""
    return lambda columns: hierarchical_bias(tree, scores[:, columns.astype(int)],
                                             mode=mode).overall


def overall_intervals(tree: RegionTree, scores: Mapping[str, NDArray], *, mode: Mode = "paper",
                      level: float = 0.95, n_resamples: int = 999,
                      seed: int = 0) -> pd.DataFrame:
    """Per model: overall C_w (unscaled) with its bootstrap interval over the descriptors,
    in the record schema (:data:`biasbook.results.UNCERTAINTY`).

    Used in: herb/02, book/trust.
    """
    rows = []
    for name, x in scores.items():
        ci = stats.interval(np.arange(x.shape[1]), _overall(tree, x, mode), level=level,
                            method="percentile", n_resamples=n_resamples, seed=seed,
                            unit="descriptors", vectorized=False)
        # the estimate on the array itself: a copy made by indexing can differ in the last bit
        rows.append({"model": name, **ci.row(),
                     "value": hierarchical_bias(tree, x, mode=mode).overall})
    return pd.DataFrame(rows)


def model_differences(tree: RegionTree, scores: Mapping[str, NDArray], *,
                      mode: Mode = "paper", level: float = 0.95, n_resamples: int = 999,
                      seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of models: C_w(a) - C_w(b) with its paired bootstrap interval, the
    permutation p-value, and Holm's adjusted p over the family of pairs (``holds``: the
    difference is real at ``alpha`` after the correction).

    Used in: herb/02.
    """
    rows = []
    for a, b in combinations(scores, 2):
        if scores[a].shape != scores[b].shape:
            raise ValueError(f"models {a!r} and {b!r} were scored on different regions or "
                             f"descriptors ({scores[a].shape} vs {scores[b].shape})")
        n = scores[a].shape[1]
        both = np.concatenate([scores[a], scores[b]], axis=1)  # b's columns are n..2n-1
        d = stats.paired_difference(np.arange(n), np.arange(n, 2 * n), _overall(tree, both, mode),
                                    level=level, method="percentile", n_resamples=n_resamples,
                                    seed=seed, unit="descriptors", vectorized=False)
        rows.append({"model": a, "versus": b, **d.row()})
    frame = pd.DataFrame(rows, columns=["model", "versus", "value", *UNCERTAINTY, "p_value"])
    frame["p_holm"] = stats.holm(frame["p_value"]) if len(frame) else []
    frame["holds"] = frame["p_holm"] < alpha
    return frame


def table1_intervals(table: pd.DataFrame, scored: Mapping[str, ModelScores], *,
                     paper: pd.DataFrame | None = None, level: float = 0.95,
                     n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """Table 1 as printed (x 1e3): C_w and C_z of every continent and of the root, per model
    and mode, each with its bootstrap interval over the descriptors. A model's row of Table 1 is
    one statistic (:func:`.tables.bias_summary` for both metrics), so all its cells come from
    the same resamples (:func:`biasbook.stats.intervals`); continents the regions lack are left
    out. Columns: ``model``, ``mode``, ``metric``, ``region``, the record schema and, with
    ``paper`` (:func:`.tables.herb_tables`' frame), the paper's value of the cell (x 1e3).

    Used in: herb/02.
    """
    rows = []
    for name, s in scored.items():
        for mode in validate.MODES:
            row = partial(_table1_row, table, s.region_scores, mode)
            exact = row(s.scores).dropna()  # on the array itself, as Table 1 (not a copy)
            cis = stats.intervals(np.arange(s.scores.shape[1]),
                                  partial(_resampled, row=row, x=s.scores, cells=exact.index),
                                  level=level, method="percentile", n_resamples=n_resamples,
                                  seed=seed, unit="descriptors", vectorized=False)
            rows += [{"model": name, "mode": mode, "metric": metric, "region": region,
                      **ci.row(), "value": value}
                     for (metric, region), value, ci in zip(exact.index, exact, cis, strict=True)]
    frame = pd.DataFrame(rows)
    frame[["value", "ci_low", "ci_high"]] *= SCALE["table1"]
    if paper is not None:
        keys = ["model", "mode", "metric", "region"]
        printed = paper.query("table == 'table1'")[[*keys, "paper"]]
        frame = frame.merge(printed.assign(paper=printed["paper"] * SCALE["table1"]), on=keys,
                            how="left")
    return frame


def _table1_row(table: pd.DataFrame, region_scores: NDArray, mode: Mode, x: NDArray) -> pd.Series:
    """A model's row of Table 1 (unscaled), C_w then C_z, from its score matrix ``x``."""
    return pd.concat([bias_summary(table, x, mode=mode),
                      bias_summary(table, x, metric_name="C_z", region_scores=region_scores,
                                   mode=mode)], keys=["C_w", "C_z"])


def _resampled(columns: NDArray, *, row, x: NDArray, cells: pd.Index) -> NDArray:
    """``row`` on the descriptor columns of one resample, at the cells Table 1 shows."""
    return row(x[:, columns.astype(int)])[cells].to_numpy()


def table1_overall(tree: RegionTree, scores: Mapping[str, NDArray], ours: pd.DataFrame, *,
                   n_resamples: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Notebook 02's two tables, x 1e3 as Table 1 prints: each model's overall C_w with its
    interval and the paper's value (from :func:`.tables.herb_tables`' ``ours``), and every
    pair of models' difference (:func:`model_differences`).

    Used in: herb/02.
    """
    spread = overall_intervals(tree, scores, n_resamples=n_resamples, seed=seed)
    diffs = model_differences(tree, scores, n_resamples=n_resamples, seed=seed)
    for frame in (spread, diffs):
        frame[["value", "ci_low", "ci_high"]] *= SCALE["table1"]
    paper = ours.query("table == 'table1' and mode == 'paper' and metric == 'C_w' "
                       "and region == 'overall'").set_index("model")["paper"]
    spread["paper"] = spread["model"].map(paper * SCALE["table1"])
    return spread, diffs
