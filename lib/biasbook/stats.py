"""Error bars for bias numbers: bootstrap intervals, paired tests, seed spread, Holm correction.

Which function to use:

- :func:`interval` -- a metric computed from items it averages over (words, templates,
  template x attribute cells, documents). The items are resampled with replacement
  (``scipy.stats.bootstrap``); the statistic may take several aligned arrays (one value per item
  in each), and they are resampled together, item by item.
- :func:`paired_difference` -- two models or two methods scored on the *same* items. Test the
  difference, not the overlap of two separate intervals: pairing removes the item-to-item
  variation both share. Gives the observed difference, its bootstrap interval and a permutation
  p-value (``scipy.stats.permutation_test`` swapping each item's two scores, i.e. flipping the
  sign of its paired difference); exact when there are few enough items to enumerate every swap.
- :func:`seed_spread` -- a number that depends on training (GloVe, an LSTM). Resampling items
  says nothing about the seed; train several seeds and report their mean, sd and a t-interval.
- :func:`holm` / :func:`holm_significant` -- a chapter's family of comparisons: adjust the
  p-values so that the chance of calling *any* true null real stays at alpha.

Percentile or BCa: the percentile interval takes the bootstrap distribution's quantiles as they
are; BCa (the default, as in scipy) corrects them for the estimate's bias and skew, which matters
for few items and skewed statistics such as effect sizes. Both under-cover a little with very few
items; an interval from fewer than about ten items is a rough guide only.

Every result has ``.row()``, the record fields ``value, ci_low, ci_high, ci_level, ci_unit,
ci_units, ci_method``:

>>> import numpy as np
>>> from biasbook.stats import interval
>>> scores = np.random.default_rng(0).normal(0.4, 0.2, size=50)
>>> ci = interval(scores, unit="templates", seed=1)
>>> print(ci.text(3))
0.426 [0.375, 0.476]
>>> sorted(ci.row())
['ci_high', 'ci_level', 'ci_low', 'ci_method', 'ci_unit', 'ci_units', 'value']
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as sps
from numpy.typing import ArrayLike

from biasbook.reporting import interval_text

Statistic = Callable[..., float | np.ndarray]
Seed = int | np.random.Generator | None

_METHODS = {"percentile": "percentile", "bca": "BCa"}
# Resampled values scipy may hold at once (elements per batch): bounds memory for long item lists.
_BATCH_ELEMENTS = 10_000_000


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval over ``n_units`` resampled units."""

    value: float
    low: float
    high: float
    level: float
    method: str
    n_units: int
    unit: str | None = None

    def row(self) -> dict:
        """The record schema: ``value, ci_low, ci_high, ci_level, ci_unit, ci_units, ci_method``."""
        return {"value": self.value, "ci_low": self.low, "ci_high": self.high,
                "ci_level": self.level, "ci_unit": self.unit, "ci_units": self.n_units,
                "ci_method": self.method}

    def contains(self, x: float) -> bool:
        """Whether ``x`` (e.g. a paper's number) lies inside the interval, bounds included."""
        return self.low <= x <= self.high

    def text(self, digits: int = 2) -> str:
        """``value [low, high]``, as tables print it (:func:`interval_text`)."""
        return interval_text(self.value, self.low, self.high, digits=digits)


@dataclass(frozen=True)
class Difference:
    """``statistic(a) - statistic(b)`` on paired items: its interval and permutation p-value."""

    interval: Interval
    p_value: float
    exact: bool
    alternative: str

    @property
    def value(self) -> float:
        return self.interval.value

    def row(self) -> dict:
        """The record schema of :class:`Interval` plus ``p_value``."""
        return {**self.interval.row(), "p_value": self.p_value}


@dataclass(frozen=True)
class SeedSpread:
    """A trained quantity over seeds: mean, sd (ddof=1), range and a t-interval for the mean."""

    mean: float
    sd: float
    min: float
    max: float
    n_seeds: int
    interval: Interval

    def row(self) -> dict:
        """The record schema of :class:`Interval` (unit: seeds, method: t)."""
        return self.interval.row()


def _positions(idx: np.ndarray) -> str:
    shown = ", ".join(str(i) for i in idx[:10])
    return f"[{shown}{', ...' if idx.size > 10 else ''}]"


