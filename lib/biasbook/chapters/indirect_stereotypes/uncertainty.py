"""How sure are the chapter's numbers? Intervals over words and seeds, paired method tests, Holm.

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
  :func:`biasbook.stats.paired_difference`).
- **The seeds**: the estimate is the mean over the training seeds;
  :func:`biasbook.stats.seed_spread` gives the t half-width of the per-seed values, and
  :func:`with_seeds` adds it to each side of the words' interval in quadrature, so that **the
  interval covers the seed as well as the words** (``ci_unit`` says "... and 3 seeds"). The
  words' bootstrap already carries part of the per-word training noise, so the sum is on the
  conservative side. With one seed, the interval covers the words only and says so.
- **Table 1** (semantic benchmarks): the seeds only, as the per-item scores are not exposed by
  :mod:`biasbook.embeddings.benchmarks`: the mean over seeds of the per-seed relative change, with
  its t-interval and a one-sample t-test (:func:`table1_intervals`).

Method against Original, always on the same words and the same seeds:

- WEAT: ``D = mean_s d(method, s) - mean_s d(Original, s)``; interval as above (the same
  resampled words for both methods; per-seed ``D_s`` paired by seed); p-value from
  ``scipy.stats.permutation_test`` swapping each target word's associations (in every seed at
  once) between the two methods, two-sided, exact when ``2 ** (|X| + |Y|) <= n_resamples``
  (:func:`weat_differences`).
- RIPA: ``mean |RIPA|`` of the method minus Original's, per word averaged over seeds
  (:func:`ripa_summary`).
- The chapter's family of such comparisons gets Holm's correction (:func:`holm_family`); a
  difference **holds** only when the corrected p is at most ``alpha`` *and* the interval (words
  and seeds) excludes 0. The verdict text is computed from these, never written by hand.

>>> s = np.array([[0.3, 0.1, -0.1, -0.2]])        # one seed: X = first two words, Y = the rest
>>> round(float(effect_sizes(s, 2)[0]), 4)         # (0.2 - (-0.15)) / 0.2217 (ddof=1)
1.5785
>>> print(fmt(0.52, 0.1, 0.904))
0.52 [0.10, 0.90]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import results, stats
from biasbook.embeddings import wordsets
from biasbook.metrics import weat

from .pipeline import LABELS
from .tables import PAPER_METHOD, paper

UNCERTAINTY = ("ci_low", "ci_high", "ci_level", "ci_unit", "ci_units", "ci_method")
NOT_SUPPORTED = "not a difference these words and seeds support"
NOT_SUPPORTED_SEEDS = "not a difference the seeds support"


def fmt(value: float, low: float, high: float, digits: int = 2) -> str:
    """``value [low, high]`` as the tables print it; ``—`` when the value is missing."""
    if value is None or not np.isfinite(value):
        return "—"
    if low is None or not (np.isfinite(low) and np.isfinite(high)):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def effect_sizes(scores: np.ndarray, n_x: int, ddof: int = 1) -> np.ndarray:
    """WEAT's effect size along the last axis of per-word associations: the first ``n_x`` are the
    X words, the rest the Y words; the spread is the standard deviation over all of them."""
    s = np.asarray(scores, dtype=float)
    return (s[..., :n_x].mean(axis=-1) - s[..., n_x:].mean(axis=-1)) / s.std(axis=-1, ddof=ddof)


# --- per-word associations of the words WEAT uses -------------------------------------------------

def target_sets(kv, test, *, min_coverage: float = 0.5) -> dict[str, list[str]] | None:
    """The words of X, Y, A and B that WEAT uses on ``kv``: those with vectors, the longer of X and
    Y cut to the shorter one's size by dropping its last words (the rule of
    :func:`biasbook.metrics.weat.weat`); ``None`` when a set keeps less than ``min_coverage``."""
    found = {side: [w for w in getattr(test, side) if w in kv.key_to_index] for side in weat.SETS}
    for side in weat.SETS:
        if not found[side] or len(found[side]) < min_coverage * len(getattr(test, side)):
            return None
    size = min(len(found["x"]), len(found["y"]))
    found["x"], found["y"] = found["x"][:size], found["y"][:size]
    return found


def associations(kv, words: Mapping[str, list[str]]) -> np.ndarray:
    """s(w, A, B) of the X words, then the Y words (:func:`biasbook.metrics.weat.associations`)."""
    return weat.associations(np.asarray(kv[words["x"] + words["y"]], dtype=float),
                             np.asarray(kv[words["a"]], dtype=float),
                             np.asarray(kv[words["b"]], dtype=float))


@dataclass(frozen=True)
class WordScores:
    """One WEAT test's per-word associations: ``scores[method]`` is (seeds, |X| + |Y|)."""

    test: str
    words: dict[str, list[str]]
    seeds: list
    scores: dict[str, np.ndarray]

    @property
    def n_x(self) -> int:
        return len(self.words["x"])


