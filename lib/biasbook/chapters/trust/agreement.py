"""Do four bias metrics order the same models the same way? (the trust page, section 3)

:func:`agreement` gives Kendall's tau-b between every two metrics of :mod:`.model_metrics` over
the models of :mod:`.variants` (:func:`kendall`), with a bootstrap interval over the models
(:func:`kendall_interval`) and one over the metrics' own items (:func:`item_replicates`): the
first asks how much another set of models could change tau, the second how much of the models'
order on each metric is measurement noise.

The package reads several chapters' code, which no chapter does: it is the book's one place
where their metrics meet.

>>> x, y = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
>>> round(kendall(x, y)[0], 6)  # 5 concordant pairs, 1 discordant: (5 - 1) / 6
0.666667
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import stats
from biasbook.metrics import weat

from .measure import Spec
from .model_metrics import (
    METRICS,
    cb_cells,
    herb_items,
    herb_statistic,
    mu_of,
    probe_associations,
    situation_docs,
)
from .variants import Measured


def kendall(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Kendall's tau-b of two paired samples and its two-sided p-value
    (``scipy.stats.kendalltau``; exact for small samples without ties).

    Used in: book/trust.

    >>> round(kendall([1, 2, 2, 3], [1, 2, 3, 4])[0], 6)  # x ties once: 5 / sqrt(5 * 6)
    0.912871
    """
    res = sps.kendalltau(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return float(res.statistic), float(res.pvalue)


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    """tau-b of one resample; 0 where one side is constant (every model drawn is one model: the
    resample holds no order to agree on; about 1 in 7**6 resamples of 7 models)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(sps.kendalltau(x, y).statistic)


def kendall_interval(x: Sequence[float], y: Sequence[float], *, level: float = 0.95,
                     n_resamples: int = 1999, seed: int = 0) -> stats.Interval:
    """tau-b with its percentile bootstrap interval over the models (a model's two values stay
    together; :func:`biasbook.stats.interval`). With six to eight models the interval is wide:
    a resample repeats some models and leaves others out, and tau moves in steps of
    ``2 / (n (n - 1))`` of the pairs.

    Used in: book/trust.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ci = stats.interval((x, y), _tau, level=level, method="percentile",
                        n_resamples=n_resamples, seed=seed, unit="models", vectorized=False)
    return replace(ci, value=kendall(x, y)[0])  # tau itself, not _tau's 0 for a constant side


def item_replicates(measured_models: Sequence[Measured], spec: Spec, *, n_replicates: int = 200,
                    seed: int = 0) -> dict[str, np.ndarray]:
    """Each metric recomputed ``n_replicates`` times with its items resampled: ``[replicate,
    model]`` per metric. The items (descriptors, cells, target names, situations) are the same
    for every model, so each replicate draws them once for all models. A replicate keeps the
    models; only the measurement moves.

    Used in: book/trust.
    """
    rng = np.random.default_rng(seed)
    n_models = len(measured_models)
    out = {m: np.full((n_replicates, n_models), np.nan) for m in METRICS}
    herb_inputs = [herb_items(m.bundle, spec) for m in measured_models]
    cells = [cb_cells(m.bundle) for m in measured_models]
    assoc = [probe_associations(m.bundle, spec) for m in measured_models]
    mus = [mu_of(situation_docs(m.bundle, spec), spec) for m in measured_models]
    n_situations = len(situation_docs(measured_models[0].bundle, spec))
    n_desc, n_cells = herb_inputs[0][1].shape[1], cells[0].size
    s0, n_x = assoc[0]
    for r in range(n_replicates):
        cols = rng.integers(0, n_desc, n_desc)
        pick = rng.integers(0, n_cells, n_cells)
        xs, ys = rng.integers(0, n_x, n_x), n_x + rng.integers(0, s0.size - n_x, s0.size - n_x)
        situations = rng.integers(0, n_situations, n_situations)
        for j in range(n_models):
            tree, scores = herb_inputs[j]
            out["HERB C_w"][r, j] = herb_statistic(tree, scores)(cols)
            out["CB (en)"][r, j] = cells[j][pick].mean()
            s = assoc[j][0]
            with np.errstate(divide="ignore", invalid="ignore"):
                out["probe d"][r, j] = weat.two_sample_effect_sizes(s[xs], s[ys])
            out["generated-text μ"][r, j] = mus[j](situations)
    return out


def agreement(values: pd.DataFrame, replicates: Mapping[str, np.ndarray] | None = None, *,
              level: float = 0.95, n_resamples: int = 1999, seed: int = 0) -> pd.DataFrame:
    """One row per pair of metrics ``a`` and ``b`` (columns of ``values``, models as rows;
    models where either is undefined left out): ``tau`` (tau-b), ``p`` (scipy's), the
    interval over the models (``ci_low``, ``ci_high``) and, with ``replicates``
    (:func:`item_replicates`), the percentile interval of tau over the metrics' item resamples
    (``items_low``, ``items_high``).

    Used in: book/trust.
    """
    rows = []
    for a, b in combinations(values.columns, 2):
        both = values[[a, b]].dropna()
        row = {"a": a, "b": b, "models": len(both)}
        if len(both) < 3:
            rows.append({**row, "tau": np.nan})
            continue
        ci = kendall_interval(both[a], both[b], level=level, n_resamples=n_resamples, seed=seed)
        row.update(tau=ci.value, p=kendall(both[a], both[b])[1], ci_low=ci.low,
                   ci_high=ci.high)
        if replicates is not None:
            keep = [values.index.get_loc(m) for m in both.index]
            taus = [_tau(ra[keep], rb[keep]) for ra, rb in zip(replicates[a], replicates[b],
                                                                strict=True)
                    if np.isfinite(ra[keep]).all() and np.isfinite(rb[keep]).all()]
            tail = (1 - level) / 2
            row.update(items_low=float(np.quantile(taus, tail)),
                       items_high=float(np.quantile(taus, 1 - tail)))
        rows.append(row)
    return pd.DataFrame(rows)


def tau_step(n_models: int) -> float:
    """The smallest change of tau (no ties): one pair of ``n_models`` models swapped.

    Used in: book/trust.

    >>> round(tau_step(7), 4)
    0.0952
    """
    return 2 / math.comb(n_models, 2)