def _arrays(named: dict[str, ArrayLike], paired: bool = True) -> tuple[np.ndarray, ...]:
    """Validated one-dimensional float arrays of at least two finite items, aligned if
    ``paired``."""
    arrays = []
    for name, values in named.items():
        x = np.asarray(values, dtype=float)
        if x.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional (one value per item), "
                             f"got shape {x.shape}")
        bad = np.flatnonzero(~np.isfinite(x))
        if bad.size:
            raise ValueError(f"{name} has NaN or inf at positions {_positions(bad)}")
        arrays.append(x)
    lengths = [x.size for x in arrays]
    if paired and len(set(lengths)) > 1:
        raise ValueError(f"paired arrays {', '.join(named)} must have one value per item each, "
                         f"got lengths {lengths}")
    if min(lengths) < 2:
        raise ValueError(f"need at least 2 items to resample, got {min(lengths)}")
    return tuple(arrays)


def _check(level: float, n_resamples: int, method: str) -> str:
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if method.lower() not in _METHODS:
        raise ValueError(f"method must be 'percentile' or 'BCa', got {method!r}")
    return _METHODS[method.lower()]


def _is_vectorized(statistic: Statistic, vectorized: bool | None) -> bool:
    # scipy's own rule: a statistic with an ``axis`` argument is evaluated on all resamples at once.
    if vectorized is not None:
        return vectorized
    try:
        return "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):
        return False


def _evaluate(statistic: Statistic, arrays: tuple[np.ndarray, ...], vectorized: bool,
              several: bool) -> np.ndarray:
    value = np.asarray(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays),
                       dtype=float)
    if value.ndim != several:
        wanted = "a one-dimensional array" if several else "one number"
        raise ValueError(f"statistic must return {wanted}, got shape {value.shape}")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"statistic is not finite on the data ({value})")
    return np.atleast_1d(value)


