"""How sure are Table 4's numbers? Bootstrap intervals over the test samples (notebook 04).

Table 4's accuracy and macro F1 and its per-region shares and sizes of probability changes are
averages over the classifier's test samples, and a test set drawn again from the same data would
give others: the test samples are what is resampled (95%, percentile). The classifier and the
regions stay fixed. In the pooled Country-All test set a sample is drawn with all its prefixed
copies. Each statistic returns all the numbers of one row, so a row's cells come from the same
resamples (:func:`biasbook.stats.intervals`).

>>> labels = np.array([0, 1, 1, 0, 1, 0, 1, 1])
>>> p0 = np.array([0.2, 0.9, 0.6, 0.4, 0.3, 0.1, 0.8, 0.7])
>>> probs = {("task", "clf"): (p0, np.vstack([p0 + 0.05, p0 - 0.05]))}
>>> data = {"task": (None, pd.DataFrame({"label": labels}))}
>>> rows = pd.DataFrame({"task": ["task"] * 2, "model": ["clf"] * 2,
...                      "testset": ["original"] * 2, "metric": ["accuracy", "macro_f1"],
...                      "ours": [0.875, 0.873015873015873], "paper": [0.9, 0.9]})
>>> out = overall_intervals(rows, probs, data, n_countries=2, n_resamples=99)
>>> bool((out["ci_low"] <= out["ours"]).all() and (out["ours"] <= out["ci_high"]).all())
True
>>> out[["ci_unit", "ci_units"]].drop_duplicates().values.tolist()
[['test samples', 8]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
import pandas as pd

from biasbook import stats
from biasbook.chapters.herb import downstream
from biasbook.chapters.herb.propagation_tables import TABLE4_STATS
from biasbook.results import UNCERTAINTY

UNIT = "test samples"


def overall_intervals(rows: pd.DataFrame, probs: Mapping[tuple[str, str], tuple],
                      data: Mapping[str, tuple], *, n_countries: int, level: float = 0.95,
                      n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """:func:`.propagation.overall_metrics`' ``rows`` with the record schema's interval of each
    accuracy and macro F1 over the test samples (Country-All: the first ``n_countries``
    regions' prefixed copies of each drawn sample).

    Used in: herb/04.
    """
    out = []
    for (task, name, testset), group in rows.groupby(["task", "model", "testset"], sort=False):
        p0, p = probs[task, name]
        labels = np.asarray(data[task][1]["label"])
        probs_of = p0 if testset == "original" else p[:n_countries]
        statistic = partial(_metrics, labels=labels, probs=probs_of, metrics=list(group["metric"]))
        cis = stats.intervals(np.arange(len(labels)), statistic, level=level,
                              method="percentile", n_resamples=n_resamples, seed=seed,
                              unit=UNIT, vectorized=False)
        ci_rows = pd.DataFrame([ci.row() for ci in cis], index=group.index)
        out.append(group.join(ci_rows[list(UNCERTAINTY)]))
    return pd.concat(out).loc[rows.index]


def _metrics(idx: np.ndarray, *, labels: np.ndarray, probs: np.ndarray, metrics: list[str]
             ) -> np.ndarray:
    """``metrics`` of the test samples ``idx``: of one test set (``probs`` a vector), or of the
    pooled prefixed copies (a matrix, one row per region)."""
    i = idx.astype(int)
    found = (downstream.classification_metrics(labels[i], probs[i]) if probs.ndim == 1
             else downstream.pooled_metrics(labels[i], probs[:, i]))
    return np.array([found[m] for m in metrics])


def table4_intervals(table4: pd.DataFrame, probs: Mapping[tuple[str, str], tuple],
                     region_names: Sequence[str], *, level: float = 0.95,
                     n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """Table 4's per-region statistics (:func:`.propagation_tables.table4_regions`), one row
    per (task, model, region, ``stat``) with ``value``, the paper's ``paper`` and the record
    schema's interval over the test samples.

    Used in: herb/04.
    """
    rows = []
    names = list(region_names)
    for (task, name, region), row in table4.iterrows():
        p0, p = probs[task, name]
        statistic = partial(_changes, p0=p0, pr=p[names.index(region)])
        cis = stats.intervals(np.arange(len(p0)), statistic, level=level, method="percentile",
                              n_resamples=n_resamples, seed=seed, unit=UNIT, vectorized=False)
        for stat, ci in zip(TABLE4_STATS, cis, strict=True):
            rows.append({"task": task, "model": name, "region": region, "stat": stat,
                         **ci.row(), "value": row[stat], "paper": row[f"paper {stat}"]})
    return pd.DataFrame(rows, columns=["task", "model", "region", "stat", "value", *UNCERTAINTY,
                                       "paper"])


def _changes(idx: np.ndarray, *, p0: np.ndarray, pr: np.ndarray) -> np.ndarray:
    """Table 4's four change statistics of the test samples ``idx``, from the probabilities
    without (``p0``) and with (``pr``) the region's prefix."""
    c = downstream.change_counts(p0[idx.astype(int)], pr[idx.astype(int)])
    return np.array([c["n_up"] / len(idx), c["avg_up"], c["n_down"] / len(idx), c["avg_down"]])
