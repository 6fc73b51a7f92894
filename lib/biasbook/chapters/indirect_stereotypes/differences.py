"""Each method against Original, on the same words and seeds, and Holm's correction.

- WEAT: ``D = mean_s d(method, s) - mean_s d(Original, s)``; interval over the words and seeds
  as in :mod:`.intervals` (the same resampled words for both methods; per-seed ``D_s`` paired by
  seed); p-value from ``scipy.stats.permutation_test`` swapping each target word's associations
  (in every seed at once) between the two methods, two-sided, exact when
  ``2 ** (|X| + |Y|) <= n_resamples`` (:func:`weat_differences`).
- RIPA: ``mean |RIPA|`` of the method minus Original's, per word averaged over seeds
  (:func:`ripa_summary`, which gives each method's mean ``|RIPA|`` with its interval too).
- The chapter's family of such comparisons gets Holm's correction (:func:`holm_family`); a
  difference **holds** only when the corrected p is at most ``alpha`` *and* the interval (words
  and seeds) excludes 0. The verdict text is computed from these, never written by hand.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import results, stats
from biasbook.metrics import weat

from .intervals import bca_or_percentile, seed_mean_effect, with_seeds, word_interval
from .word_scores import WordScores

NOT_SUPPORTED = "not a difference these words and seeds support"
NOT_SUPPORTED_SEEDS = "not a difference the seeds support"


def weat_differences(scores: Mapping[str, WordScores], *, versus: str = "original",
                     level: float = 0.95, method: str = "BCa", n_resamples: int = 9999,
                     seed: int = 0, ddof: int = 1) -> pd.DataFrame:
    """Per test and method other than ``versus``: the difference of mean effect sizes
    (method - versus) on the same words and seeds, its interval (words and seeds), and the
    permutation p-value that swaps each word's associations between the two methods.

    Used in: indirect-stereotypes/03.
    """
    rows = []
    for name, ts in scores.items():
        n_x, n = ts.n_x, ts.scores[versus].shape[1]
        for m in (k for k in ts.scores if k != versus):
            both = np.concatenate([ts.scores[m], ts.scores[versus]], axis=1)  # (seeds, 2n)
            one, other = (seed_mean_effect(ts.scores[k], n_x, ddof) for k in (m, versus))
            per_seed = (weat.effect_sizes(ts.scores[m], n_x, ddof)
                        - weat.effect_sizes(ts.scores[versus], n_x, ddof))
            words = word_interval(lambda ix, iy, axis=-1, one=one, other=other:
                                  one(ix, iy) - other(ix, iy), n_x, n - n_x, level=level,
                                  method=method, n_resamples=n_resamples, seed=seed)
            p, exact = _swap_test(both, n_x, n, n_resamples, seed, ddof)
            rows.append({"test": name, "method": m, "versus": versus,
                         **with_seeds(words, per_seed).row(), "p_value": p, "exact": exact,
                         "seeds_same_sign": bool(np.all(per_seed > 0) or np.all(per_seed < 0))})
    return pd.DataFrame(rows, columns=["test", "method", "versus", "value", *results.UNCERTAINTY,
                                       "p_value", "exact", "seeds_same_sign"])


def _swap_test(both: np.ndarray, n_x: int, n: int, n_resamples: int, seed: int,
               ddof: int) -> tuple[float, bool]:
    """Two-sided permutation p of mean_s d(first n columns) - mean_s d(last n): each word's
    columns swapped between the halves (in every seed at once)."""
    def diff(a, b, axis=-1):
        a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
        return weat.effect_sizes(both[:, a], n_x, ddof).mean(axis=0) \
            - weat.effect_sizes(both[:, b], n_x, ddof).mean(axis=0)

    res = sps.permutation_test((np.arange(n, dtype=float), np.arange(n, 2 * n, dtype=float)),
                               diff, permutation_type="samples", vectorized=True,
                               n_resamples=n_resamples, alternative="two-sided",
                               rng=np.random.default_rng(seed))
    return float(res.pvalue), 2**n <= n_resamples


def ripa_summary(runs: pd.DataFrame, *, versus: str = "original", level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean |RIPA| over the words and seeds, per method, with its interval (words, then seeds);
    and each method minus ``versus``, paired over the same words (each word's |RIPA| averaged over
    the same seeds) with :func:`biasbook.stats.paired_difference`'s permutation p.

    Used in: indirect-stereotypes/03.
    """
    wide = {m: g.pivot(index="seed", columns="word", values="ripa").abs()
            for m, g in runs[~runs["oov"]].groupby("method", sort=False)}
    words = sorted(set.intersection(*(set(w.columns) for w in wide.values())))
    seeds = sorted(set.intersection(*(set(w.index) for w in wide.values())))
    wide = {m: w.loc[seeds, words].to_numpy() for m, w in wide.items()}
    opts = {"level": level, "n_resamples": n_resamples, "seed": seed, "unit": "words"}
    means = [{"method": m, **with_seeds(bca_or_percentile(stats.interval, a.mean(axis=0),
                                                           **opts), a.mean(axis=1)).row(),
              "words": len(words)} for m, a in wide.items()]
    diffs = []
    for m in (k for k in wide if k != versus):
        d = bca_or_percentile(stats.paired_difference, wide[m].mean(axis=0),
                               wide[versus].mean(axis=0), **opts)
        per_seed = wide[m].mean(axis=1) - wide[versus].mean(axis=1)
        diffs.append({"test": "ripa-mean-abs", "method": m, "versus": versus,
                      **with_seeds(d.interval, per_seed).row(), "p_value": d.p_value,
                      "exact": d.exact,
                      "seeds_same_sign": bool(np.all(per_seed > 0) or np.all(per_seed < 0))})
    return pd.DataFrame(means), pd.DataFrame(diffs)


def holm_family(frame: pd.DataFrame, *, alpha: float = 0.05,
                not_supported: str = NOT_SUPPORTED) -> pd.DataFrame:
    """``frame`` (one row per comparison, columns ``value``, ``ci_low``, ``ci_high``, ``p_value``)
    with Holm's adjusted p over every row that has a p (``p_holm``), ``holds`` (corrected p <=
    ``alpha`` and an interval that excludes 0) and the ``verdict`` these support.

    Used in: indirect-stereotypes/03.
    """
    out = frame.copy()
    out["p_holm"] = stats.holm_tested(out["p_value"])
    significant = out["p_holm"].le(alpha)
    excludes = out["ci_low"].gt(0) | out["ci_high"].lt(0)
    out["holds"] = significant & excludes
    out["verdict"] = [_verdict(v, s, e, p, alpha, not_supported) for v, s, e, p in
                      zip(out["value"], significant, excludes, out["p_holm"], strict=True)]
    out["finding"] = [("higher" if v > 0 else "lower") if h else "not supported"
                      for v, h in zip(out["value"], out["holds"], strict=True)]
    return out


def _verdict(value: float, significant: bool, excludes: bool, p_holm: float, alpha: float,
             not_supported: str) -> str:
    if not np.isfinite(p_holm):
        return "no test (one seed, or no spread)"
    if significant and excludes:
        return "higher" if value > 0 else "lower"
    if significant:
        return f"{not_supported} (corrected p ≤ {alpha}, but the interval with the seeds " \
               "includes 0)"
    return not_supported