def _intervals(arrays: tuple[np.ndarray, ...], statistic: Statistic, vectorized: bool,
               level: float, method: str, n_resamples: int, rng: np.random.Generator,
               unit: str | None, paired: bool = True, several: bool = False) -> list[Interval]:
    values = _evaluate(statistic, arrays, vectorized, several)
    n = arrays[0].size if paired else sum(x.size for x in arrays)
    if all(np.ptp(x) == 0 for x in arrays):
        # Every resample is the data set itself: zero width (scipy's BCa would warn and give NaN).
        return [Interval(float(v), float(v), float(v), level, method, n, unit) for v in values]
    # A degenerate bootstrap or jackknife distribution shows up as NaN bounds, refused below with
    # a reason, so scipy's warnings and numpy's 0/0 on the way are not shown.
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        res = sps.bootstrap(arrays, statistic, n_resamples=n_resamples,
                            batch=max(1, _BATCH_ELEMENTS // n), vectorized=vectorized,
                            paired=paired, confidence_level=level, method=method, rng=rng)
    lows, highs = (np.atleast_1d(b).astype(float) for b in res.confidence_interval)
    if not (np.all(np.isfinite(lows)) and np.all(np.isfinite(highs))):
        if not np.all(np.isfinite(res.bootstrap_distribution)):
            raise ValueError("statistic is NaN or inf on some resamples of the items")
        raise ValueError(f"the {method} interval is undefined here: the statistic's bootstrap or "
                         "jackknife distribution is degenerate (e.g. heavy ties); "
                         "use method='percentile'")
    return [Interval(float(v), float(lo), float(hi), level, method, n, unit)
            for v, lo, hi in zip(values, lows, highs, strict=True)]


def interval(items: ArrayLike | tuple[ArrayLike, ...], statistic: Statistic = np.mean, *,
             level: float = 0.95, method: str = "BCa", n_resamples: int = 9999,
             seed: Seed = 0, unit: str | None = None,
             vectorized: bool | None = None, paired: bool = True) -> Interval:
    """Bootstrap confidence interval of ``statistic`` over the items it averages over.

    ``items`` is one value per item, or a tuple of aligned arrays (one value per item in each)
    that ``statistic`` takes as separate arguments; those are resampled together, item by item.
    With ``paired=False`` the arrays are separate samples (WEAT's X and Y target words),
    each resampled on its own, and may differ in length; ``n_units`` counts all their items.
    A statistic with an ``axis`` argument is evaluated on all resamples at once (fast); pass
    ``vectorized=False`` to call it once per resample. ``seed`` fixes the resamples (``None``:
    fresh ones on every call).

    >>> import numpy as np
    >>> ci = interval([0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.2, 0.5], method="percentile",
    ...               unit="words")
    >>> print(ci.text(3), ci.n_units, ci.unit)
    0.350 [0.237, 0.463] 8 words
    >>> interval([0.3, 0.3, 0.3]).row()["ci_low"]  # all items equal: zero width
    0.3

    A metric of two aligned per-item arrays, e.g. the mean gap between paired scores:

    >>> gap = lambda x, y, axis=-1: np.mean(x - y, axis=axis)
    >>> print(interval(([1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 2.0, 3.5]), gap).text())
    0.75 [0.50, 1.00]

    Two separate samples, e.g. the difference of their means:

    >>> diff = lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis)
    >>> ci = interval(([1.0, 2.0, 3.0], [0.5, 1.0, 2.0, 3.5, 1.5]), diff, paired=False,
    ...               method="percentile")
    >>> print(ci.text(), ci.n_units)
    0.30 [-1.00, 1.50] 8
    """
    method = _check(level, n_resamples, method)
    if isinstance(items, tuple) and items and all(np.ndim(x) == 1 for x in items):
        arrays = _arrays({f"items[{k}]": x for k, x in enumerate(items)}, paired)
    else:
        arrays = _arrays({"items": items})
    return _intervals(arrays, statistic, _is_vectorized(statistic, vectorized), level, method,
                      n_resamples, np.random.default_rng(seed), unit, paired)[0]


def intervals(items: ArrayLike, statistic: Callable[..., ArrayLike], *, level: float = 0.95,
              method: str = "BCa", n_resamples: int = 9999, seed: Seed = 0,
              unit: str | None = None, vectorized: bool | None = None) -> list[Interval]:
    """:func:`interval` of each entry of a ``statistic`` that returns a one-dimensional array
    (e.g. every cell of a table computed from the same items), all from one set of resamples:
    each is the interval that :func:`interval` gives for that entry alone with the same seed
    (BCa's to the last bits of a float).

    >>> import numpy as np
    >>> x = [0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.2, 0.5]
    >>> both = intervals(x, lambda v: np.array([np.mean(v), np.median(v)]), method="percentile")
    >>> [ci.text(3) for ci in both]
    ['0.350 [0.237, 0.463]', '0.350 [0.200, 0.500]']
    >>> both[0] == interval(x, np.mean, method="percentile")
    True
    """
    method = _check(level, n_resamples, method)
    return _intervals(_arrays({"items": items}), statistic,
                      _is_vectorized(statistic, vectorized), level, method, n_resamples,
                      np.random.default_rng(seed), unit, several=True)


def paired_difference(a: ArrayLike, b: ArrayLike, statistic: Statistic = np.mean, *,
                      level: float = 0.95, method: str = "BCa", n_resamples: int = 9999,
                      alternative: str = "two-sided", seed: Seed = 0,
                      unit: str | None = None, vectorized: bool | None = None) -> Difference:
    """Difference ``statistic(a) - statistic(b)`` of two models or methods scored on the same items.

    ``a[i]`` and ``b[i]`` are the two scores of item ``i``. The interval resamples items (pairs
    stay together); the p-value comes from permuting within pairs -- swapping ``a[i]`` and
    ``b[i]``, which for the mean is flipping the sign of the item's difference. With
    ``2**n <= n_resamples`` every swap is enumerated and the p-value is exact.

    >>> cb_model_1 = [0.42, 0.31, 0.55, 0.38, 0.47, 0.36, 0.52, 0.44]
    >>> cb_model_2 = [0.30, 0.29, 0.41, 0.35, 0.33, 0.30, 0.45, 0.37]
    >>> d = paired_difference(cb_model_1, cb_model_2, unit="cells")
    >>> print(d.interval.text(3), round(d.p_value, 4), d.exact)
    0.081 [0.052, 0.113] 0.0078 True
    """
    method = _check(level, n_resamples, method)
    arrays = _arrays({"a": a, "b": b})
    vectorized = _is_vectorized(statistic, vectorized)

    def diff(x: np.ndarray, y: np.ndarray, **axis) -> np.ndarray | float:
        # scipy passes ``axis=-1`` to a vectorized statistic and nothing to the other kind
        return statistic(x, **axis) - statistic(y, **axis)

    rng = np.random.default_rng(seed)
    ci = _intervals(arrays, diff, vectorized, level, method, n_resamples, rng, unit)[0]
    n = arrays[0].size
    test = sps.permutation_test(arrays, diff, permutation_type="samples", vectorized=vectorized,
                                n_resamples=n_resamples, batch=max(1, _BATCH_ELEMENTS // n),
                                alternative=alternative, rng=rng)
    # scipy enumerates all 2**n within-pair swaps once n_resamples reaches their number.
    return Difference(ci, float(test.pvalue), 2**n <= n_resamples, alternative)


def seed_spread(values_by_seed: Mapping[object, float] | Sequence[float], *,
                level: float = 0.95, unit: str = "seeds") -> SeedSpread:
    """Mean, sd (ddof=1), range and t-interval of a trained quantity, one value per seed.

    >>> s = seed_spread({0: 1.32, 1: 1.18, 2: 1.41})
    >>> print(round(s.mean, 3), round(s.sd, 3), s.n_seeds, s.interval.text())
    1.303 0.116 3 1.30 [1.02, 1.59]
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    seeds = list(values_by_seed) if isinstance(values_by_seed, Mapping) else None
    x = np.asarray(list(values_by_seed.values()) if seeds is not None else values_by_seed,
                   dtype=float)
    if x.ndim != 1:
        raise ValueError(f"values_by_seed must hold one number per seed, got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        where = [seeds[i] for i in bad] if seeds is not None else _positions(bad)
        raise ValueError(f"values_by_seed has NaN or inf at seeds {where}")
    n = x.size
    if n < 2:
        raise ValueError(f"a spread and its interval need at least 2 seeds, got {n}: train more "
                         "seeds, or report the single run as such, without an interval")
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    half = float(sps.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    ci = Interval(mean, mean - half, mean + half, level, "t", n, unit)
    return SeedSpread(mean, sd, float(x.min()), float(x.max()), n, ci)


def same_sign(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Share of items whose two values have the same sign, along ``axis`` (a statistic of two
    aligned arrays for :func:`interval`).

    >>> float(same_sign(np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, 2.0])))
    0.6666666666666666
    """
    return np.mean(np.sign(x) == np.sign(y), axis=axis)


def pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's r along ``axis`` (NaN where one side is constant; a statistic of two aligned
    arrays for :func:`interval`).

    >>> round(float(pearson(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 7.0]))), 4)
    0.9934
    """
    dx = x - x.mean(axis=axis, keepdims=True)
    dy = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (dx * dy).sum(axis=axis) / np.sqrt((dx * dx).sum(axis=axis)
                                                  * (dy * dy).sum(axis=axis))


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (monotone in the raw p, capped at 1), in input order.

    >>> holm([0.01, 0.04, 0.03, 0.005])
    array([0.03, 0.06, 0.06, 0.02])
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"pvalues must be a non-empty list of numbers, got shape {p.shape}")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if bad.size:
        raise ValueError(f"pvalues must lie in [0, 1]; not so at positions {_positions(bad)}")
    m = p.size
    order = np.argsort(p, kind="stable")
    # The k-th smallest p is multiplied by m - k (k from 0); a larger p never gets a smaller one.
    stepped = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def holm_tested(pvalues: ArrayLike) -> np.ndarray:
    """:func:`holm` over the entries that have a p-value, the tests that were run; a missing
    one (NaN or None: a row without a test) stays NaN and is not part of the family.

    >>> holm_tested([0.01, None, 0.04])
    array([0.02,  nan, 0.04])
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        out[tested] = holm(p[tested])
    return out


