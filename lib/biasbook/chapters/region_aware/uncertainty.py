"""How sure are the region-aware chapter's numbers? Intervals, region tests and Holm's correction.

Every number of the chapter is computed once from cached vectors, topics and personas; an
interval resamples what the number averages over, and no model is trained or run again for it.
What is resampled, per number (each notebook says it again where the number appears):

- **WEAT effect sizes** (notebook 02's Caliskan tests per region, notebook 05's region-aware test
  per topic pair): the **target words**. X and Y are resampled apart (a stratified bootstrap:
  :func:`biasbook.stats.interval` with ``paired=False``, so every resample keeps ``|X|`` X words
  and ``|Y|`` Y words; BCa, or percentile where BCa is undefined); the attribute words stay fixed,
  as they define what is measured (:func:`effect_interval`). The vectors are trained once, so the
  interval does **not** cover the word2vec/fastText seed or the sample of documents.
- **Two cells of one Caliskan test** (notebook 02; two regions of a corpus, or a region in two
  corpora): the words both vector spaces have; the difference of the two effect sizes on them,
  its interval over the target words (the same resampled words in both) and a permutation p that
  swaps each word's associations between the two (``scipy.stats.permutation_test``, the
  within-item swap of :func:`biasbook.stats.paired_difference`, whose pooled bootstrap could draw
  a resample without any X word), two-sided (:func:`weat_difference`).
- **The female share of the aligned examples** (notebook 01): the **documents**
  (:func:`share_interval`).
- **The female topic share** (notebook 03): the region's **documents**, the topics held fixed:
  each resample recomputes every topic's :math:`p_{Ft}`, :math:`p_{Mt}` (or its F share) from the
  resampled examples, hence its gender (:func:`topic_share_statistic`). BERTopic is not re-fitted,
  so the interval covers which examples a topic holds, not the clustering.
- **Pairs passing the threshold** (notebook 04): each candidate topic's **top words**, resampled
  apart per topic; the topic embedding is their mean (:func:`pair_count_intervals`). The
  candidates stay fixed.
- **Over topic pairs** (notebook 05): the share of the paper's pairs whose sign we match and the
  correlation with Table 4 resample the **pairs**, and a permutation test re-pairs our effects
  with the paper's to say whether either beats chance (:func:`agreement_intervals`). A region's
  mean effect over its pairs resamples the **pairs and the target words** together, since the
  pairs of a region share their gender words (:func:`pair_set_intervals`).
- **Persona mismatch rates** (notebook 06): the **topics prompted**, each with its personas of
  every run (a cluster bootstrap), so the interval covers the topics and, through them, the
  sampling of the runs (:func:`persona_intervals`); two groups of topics are compared with a
  two-sample permutation test (:func:`ratio_difference`).

Every interval is 95% (:data:`LEVEL`). A family of comparisons (a notebook's region pairs) gets
Holm's correction (:func:`holm_family`); a difference **holds** only when its corrected p is at
most 0.05 *and* its interval excludes 0, and the verdict is computed, never typed.

>>> s = np.array([0.3, 0.1, -0.1, -0.2])       # X = the first two words, Y = the rest
>>> round(float(effect_sizes(s, 2)), 4)        # (0.2 - (-0.15)) / 0.2217 (sample sd)
1.5785
>>> print(fmt(0.52, 0.1, 0.904))
0.52 [0.10, 0.90]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import results, stats, validate
from biasbook.embeddings import train
from biasbook.metrics import weat

LEVEL = 0.95
ALPHA = 0.05
#: Fewest topic pairs or topics an interval or a test over them is given for: a bootstrap of two
#: to four values mostly returns their range, which reads as far more certain than it is.
MIN_UNITS = 5
COLUMNS = ["value", *results.UNCERTAINTY]
NOT_SUPPORTED = "not a difference this test supports"
DOMAIN_NAMES = {"un-debates": "UN debate sentences", "tweets": "city tweets",
                "geowac": "GeoWAC"}


# --- presenting -----------------------------------------------------------------------------------

def fmt(value, low=None, high=None, digits: int = 2) -> str:
    """``value [low, high]`` as the tables print it; the value alone without an interval and
    ``—`` without a value.

    >>> fmt(0.5, 0.25, 0.75), fmt(0.5, float("nan"), float("nan")), fmt(float("nan"))
    ('0.50 [0.25, 0.75]', '0.50', '—')
    """
    if value is None or pd.isna(value):
        return "—"
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def with_text(frame: pd.DataFrame, *, column: str = "ours", prefix: str = "",
              digits: int = 2) -> pd.DataFrame:
    """``frame`` with a column of :func:`fmt` text from ``value``, ``ci_low``, ``ci_high``
    (``prefix`` for the columns of a second statistic, e.g. ``"pearson "``)."""
    value = frame[f"{prefix}value"] if f"{prefix}value" in frame else frame["value"]
    missing = pd.Series(np.nan, index=frame.index)
    low, high = (frame.get(f"{prefix}{k}", missing) for k in ("ci_low", "ci_high"))
    return frame.assign(**{column: [fmt(v, lo, hi, digits)
                                    for v, lo, hi in zip(value, low, high, strict=True)]})


def not_comparable(domain: str) -> str:
    """Why a number computed on ``domain`` does not measure the paper's GeoWAC quantity, or
    ``""`` where it does (the ``paper`` profile's GeoWAC).

    >>> not_comparable("geowac"), not_comparable("tweets")
    ('', 'not comparable: city tweets, not GeoWAC')
    """
    if domain == "geowac":
        return ""
    return f"not comparable: {DOMAIN_NAMES.get(domain, domain)}, not GeoWAC"


def table4_comparability(domain: str) -> str:
    """Table 4 has a UN column (the paper's second evaluation corpus, which ours samples too) and
    a Reddit one (not public; city tweets stand in): ``""`` where the corpus is the paper's.

    >>> table4_comparability("un-debates"), table4_comparability("tweets")
    ('', "not comparable: city tweets stand in for the paper's Reddit")
    """
    if domain == "un-debates":
        return ""
    if domain == "tweets":
        return "not comparable: city tweets stand in for the paper's Reddit"
    return f"not comparable: {DOMAIN_NAMES.get(domain, domain)}, not the paper's Reddit or UN"


def paper_check(frame: pd.DataFrame, paper: str, reason: str | Sequence[str] = ""
                ) -> list[str]:
    """Per row: ``"inside"`` or ``"outside"`` our interval for the paper's number (column
    ``paper``), ``"no paper value"``, ``reason`` (one for all rows or one per row) where the
    quantities are not comparable, ``"not computable here"`` where ours (``value``) is missing,
    or ``"no interval"``.

    >>> f = pd.DataFrame({"p": [0.5, 2.0, None, 1.0], "value": [0.4, 0.4, 0.4, None],
    ...                   "ci_low": [0.0, 0.0, 0.0, None], "ci_high": [1.0, 1.0, 1.0, None]})
    >>> paper_check(f, "p"), paper_check(f, "p", "not comparable")[:1]
    (['inside', 'outside', 'no paper value', 'not computable here'], ['not comparable'])
    """
    reasons = [reason] * len(frame) if isinstance(reason, str) else list(reason)
    missing = pd.Series(np.nan, index=frame.index)
    ours = frame.get("value", pd.Series(0.0, index=frame.index))
    low, high = frame.get("ci_low", missing), frame.get("ci_high", missing)
    out = []
    for value, v, lo, hi, why in zip(frame[paper], ours, low, high, reasons, strict=True):
        if value is None or pd.isna(value):
            out.append("no paper value")
        elif why:
            out.append(why)
        elif pd.isna(v):
            out.append("not computable here")
        elif pd.isna(lo) or pd.isna(hi):
            out.append("no interval")
        else:
            out.append("inside" if lo <= value <= hi else "outside")
    return out


def _row(ci: stats.Interval | None, value: float) -> dict:
    """The record fields of ``ci`` with ``value`` (the estimate as the table computed it), or
    NaN fields where there is no interval."""
    if ci is None:
        return {"value": value, **{k: np.nan for k in results.UNCERTAINTY}}
    return {**ci.row(), "value": value}


def _or_none(make: Callable[[], stats.Interval]) -> stats.Interval | None:
    """``make()``, or ``None`` where no interval exists: fewer than two units, or a statistic
    undefined on some resample (a correlation of constant values)."""
    try:
        return make()
    except ValueError as err:
        if any(s in str(err) for s in ("at least 2 items", "NaN or inf on some resamples")):
            return None
        raise


def _check(got: float, want: float, where: str) -> None:
    """The statistic on the data themselves must be the number the table reports."""
    if not math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9):
        raise ValueError(f"{where}: recomputed {got!r} from the resampling units, the table says "
                         f"{want!r}: the units do not reproduce the number")


# --- WEAT over target words ----------------------------------------------------------------------

def effect_sizes(scores: np.ndarray, n_x: int, ddof: int = 1) -> np.ndarray:
    """WEAT's effect size along the last axis of per-word associations: the first ``n_x`` are the
    X words, the rest the Y words, the spread is over all of them (``ddof=1``: Caliskan's)."""
    s = np.asarray(scores, dtype=float)
    return (s[..., :n_x].mean(axis=-1) - s[..., n_x:].mean(axis=-1)) / s.std(axis=-1, ddof=ddof)


def weat_words(vocabulary, sets: Mapping[str, Sequence[str]], *, min_coverage: float = 0.5
               ) -> dict[str, list[str]] | None:
    """The words of X, Y, A and B that :func:`biasbook.metrics.weat.weat` uses when the vectors
    have ``vocabulary``: those present, the longer of X and Y cut to the shorter one's size by
    dropping its last words; ``None`` where WEAT reports the test as not computable (a set below
    ``min_coverage``, or a word in both X and Y).

    >>> weat_words({"a", "b", "c", "p", "q"}, {"x": ["a", "b"], "y": ["c", "d"],
    ...                                        "a": ["p"], "b": ["q"]})
    {'x': ['a'], 'y': ['c'], 'a': ['p'], 'b': ['q']}
    """
    found = {s: [w for w in sets[s] if w in vocabulary] for s in weat.SETS}
    if any(not found[s] or len(found[s]) < min_coverage * len(sets[s]) for s in weat.SETS):
        return None
    if set(sets["x"]) & set(sets["y"]):
        return None
    size = min(len(found["x"]), len(found["y"]))
    return {**found, "x": found["x"][:size], "y": found["y"][:size]}


def associations(kv, words: Mapping[str, list[str]]) -> np.ndarray:
    """s(w, A, B) of the X words, then the Y words, as WEAT computes them (float64)."""
    vec = {s: np.asarray(kv[words[s]], dtype=np.float64) for s in weat.SETS}
    return weat.associations(np.vstack([vec["x"], vec["y"]]), vec["a"], vec["b"])


def word_interval(statistic: Callable, n_x: int, n_y: int, *, level: float = LEVEL,
                  method: str = "BCa", n_resamples: int = 1999, seed: int = 0,
                  unit: str = "target words") -> stats.Interval:
    """Stratified bootstrap interval of ``statistic(idx)``, ``idx`` the word positions of one
    resample (X positions ``0..n_x-1``, then Y positions shifted by ``n_x``): X and Y resampled
    apart (:func:`biasbook.stats.interval`, ``paired=False``). BCa (the default) where it is
    defined, else the percentile interval (``ci_method`` says which)."""
    def on_indices(ix, iy, axis=-1):
        return statistic(np.concatenate([np.asarray(ix, dtype=np.intp),
                                         np.asarray(iy, dtype=np.intp) + n_x], axis=-1))

    data = (np.arange(n_x, dtype=float), np.arange(n_y, dtype=float))
    options = {"level": level, "n_resamples": n_resamples, "seed": seed, "unit": unit,
               "vectorized": True, "paired": False}
    try:
        return stats.interval(data, on_indices, method=method, **options)
    except ValueError as err:
        if method.lower() == "percentile" or "undefined" not in str(err):
            raise
    return stats.interval(data, on_indices, method="percentile", **options)


def effect_interval(assoc: np.ndarray, n_x: int, *, ddof: int = 1, level: float = LEVEL,
                    n_resamples: int = 1999, seed: int = 0) -> stats.Interval:
    """The effect size of per-word associations ``assoc`` (X first) with its interval over the
    target words (:func:`word_interval`)."""
    assoc = np.asarray(assoc, dtype=float)
    return word_interval(lambda idx: effect_sizes(assoc[idx], n_x, ddof), n_x, len(assoc) - n_x,
                         level=level, n_resamples=n_resamples, seed=seed)


def weat_difference(first: np.ndarray, second: np.ndarray, n_x: int, *, ddof: int = 1,
                    level: float = LEVEL, n_resamples: int = 1999, n_permutations: int = 9999,
                    seed: int = 0) -> tuple[stats.Interval, float, bool]:
    """``d(first) - d(second)`` for the same target words' associations in two vector spaces:
    the interval over the target words (both resampled alike) and the two-sided permutation p
    that swaps each word's two associations (exact when ``2**n <= n_permutations``).
    Returns ``(interval, p, exact)``."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    n = len(first)
    both = np.concatenate([first, second])

    def diff(a, b, axis=-1):
        a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
        return effect_sizes(both[a], n_x, ddof) - effect_sizes(both[b], n_x, ddof)

    ci = word_interval(lambda idx: diff(idx, idx + n), n_x, n - n_x, level=level,
                       n_resamples=n_resamples, seed=seed)
    test = sps.permutation_test((np.arange(n, dtype=float), np.arange(n, 2 * n, dtype=float)),
                                diff, permutation_type="samples", vectorized=True,
                                n_resamples=n_permutations, alternative="two-sided",
                                rng=np.random.default_rng(seed))
    return ci, float(test.pvalue), 2**n <= n_permutations


def _sets(test) -> dict[str, list[str]]:
    return {s: list(test[s] if isinstance(test, Mapping) else getattr(test, s))
            for s in weat.SETS}


def weat_intervals(vectors: Mapping[str, Mapping[str, object]], table: pd.DataFrame,
                   tests: Mapping[str, object], *, ddof: int = 1, level: float = LEVEL,
                   n_resamples: int = 1999, seed: int = 0) -> pd.DataFrame:
    """Notebook 02: ``table`` (:func:`.weat_regions.weat_by_domain`) with each computable effect
    size's interval over the target words (record columns; the estimate is the table's) and
    ``paper_check`` against Table 7, which is GeoWAC's (:func:`not_comparable`)."""
    rows = []
    for r in table[table["computable"].astype(bool)].itertuples():
        kv = vectors[r.domain][r.region]
        words = weat_words(kv.key_to_index, _sets(tests[r.test]))
        assoc = associations(kv, words)
        n_x = len(words["x"])
        _check(float(effect_sizes(assoc, n_x, ddof)), r.effect_size,
               f"{r.test} on {r.domain}/{r.region}")
        ci = effect_interval(assoc, n_x, ddof=ddof, level=level, n_resamples=n_resamples,
                             seed=seed)
        rows.append({"domain": r.domain, "region": r.region, "test": r.test,
                     **_row(ci, r.effect_size)})
    keys = ["domain", "region", "test"]
    ci = pd.DataFrame(rows, columns=[*keys, *COLUMNS]).drop(columns="value")
    out = table.merge(ci, on=keys, how="left")
    out["value"] = out["effect_size"]
    out["paper_check"] = paper_check(out, "paper_effect_size",
                                     [not_comparable(d) for d in out["domain"]])
    return with_text(out)


def region_differences(vectors: Mapping[str, Mapping[str, object]], table: pd.DataFrame,
                       tests: Mapping[str, object], *, ddof: int = 1, level: float = LEVEL,
                       n_resamples: int = 1999, n_permutations: int = 9999, seed: int = 0,
                       alpha: float = ALPHA) -> pd.DataFrame:
    """Notebook 02: every two computable cells of a test, a cell being a (corpus, region) and
    named ``"<corpus> / <region>"`` (two regions of a corpus, or one region in two corpora), on
    the words both vocabularies have (:func:`weat_difference`: ``group`` minus ``versus``), with
    Holm's correction over the whole family (:func:`holm_family`). ``words``: the target words
    compared (``|X| + |Y|``); a pair of cells whose shared words WEAT's rule refuses is a row
    with its ``reason`` and no test (different word lists are no paired comparison)."""
    rows = []
    ok = table[table["computable"].astype(bool)]
    for test, part in ok.groupby("test", sort=False):
        cells = list(zip(part["domain"], part["region"], strict=True))
        for (da, ra), (db, rb) in combinations(cells, 2):
            kv_a, kv_b = vectors[da][ra], vectors[db][rb]
            words = weat_words(set(kv_a.key_to_index) & set(kv_b.key_to_index), _sets(tests[test]))
            if words is None:
                rows.append({"test": test, "group": f"{da} / {ra}", "versus": f"{db} / {rb}",
                             **_row(None, np.nan), "p_value": np.nan,
                             "reason": "not comparable: too few of the test's words in both "
                                       "vocabularies (WEAT's 50% rule)"})
                continue
            n_x = len(words["x"])
            ci, p, exact = weat_difference(associations(kv_a, words), associations(kv_b, words),
                                           n_x, ddof=ddof, level=level, n_resamples=n_resamples,
                                           n_permutations=n_permutations, seed=seed)
            rows.append({"test": test, "group": f"{da} / {ra}", "versus": f"{db} / {rb}",
                         **ci.row(), "words": 2 * n_x, "p_value": p, "exact": exact,
                         "reason": ""})
    frame = pd.DataFrame(rows, columns=["test", "group", "versus", *COLUMNS, "words", "p_value",
                                        "exact", "reason"])
    return with_text(holm_family(frame, alpha=alpha))


# --- the family of comparisons --------------------------------------------------------------------

def sentence(row, what: str = "") -> str:
    """One comparison as the notebooks print it, the verdict computed by :func:`holm_family`:
    ``"<what>: <group> - <versus> = +0.52 [0.10, 0.90], Holm p = 0.012: <group> higher"``.

    >>> row = pd.Series({"group": "Asia", "versus": "Europe", "value": -0.3, "ci_low": -0.5,
    ...                  "ci_high": -0.1, "p_holm": 0.01, "holds": True, "verdict": "lower"})
    >>> sentence(row, "tweets")
    'tweets: Asia - Europe = -0.30 [-0.50, -0.10], Holm p = 0.010: Asia lower'
    """
    if pd.isna(row["p_holm"]):
        return (f"{what + ': ' if what else ''}{row['group']} - {row['versus']}: "
                f"{row.get('reason') or row['verdict']}")
    verdict = f"{row['group']} {row['verdict']}" if row["holds"] else row["verdict"]
    return (f"{what + ': ' if what else ''}{row['group']} - {row['versus']} = "
            f"{row['value']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}], "
            f"Holm p = {row['p_holm']:.3f}: {verdict}")


def holm_family(frame: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """``frame`` (one comparison a row: ``value``, ``ci_low``, ``ci_high``, ``p_value``) with
    Holm's ``p_holm`` over all its tested rows (a NaN p is a row without a test), ``holds``
    (corrected p at most ``alpha`` *and* the interval excludes 0) and ``verdict`` (``higher``,
    ``lower`` or why not).

    >>> f = pd.DataFrame({"value": [0.5, 0.4, -0.3], "ci_low": [0.2, -0.1, -0.5],
    ...                   "ci_high": [0.8, 0.9, -0.1], "p_value": [0.001, 0.002, 0.04]})
    >>> out = holm_family(f)
    >>> out[["p_holm", "holds"]].values.tolist()
    [[0.003, True], [0.004, False], [0.04, True]]
    >>> for verdict in out["verdict"]:
    ...     print(verdict)
    higher
    not a difference this test supports (corrected p ≤ 0.05, but the interval includes 0)
    lower
    """
    out = frame.copy()
    if out.empty:
        return out.assign(p_holm=pd.Series(dtype=float), holds=pd.Series(dtype=bool),
                          verdict=pd.Series(dtype=object))
    p = out["p_value"].to_numpy(dtype=float)
    tested = np.isfinite(p)
    adjusted = np.full(p.shape, np.nan)
    if tested.any():
        adjusted[tested] = stats.holm(p[tested])
    out["p_holm"] = adjusted
    significant = out["p_holm"] <= alpha
    excludes = (out["ci_low"] > 0) | (out["ci_high"] < 0)
    out["holds"] = significant & excludes
    out["verdict"] = [("higher" if v > 0 else "lower") if s and e else
                      f"{NOT_SUPPORTED} (corrected p ≤ {alpha}, but the interval includes 0)"
                      if s else NOT_SUPPORTED if t else "not tested"
                      for v, s, e, t in zip(out["value"], significant, excludes, tested,
                                            strict=True)]
    return out


# --- shares of documents (notebooks 01 and 03) ----------------------------------------------------

def share_interval(k: int, n: int, *, level: float = LEVEL, n_resamples: int = 1999,
                   seed: int = 0, unit: str = "documents") -> stats.Interval | None:
    """The share ``k / n`` with its percentile interval over the ``n`` documents (``k`` of them
    count); ``None`` for fewer than two."""
    if n < 2:
        return None
    items = np.zeros(n)
    items[:k] = 1.0
    return stats.interval(items, np.mean, level=level, method="percentile",
                          n_resamples=n_resamples, seed=seed, unit=unit)


def female_share_intervals(fm: pd.DataFrame, *, level: float = LEVEL, n_resamples: int = 1999,
                           seed: int = 0) -> pd.DataFrame:
    """Notebook 01: Table 6 (:func:`.tables.fm_table`) with the female share's interval over the
    aligned documents and ``paper_check`` (Table 6 counts GeoWAC's examples)."""
    rows = [_row(share_interval(int(f), int(f + m), level=level, n_resamples=n_resamples,
                                seed=seed), share)
            for f, m, share in zip(fm["female"], fm["male"], fm["female_share"], strict=True)]
    out = pd.concat([fm.reset_index(drop=True),
                     pd.DataFrame(rows, columns=COLUMNS)], axis=1)
    out["paper_check"] = paper_check(out, "paper_female_share",
                                     [not_comparable(d) for d in out["domain"]])
    return with_text(out, digits=3)


def _resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each resample: ``idx`` (..., n) -> (m, n)."""
    flat = np.asarray(idx, dtype=np.intp).reshape(-1, idx.shape[-1])
    offsets = np.arange(len(flat))[:, None] * n
    return np.bincount((flat + offsets).ravel(), minlength=len(flat) * n).reshape(len(flat), n)


def topic_share_statistic(documents: pd.DataFrame, topic_ids: Sequence[int], *,
                          rule: str = "probability") -> Callable:
    """``statistic(idx, axis=-1)``: the share of F topics among the F and M topics of
    ``topic_ids`` when the region's examples are those at positions ``idx`` (a resample of
    ``documents``: ``topic``, ``group``, ``probability``). Each topic's gender is recomputed as
    :func:`.topics.alignment` does (``rule="probability"``: :math:`p_{Ft}` against
    :math:`p_{Mt}`, 0 for an empty group; ``"share"``: the topic's F share against the
    resample's); a topic left without examples is neither."""
    validate.choice("rule", rule, ("probability", "share"))
    topic = documents["topic"].to_numpy()
    female = (documents["group"] == "F").to_numpy(dtype=float)
    p = documents["probability"].to_numpy(dtype=float)
    member = (topic[:, None] == np.asarray(topic_ids)[None, :]).astype(float)   # (n, K)
    f_in, m_in = member * female[:, None], member * (1 - female)[:, None]
    n = len(documents)

    def statistic(idx, axis=-1):
        shape = np.shape(idx)[:-1]
        c = _resample_counts(np.asarray(idx), n).astype(float)
        n_f, n_m = c @ f_in, c @ m_in
        with np.errstate(divide="ignore", invalid="ignore"):
            if rule == "probability":
                lean = (np.where(n_f > 0, (c @ (f_in * p[:, None])) / n_f, 0.0)
                        - np.where(n_m > 0, (c @ (m_in * p[:, None])) / n_m, 0.0))
            else:
                lean = n_f / (n_f + n_m) - ((c @ female) / n)[:, None]
                lean = np.where(n_f + n_m > 0, lean, 0.0)
            is_f, is_m = (lean > 0).sum(axis=-1), (lean < 0).sum(axis=-1)
            return (is_f / (is_f + is_m)).reshape(shape)

    return statistic


def female_topic_share_intervals(fits: Mapping[str, object], summary: pd.DataFrame, *,
                                 rule: str = "probability", domain: str = "",
                                 level: float = LEVEL, n_resamples: int = 1999, seed: int = 0
                                 ) -> pd.DataFrame:
    """Notebook 03: ``summary`` (:func:`.topics.summary` with ``female_topic_share`` and
    ``paper_female_topic_share``) with each region's share's percentile interval over its
    documents, the topics fixed (:func:`topic_share_statistic`), and ``paper_check``."""
    rows = []
    for r in summary.itertuples():
        fit = fits[r.region]
        if pd.isna(r.female_topic_share):
            rows.append(_row(None, np.nan))
            continue
        statistic = topic_share_statistic(fit.documents, fit.table["topic"].tolist(), rule=rule)
        n = len(fit.documents)
        _check(float(statistic(np.arange(n))), r.female_topic_share, f"{r.region}'s topic share")
        ci = _or_none(lambda statistic=statistic, n=n: stats.interval(
            np.arange(n, dtype=float), statistic, level=level, method="percentile",
            n_resamples=n_resamples, seed=seed, unit="documents (topics fixed)",
            vectorized=True))
        rows.append(_row(ci, r.female_topic_share))
    out = pd.concat([summary.reset_index(drop=True), pd.DataFrame(rows, columns=COLUMNS)], axis=1)
    out["paper_check"] = paper_check(out, "paper_female_topic_share", not_comparable(domain))
    return with_text(out)


# --- topic pairs over topic words (notebook 04) ---------------------------------------------------

def pair_count_intervals(fits: Mapping[str, object], counts: pd.DataFrame, *,
                         candidates: int = 10, threshold: float = 0.01, condition: str = "or",
                         level: float = LEVEL, n_resamples: int = 1999, seed: int = 0,
                         **_) -> pd.DataFrame:
    """Notebook 04: ``counts`` (:func:`.topics.pair_counts`) with each region's number of passing
    pairs and its percentile interval over each candidate topic's top words (resampled apart per
    topic; a topic's embedding is their mean, as in :func:`.topics.topic_vectors`). The
    candidates stay fixed. Extra keywords (``n_pairs``) are ignored, so the profile's
    ``pair_settings`` can be passed whole. (The smallest distance gets no interval: the bootstrap
    of a minimum is unreliable.)"""
    from biasbook.chapters.region_aware import topics

    validate.choice("condition", condition, topics.CONDITIONS)
    she, he = topics.encoder().embed(["she", "he"], progress=False)
    rows = []
    for r in counts.itertuples():
        fit = fits[r.region]
        lists = [list(w) for g in ("F", "M") for w in fit.top(g, candidates)["words"]]
        n_f = len(fit.top("F", candidates))
        flat = sorted({w for ws in lists for w in ws})
        table = dict(zip(flat, topics.encoder().embed(flat, progress=False), strict=True))
        words = [np.stack([table[w] for w in ws]) for ws in lists]

        def passing(*idx, words=words, n_f=n_f):
            vecs = np.stack([w[np.asarray(i, dtype=np.intp)].mean(axis=0)
                             for w, i in zip(words, idx, strict=True)])
            d_same, d_cross = topics.pair_distances(vecs[:n_f], vecs[n_f:], she=she, he=he)
            distance = np.minimum(d_same, d_cross) if condition == "or" \
                else np.maximum(d_same, d_cross)
            return float((distance < threshold).sum())

        data = tuple(np.arange(len(w), dtype=float) for w in words)
        _check(passing(*data), r.passing, f"{r.region}'s passing pairs")
        ci = stats.interval(data, passing, level=level, method="percentile",
                            n_resamples=n_resamples, seed=seed, unit="topic words",
                            vectorized=False, paired=False)
        rows.append(_row(ci, r.passing))
    out = pd.concat([counts.reset_index(drop=True), pd.DataFrame(rows, columns=COLUMNS)], axis=1)
    return with_text(out, column="passing [95% CI]", digits=0)


# --- over topic pairs (notebook 05) ---------------------------------------------------------------

@dataclass(frozen=True)
class PairScores:
    """One region-aware test's per-word associations: the target words (X, then Y), how many are
    X, and s(w, A, B) of each on the vectors the test used."""

    targets: tuple[str, ...]
    n_x: int
    assoc: np.ndarray


def pair_scores(pairs: pd.DataFrame, vectors: Mapping[str, Mapping[str, object]],
                frame: pd.DataFrame, *, terms: str = "text", names: bool = True,
                roles: str = "gender-targets", oov: str = "subword", ddof: int = 1,
                **_) -> dict[tuple[str, str, int], PairScores]:
    """Notebook 05: per computable row of ``frame`` (:func:`.region_weat.weat_by_domain` of
    ``pairs`` on ``vectors``), keyed ``(domain, region, rank)``, the associations of the words its
    WEAT used, on the same vectors (fastText's n-gram vectors where ``oov="subword"``); each must
    give the row's effect size. Extra keywords (``n_samples``, ``seed``) are ignored, so the
    notebook's WEAT options can be passed whole."""
    from biasbook.chapters.region_aware import region_weat

    by_pair = pairs.set_index(["region", "rank"])
    if not by_pair.index.is_unique:
        raise ValueError("pairs must have one row per (region, rank)")
    out = {}
    for r in frame[frame["computable"].astype(bool)].itertuples():
        pair = by_pair.loc[(r.region, r.rank)]
        sets = region_weat._sets(pair, region_weat.gender_words(r.region, terms=terms,
                                                                names=names), roles)
        kv = vectors[r.domain][r.region]
        if oov == "subword":
            kv, _ = train.subword_vectors(kv, [w for s in sets.values() for w in s])
        words = weat_words(kv.key_to_index, sets)
        assoc = associations(kv, words)
        n_x = len(words["x"])
        _check(float(effect_sizes(assoc, n_x, ddof)), r.effect_size,
               f"{r.region} P{r.rank} on {r.domain}")
        out[(r.domain, r.region, r.rank)] = PairScores(tuple(words["x"] + words["y"]), n_x, assoc)
    return out


def pair_weat_intervals(frame: pd.DataFrame, scores: Mapping[tuple, PairScores], *,
                        ddof: int = 1, level: float = LEVEL, n_resamples: int = 1999,
                        seed: int = 0) -> pd.DataFrame:
    """Notebook 05: ``frame`` (:func:`.region_weat.weat_by_domain`) with each computable effect
    size's interval over the target words (``scores``: :func:`pair_scores`) and
    ``paper_check`` against Table 4 (:func:`table4_comparability`)."""
    rows = []
    for (domain, region, rank), sc in scores.items():
        ci = effect_interval(sc.assoc, sc.n_x, ddof=ddof, level=level, n_resamples=n_resamples,
                             seed=seed)
        rows.append({"domain": domain, "region": region, "rank": rank, **ci.row()})
    keys = ["domain", "region", "rank"]
    ci = pd.DataFrame(rows, columns=[*keys, *COLUMNS]).drop(columns="value")
    out = frame.merge(ci, on=keys, how="left")
    out["value"] = out["effect_size"]
    out["paper_check"] = paper_check(out, "paper", [table4_comparability(d)
                                                    for d in out["domain"]])
    return with_text(out)


def table4_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 4's layout from :func:`pair_weat_intervals`: one row per pair, per domain our effect
    size as ``value [low, high]``, the paper's number for that domain and ``paper_check``."""
    from biasbook.chapters.region_aware import corpora

    index = ["region", "rank", "female_topic", "male_topic", *(["pairs"] if "pairs" in frame
                                                               else [])]
    wide = frame.set_index([*index, "domain"])[["ours", "paper", "paper_check"]] \
        .unstack("domain")
    wide.columns = [f"{stat} ({domain})" for stat, domain in wide.columns]
    wide = wide.reset_index()
    order = wide["region"].map({r: i for i, r in enumerate(corpora.REGIONS)})
    return wide.assign(_order=order).sort_values(["_order", "rank"]).drop(columns="_order") \
        .reset_index(drop=True)


def pair_set_intervals(results: pd.DataFrame, sets: pd.DataFrame,
                       scores: Mapping[tuple, PairScores], *, ddof: int = 1,
                       level: float = LEVEL, n_resamples: int = 1999, seed: int = 0
                       ) -> pd.DataFrame:
    """Notebook 05: ``sets`` (:func:`.region_weat.pair_sets` of ``results``) with each mean
    effect's percentile interval over the set's **pairs and target words** together: the pairs
    of a region share their gender words, so resampling the pairs alone would miss the largest
    common source of noise. Pairs and X and Y words are resampled independently (a crossed
    bootstrap, :func:`biasbook.stats.interval` with three samples and ``paired=False``). Sets of
    fewer than :data:`MIN_UNITS` pairs get no interval."""
    from biasbook.chapters.region_aware import region_weat

    rows = []
    for r in sets.itertuples():
        part = results[(results["domain"] == r.domain) & (results["region"] == r.region)
                       & results["pairs"].isin(region_weat.PAIR_SETS[r.pairs])
                       & results["computable"].astype(bool)]
        chosen = [scores[(r.domain, r.region, k)] for k in part["rank"]]
        ci = None
        if len(chosen) >= MIN_UNITS:
            statistic = pairs_and_words_mean(chosen, ddof)
            _check(float(statistic(*(np.arange(n) for n in _sizes(chosen)))), r.mean_effect,
                   f"mean effect of {r.domain}/{r.region}/{r.pairs}")
            ci = stats.interval(tuple(np.arange(n, dtype=float) for n in _sizes(chosen)),
                                statistic, level=level, method="percentile",
                                n_resamples=n_resamples, seed=seed, vectorized=True,
                                paired=False, unit="topic pairs x target words")
        rows.append(_row(ci, r.mean_effect))
    return with_text(pd.concat([sets.reset_index(drop=True),
                                pd.DataFrame(rows, columns=COLUMNS)], axis=1))


def _sizes(chosen: Sequence[PairScores]) -> tuple[int, int, int]:
    """(|X|, |Y|, pairs) of a set of tests on the same target words."""
    return chosen[0].n_x, len(chosen[0].targets) - chosen[0].n_x, len(chosen)


def pairs_and_words_mean(chosen: Sequence[PairScores], ddof: int = 1) -> Callable:
    """``statistic(ix, iy, ip, axis=-1)``: the mean effect size over the pairs at positions
    ``ip`` of ``chosen`` on the X words ``ix`` and Y words ``iy`` (one resample: the same words
    in every pair). The tests must share their target words, as a region's pairs do."""
    if len({c.targets for c in chosen}) != 1:
        raise ValueError("the pairs' tests use different target words: a crossed bootstrap "
                         "needs the same words in every pair")
    n_x = chosen[0].n_x
    table = np.stack([c.assoc for c in chosen])                  # (pairs, words)

    def statistic(ix, iy, ip, axis=-1):
        words = np.concatenate([np.asarray(ix, dtype=np.intp),
                                np.asarray(iy, dtype=np.intp) + n_x], axis=-1)
        picked = table[np.asarray(ip, dtype=np.intp)[..., :, None], words[..., None, :]]
        return effect_sizes(picked, n_x, ddof).mean(axis=-1)

    return statistic


def _pearson(x, y, axis=-1):
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def _same_sign(x, y, axis=-1):
    return (np.sign(x) == np.sign(y)).mean(axis=axis)


def chance_agreement(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The sign agreement two lists would have if their signs were unrelated, given how many
    of each are positive: ``p q + (1 - p)(1 - q)``. Not 0.5 when both lean one way (most of
    Table 4 is positive).

    >>> chance_agreement(np.array([1, 1, 1, -1]), np.array([1, 1, -1, -1]))
    0.5
    >>> round(chance_agreement(np.array([1, 1, 1, -1]), np.array([1, 1, 1, 1])), 2)
    0.75
    """
    p, q = np.mean(np.asarray(ours) > 0), np.mean(np.asarray(theirs) > 0)
    return float(p * q + (1 - p) * (1 - q))


def agreement_intervals(results: pd.DataFrame, *, level: float = LEVEL,
                        n_resamples: int = 1999, n_permutations: int = 9999, seed: int = 0,
                        alpha: float = ALPHA) -> pd.DataFrame:
    """Notebook 05: per domain, over the pairs with both numbers (:func:`.region_weat.agreement`),
    the share whose sign matches Table 4 (``value``...) and the Pearson correlation
    (``pearson value``...), each with its percentile interval over the **pairs** (from
    :data:`MIN_UNITS` pairs). Is either more than chance? Each gets a two-sided permutation p that
    re-pairs our effects with the paper's at random (``scipy.stats.permutation_test``,
    ``pairings``), so "chance" keeps how many of each list are positive (``chance``, by
    :func:`chance_agreement`, is the agreement it expects, not 0.5). Holm runs over all four
    tests; a statistic ``holds`` when its corrected p is at most ``alpha`` and its interval
    excludes chance (``chance`` for the sign, 0 for the correlation)."""
    rows = []
    for domain, g in results.dropna(subset=["effect_size", "paper"]).groupby("domain", sort=False):
        ours, theirs = g["effect_size"].to_numpy(float), g["paper"].to_numpy(float)
        row = {"domain": domain, "pairs": len(g), "chance": chance_agreement(ours, theirs)}
        for prefix, statistic in (("", _same_sign), ("pearson ", _pearson)):
            enough = len(g) >= MIN_UNITS
            ci = _or_none(lambda f=statistic, data=(ours, theirs): stats.interval(
                data, f, level=level, method="percentile", n_resamples=n_resamples,
                seed=seed, unit="topic pairs")) if enough else None
            test = sps.permutation_test((ours, theirs), statistic, permutation_type="pairings",
                                        vectorized=True, n_resamples=n_permutations,
                                        alternative="two-sided",
                                        rng=np.random.default_rng(seed)) if enough else None
            row |= {f"{prefix}{k}": v for k, v in
                    _row(ci, float(statistic(ours, theirs))).items()}
            row[f"{prefix}p_value"] = float(test.pvalue) if test else np.nan
        rows.append(row)
    out = pd.DataFrame(rows, columns=["domain", "pairs", "chance", *COLUMNS, "p_value",
                                      *(f"pearson {c}" for c in [*COLUMNS, "p_value"])])
    p = np.concatenate([out["p_value"], out["pearson p_value"]]).astype(float)
    tested = np.isfinite(p)
    adjusted = np.full(p.shape, np.nan)
    if tested.any():
        adjusted[tested] = stats.holm(p[tested])
    out["p_holm"], out["pearson p_holm"] = adjusted[:len(out)], adjusted[len(out):]
    for prefix, level_, words in (("", out["chance"], ("above chance", "below chance")),
                                  ("pearson ", 0.0, ("positive", "negative"))):
        low, high, value = (out[f"{prefix}{k}"] for k in ("ci_low", "ci_high", "value"))
        holds = (out[f"{prefix}p_holm"] <= alpha) & ((low > level_) | (high < level_))
        out[f"{prefix}verdict"] = np.where(holds, np.where(value > level_, *words),
                                           "not distinguishable from chance")
    out = with_text(out, column="same sign")
    return with_text(out, column="pearson", prefix="pearson ")


def agreement_sentences(agree: pd.DataFrame) -> list[str]:
    """:func:`agreement_intervals`' verdicts as the notebook prints them, one line per corpus."""
    return [f"{a['domain']} ({a['pairs']} pairs): share with Table 4's sign {a['same sign']} "
            f"(chance {a['chance']:.2f}, Holm p = {a['p_holm']:.3f}): {a['verdict']}; "
            f"Pearson r = {a['pearson']} (Holm p = {a['pearson p_holm']:.3f}): "
            f"{a['pearson verdict']}" for _, a in agree.iterrows()]


# --- personas (notebook 06) -----------------------------------------------------------------------

def topic_counts(table: pd.DataFrame, *, numerator: str = "mismatch") -> tuple[np.ndarray,
                                                                               pd.DataFrame]:
    """Per topic of ``table`` (one model's :func:`.personas.personas` rows of one group) and run:
    ``(counts, topics)``, ``counts`` of shape (topics, runs, 2) holding the numerator (a mismatch,
    or an F persona for ``numerator="female"``) and the readable personas, only for topics with a
    readable persona in some run."""
    validate.choice("numerator", numerator, ("mismatch", "female"))
    readable = (table["persona_gender"].fillna("") != "").astype(float)
    hit = (table["mismatch"].eq(True) if numerator == "mismatch"
           else table["persona_gender"].eq("F")).astype(float) * readable
    frame = table.assign(_hit=hit, _readable=readable)
    keys = ["region", "topic", "topic_gender"]
    wide = frame.pivot_table(index=keys, columns="run", values=["_hit", "_readable"],
                             aggfunc="sum", fill_value=0, sort=False)
    runs = sorted(frame["run"].unique())
    counts = np.stack([wide["_hit"][runs].to_numpy(float),
                       wide["_readable"][runs].to_numpy(float)], axis=-1)
    keep = counts[..., 1].sum(axis=1) > 0
    return counts[keep], wide.index.to_frame(index=False)[keep].reset_index(drop=True)


def run_mean_ratio(counts: np.ndarray) -> Callable:
    """``statistic(idx, axis=-1)``: the mean over runs of (numerators / readable personas) of the
    topics at positions ``idx`` of ``counts`` (:func:`topic_counts`); a run without a readable
    persona is skipped, as :func:`.personas.mismatch_summary`'s mean skips NaN."""
    counts = np.asarray(counts, dtype=float)

    def statistic(idx, axis=-1):
        picked = counts[np.asarray(idx, dtype=np.intp)]          # (..., n, runs, 2)
        sums = picked.sum(axis=-3)                               # (..., runs, 2)
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # every run empty: NaN
            return np.nanmean(sums[..., 0] / sums[..., 1], axis=-1)

    return statistic


def ratio_interval(counts: np.ndarray, *, level: float = LEVEL, n_resamples: int = 1999,
                   seed: int = 0) -> stats.Interval | None:
    """:func:`run_mean_ratio` with its percentile interval over the topics (each with all its
    runs); ``None`` below :data:`MIN_UNITS` topics."""
    if len(counts) < MIN_UNITS:
        return None
    return stats.interval(np.arange(len(counts), dtype=float), run_mean_ratio(counts),
                          level=level, method="percentile", n_resamples=n_resamples, seed=seed,
                          unit="topics (all runs of each)", vectorized=True)


def ratio_difference(first: np.ndarray, second: np.ndarray, *, level: float = LEVEL,
                     n_resamples: int = 1999, n_permutations: int = 9999, seed: int = 0
                     ) -> tuple[stats.Interval, float]:
    """The rate of ``first``'s topics minus ``second``'s (:func:`topic_counts` arrays of
    different topics): the interval resamples each group's topics apart
    (:func:`biasbook.stats.interval`, ``paired=False``), the two-sided p re-deals the topics
    between the groups (``scipy.stats.permutation_test``, independent samples)."""
    both = np.concatenate([first, second])
    rate = run_mean_ratio(both)

    def diff(a, b, axis=-1):
        return rate(a) - rate(b)

    data = (np.arange(len(first), dtype=float), np.arange(len(first), len(both), dtype=float))
    ci = stats.interval(data, diff, level=level, method="percentile", n_resamples=n_resamples,
                        seed=seed, unit="topics (all runs of each)", vectorized=True,
                        paired=False)
    test = sps.permutation_test(data, diff, permutation_type="independent", vectorized=True,
                                n_resamples=n_permutations, alternative="two-sided",
                                rng=np.random.default_rng(seed))
    return ci, float(test.pvalue)


def persona_intervals(table: pd.DataFrame, summary: pd.DataFrame, *,
                      by: Sequence[str] = ("source", "pairs"), level: float = LEVEL,
                      n_resamples: int = 1999, seed: int = 0) -> pd.DataFrame:
    """Notebook 06: ``summary`` (:func:`.personas.mismatch_summary`) with each mismatch rate's
    interval over its topics, all runs of a topic together (:func:`ratio_interval`). Fig. 5
    prints no numbers, so there is no paper check."""
    keys = [*by, "model", "region"]
    rows = []
    for r in summary.itertuples(index=False):
        mask = np.logical_and.reduce([table[k] == getattr(r, k) for k in keys])
        counts, _ = topic_counts(table[mask])
        if len(counts):
            _check(float(run_mean_ratio(counts)(np.arange(len(counts)))), r.mismatch,
                   f"mismatch of {r.model} in {r.region}")
        ci = ratio_interval(counts, level=level, n_resamples=n_resamples, seed=seed)
        rows.append(_row(ci, r.mismatch))
    return with_text(pd.concat([summary.reset_index(drop=True),
                                pd.DataFrame(rows, columns=COLUMNS)], axis=1))


def persona_differences(table: pd.DataFrame, *, by: Sequence[str] = ("source", "pairs"),
                        level: float = LEVEL, n_resamples: int = 1999,
                        n_permutations: int = 9999, seed: int = 0, alpha: float = ALPHA
                        ) -> pd.DataFrame:
    """Notebook 06's family, per group of ``by`` and model: every two regions' mismatch rates
    (``comparison="mismatch"``) and the share of F personas for F topics against M topics
    (``comparison="female share"``: does the topic's gender move the persona's?), each side
    with at least :data:`MIN_UNITS` topics with a readable persona; Holm over the family
    (:func:`holm_family`).
    """
    rows = []
    for group, part in table.groupby([*by, "model"], sort=False):
        labels = dict(zip([*by, "model"], group, strict=True))
        regions = {region: topic_counts(p)[0] for region, p in part.groupby("region", sort=False)}
        tests = [("mismatch", a, b, regions[a], regions[b]) for a, b in combinations(regions, 2)]
        genders = {g: topic_counts(p, numerator="female")[0]
                   for g, p in part.groupby("topic_gender", sort=False)}
        if {"F", "M"} <= set(genders):
            tests.append(("female share", "F topics", "M topics", genders["F"], genders["M"]))
        for comparison, a, b, first, second in tests:
            if min(len(first), len(second)) < MIN_UNITS:
                continue
            ci, p = ratio_difference(first, second, level=level, n_resamples=n_resamples,
                                     n_permutations=n_permutations, seed=seed)
            rows.append({**labels, "comparison": comparison, "group": a, "versus": b,
                         **ci.row(), "p_value": p})
    frame = pd.DataFrame(rows, columns=[*by, "model", "comparison", "group", "versus", *COLUMNS,
                                        "p_value"])
    return with_text(holm_family(frame, alpha=alpha))
