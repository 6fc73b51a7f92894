"""How sure is a number of this chapter? Intervals over words and over training seeds, the λ test.

Which interval covers what (both notebooks; every interval is 95%):

- **One text, over its words.** μ and σ of a text -- a training corpus, a same-size sample of
  it, the text one model generated -- and the script's m/(m+f) mean are averages over the words
  the text scores (those that meet both genders). The words are resampled with replacement
  (:func:`biasbook.stats.interval`, percentile method, resample seed 0); each keeps the score
  already computed. So the interval covers *which words* the text happens to score; it does not
  redraw the co-occurrences behind one word's score, and it does not cover the training of the
  model behind a generated text. β is resampled over the words scored in both the training and
  the generated text (a word's two scores stay together; Tukey's fences are re-applied to every
  resample, as :func:`~biasbook.metrics.cooccurrence_bias.bias_regression` applies them once).
- **A trained model, over training seeds.** Each seed repeats the whole experiment (warm-up,
  models, generated texts), so the spread of a number over seeds holds the training *and* the
  sampling of its text: :func:`biasbook.stats.seed_spread`, a t-interval of the mean over seeds
  (none from a single seed).
- **The λ effect.** Δμ = μ(λ) − μ(λ = 0) within a seed (the two models share their warm-up, data
  and seed), tested over seeds with a one-sample t-test (its 95% interval is the seed interval
  of Δμ) and Holm's correction over the λ > 0 of a corpus (:func:`lambda_effects`). Each test is
  a pair, λ against λ = 0, recorded under :data:`EFFECT_LABELS` (``versus`` names the other side)
  as the book's tests of differences are: the difference ``lambda_effect`` with its interval and
  ``lambda_effect_p_holm``, which the trust page reads (:mod:`biasbook.chapters.trust.records`).

Frames carry an interval as the record fields of :data:`biasbook.results.UNCERTAINTY`, prefixed
by the statistic when a frame holds several (``mu ci_low``, ``sigma ci_low``, ...);
:meth:`biasbook.results.Recorder.metrics` records them (``ci="mu "``).

>>> ci = over_words([-1.0, 0.5, 0.25, -0.5, 2.0], "mu", n_resamples=999)
>>> print(ci.text(3), ci.n_units, ci.unit)
0.850 [0.400, 1.450] 5 words
>>> sorted(columns(None, "mu "))[:2]
['mu ci_high', 'mu ci_level']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import reporting, stats
from biasbook.metrics.cooccurrence_bias import BiasScores
from biasbook.results import UNCERTAINTY

LEVEL = 0.95
METHOD = "percentile"  # thousands of words: BCa's jackknife would cost n evaluations per interval
SEED = 0  # the resamples' seed: an interval is the same on every run
ALPHA = 0.05  # family-wise level of the λ tests
#: Record label -> column of :func:`lambda_effects`: the corpus, and the pair each test compares,
#: ``lam`` (its λ) against ``versus`` (λ = 0).
EFFECT_LABELS = {"corpus": "corpus", "lam": "λ", "versus": "versus"}


def mean_abs(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """μ = mean |bias| along ``axis`` (every bootstrap resample at once).

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    return np.mean(np.abs(x), axis=axis)