def holm_significant(pvalues: ArrayLike, alpha: float = 0.05) -> np.ndarray:
    """Which comparisons hold at family-wise level ``alpha`` after Holm's correction.

    >>> holm_significant([0.01, 0.04, 0.03, 0.005])
    array([ True, False, False,  True])
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    return holm(pvalues) <= alpha


def order_holds(frame: pd.DataFrame, *, setting: str = "template_set", item: str = "model",
                value: str = "value", reference: str = "original") -> pd.DataFrame:
    """Per ``setting`` (e.g. a template set): the items from the largest to the smallest
    ``value`` (``order``) and whether it is the order under ``reference`` (``holds``), the check
    of Seshadri et al. (2022): does rewording a template keep the models' order? Ties keep the
    frame's order.

    >>> frame = pd.DataFrame({"template_set": ["original"] * 2 + ["reworded"] * 2,
    ...                       "model": ["a", "b"] * 2, "value": [0.6, 0.4, 0.3, 0.5]})
    >>> order_holds(frame)[["order", "holds"]].values.tolist()
    [['a > b', True], ['b > a', False]]
    """
    def ranking(group: pd.DataFrame) -> tuple[str, ...]:
        return tuple(group.sort_values(value, ascending=False, kind="stable")[item])

    settings = list(dict.fromkeys(frame[setting]))
    if reference not in settings:
        raise ValueError(f"no rows for the reference {setting} {reference!r}")
    orders = {name: ranking(frame[frame[setting] == name]) for name in settings}
    if any(set(o) != set(orders[reference]) for o in orders.values()):
        raise ValueError(f"every {setting} must hold the same {item}s")
    return pd.DataFrame([{setting: name, "order": " > ".join(map(str, o)),
                          "holds": o == orders[reference]} for name, o in orders.items()])
