"""How sure are the region-aware chapter's numbers? Intervals, region tests and Holm's correction:
the overview, the shared presentation and WEAT over target words here; shares over documents and
topic words in :mod:`.uncertainty_topics`, topic pairs in :mod:`.uncertainty_pairs`, personas in
:mod:`.uncertainty_personas`.

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
  (:func:`.uncertainty_topics.share_interval`).
- **The female topic share** (notebook 03): the region's **documents**, the topics held fixed:
  each resample recomputes every topic's :math:`p_{Ft}`, :math:`p_{Mt}` (or its F share) from the
  resampled examples, hence its gender (:func:`.uncertainty_topics.topic_share_statistic`).
  BERTopic is not re-fitted, so the interval covers which examples a topic holds, not the
  clustering.
- **Pairs passing the threshold** (notebook 04): each candidate topic's **top words**, resampled
  apart per topic; the topic embedding is their mean
  (:func:`.uncertainty_topics.pair_count_intervals`). The candidates stay fixed.
- **Over topic pairs** (notebook 05): the share of the paper's pairs whose sign we match and the
  correlation with Table 4 resample the **pairs**, and a permutation test re-pairs our effects
  with the paper's to say whether either beats chance
  (:func:`.uncertainty_pairs.agreement_intervals`). A region's mean effect over its pairs
  resamples the **pairs and the target words** together, since the pairs of a region share their
  gender words (:func:`.uncertainty_pairs.pair_set_intervals`).
- **Persona mismatch rates** (notebook 06): the **topics prompted**, each with its personas of
  every run (a cluster bootstrap), so the interval covers the topics and, through them, the
  sampling of the runs (:func:`.uncertainty_personas.persona_intervals`); two groups of topics
  are compared with a two-sample permutation test (:func:`.uncertainty_personas.ratio_difference`).

Every interval is 95% (:data:`LEVEL`). A family of comparisons (a notebook's region pairs) gets
Holm's correction (:func:`holm_family`); a difference **holds** only when its corrected p is at
most 0.05 *and* its interval excludes 0, and the verdict is computed, never typed.

Tables print a number with its interval as :func:`biasbook.reporting.interval_text` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import reporting, results, stats
from biasbook.embeddings import wordsets
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

def not_comparable(domain: str) -> str:
    """Why a number computed on ``domain`` does not measure the paper's GeoWAC quantity, or
    ``""`` where it does (the ``paper`` profile's GeoWAC).

    Used in: region-aware/01, region-aware/02, region-aware/03.

    >>> not_comparable("geowac"), not_comparable("tweets")
    ('', 'not comparable: city tweets, not GeoWAC')
    """
    if domain == "geowac":
        return ""
    return f"not comparable: {DOMAIN_NAMES.get(domain, domain)}, not GeoWAC"


def table4_comparability(domain: str) -> str:
    """Table 4 has a UN column (the paper's second evaluation corpus, which ours samples too) and
    a Reddit one (not public; city tweets stand in): ``""`` where the corpus is the paper's.

    Used in: region-aware/05.

    >>> table4_comparability("un-debates"), table4_comparability("tweets")
    ('', "not comparable: city tweets stand in for the paper's Reddit")
    """
    if domain == "un-debates":
        return ""
    if domain == "tweets":
        return "not comparable: city tweets stand in for the paper's Reddit"
    return f"not comparable: {DOMAIN_NAMES.get(domain, domain)}, not the paper's Reddit or UN"


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

def word_interval(statistic: Callable, n_x: int, n_y: int, *, level: float = LEVEL,
                  method: str = "BCa", n_resamples: int = 1999, seed: int = 0,
                  unit: str = "target words") -> stats.Interval:
    """Stratified bootstrap interval of ``statistic(idx)``, ``idx`` the word positions of one
    resample (X positions ``0..n_x-1``, then Y positions shifted by ``n_x``): X and Y resampled
    apart (:func:`biasbook.stats.interval`, ``paired=False``). BCa (the default) where it is
    defined, else the percentile interval (``ci_method`` says which).

    Used in: region-aware/02, region-aware/05.
    """
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
    target words (:func:`word_interval`).

    Used in: region-aware/02, region-aware/05.
    """
    assoc = np.asarray(assoc, dtype=float)
    return word_interval(lambda idx: weat.effect_sizes(assoc[idx], n_x, ddof), n_x,
                         len(assoc) - n_x, level=level, n_resamples=n_resamples, seed=seed)


def weat_difference(first: np.ndarray, second: np.ndarray, n_x: int, *, ddof: int = 1,
                    level: float = LEVEL, n_resamples: int = 1999, n_permutations: int = 9999,
                    seed: int = 0) -> tuple[stats.Interval, float, bool]:
    """``d(first) - d(second)`` for the same target words' associations in two vector spaces:
    the interval over the target words (both resampled alike) and the two-sided permutation p
    that swaps each word's two associations (exact when ``2**n <= n_permutations``).
    Returns ``(interval, p, exact)``.

    Used in: region-aware/02.
    """
    n = len(first)
    both = np.concatenate([first, second], dtype=float)

    def diff(a, b, axis=-1):
        a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
        return weat.effect_sizes(both[a], n_x, ddof) - weat.effect_sizes(both[b], n_x, ddof)

    ci = word_interval(lambda idx: diff(idx, idx + n), n_x, n - n_x, level=level,
                       n_resamples=n_resamples, seed=seed)
    test = sps.permutation_test((np.arange(n, dtype=float), np.arange(n, 2 * n, dtype=float)),
                                diff, permutation_type="samples", vectorized=True,
                                n_resamples=n_permutations, alternative="two-sided",
                                rng=np.random.default_rng(seed))
    return ci, float(test.pvalue), 2**n <= n_permutations


def weat_intervals(vectors: Mapping[str, Mapping[str, object]], table: pd.DataFrame,
                   tests: Mapping[str, wordsets.WeatTest], *, ddof: int = 1, level: float = LEVEL,
                   n_resamples: int = 1999, seed: int = 0) -> pd.DataFrame:
    """Notebook 02: ``table`` (:func:`.weat_across_regions.weat_by_domain`) with each computable
    effect size's interval over the target words (record columns; the estimate is the table's) and
    ``paper_check`` against Table 7, which is GeoWAC's (:func:`not_comparable`).

    Used in: region-aware/02.
    """
    rows = []
    for r in table[table["computable"].astype(bool)].itertuples():
        kv = vectors[r.domain][r.region]
        words = weat.used_words(kv.key_to_index, tests[r.test].sets())
        assoc = weat.word_associations(kv, words)
        n_x = len(words["x"])
        _check(float(weat.effect_sizes(assoc, n_x, ddof)), r.effect_size,
               f"{r.test} on {r.domain}/{r.region}")
        ci = effect_interval(assoc, n_x, ddof=ddof, level=level, n_resamples=n_resamples,
                             seed=seed)
        rows.append({"domain": r.domain, "region": r.region, "test": r.test, **ci.row()})
    return _with_effect_intervals(table, rows, ["domain", "region", "test"], "paper_effect_size",
                                  not_comparable)


def _with_effect_intervals(table: pd.DataFrame, rows: list[dict], keys: list[str], paper: str,
                           reason: Callable[[str], str]) -> pd.DataFrame:
    """``table`` (effect sizes) with the intervals of ``rows`` (``keys`` and an interval's record
    fields each; a row of ``table`` without one gets NaN), the effect size as ``value`` and
    ``paper_check`` against its column ``paper`` (``reason``: why a domain is not comparable).
    """
    ci = pd.DataFrame(rows, columns=[*keys, *COLUMNS]).drop(columns="value")
    out = table.merge(ci, on=keys, how="left")
    out["value"] = out["effect_size"]
    out["paper_check"] = reporting.paper_verdicts(out, paper, [reason(d) for d in out["domain"]])
    return reporting.with_interval_text(out)


def region_differences(vectors: Mapping[str, Mapping[str, object]], table: pd.DataFrame,
                       tests: Mapping[str, wordsets.WeatTest], *, ddof: int = 1,
                       level: float = LEVEL, n_resamples: int = 1999, n_permutations: int = 9999,
                       seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """Notebook 02: every two computable cells of a test, a cell being a (corpus, region) and
    named ``"<corpus> / <region>"`` (two regions of a corpus, or one region in two corpora), on
    the words both vocabularies have (:func:`weat_difference`: ``group`` minus ``versus``), with
    Holm's correction over the whole family (:func:`holm_family`). ``words``: the target words
    compared (``|X| + |Y|``); a pair of cells whose shared words WEAT's rule refuses is a row
    with its ``reason`` and no test (different word lists are no paired comparison).

    Used in: region-aware/02.
    """
    rows = []
    ok = table[table["computable"].astype(bool)]
    for test, part in ok.groupby("test", sort=False):
        cells = list(zip(part["domain"], part["region"], strict=True))
        for (da, ra), (db, rb) in combinations(cells, 2):
            kv_a, kv_b = vectors[da][ra], vectors[db][rb]
            shared = set(kv_a.key_to_index) & set(kv_b.key_to_index)
            words = weat.used_words(shared, tests[test].sets())
            compared = {"test": test, "group": f"{da} / {ra}", "versus": f"{db} / {rb}"}
            if words is None:
                rows.append({**compared, **_row(None, np.nan), "p_value": np.nan,
                             "reason": "not comparable: too few of the test's words in both "
                                       "vocabularies (WEAT's 50% rule)"})
                continue
            n_x = len(words["x"])
            ci, p, exact = weat_difference(weat.word_associations(kv_a, words),
                                           weat.word_associations(kv_b, words), n_x, ddof=ddof,
                                           level=level, n_resamples=n_resamples,
                                           n_permutations=n_permutations, seed=seed)
            rows.append({**compared, **ci.row(), "words": 2 * n_x, "p_value": p, "exact": exact,
                         "reason": ""})
    frame = pd.DataFrame(rows, columns=["test", "group", "versus", *COLUMNS, "words", "p_value",
                                        "exact", "reason"])
    return reporting.with_interval_text(holm_family(frame, alpha=alpha))


# --- the family of comparisons --------------------------------------------------------------------

def sentence(row, what: str = "") -> str:
    """One comparison as the notebooks print it, the verdict computed by :func:`holm_family`:
    ``"<what>: <group> - <versus> = +0.52 [0.10, 0.90], Holm p = 0.012: <group> higher"``.

    Used in: region-aware/02, region-aware/06.

    >>> row = pd.Series({"group": "Asia", "versus": "Europe", "value": -0.3, "ci_low": -0.5,
    ...                  "ci_high": -0.1, "p_holm": 0.01, "holds": True, "verdict": "lower"})
    >>> sentence(row, "tweets")
    'tweets: Asia - Europe = -0.30 [-0.50, -0.10], Holm p = 0.010: Asia lower'
    """
    compared = f"{what + ': ' if what else ''}{row['group']} - {row['versus']}"
    if pd.isna(row["p_holm"]):
        return f"{compared}: {row.get('reason') or row['verdict']}"
    verdict = f"{row['group']} {row['verdict']}" if row["holds"] else row["verdict"]
    return (f"{compared} = {row['value']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}], "
            f"Holm p = {row['p_holm']:.3f}: {verdict}")


def holm_family(frame: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """``frame`` (one comparison a row: ``value``, ``ci_low``, ``ci_high``, ``p_value``) with
    Holm's ``p_holm`` over all its tested rows (a NaN p is a row without a test), ``holds``
    (corrected p at most ``alpha`` *and* the interval excludes 0) and ``verdict`` (``higher``,
    ``lower`` or why not).

    Used in: region-aware/02, region-aware/06.

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
    out["p_holm"] = stats.holm_tested(out["p_value"])
    tested = out["p_holm"].notna()
    significant = out["p_holm"] <= alpha
    excludes = (out["ci_low"] > 0) | (out["ci_high"] < 0)
    out["holds"] = significant & excludes
    out["verdict"] = [("higher" if v > 0 else "lower") if s and e else
                      f"{NOT_SUPPORTED} (corrected p ≤ {alpha}, but the interval includes 0)"
                      if s else NOT_SUPPORTED if t else "not tested"
                      for v, s, e, t in zip(out["value"], significant, excludes, tested,
                                            strict=True)]
    return out
