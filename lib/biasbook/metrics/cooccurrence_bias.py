"""Co-occurrence gender bias scores (Bordia & Bowman 2019, sections 3.3.1 and 3.3.2).

Pure functions on count arrays, e.g. those of
:func:`biasbook.text.cooccurrence.count_cooccurrences`:

- P(w|g) = (c(w, g) / sum_i c(w_i, g)) / (c(g) / sum_i c(w_i))
- bias(w) = log(P(w|f) / P(w|m)); > 0 leans female, < 0 leans male
- mu = ``mean(|bias|)``, sigma = stdev(bias)
- beta: slope of the least-squares line bias_generated(w) = beta * bias_train(w) + c

Words with a zero male or female count have no finite score: they are left out and listed, with
the reason, in :attr:`BiasScores.dropped`; nothing returns NaN or inf silently.

On PTB train (fixed context, k = 10) the printed formula gives mu 2.04, sigma 0.99; the paper's
Table 1 reports 0.83, 1.00. The authors' n-gram counts (``mode="as-coded"`` in
:mod:`biasbook.text.cooccurrence`) scored with ``gender_frequency=False`` give 0.83, 0.99: that is
the book's reconstruction of the paper's score. The authors' script itself writes m / (m + f)
(``mode="as-coded"`` here).

>>> s = bias_scores(["doctor", "nurse"], male=[4, 1], female=[1, 4], n_male=1, n_female=1)
>>> s.scores.round(3).tolist()
[-1.386, 1.386]
>>> round(mean_abs_bias(s), 3), round(std_bias(s), 3)
(1.386, 1.961)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from biasbook import validate


@dataclass(frozen=True)
class BiasScores:
    """Per-word bias scores; ``dropped`` maps each word left out to the reason."""

    words: tuple[str, ...]
    scores: np.ndarray
    dropped: dict[str, str] = field(default_factory=dict)
    mode: str = "paper"

    def to_series(self) -> pd.Series:
        """Scores as a Series indexed by word."""
        return pd.Series(self.scores, index=pd.Index(self.words, name="word"), name="bias")


@dataclass(frozen=True)
class BiasRegression:
    """Slope ``beta`` and ``intercept`` of generated-text bias on training-corpus bias.

    ``n_words`` words were fitted; ``outliers`` were removed first; ``unmatched`` counts words
    scored in only one of the two corpora.
    """

    beta: float
    intercept: float
    n_words: int
    outliers: tuple[str, ...]
    unmatched: int


def p_word_given_gender(
    cooc: Sequence[float], n_gender: float, word_counts: Sequence[float]
) -> np.ndarray:
    """P(w|g) of section 3.3.1 for every target word.

    ``cooc`` holds c(w, g) over the target vocabulary, ``n_gender`` is c(g) (tokens of class g)
    and ``word_counts`` holds c(w) over the same vocabulary.

    >>> p_word_given_gender([1, 3], n_gender=2, word_counts=[5, 5]).tolist()
    [1.25, 3.75]
    """
    cooc = _counts("cooc", cooc)
    word_counts = _counts("word_counts", word_counts)
    if len(cooc) != len(word_counts):
        raise ValueError(f"cooc has {len(cooc)} entries, word_counts {len(word_counts)}")
    if cooc.sum() <= 0 or word_counts.sum() <= 0:
        raise ValueError("co-occurrence and word counts must each sum to more than 0")
    if not n_gender > 0:
        raise ValueError(f"n_gender (c(g)) must be > 0, got {n_gender}")
    return (cooc / cooc.sum()) / (n_gender / word_counts.sum())


def bias_scores(
    words: Sequence[str],
    male: Sequence[float],
    female: Sequence[float],
    n_male: float,
    n_female: float,
    *,
    mode: str = "paper",
    gender_frequency: bool = True,
) -> BiasScores:
    """Per-word bias, dropping (and reporting) words with a zero male or female count.

    ``mode="paper"``: log(P(w|f) / P(w|m)); the sums over all target words (dropped ones
    included) normalise each class, and sum_i c(w_i) cancels in the ratio.
    ``gender_frequency=False`` leaves out the c(g) / sum_i c(w_i) denominator of P(w|g), which
    shifts every score by log(c(f) / c(m)) (-1.49 on PTB): this changes mu, not sigma or beta.
    ``mode="as-coded"``: the authors' ``m / (m + f)`` (``n_male``, ``n_female`` unused, yet
    checked like counts: an impossible one is a mistake in the call).

    >>> s = bias_scores(["a", "b", "c"], [2, 0, 2], [2, 1, 6], n_male=1, n_female=2)
    >>> s.scores.round(3).tolist(), s.dropped
    ([-1.504, -0.405], {'b': 'zero male count'})
    >>> bias_scores(["a"], [2], [2], 1, 2, gender_frequency=False).scores.tolist()
    [0.0]
    >>> bias_scores(["a", "c"], [2, 2], [2, 6], 1, 2, mode="as-coded").scores.tolist()
    [0.5, 0.25]
    """
    validate.choice("mode", mode, validate.MODES)
    words = tuple(validate.word_list("words", words))
    male, female = _counts("male", male), _counts("female", female)
    if not len(words) == len(male) == len(female):
        raise ValueError(f"lengths differ: {len(words)} words, {len(male)} male, {len(female)}")
    if len(set(words)) != len(words):
        raise ValueError("words must be unique")
    keep = (male > 0) & (female > 0)
    reasons = np.where(male == 0, "zero male count", "zero female count").astype(object)
    reasons[(male == 0) & (female == 0)] = "zero male and female counts"
    dropped = {words[i]: reasons[i] for i in np.flatnonzero(~keep)}
    if not keep.any():
        raise ValueError("no word has both a male and a female co-occurrence count > 0 (is one "
                         "class absent from the corpus? see Cooccurrence.absent)")
    if not (0 < n_male < np.inf and 0 < n_female < np.inf):
        raise ValueError(f"n_male and n_female must be finite and > 0, got {n_male}, "
                         f"{n_female} (0: no word of that class occurs in the corpus; "
                         "see Cooccurrence.absent)")
    if mode == "as-coded":
        scores = male[keep] / (male[keep] + female[keep])
    else:
        scale_f, scale_m = (n_female, n_male) if gender_frequency else (1.0, 1.0)
        # in logs: infinite-context counts can be denormal floats whose ratio underflows
        log_p_f = np.log(female[keep]) - np.log(female.sum() * scale_f)
        log_p_m = np.log(male[keep]) - np.log(male.sum() * scale_m)
        scores = log_p_f - log_p_m
    kept = tuple(words[i] for i in np.flatnonzero(keep))
    return BiasScores(words=kept, scores=scores, dropped=dropped, mode=mode)


def mean_abs_bias(scores: BiasScores | Sequence[float]) -> float:
    """mu = ``mean(|bias|)``.

    >>> mean_abs_bias([-1.0, 0.5])
    0.75
    """
    return float(np.mean(np.abs(_scores(scores))))


def std_bias(scores: BiasScores | Sequence[float], ddof: int = 1) -> float:
    """sigma = stdev(bias); sample standard deviation (``ddof=1``) unless told otherwise.

    >>> std_bias([1.0, 3.0]), std_bias([1.0, 3.0], ddof=0)
    (1.4142135623730951, 1.0)
    """
    values = _scores(scores)
    validate.ddof(ddof)
    if len(values) <= ddof:
        raise ValueError(f"need more than {ddof} scores for a standard deviation")
    return float(np.std(values, ddof=ddof))


def tukey_inliers(values: Sequence[float], k: float = 1.5) -> np.ndarray:
    """Mask of values inside Tukey's fences [Q1 - k IQR, Q3 + k IQR].

    >>> tukey_inliers([1, 2, 3, 4, 100]).tolist()
    [True, True, True, True, False]
    """
    values = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:  # a NaN makes the quartiles NaN: every value would fail the fences
        raise ValueError(f"values at positions {bad[:10].tolist()} are NaN or infinite")
    if not (np.isfinite(k) and k >= 0):
        raise ValueError(f"k must be finite and >= 0, got {k}")
    q1, q3 = np.percentile(values, [25, 75])
    return (values >= q1 - k * (q3 - q1)) & (values <= q3 + k * (q3 - q1))


def bias_regression(
    train: BiasScores, generated: BiasScores, *, outlier_iqr: float | None = 1.5
) -> BiasRegression:
    """beta of section 3.3.2: regress generated-text bias on training bias over shared words.

    The paper regresses "after removing the outliers" without a rule; here a word is an outlier
    when its training or its generated score lies outside Tukey's fences with ``outlier_iqr``
    (1.5 by default; ``None`` keeps every word).

    >>> tr = BiasScores(("a", "b", "c", "d"), np.array([-1.0, 0.0, 1.0, 2.0]))
    >>> ge = BiasScores(("a", "b", "c", "e"), np.array([-0.5, 0.5, 1.5, 9.0]))
    >>> r = bias_regression(tr, ge, outlier_iqr=None)
    >>> r.beta, r.intercept, r.n_words, r.unmatched
    (1.0, 0.5, 3, 2)
    """
    x, y = train.to_series(), generated.to_series()
    for name, s in (("training", x), ("generated", y)):
        bad = s.index[~np.isfinite(s.to_numpy())]
        if len(bad):
            raise ValueError(f"{name} bias scores of {list(bad[:10])} are NaN or infinite")
    shared = x.index.intersection(y.index, sort=False)
    x, y = x[shared].to_numpy(), y[shared].to_numpy()
    unmatched = len(train.words) + len(generated.words) - 2 * len(shared)
    keep = np.ones(len(shared), dtype=bool)
    if outlier_iqr is not None and len(shared):
        keep = tukey_inliers(x, outlier_iqr) & tukey_inliers(y, outlier_iqr)
    if keep.sum() < 2 or np.ptp(x[keep]) == 0:
        raise ValueError(
            f"need at least 2 shared words with distinct training scores; {len(shared)} shared, "
            f"{int(keep.sum())} after outlier removal"
        )
    beta, intercept = np.polyfit(x[keep], y[keep], 1)
    return BiasRegression(
        beta=float(beta),
        intercept=float(intercept),
        n_words=int(keep.sum()),
        outliers=tuple(shared[~keep]),
        unmatched=unmatched,
    )


def _counts(name: str, values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    return array


def _scores(scores: BiasScores | Sequence[float]) -> np.ndarray:
    values = scores.scores if isinstance(scores, BiasScores) else np.asarray(scores, dtype=float)
    if len(values) == 0:
        raise ValueError("no bias scores")
    if not np.all(np.isfinite(values)):
        raise ValueError("bias scores must be finite")
    return values
