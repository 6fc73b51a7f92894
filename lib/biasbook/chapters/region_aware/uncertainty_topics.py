"""Intervals of the region-aware chapter's shares over documents and topic words (notebooks 01,
03, 04); what each resamples is in :mod:`.uncertainty`'s overview."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from biasbook import reporting, stats, validate
from biasbook.chapters.region_aware.uncertainty import (
    COLUMNS,
    LEVEL,
    _check,
    _or_none,
    _row,
    not_comparable,
)

# --- shares of documents (notebooks 01 and 03) ----------------------------------------------------

def share_interval(k: int, n: int, *, level: float = LEVEL, n_resamples: int = 1999,
                   seed: int = 0, unit: str = "documents") -> stats.Interval | None:
    """The share ``k / n`` with its percentile interval over the ``n`` documents (``k`` of them
    count); ``None`` for fewer than two.

    Used in: region-aware/01.
    """
    if n < 2:
        return None
    items = np.zeros(n)
    items[:k] = 1.0
    return stats.interval(items, np.mean, level=level, method="percentile",
                          n_resamples=n_resamples, seed=seed, unit=unit)


def female_share_intervals(fm: pd.DataFrame, *, level: float = LEVEL, n_resamples: int = 1999,
                           seed: int = 0) -> pd.DataFrame:
    """Notebook 01: Table 6 (:func:`.tables.fm_table`) with the female share's interval over the
    aligned documents and ``paper_check`` (Table 6 counts GeoWAC's examples).

    Used in: region-aware/01.
    """
    rows = [_row(share_interval(int(f), int(f + m), level=level, n_resamples=n_resamples,
                                seed=seed), share)
            for f, m, share in zip(fm["female"], fm["male"], fm["female_share"], strict=True)]
    out = pd.concat([fm.reset_index(drop=True),
                     pd.DataFrame(rows, columns=COLUMNS)], axis=1)
    out["paper_check"] = reporting.paper_verdicts(out, "paper_female_share",
                                              [not_comparable(d) for d in out["domain"]])
    return reporting.with_interval_text(out, digits=3)


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
    :func:`.topic_measures.alignment` does (``rule="probability"``: :math:`p_{Ft}` against
    :math:`p_{Mt}`, 0 for an empty group; ``"share"``: the topic's F share against the
    resample's); a topic left without examples is neither.

    Used in: region-aware/03.
    """
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
    documents, the topics fixed (:func:`topic_share_statistic`), and ``paper_check``.

    Used in: region-aware/03.
    """
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
    out["paper_check"] = reporting.paper_verdicts(out, "paper_female_topic_share",
                                              not_comparable(domain))
    return reporting.with_interval_text(out)


# --- topic pairs over topic words (notebook 04) ---------------------------------------------------

def pair_count_intervals(fits: Mapping[str, object], counts: pd.DataFrame, *,
                         candidates: int = 10, threshold: float = 0.01, condition: str = "or",
                         level: float = LEVEL, n_resamples: int = 1999, seed: int = 0,
                         **_) -> pd.DataFrame:
    """Notebook 04: ``counts`` (:func:`.pairing.pair_counts`) with each region's number of passing
    pairs and its percentile interval over each candidate topic's top words (resampled apart per
    topic; a topic's embedding is their mean, as in :func:`.pairing.topic_vectors`). The
    candidates stay fixed. Extra keywords (``n_pairs``) are ignored, so the profile's
    ``pair_settings`` can be passed whole. (The smallest distance gets no interval: the bootstrap
    of a minimum is unreliable.)

    Used in: region-aware/04.
    """
    from biasbook.chapters.region_aware import pairing, topics

    validate.choice("condition", condition, pairing.CONDITIONS)
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
            d_same, d_cross = pairing.pair_distances(vecs[:n_f], vecs[n_f:], she=she, he=he)
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
    return reporting.with_interval_text(out, column="passing [95% CI]", digits=0)


