"""Intervals and tests over the region-aware test's topic pairs (notebook 05): effect sizes per
pair, a region's mean over pairs and gender words, and agreement with the paper's Table 4; what
each resamples is in :mod:`.uncertainty`'s overview."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as sps

from biasbook import reporting, stats
from biasbook.chapters.region_aware.uncertainty import (
    ALPHA,
    COLUMNS,
    LEVEL,
    MIN_UNITS,
    _check,
    _or_none,
    _row,
    _with_effect_intervals,
    effect_interval,
    table4_comparability,
)
from biasbook.embeddings.vectors import oov_report
from biasbook.metrics import weat

# --- over topic pairs (notebook 05) ---------------------------------------------------------------

@dataclass(frozen=True)
class PairScores:
    """One region-aware test's per-word associations: the target words (X, then Y), how many are
    X, and s(w, A, B) of each on the vectors the test used.

    Used in: region-aware/05.
    """

    targets: tuple[str, ...]
    n_x: int
    assoc: np.ndarray


def pair_scores(pairs: pd.DataFrame, vectors: Mapping[str, Mapping[str, object]],
                frame: pd.DataFrame, *, terms: str = "text", names: bool = True,
                roles: str = "gender-targets", oov: str = "subword", ddof: int = 1,
                **_) -> dict[tuple[str, str, int], PairScores]:
    """Notebook 05: per computable row of ``frame`` (:func:`.topic_pair_weat.weat_by_domain` of
    ``pairs`` on ``vectors``), keyed ``(domain, region, rank)``, the associations of the words its
    WEAT used, on the same vectors (fastText's n-gram vectors where ``oov="subword"``); each must
    give the row's effect size. Extra keywords (``n_samples``, ``seed``) are ignored, so the
    notebook's WEAT options can be passed whole.

    Used in: region-aware/05.
    """
    from biasbook.chapters.region_aware import topic_pair_weat

    by_pair = pairs.set_index(["region", "rank"])
    if not by_pair.index.is_unique:
        raise ValueError("pairs must have one row per (region, rank)")
    out = {}
    for r in frame[frame["computable"].astype(bool)].itertuples():
        pair = by_pair.loc[(r.region, r.rank)]
        test = topic_pair_weat.pair_test(pair, topic_pair_weat.gender_words(r.region, terms=terms,
                                                                    names=names), roles)
        kv = vectors[r.domain][r.region]
        report = oov_report(kv, test.sets(), subword=oov == "subword")  # as WEAT looked them up
        words = weat.used_words(report.key, test.sets())
        assoc = weat.word_associations(kv, words)
        n_x = len(words["x"])
        _check(float(weat.effect_sizes(assoc, n_x, ddof)), r.effect_size,
               f"{r.region} P{r.rank} on {r.domain}")
        out[(r.domain, r.region, r.rank)] = PairScores(tuple(words["x"] + words["y"]), n_x, assoc)
    return out


def pair_weat_intervals(frame: pd.DataFrame, scores: Mapping[tuple, PairScores], *,
                        ddof: int = 1, level: float = LEVEL, n_resamples: int = 1999,
                        seed: int = 0) -> pd.DataFrame:
    """Notebook 05: ``frame`` (:func:`.topic_pair_weat.weat_by_domain`) with each computable effect
    size's interval over the target words (``scores``: :func:`pair_scores`) and
    ``paper_check`` against Table 4 (:func:`table4_comparability`).

    Used in: region-aware/05.
    """
    rows = []
    for (domain, region, rank), sc in scores.items():
        ci = effect_interval(sc.assoc, sc.n_x, ddof=ddof, level=level, n_resamples=n_resamples,
                             seed=seed)
        rows.append({"domain": domain, "region": region, "rank": rank, **ci.row()})
    return _with_effect_intervals(frame, rows, ["domain", "region", "rank"], "paper",
                                  table4_comparability)


def table4_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 4's layout from :func:`pair_weat_intervals`: one row per pair, per domain our effect
    size as ``value [low, high]``, the paper's number for that domain and ``paper_check``.

    Used in: region-aware/05.
    """
    from biasbook.chapters.region_aware.topic_pair_weat import _in_paper_order

    index = ["region", "rank", "female_topic", "male_topic", *(["pairs"] if "pairs" in frame
                                                               else [])]
    wide = frame.set_index([*index, "domain"])[["ours", "paper", "paper_check"]] \
        .unstack("domain")
    wide.columns = [f"{stat} ({domain})" for stat, domain in wide.columns]
    return _in_paper_order(wide.reset_index())


def pair_set_intervals(results: pd.DataFrame, sets: pd.DataFrame,
                       scores: Mapping[tuple, PairScores], *, ddof: int = 1,
                       level: float = LEVEL, n_resamples: int = 1999, seed: int = 0
                       ) -> pd.DataFrame:
    """Notebook 05: ``sets`` (:func:`.topic_pair_weat.pair_sets` of ``results``) with each mean
    effect's percentile interval over the set's **pairs and target words** together: the pairs
    of a region share their gender words, so resampling the pairs alone would miss the largest
    common source of noise. Pairs and X and Y words are resampled independently (a crossed
    bootstrap, :func:`biasbook.stats.interval` with three samples and ``paired=False``). Sets of
    fewer than :data:`MIN_UNITS` pairs get no interval.

    Used in: region-aware/05.
    """
    from biasbook.chapters.region_aware import topic_pair_weat

    rows = []
    for r in sets.itertuples():
        part = results[(results["domain"] == r.domain) & (results["region"] == r.region)
                       & results["pairs"].isin(topic_pair_weat.PAIR_SETS[r.pairs])
                       & results["computable"].astype(bool)]
        chosen = [scores[(r.domain, r.region, k)] for k in part["rank"]]
        ci = None
        if len(chosen) >= MIN_UNITS:
            statistic = pairs_and_words_mean(chosen, ddof)
            c = chosen[0]  # every test of the set has the same target words
            data = tuple(np.arange(k, dtype=float) for k in (c.n_x, len(c.targets) - c.n_x,
                                                               len(chosen)))
            _check(float(statistic(*data)), r.mean_effect,
                   f"mean effect of {r.domain}/{r.region}/{r.pairs}")
            ci = stats.interval(data, statistic, level=level, method="percentile",
                                n_resamples=n_resamples, seed=seed, vectorized=True,
                                paired=False, unit="topic pairs x target words")
        rows.append(_row(ci, r.mean_effect))
    return reporting.with_interval_text(pd.concat([sets.reset_index(drop=True),
                                pd.DataFrame(rows, columns=COLUMNS)], axis=1))


def pairs_and_words_mean(chosen: Sequence[PairScores], ddof: int = 1) -> Callable:
    """``statistic(ix, iy, ip, axis=-1)``: the mean effect size over the pairs at positions
    ``ip`` of ``chosen`` on the X words ``ix`` and Y words ``iy`` (one resample: the same words
    in every pair). The tests must share their target words, as a region's pairs do.

    Used in: region-aware/05.
    """
    if len({c.targets for c in chosen}) != 1:
        raise ValueError("the pairs' tests use different target words: a crossed bootstrap "
                         "needs the same words in every pair")
    n_x = chosen[0].n_x
    table = np.stack([c.assoc for c in chosen])                  # (pairs, words)

    def statistic(ix, iy, ip, axis=-1):
        words = np.concatenate([np.asarray(ix, dtype=np.intp),
                                np.asarray(iy, dtype=np.intp) + n_x], axis=-1)
        picked = table[np.asarray(ip, dtype=np.intp)[..., :, None], words[..., None, :]]
        return weat.effect_sizes(picked, n_x, ddof).mean(axis=-1)

    return statistic


def chance_agreement(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The sign agreement two lists would have if their signs were unrelated, given how many
    of each are positive: ``p q + (1 - p)(1 - q)``. Not 0.5 when both lean one way (most of
    Table 4 is positive).

    Used in: region-aware/05.

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
    """Notebook 05: per domain, over the pairs with both numbers (ours and Table 4's),
    the share whose sign matches Table 4 (``value``...) and the Pearson correlation
    (``pearson value``...), each with its percentile interval over the **pairs** (from
    :data:`MIN_UNITS` pairs). Is either more than chance? Each gets a two-sided permutation p that
    re-pairs our effects with the paper's at random (``scipy.stats.permutation_test``,
    ``pairings``), so "chance" keeps how many of each list are positive (``chance``, by
    :func:`chance_agreement`, is the agreement it expects, not 0.5). Holm runs over all four
    tests; a statistic ``holds`` when its corrected p is at most ``alpha`` and its interval
    excludes chance (``chance`` for the sign, 0 for the correlation).

    Used in: region-aware/05.
    """
    rows = []
    for domain, g in results.dropna(subset=["effect_size", "paper"]).groupby("domain", sort=False):
        ours, theirs = g["effect_size"].to_numpy(float), g["paper"].to_numpy(float)
        row = {"domain": domain, "pairs": len(g), "chance": chance_agreement(ours, theirs)}
        for prefix, statistic in (("", stats.same_sign), ("pearson ", stats.pearson)):
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
    adjusted = stats.holm_tested(np.concatenate([out["p_value"], out["pearson p_value"]]))
    out["p_holm"], out["pearson p_holm"] = adjusted[:len(out)], adjusted[len(out):]
    for prefix, level_, words in (("", out["chance"], ("above chance", "below chance")),
                                  ("pearson ", 0.0, ("positive", "negative"))):
        low, high, value = (out[f"{prefix}{k}"] for k in ("ci_low", "ci_high", "value"))
        holds = (out[f"{prefix}p_holm"] <= alpha) & ((low > level_) | (high < level_))
        out[f"{prefix}verdict"] = np.where(holds, np.where(value > level_, *words),
                                           "not distinguishable from chance")
    out = reporting.with_interval_text(out, column="same sign")
    return reporting.with_interval_text(out, column="pearson", prefix="pearson ")


def agreement_sentences(agree: pd.DataFrame) -> list[str]:
    """:func:`agreement_intervals`' verdicts as the notebook prints them, one line per corpus.

    Used in: region-aware/05.
    """
    return [f"{a['domain']} ({a['pairs']} pairs): share with Table 4's sign {a['same sign']} "
            f"(chance {a['chance']:.2f}, Holm p = {a['p_holm']:.3f}): {a['verdict']}; "
            f"Pearson r = {a['pearson']} (Holm p = {a['pearson p_holm']:.3f}): "
            f"{a['pearson verdict']}" for _, a in agree.iterrows()]