def weat_scores(kvs: Mapping[tuple[str, int], object], tests: Mapping[str, object],
                runs: pd.DataFrame | None = None, *, ddof: int = 1) -> dict[str, WordScores]:
    """Per computable test, the associations of its words in every (method, seed) of ``kvs``
    (vectors already cut to the shared vocabulary, e.g. by :func:`.tables.shared_vectors`).

    With ``runs`` (:func:`.tables.weat_runs`), each effect size recomputed from the associations
    must equal WEAT's own: a change of WEAT's word rule cannot slip by unnoticed."""
    methods = list(dict.fromkeys(m for m, _ in kvs))
    seeds = sorted({s for _, s in kvs})
    if missing := [(m, s) for m in methods for s in seeds if (m, s) not in kvs]:
        raise ValueError(f"every method needs the same seeds; missing {missing}")
    first = kvs[(methods[0], seeds[0])]
    computable = None if runs is None else set(runs.loc[runs["computable"], "test"])
    out = {}
    for name, test in tests.items():
        words = target_sets(first, test)
        if words is None or (computable is not None and name not in computable):
            continue
        scores = {m: np.vstack([associations(kvs[(m, s)], words) for s in seeds])
                  for m in methods}
        out[name] = WordScores(name, words, seeds, scores)
        if runs is not None:
            _check_against(runs, out[name], ddof)
    return out


def _check_against(runs: pd.DataFrame, ts: WordScores, ddof: int) -> None:
    for method, s in ts.scores.items():
        for k, seed in enumerate(ts.seeds):
            row = runs[(runs["test"] == ts.test) & (runs["method"] == method)
                       & (runs["seed"] == seed)]
            want = row["effect_size"].item() if len(row) == 1 else math.nan
            got = float(effect_sizes(s[k], ts.n_x, ddof))
            if not math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9):
                raise ValueError(f"{ts.test} ({method}, seed {seed}): effect size {got:.6f} "
                                 f"from the words {ts.words}, WEAT reports {want}: the word "
                                 "rules differ")


# --- intervals ------------------------------------------------------------------------------------

def word_interval(statistic: Callable, n_x: int, n_y: int, *, level: float = 0.95,
                  method: str = "BCa", n_resamples: int = 9999, seed: int = 0,
                  unit: str = "target words") -> stats.Interval:
    """Stratified bootstrap interval of ``statistic(ix, iy, axis=-1)``: ``ix`` and ``iy`` are
    indices of X and Y words resampled with replacement *apart*, |X| and |Y| of them
    (:func:`biasbook.stats.interval` with ``paired=False``). A BCa interval that comes out
    undefined (a degenerate jackknife) is replaced by the percentile one, and says so."""
    data = (np.arange(n_x, dtype=float), np.arange(n_y, dtype=float))
    try:
        return stats.interval(data, statistic, level=level, method=method,
                              n_resamples=n_resamples, seed=seed, unit=unit, vectorized=True,
                              paired=False)
    except ValueError as err:
        if method.lower() == "percentile" or "undefined" not in str(err):
            raise
    return stats.interval(data, statistic, level=level, method="percentile",
                          n_resamples=n_resamples, seed=seed, unit=unit, vectorized=True,
                          paired=False)


def with_seeds(words: stats.Interval, per_seed: Sequence[float]) -> stats.Interval:
    """``words`` widened by the seeds: each side becomes sqrt(side^2 + h^2), with h the t
    half-width of :func:`biasbook.stats.seed_spread` over ``per_seed`` (whose mean must be the
    interval's value). One seed: ``words`` unchanged (its unit says words only)."""
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


