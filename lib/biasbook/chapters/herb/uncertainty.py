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
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from biasbook import stats
from biasbook.chapters.herb.tables import SCALE
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
        columns = np.arange(x.shape[1])
        ci = stats.interval(columns, _overall(tree, x, mode), level=level, method="percentile",
                            n_resamples=n_resamples, seed=seed, unit="descriptors",
                            vectorized=False)
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
        rows.append({"model": a, "versus": b, **d.interval.row(), "p_value": d.p_value})
    frame = pd.DataFrame(rows, columns=["model", "versus", "value", *UNCERTAINTY, "p_value"])
    frame["p_holm"] = stats.holm(frame["p_value"]) if len(frame) else []
    frame["holds"] = frame["p_holm"] < alpha
    return frame


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
