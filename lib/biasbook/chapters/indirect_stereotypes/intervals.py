"""Intervals over target words and training seeds of the chapter's numbers.

Every number of this chapter depends on two samples: the **words** a test happens to list (a
different but equally reasonable list would give another value) and the **training run** (GloVe's
initialisation and batch order; the book trains each method with the same seeds). What is
resampled, per number:

- **WEAT effect size** (Tables 2-4): the target words. X and Y are resampled *apart* (a stratified
  bootstrap: :func:`biasbook.stats.interval` with two independent samples, so every resample keeps
  ``|X|`` X words and ``|Y|`` Y words); the attribute words stay fixed, as they define what is
  measured. The same resampled words serve every seed, and the statistic is the mean effect size
  over the seeds (:func:`word_interval`; ``paired=False``, since tying the i-th X word to the
  i-th Y word would be an arbitrary pairing).
- **RIPA** (Table 5's summary, mean ``|RIPA|``): the words (:func:`biasbook.stats.interval` and
  :func:`biasbook.stats.paired_difference`; :func:`.differences.ripa_summary`); a single word's
  RIPA over the seeds only (:func:`ripa_word_table`).
- **The seeds**: the estimate is the mean over the training seeds;
  :func:`biasbook.stats.seed_spread` gives the t half-width of the per-seed values, and
  :func:`with_seeds` adds it to each side of the words' interval in quadrature, so that **the
  interval covers the seed as well as the words** (``ci_unit`` says "... and 3 seeds"). The
  words' bootstrap already carries part of the per-word training noise, so the sum is on the
  conservative side. With one seed, the interval covers the words only and says so.
- **Table 1** (semantic benchmarks): the seeds only, as the per-item scores are not exposed by
  :mod:`biasbook.embeddings.benchmarks`: the mean over seeds of the per-seed relative change, with
  its t-interval and a one-sample t-test (:func:`table1_intervals`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import results, stats
from biasbook.metrics import weat

from .pipeline import LABELS
from .word_scores import WordScores


def word_interval(statistic: Callable, n_x: int, n_y: int, *, level: float = 0.95,
                  method: str = "BCa", n_resamples: int = 9999, seed: int = 0,
                  unit: str = "target words") -> stats.Interval:
    """Stratified bootstrap interval of ``statistic(ix, iy, axis=-1)``: ``ix`` and ``iy`` are
    indices of X and Y words resampled with replacement *apart*, |X| and |Y| of them
    (:func:`biasbook.stats.interval` with ``paired=False``). A BCa interval that comes out
    undefined (a degenerate jackknife) is replaced by the percentile one, and says so.

    Used in: indirect-stereotypes/03, indirect-stereotypes/04.
    """
    data = (np.arange(n_x, dtype=float), np.arange(n_y, dtype=float))
    options = {"level": level, "n_resamples": n_resamples, "seed": seed, "unit": unit,
               "vectorized": True, "paired": False}
    if method.lower() != "bca":
        return stats.interval(data, statistic, method=method, **options)
    return bca_or_percentile(stats.interval, data, statistic, **options)


def with_seeds(words: stats.Interval, per_seed: Sequence[float]) -> stats.Interval:
    """``words`` widened by the seeds: each side becomes sqrt(side^2 + h^2), with h the t
    half-width of :func:`biasbook.stats.seed_spread` over ``per_seed`` (whose mean must be the
    interval's value). One seed: ``words`` unchanged (its unit says words only).

    Used in: indirect-stereotypes/03.
    """
    per_seed = np.asarray(per_seed, dtype=float)
    if per_seed.size < 2:
        return words
    if not math.isclose(per_seed.mean(), words.value, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"the words' interval is about {words.value}, the seeds' mean is "
                         f"{per_seed.mean()}: they must estimate the same number")
    spread = stats.seed_spread(per_seed, level=words.level)
    half = spread.interval.high - spread.mean
    v = words.value
    return stats.Interval(v, v - math.hypot(v - words.low, half),
                          v + math.hypot(words.high - v, half), words.level,
                          f"{words.method} (words) + t (seeds)", words.n_units,
                          f"{words.unit} and {per_seed.size} seeds")


def seed_mean_effect(scores: np.ndarray, n_x: int, ddof: int) -> Callable:
    """The statistic (ix, iy) -> mean over seeds of the effect size on those words.

    Used in: indirect-stereotypes/03, indirect-stereotypes/04.
    """
    def statistic(ix, iy, axis=-1):
        idx = np.concatenate([np.asarray(ix, dtype=np.intp),
                              np.asarray(iy, dtype=np.intp) + n_x], axis=-1)
        return weat.effect_sizes(scores[:, idx], n_x, ddof).mean(axis=0)
    return statistic


def weat_intervals(scores: Mapping[str, WordScores], *, level: float = 0.95,
                   method: str = "BCa", n_resamples: int = 9999, seed: int = 0,
                   ddof: int = 1) -> pd.DataFrame:
    """Per (test, method): the mean effect size over seeds with its interval over the target words
    and the seeds (record schema), and the seeds' range.

    Used in: indirect-stereotypes/03.
    """
    rows = []
    for name, ts in scores.items():
        n_y = len(ts.words["y"])
        for m, s in ts.scores.items():
            per_seed = weat.effect_sizes(s, ts.n_x, ddof)
            words = word_interval(seed_mean_effect(s, ts.n_x, ddof), ts.n_x, n_y, level=level,
                                  method=method, n_resamples=n_resamples, seed=seed)
            rows.append({"test": name, "method": m, **with_seeds(words, per_seed).row(),
                         "n_x": ts.n_x, "n_y": n_y, "seeds": len(per_seed),
                         "seed_min": per_seed.min(), "seed_max": per_seed.max()})
    # the columns even without rows: no test computable when a small corpus lacks the words
    return pd.DataFrame(rows, columns=["test", "method", "value", *results.UNCERTAINTY, "n_x",
                                       "n_y", "seeds", "seed_min", "seed_max"])


def bca_or_percentile(function: Callable, *args, **options):
    """``function`` with BCa, or with the percentile method where BCa is undefined (e.g. every
    word moved by the same amount: a degenerate jackknife); the result's method says which.

    Used in: indirect-stereotypes/03, indirect-stereotypes/04.
    """
    try:
        return function(*args, method="BCa", **options)
    except ValueError as err:
        if "undefined" not in str(err):
            raise
        return function(*args, method="percentile", **options)


def ripa_word_table(runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per word and method, the mean RIPA over seeds with its t-interval over the seeds (a word's
    RIPA has no items to resample: the word is the item).

    Used in: indirect-stereotypes/03.
    """
    rows = []
    for (word, m), g in runs[~runs["oov"]].groupby(["word", "method"], sort=False):
        values = g["ripa"].to_numpy()
        if len(values) > 1:
            row = stats.seed_spread(values, level=level).row()
        else:
            row = {"value": values[0], **dict.fromkeys(results.UNCERTAINTY)}
        rows.append({"word": word, "method": m, **row})
    return pd.DataFrame(rows)


def table1_intervals(bench: pd.DataFrame, *, versus: str = "original",
                     level: float = 0.95) -> pd.DataFrame:
    """Per benchmark and method: the mean over seeds of the relative change (%) of the score
    against ``versus`` in the same seed, its t-interval over the seeds and a one-sample t-test
    (two-sided p; NaN with one seed or no spread).

    Used in: indirect-stereotypes/03.
    """
    keys = ["benchmark", "task", "metric", "n_items", "n_oov"]
    wide = bench.pivot_table(index=keys + ["seed"], columns="method", values="score",
                             sort=False).reset_index()
    rows = []
    for key, g in wide.groupby(keys, sort=False):
        for m in (c for c in g.columns if c in LABELS and c != versus):
            change = (100 * (g[m] - g[versus]) / g[versus].abs()).to_numpy(dtype=float)
            row = dict(zip(keys, key, strict=True)) | {"method": m, "versus": versus}
            if not np.all(np.isfinite(change)):
                rows.append(row | {"value": math.nan})
                continue
            if change.size < 2:
                rows.append(row | {"value": change.mean(), "p_value": math.nan})
                continue
            spread = stats.seed_spread(change, level=level)
            p = sps.ttest_1samp(change, 0.0).pvalue if spread.sd > 0 else math.nan
            rows.append(row | spread.row() | {"p_value": float(p)})
    return pd.DataFrame(rows, columns=[*keys, "method", "versus", "value", *results.UNCERTAINTY,
                                       "p_value"])