def _seed_mean_effect(scores: np.ndarray, n_x: int, ddof: int) -> Callable:
    """The statistic (ix, iy) -> mean over seeds of the effect size on those words."""
    def statistic(ix, iy, axis=-1):
        idx = np.concatenate([np.asarray(ix, dtype=np.intp),
                              np.asarray(iy, dtype=np.intp) + n_x], axis=-1)
        return effect_sizes(scores[:, idx], n_x, ddof).mean(axis=0)
    return statistic


def weat_intervals(scores: Mapping[str, WordScores], *, level: float = 0.95,
                   method: str = "BCa", n_resamples: int = 9999, seed: int = 0,
                   ddof: int = 1) -> pd.DataFrame:
    """Per (test, method): the mean effect size over seeds with its interval over the target words
    and the seeds (record schema), and the seeds' range."""
    rows = []
    for name, ts in scores.items():
        n_y = len(ts.words["y"])
        for m, s in ts.scores.items():
            per_seed = effect_sizes(s, ts.n_x, ddof)
            words = word_interval(_seed_mean_effect(s, ts.n_x, ddof), ts.n_x, n_y, level=level,
                                  method=method, n_resamples=n_resamples, seed=seed)
            ci = with_seeds(words, per_seed)
            rows.append({"test": name, "method": m, **ci.row(), "n_x": ts.n_x, "n_y": n_y,
                         "seeds": len(per_seed), "seed_min": per_seed.min(),
                         "seed_max": per_seed.max()})
    # the columns even without rows: no test computable when a small corpus lacks the words
    return pd.DataFrame(rows, columns=["test", "method", "value", *results.UNCERTAINTY, "n_x",
                                       "n_y", "seeds", "seed_min", "seed_max"])


def weat_differences(scores: Mapping[str, WordScores], *, versus: str = "original",
                     level: float = 0.95, method: str = "BCa", n_resamples: int = 9999,
                     seed: int = 0, ddof: int = 1) -> pd.DataFrame:
    """Per test and method other than ``versus``: the difference of mean effect sizes
    (method - versus) on the same words and seeds, its interval (words and seeds), and the
    permutation p-value that swaps each word's associations between the two methods."""
    rows = []
    for name, ts in scores.items():
        n_x, n = ts.n_x, ts.scores[versus].shape[1]
        for m in (k for k in ts.scores if k != versus):
            both = np.concatenate([ts.scores[m], ts.scores[versus]], axis=1)  # (seeds, 2n)
            one, other = _seed_mean_effect(ts.scores[m], n_x, ddof), \
                _seed_mean_effect(ts.scores[versus], n_x, ddof)
            per_seed = effect_sizes(ts.scores[m], n_x, ddof) \
                - effect_sizes(ts.scores[versus], n_x, ddof)
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
        return effect_sizes(both[:, a], n_x, ddof).mean(axis=0) \
            - effect_sizes(both[:, b], n_x, ddof).mean(axis=0)

    res = sps.permutation_test((np.arange(n, dtype=float), np.arange(n, 2 * n, dtype=float)),
                               diff, permutation_type="samples", vectorized=True,
                               n_resamples=n_resamples, alternative="two-sided",
                               rng=np.random.default_rng(seed))
    return float(res.pvalue), 2**n <= n_resamples


# --- RIPA -----------------------------------------------------------------------------------------