def stdev(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """σ = sample standard deviation (ddof 1) along ``axis``.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    return np.std(x, ddof=1, axis=axis)


WORD_STATISTICS = {"mu": mean_abs, "sigma": stdev, "mean": np.mean}


def over_words(values: Sequence[float], statistic: str = "mu", *, n_resamples: int,
               seed: int = SEED) -> stats.Interval | None:
    """The interval of ``statistic`` (``mu``, ``sigma`` or ``mean``) of one text's per-word
    values, over its words; ``None`` for fewer than two words.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return None
    return stats.interval(values, WORD_STATISTICS[statistic], level=LEVEL, method=METHOD,
                          n_resamples=n_resamples, seed=seed, unit="words")


PAIR_STATISTICS = {"same sign": stats.same_sign, "pearson r": stats.pearson}


def over_word_pairs(x: Sequence[float], y: Sequence[float], statistic: str, *,
                    n_resamples: int, seed: int = SEED) -> stats.Interval | None:
    """The interval of ``statistic`` (``same sign``, ``pearson r``) of two aligned per-word
    values, over the words (pairs stay together); ``None`` for fewer than three words or where
    a resample leaves it undefined (r of a constant side).

    Used in: lm-gender-bias/01.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3:
        return None
    try:
        return stats.interval((x, y), PAIR_STATISTICS[statistic], level=LEVEL, method=METHOD,
                              n_resamples=n_resamples, seed=seed, unit="words")
    except ValueError:
        return None


def _inside_fences(v: np.ndarray, k: float) -> np.ndarray:
    q1, q3 = np.percentile(v, [25, 75], axis=-1, keepdims=True)
    return (v >= q1 - k * (q3 - q1)) & (v <= q3 + k * (q3 - q1))


def beta_statistic(outlier_iqr: float = 1.5):
    """β of :func:`~biasbook.metrics.cooccurrence_bias.bias_regression` on aligned training and
    generated scores, vectorised over resamples: the least-squares slope over the words inside
    Tukey's fences on both sides (NaN where fewer than two distinct training scores remain).

    Used in: lm-gender-bias/02.

    >>> x, y = np.array([-1.0, 0.0, 1.0, 2.0, 30.0]), np.array([-0.5, 0.5, 1.5, 2.5, 0.0])
    >>> float(beta_statistic()(x, y))  # 30 lies outside the fences: the slope of the rest
    1.0
    """
    def beta(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
        w = (_inside_fences(x, outlier_iqr) & _inside_fences(y, outlier_iqr)).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            n = w.sum(axis=-1, keepdims=True)
            dx = x - (w * x).sum(axis=-1, keepdims=True) / n
            dy = y - (w * y).sum(axis=-1, keepdims=True) / n
            sxx = (w * dx * dx).sum(axis=-1)
            return np.where(sxx > 0, (w * dx * dy).sum(axis=-1) / sxx, np.nan)
    return beta


def beta_interval(train: BiasScores | None, generated: BiasScores | None, *, n_resamples: int,
                  outlier_iqr: float = 1.5, seed: int = SEED) -> stats.Interval | None:
    """The interval of β over the words scored in both texts; ``None`` where a resample (or the
    data) leaves no slope -- too few shared words or too many ties.

    Used in: lm-gender-bias/02.
    """
    if train is None or generated is None:
        return None
    x, y = train.to_series(), generated.to_series()
    shared = x.index.intersection(y.index, sort=False)
    if len(shared) < 3:
        return None
    try:
        return stats.interval((x[shared].to_numpy(), y[shared].to_numpy()),
                              beta_statistic(outlier_iqr), level=LEVEL, method=METHOD,
                              n_resamples=n_resamples, seed=seed, unit="shared words")
    except ValueError:  # NaN on some resample: the interval is undefined, not a number
        return None


def columns(ci: stats.Interval | stats.SeedSpread | None, prefix: str = "") -> dict:
    """The record fields of :data:`~biasbook.results.UNCERTAINTY` of ``ci`` (NaN without one),
    each named ``prefix + field``.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    row = ci.row() if ci is not None else dict.fromkeys(UNCERTAINTY, np.nan)
    return {f"{prefix}{k}": row[k] for k in UNCERTAINTY}


def word_columns(s: BiasScores | None, *, n_resamples: int) -> dict:
    """``mu ci_low`` ... ``sigma ci_method``: μ's and σ's intervals over the words of ``s``.

    Used in: lm-gender-bias/01, lm-gender-bias/02.
    """
    out = {}
    for stat in ("mu", "sigma"):
        ci = over_words(s.scores, stat, n_resamples=n_resamples) if s is not None else None
        out.update(columns(ci, f"{stat} "))
    return out


def over_seeds(values: Sequence[float]) -> stats.SeedSpread | None:
    """:func:`biasbook.stats.seed_spread` of the finite values; ``None`` with fewer than two.

    Used in: lm-gender-bias/02.
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return stats.seed_spread(values) if values.size >= 2 else None


def shown(frame: pd.DataFrame, values: Mapping[str, str], digits: int = 2) -> pd.DataFrame:
    """``frame`` as a reader compares it: each column of ``values`` (``{column: prefix of its
    interval's fields}``) becomes ``value [low, high]`` text, and every interval field is
    dropped.

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    >>> f = pd.DataFrame({"w": [10], "mu": [0.8312], "mu ci_low": [0.8], "mu ci_high": [0.86],
    ...                   "mu ci_units": [120]})
    >>> shown(f, {"mu": "mu "}).to_dict("records")
    [{'w': 10, 'mu': '0.83 [0.80, 0.86]'}]
    """
    out = frame.copy()
    for column, prefix in values.items():
        out[column] = [reporting.interval_text(*r, digits=digits, missing="") for r in zip(
            frame[column], frame[f"{prefix}ci_low"], frame[f"{prefix}ci_high"], strict=True)]
    return out.drop(columns=[c for c in out if isinstance(c, str)
                             and c.endswith(tuple(UNCERTAINTY))])


NOT_THE_PAPERS_MODEL = "another model (plain LSTM, not AWD-LSTM) and text size"
_PARTS = {"wikitext-2": "validation/test text, not the training split",
          "cnn-dailymail": "100 of the paper's 219,506 articles"}


def train_reason(name: str, counting: str, context: str, *,
                 prefix_tokens: int | None = None) -> str | None:
    """Why our training-corpus μ, σ cannot be held against the paper's (``None``: they can).

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    Only the ``as-coded`` counting in the fixed context of the text the paper measured is the
    same quantity: the printed counting is another score, the paper's infinite-context window is
    unknown, and μ and σ depend on the size of the text.

    >>> train_reason("ptb", "as-coded", "fixed") is None
    True
    >>> train_reason("ptb", "as-coded", "fixed", prefix_tokens=30000)
    'a 30,000-token prefix; μ, σ depend on text size'
    """
    if counting != "as-coded":
        return "printed counting; the paper's numbers are the authors' counting"
    if context != "fixed":
        return "the paper's infinite-context window is unknown"
    if prefix_tokens:
        return f"a {prefix_tokens:,}-token prefix; μ, σ depend on text size"
    return _PARTS.get(name)


def lambda_effects(per_seed: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """Per corpus and λ > 0: is Δμ = μ(λ) − μ(λ = 0), taken within each training seed, real?

    Used in: lm-gender-bias/02.

    Columns: ``λ`` and ``versus`` (0.0: the λ the change is taken from, the pair's other side);
    ``seeds``; ``value`` (mean Δμ) with the seeds' t-interval (``ci_*``); ``p_value``
    of the one-sample t-test of mean Δμ = 0 over the seeds; ``p_holm``, Holm's adjustment over
    the corpus's testable λ; ``holds`` (``p_holm`` <= ``alpha``); and ``verdict``. Fewer than
    two seeds, or seeds that all agree exactly, cannot be tested (NaN p, not held).
    """
    rows = []
    for name, g in per_seed[per_seed["lam"] > 0].groupby("corpus", sort=False):
        family = []
        for lam, h in g.groupby("lam", sort=True):
            spread = over_seeds(h["delta mu"])
            delta = h["delta mu"].dropna().to_numpy(dtype=float)
            p = np.nan
            # seeds that agree to rounding have no spread to test against (t would be infinite)
            if spread is not None and spread.sd > 1e-12 * max(1.0, abs(spread.mean)):
                p = float(sps.ttest_1samp(delta, 0.0).pvalue)
            family.append({"corpus": name, "λ": float(lam), "versus": 0.0, "seeds": len(delta),
                           "value": float(delta.mean()) if len(delta) else np.nan,
                           **columns(spread), "p_value": p})
        adjusted = stats.holm_tested([r["p_value"] for r in family])
        for row, p_holm in zip(family, adjusted, strict=True):
            row.update(p_holm=p_holm, holds=bool(p_holm <= alpha))
            row["verdict"] = _verdict(row, alpha)
        rows += family
    return pd.DataFrame(rows, columns=["corpus", "λ", "versus", "seeds", "value", *UNCERTAINTY,
                                       "p_value", "p_holm", "holds", "verdict"])


def _verdict(row: dict, alpha: float) -> str:
    if row["seeds"] < 2:
        return "not testable: one training seed"
    if pd.isna(row["p_value"]):
        return "not testable: no spread over seeds"
    if row["holds"]:
        way = "lowers" if row["value"] < 0 else "raises"
        return f"real: λ {way} μ (Holm p = {row['p_holm']:.3g} ≤ {alpha:g})"
    return f"not supported (Holm p = {row['p_holm']:.3g} > {alpha:g})"


def effect_sentences(effects: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """The verdicts of :func:`lambda_effects` as Markdown: which λ effects the corrected test
    supports, then one line per corpus and λ (``labels`` names the corpora).

    Used in: lm-gender-bias/02.
    """
    labels, rows = labels or {}, effects.to_dict("records")
    real = [f"{labels.get(r['corpus'], r['corpus'])} at λ = {r['λ']:g}" for r in rows
            if r["holds"]]
    lines = [f"**λ effects on μ that the corrected test supports:** "
             f"{', '.join(real) if real else 'none'}.", ""]
    for r in rows:
        ci = reporting.interval_text(r["value"], r["ci_low"], r["ci_high"], digits=3, missing="–")
        lines.append(f"- {labels.get(r['corpus'], r['corpus'])}, λ = {r['λ']:g}: Δμ = {ci} "
                     f"over {r['seeds']} seed(s): {r['verdict']}")
    return "\n".join(lines)
