"""How sure is a number of the chapter? What its intervals and tests share.

CB averages ``Var_n log P'`` over (template, attribute) cells (Eq. 2 of the paper), so the cells
are the items resampled; the targets (countries) stay fixed, since the variance is taken over
them. A causal model's prior is the mean over the attributes scored; each cell keeps the prior of
the full list, so resampling cells does not re-derive it. Two numbers scored on the same cells
are compared cell by cell (:func:`biasbook.stats.paired_difference`), and a notebook's family of
comparisons is Holm-corrected (:func:`family`). The same cells carry the chapter's other numbers
(the Jensen-Shannon divergences of notebook 03, the mitigation rows of notebook 04), and a
perplexity resamples held-out sentences instead (:data:`SENTENCES`).

This module holds what every interval of the chapter uses: the record fields of one interval
(:func:`interval_row`) or one paired test (:func:`difference_row`), how a table prints them
(:func:`text`), Holm's correction over a family (:func:`family`) and the floor of a
permutation p-value (:func:`smallest_p`): a permutation test over ``n`` cells cannot give a p-value
below ``2 / 2**n``; with 5 cells, 0.0625. The intervals themselves are computed per number in
:mod:`.uncertainty_cb` (CB scores, notebooks 02 and 03), :mod:`.uncertainty_jsd` (divergences,
notebook 03) and :mod:`.uncertainty_mitigation` (notebook 04).

>>> import numpy as np
>>> from biasbook import stats
>>> cells_a, cells_b = np.array([0.9, 0.7, 1.1, 0.8]), np.array([0.2, 0.3, 0.1, 0.4])
>>> d = stats.paired_difference(cells_a, cells_b, unit="cells")
>>> round(d.value, 3), d.exact, round(d.p_value, 3)  # every one of the 16 swaps enumerated
(0.625, True, 0.125)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from biasbook import reporting, stats
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.chapters.ethnic_bias.tables import jsd_cells

UNIT = "template x attribute cells"
SENTENCES = "held-out sentences"
#: The record fields of an interval that could not be computed (fewer than two items).
NO_INTERVAL = {"ci_low": np.nan, "ci_high": np.nan, "ci_level": np.nan, "ci_unit": None,
                "ci_units": np.nan, "ci_method": None}


def interval_row(items, statistic=np.mean, *, value: float, unit: str, level: float,
                 n_resamples: int, seed: int) -> dict:
    """The record fields of a percentile interval of ``statistic`` over ``items`` (an array or
    a tuple of aligned arrays), with ``value`` as the estimate; NaN bounds for fewer than 2.

    Used in: ethnic-bias/03, ethnic-bias/04.
    """
    n = len(items[0]) if isinstance(items, tuple) else len(items)
    if n < 2:
        return {"value": value, **NO_INTERVAL, "ci_units": n}
    ci = stats.interval(items, statistic, level=level, method="percentile",
                        n_resamples=n_resamples, seed=seed, unit=unit)
    return {**ci.row(), "value": value}


def difference_row(a: np.ndarray, b: np.ndarray, *, unit: str, level: float,
                   n_resamples: int, seed: int) -> dict:
    """mean(a) - mean(b) over paired items, its interval and permutation p (NaN for fewer than
    2 items).

    Used in: ethnic-bias/03, ethnic-bias/04.
    """
    if len(a) < 2:
        return {"value": float(np.mean(a) - np.mean(b)), **NO_INTERVAL, "ci_units": len(a),
                "p_value": np.nan}
    d = stats.paired_difference(a, b, np.mean, level=level, method="percentile",
                                n_resamples=n_resamples, seed=seed, unit=unit)
    return d.row()


def jsd_difference(first: tuple[CBResult, CBResult], second: tuple[CBResult, CBResult], *,
                   level: float, n_resamples: int, seed: int) -> dict:
    """JSD between the ``first`` pair of results minus JSD between the ``second``, over the
    template x attribute cells both pairs have: :func:`difference_row` on the cells' JSDs.

    Used in: ethnic-bias/03, ethnic-bias/04.
    """
    both = jsd_cells(*first).merge(jsd_cells(*second), on=["template", "attribute"],
                                   suffixes=("", "_other"))
    return difference_row(both["jsd"].to_numpy(), both["jsd_other"].to_numpy(), unit=UNIT,
                          level=level, n_resamples=n_resamples, seed=seed)


def text(frame: pd.DataFrame, value: str = "value", prefix: str = "", digits: int = 3,
         percent: bool = False) -> pd.Series:
    """``value [low, high]`` per row, as the chapter's tables print an interval (the value alone
    where it has none); ``prefix`` names the interval's columns (``perplexity ci_low``...).

    Used in: ethnic-bias/03, ethnic-bias/04.

    >>> text(pd.DataFrame({"value": [0.123, 2.0], "ci_low": [0.1, float("nan")],
    ...                    "ci_high": [0.15, float("nan")]})).tolist()
    ['0.123 [0.100, 0.150]', '2.000']
    """
    style, digits = ("+%", max(digits - 2, 0)) if percent else ("f", digits)
    return pd.Series([reporting.interval_text(v, lo, hi, digits=digits, style=style, missing="")
                      for v, lo, hi in zip(frame[value], frame[prefix + "ci_low"],
                                           frame[prefix + "ci_high"], strict=True)],
                     index=frame.index, dtype=object)


def family(frames: Iterable[pd.DataFrame], alpha: float = 0.05) -> list[pd.DataFrame]:
    """Holm's correction over every ``p_value`` of ``frames`` together (one family of
    comparisons): each frame gets ``p_holm`` and ``holds`` (Holm's p below ``alpha``); a test
    without a p-value (too few items) is left out of the family and does not hold.

    Used in: ethnic-bias/03, ethnic-bias/04.

    >>> a = pd.DataFrame({"p_value": [0.01, 0.04]})
    >>> b = pd.DataFrame({"p_value": [0.03, float("nan")]})
    >>> [f["p_holm"].round(2).tolist() for f in family([a, b])]
    [[0.03, 0.06], [0.06, nan]]
    """
    frames = [f.copy() for f in frames]
    p = np.concatenate([f["p_value"].to_numpy(dtype=float) for f in frames] or [np.empty(0)])
    adjusted = stats.holm_tested(p)
    start = 0
    for f in frames:
        f["p_holm"] = adjusted[start:start + len(f)]
        f["holds"] = f["p_holm"] < alpha
        start += len(f)
    return frames


def smallest_p(n_items: int) -> float:
    """The smallest two-sided p-value a paired permutation test over ``n_items`` items can give:
    every item's difference has the same sign, and only that arrangement and its mirror image
    are as extreme (``2 / 2**n``).

    Used in: ethnic-bias/04.

    >>> smallest_p(3), smallest_p(5)
    (0.25, 0.0625)
    """
    return min(1.0, 2.0 / 2 ** n_items)