def ripa_summary(runs: pd.DataFrame, *, versus: str = "original", level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean |RIPA| over the words and seeds, per method, with its interval (words, then seeds);
    and each method minus ``versus``, paired over the same words (each word's |RIPA| averaged over
    the same seeds) with :func:`biasbook.stats.paired_difference`'s permutation p."""
    ok = runs[~runs["oov"]]
    wide = {m: g.pivot(index="seed", columns="word", values="ripa").abs()
            for m, g in ok.groupby("method", sort=False)}
    words = sorted(set.intersection(*(set(w.columns) for w in wide.values())))
    seeds = sorted(set.intersection(*(set(w.index) for w in wide.values())))
    wide = {m: w.loc[seeds, words].to_numpy() for m, w in wide.items()}
    opts = {"level": level, "n_resamples": n_resamples, "seed": seed, "unit": "words"}
    means = [{"method": m, **with_seeds(_bca_or_percentile(stats.interval, a.mean(axis=0),
                                                           **opts), a.mean(axis=1)).row(),
              "words": len(words)} for m, a in wide.items()]
    diffs = []
    for m in (k for k in wide if k != versus):
        d = _bca_or_percentile(stats.paired_difference, wide[m].mean(axis=0),
                               wide[versus].mean(axis=0), **opts)
        per_seed = wide[m].mean(axis=1) - wide[versus].mean(axis=1)
        diffs.append({"test": "ripa-mean-abs", "method": m, "versus": versus,
                      **with_seeds(d.interval, per_seed).row(), "p_value": d.p_value,
                      "exact": d.exact,
                      "seeds_same_sign": bool(np.all(per_seed > 0) or np.all(per_seed < 0))})
    return pd.DataFrame(means), pd.DataFrame(diffs)


def _bca_or_percentile(function: Callable, *args, **options):
    """``function`` with BCa, or with the percentile method where BCa is undefined (e.g. every
    word moved by the same amount: a degenerate jackknife); the result's method says which."""
    try:
        return function(*args, method="BCa", **options)
    except ValueError as err:
        if "undefined" not in str(err):
            raise
        return function(*args, method="percentile", **options)


def ripa_word_table(runs: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per word and method, the mean RIPA over seeds with its t-interval over the seeds (a word's
    RIPA has no items to resample: the word is the item)."""
    rows = []
    for (word, m), g in runs[~runs["oov"]].groupby(["word", "method"], sort=False):
        values = g["ripa"].to_numpy()
        if len(values) > 1:
            row = stats.seed_spread(values, level=level).row()
        else:
            row = {"value": values[0], **dict.fromkeys(UNCERTAINTY)}
        rows.append({"word": word, "method": m, **row})
    return pd.DataFrame(rows)


# --- Table 1 --------------------------------------------------------------------------------------

def table1_intervals(bench: pd.DataFrame, *, versus: str = "original",
                     level: float = 0.95) -> pd.DataFrame:
    """Per benchmark and method: the mean over seeds of the relative change (%) of the score
    against ``versus`` in the same seed, its t-interval over the seeds and a one-sample t-test
    (two-sided p; NaN with one seed or no spread)."""
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
    return pd.DataFrame(rows, columns=[*keys, "method", "versus", "value", *UNCERTAINTY,
                                       "p_value"])


# --- the family of comparisons, and the paper -----------------------------------------------------

def holm_family(frame: pd.DataFrame, *, alpha: float = 0.05,
                not_supported: str = NOT_SUPPORTED) -> pd.DataFrame:
    """``frame`` (one row per comparison, columns ``value``, ``ci_low``, ``ci_high``, ``p_value``)
    with Holm's adjusted p over every row that has a p (``p_holm``), ``holds`` (corrected p <=
    ``alpha`` and an interval that excludes 0) and the ``verdict`` these support."""
    out = frame.copy()
    has_p = out["p_value"].notna()
    out["p_holm"] = np.nan
    if has_p.any():
        out.loc[has_p, "p_holm"] = stats.holm(out.loc[has_p, "p_value"].to_numpy(dtype=float))
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


def comparability(corpus: Mapping, glove: Mapping) -> str:
    """Why our numbers do not measure what the paper's do, or ``""`` when they do (the paper's
    corpus, UMBC WebBase, and its 300-dimensional GloVe: the ``paper`` profile)."""
    if corpus.get("source") == "umbc" and glove.get("dim") == 300:
        return ""
    source = {"un+imdb": "UN debates + IMDB"}.get(corpus.get("source"), corpus.get("source"))
    return f"not comparable ({source}, {glove.get('dim')}d; paper: UMBC WebBase, 300d)"


def paper_check(frame: pd.DataFrame, paper: str, reason: str) -> list[str]:
    """Per row: whether the paper's number (column ``paper``) lies inside our interval ("inside",
    "outside"), "no paper value", or ``reason`` when the quantities are not comparable."""
    out = []
    for value, low, high in zip(frame[paper], frame["ci_low"], frame["ci_high"], strict=True):
        if value is None or pd.isna(value):
            out.append("no paper value")
        elif reason:
            out.append(reason)
        elif pd.isna(low):
            out.append("no interval")
        else:
            out.append("inside" if low <= value <= high else "outside")
    return out


def with_text(frame: pd.DataFrame, digits: int = 2, column: str = "ours") -> pd.DataFrame:
    """``frame`` with a column ``value [low, high]`` (:func:`fmt`; the value alone without an
    interval)."""
    low = frame["ci_low"] if "ci_low" in frame else pd.Series(np.nan, index=frame.index)
    high = frame["ci_high"] if "ci_high" in frame else pd.Series(np.nan, index=frame.index)
    return frame.assign(**{column: [fmt(v, lo, hi, digits) for v, lo, hi in
                                    zip(frame["value"], low, high, strict=True)]})


# --- the notebook's tables ------------------------------------------------------------------------

def weat_table(table: pd.DataFrame, intervals: pd.DataFrame, reason: str) -> pd.DataFrame:
    """Tables 2-4 (:func:`.tables.weat_table`) with, per test and method, the mean effect size
    over seeds and its interval (record schema columns), the seeds' range, and whether the
    paper's effect size lies inside (``paper_check``)."""
    ci = intervals.assign(method=intervals["method"].map(LABELS))
    out = table.merge(ci, on=["test", "method"], how="left")
    out["paper_check"] = paper_check(out, "paper_effect", reason)
    return with_text(out)


def differences_table(weat_diffs: pd.DataFrame, ripa_diffs: pd.DataFrame, reason: str, *,
                      alpha: float = 0.05, numbers: Mapping | None = None) -> pd.DataFrame:
    """The chapter's family of method comparisons (every WEAT test and the mean |RIPA|, each
    method against Original) with Holm's correction (:func:`holm_family`), the paper's difference
    (partial corpus) and whether our verdict goes its way (``agreement``)."""
    numbers = paper() if numbers is None else numbers
    tests = wordsets.load("indirect-stereotypes")
    frame = holm_family(pd.concat([weat_diffs, ripa_diffs], ignore_index=True), alpha=alpha)
    frame["title"] = frame["test"].map({n: t.title for n, t in tests.items()}).fillna(
        "RIPA: mean |RIPA| of the direct tests' words")
    frame["group"] = frame["test"].map({n: t.group for n, t in tests.items()}).fillna("RIPA")
    frame["paper"] = [_paper_difference(numbers, t, m, v) for t, m, v in
                      zip(frame["test"], frame["method"], frame["versus"], strict=True)]
    frame["paper_check"] = paper_check(frame, "paper", reason)
    frame["agreement"] = [
        "no paper value" if pd.isna(p) else "not supported here" if not h
        else "same direction as the paper" if np.sign(v) == np.sign(p) else "opposite direction"
        for v, p, h in zip(frame["value"], frame["paper"], frame["holds"], strict=True)]
    frame["method"] = frame["method"].map(LABELS)
    frame["versus"] = frame["versus"].map(LABELS)
    return with_text(frame)


def _paper_difference(numbers: Mapping, test: str, method: str, versus: str) -> float:
    if test == "ripa-mean-abs":
        rows = numbers["table5"]["rows"]
        cols = numbers["table5"]["columns"]
        i, j = cols.index(PAPER_METHOD[method]), cols.index(PAPER_METHOD[versus])
        both = [(r[i], r[j]) for r in rows.values() if r and r[i] is not None and r[j] is not None]
        return float(np.mean([abs(a) for a, _ in both]) - np.mean([abs(b) for _, b in both]))
    cols = numbers["weat"]["columns"]
    row = numbers["weat"]["effect_size"].get(test)
    if row is None:
        return math.nan
    a, b = row[cols.index(PAPER_METHOD[method])], row[cols.index(PAPER_METHOD[versus])]
    return math.nan if a is None or b is None else float(a - b)


def table5_table(runs: pd.DataFrame, reason: str, *, level: float = 0.95,
                 numbers: Mapping | None = None) -> pd.DataFrame:
    """Table 5: per word, each method's mean RIPA over seeds with its t-interval over the seeds
    (:func:`ripa_word_table`), the paper's value and whether it lies inside it; one column
    ``paper_check`` holding ``reason`` instead when the numbers are not comparable."""
    numbers = paper()["table5"] if numbers is None else numbers
    cols = numbers["columns"]
    long = ripa_word_table(runs, level)
    out = pd.DataFrame({"word": list(dict.fromkeys(long["word"]))})
    for m in LABELS:
        part = long[long["method"] == m].set_index("word").reindex(out["word"]).reset_index()
        if part["value"].isna().all():
            continue
        part["paper"] = [(numbers["rows"].get(w) or [None] * len(cols))[
            cols.index(PAPER_METHOD[m])] for w in part["word"]]
        part["paper"] = pd.to_numeric(part["paper"], errors="coerce")
        out[f"{LABELS[m]} (ours)"] = with_text(part)["ours"].to_numpy()
        out[f"{LABELS[m]} (paper)"] = part["paper"].to_numpy()
        if not reason:
            out[f"{LABELS[m]}: paper inside?"] = paper_check(part, "paper", reason)
    if reason:  # one reason for every method: one column
        out["paper_check"] = reason
    return out


def table1_table(bench: pd.DataFrame, reason: str, *, alpha: float = 0.05,
                 numbers: Mapping | None = None) -> pd.DataFrame:
    """Table 1: per benchmark and method, the mean relative change (%) against Original over the
    seeds with its t-interval (seeds only), Holm's correction over Table 1's comparisons (its own
    family: the cost in semantics, not the bias), the paper's change and whether it lies inside."""
    numbers = paper()["table1"] if numbers is None else numbers
    frame = table1_intervals(bench)
    frame = holm_family(frame, alpha=alpha, not_supported=NOT_SUPPORTED_SEEDS)
    cols = numbers["columns"]
    frame["paper"] = [(numbers["rows"].get(b) or [None] * len(cols))[cols.index(PAPER_METHOD[m])]
                      for b, m in zip(frame["benchmark"], frame["method"], strict=True)]
    frame["paper"] = pd.to_numeric(frame["paper"], errors="coerce")
    frame["paper_check"] = paper_check(frame, "paper", reason)
    original = bench[bench["method"] == "original"].groupby("benchmark", sort=False)["score"]
    frame["original_score"] = frame["benchmark"].map(original.mean())
    frame["method"] = frame["method"].map(LABELS)
    return with_text(frame)


def external_intervals(kvs: Mapping[str, object], check: pd.DataFrame,
                       lowercase: Mapping[str, bool] | None = None, *, level: float = 0.95,
                       n_resamples: int = 9999, seed: int = 0, ddof: int = 1) -> pd.DataFrame:
    """Notebook 04: ``check`` (:func:`.tables.external_check`) with each computable effect size's
    interval over the target words (pretrained vectors: no seeds) and ``paper_check``: Caliskan
    et al.'s numbers come from GloVe 840B, which none of the offline vectors is."""
    lowercase = lowercase or {}
    rows = []
    for name, kv in kvs.items():
        tests = wordsets.load("caliskan", lowercase=lowercase.get(name, False))
        for test, t in tests.items():
            words = target_sets(kv, t)
            row = check[(check["vectors"] == name) & (check["test"] == test)]
            if words is None or not row["computable"].item():
                continue
            s = associations(kv, words)[None, :]
            n_x = len(words["x"])
            _check_against(row.assign(method="-", seed=0),
                           WordScores(test, words, [0], {"-": s}), ddof)
            ci = word_interval(_seed_mean_effect(s, n_x, ddof), n_x, len(words["y"]),
                               level=level, n_resamples=n_resamples, seed=seed)
            rows.append({"vectors": name, "test": test, **ci.row()})
    ci = pd.DataFrame(rows, columns=["vectors", "test", "value", *UNCERTAINTY])
    out = check.merge(ci.drop(columns="value"), on=["vectors", "test"], how="left")
    out["value"] = out["effect_size"].where(out["computable"])
    out["paper_check"] = paper_check(out, "paper_effect_size", "not comparable: Caliskan et al. "
                                     "used GloVe 840B (300d, cased), not these vectors")
    return with_text(out)
