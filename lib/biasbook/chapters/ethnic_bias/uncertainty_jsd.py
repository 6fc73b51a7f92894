"""How sure is a Jensen-Shannon divergence between two languages (notebook 03, Table 3)?

A mean JSD between two languages is a mean over the (template, attribute) cells both share, so
its interval resamples them (:func:`jsd_intervals`), and two language pairs of one model are
compared cell by cell on the cells both pairs share (:func:`jsd_differences`, the paper's
comparisons :data:`JSD_CLAIMS`). The rank agreement with the paper's Table 3
(:func:`jsd_spearman`) and the summaries of the two readings of Table 3 over the language pairs
(:func:`jsd_readings`: the mean and the largest divergence of a model) resample the
cells too: one resample draws cells with replacement and recomputes every pair over the drawn
cells it has (a Chinese pair lacks the templates Chinese lacks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from itertools import combinations

import numpy as np
import pandas as pd

from biasbook import reporting, stats
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.chapters.ethnic_bias.tables import (
    base,
    common_distributions,
    jsd_cells,
    jsd_matrix,
    mean_jsd,
    paper_table3,
)
from biasbook.chapters.ethnic_bias.uncertainty import (
    NO_INTERVAL,
    UNIT,
    interval_row,
    jsd_difference,
)
from biasbook.metrics import cb
from biasbook.results import UNCERTAINTY

#: The paper's comparisons of Table 3 (Sec. 5): "the JSD of English-German is much lower than the
#: JSD of English-Korean", and the distributions of languages "relatively distant from English"
#: are "significantly different" (Korean, "likewise" Turkish and Chinese). Each is (pair, pair it
#: should be lower than).
JSD_CLAIMS = ((("en", "de"), ("en", "ko")), (("en", "de"), ("en", "tr")),
              (("en", "de"), ("en", "zh")))


def jsd_intervals(by_model: Mapping[tuple[str, str], Mapping[str, CBResult]], *,
                  comparable: bool, level: float = 0.95, n_resamples: int = 9999,
                  seed: int = 0) -> pd.DataFrame:
    """Every language pair of every (group, model) scored in two or more languages (base lists),
    in :func:`.tables.jsd_matrix`'s order: the mean JSD (``value``, as the matrix has it) with
    its percentile interval over the (template, attribute) cells the two languages share, the
    paper's Table 3 value for the group and whether it lies inside (``comparable``: only the
    ``paper`` profile scores M-BERT).

    Used in: ethnic-bias/03.
    """
    rows = []
    for (group, model), per_language in by_model.items():
        base_results = {c: base(r) for c, r in per_language.items()}
        paper = paper_table3(group)
        for a, b in combinations(base_results, 2):
            cells = jsd_cells(base_results[a], base_results[b])["jsd"].to_numpy()
            theirs = paper.loc[a, b] if a in paper.index and b in paper.index else np.nan
            row = interval_row(cells, value=mean_jsd(base_results[a], base_results[b]), unit=UNIT,
                               level=level, n_resamples=n_resamples, seed=seed)
            rows.append({"group": group, "model": model, "pair": f"{a}-{b}", **row,
                         "paper": theirs,
                         "paper vs ours": reporting.paper_verdict(
                             theirs, row["ci_low"], row["ci_high"],
                             reason="" if comparable else "another model")})
    return pd.DataFrame(rows, columns=["group", "model", "pair", "value", *UNCERTAINTY, "paper",
                                       "paper vs ours"])


def jsd_differences(by_model: Mapping[tuple[str, str], Mapping[str, CBResult]],
                    claims=JSD_CLAIMS, *, level: float = 0.95, n_resamples: int = 9999,
                    seed: int = 0) -> pd.DataFrame:
    """For every model holding the three languages of a claim ``((a, b), (c, d))``: JSD(a-b) -
    JSD(c-d), cell by cell on the (template, attribute) cells both pairs share, with its paired
    interval and permutation p (the pairs' two divergences swapped within a cell). Holm's
    correction is :func:`.uncertainty.family`'s, over the notebook's family. Columns: group,
    model, pair, other_pair, the record fields and p_value.

    Used in: ethnic-bias/03.
    """
    rows = []
    for (group, model), per_language in by_model.items():
        for first, second in claims:
            if not set(first + second) <= set(per_language):
                continue
            r = {c: base(per_language[c]) for c in {*first, *second}}
            row = jsd_difference((r[first[0]], r[first[1]]), (r[second[0]], r[second[1]]),
                                 level=level, n_resamples=n_resamples, seed=seed)
            rows.append({"group": group, "model": model, "pair": "-".join(first),
                         "other_pair": "-".join(second), **row})
    return pd.DataFrame(rows, columns=["group", "model", "pair", "other_pair", "value",
                                       *UNCERTAINTY, "p_value"])


def jsd_sentence(row) -> str:
    """What a row of :func:`jsd_differences` (after :func:`.uncertainty.family`) supports, and
    no more.

    Used in: ethnic-bias/03.
    """
    head = (f"{row.model}: JSD({row.pair}) - JSD({row.other_pair}) = {row.value:+.3f} "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}] over {row.ci_units:.0f} cells, "
            f"Holm p = {row.p_holm:.3f}: ")
    if not row.holds:
        return head + "not a difference these cells support"
    if row.value < 0:
        return head + f"{row.pair} is closer than {row.other_pair}, as in the paper"
    return head + f"{row.pair} is further apart than {row.other_pair}, against the paper"


def jsd_spearman(per_language: Mapping[str, CBResult], paper: pd.DataFrame, *,
                 level: float = 0.95, n_resamples: int = 9999, seed: int = 0
                 ) -> stats.Interval | None:
    """Spearman's correlation between our mean JSDs and the paper's (``paper``: a Table 3
    matrix) over the language pairs both have, with a percentile interval over the cells: one
    resample draws (template, attribute) cells with replacement and recomputes every pair's mean
    over the drawn cells it has (a Chinese pair lacks the templates Chinese lacks). None for
    fewer than three pairs or a constant ranking; NaN bounds where some resample leaves a pair
    without any of its cells or ties every pair (few cells).

    Used in: ethnic-bias/03.
    """
    from scipy.stats import spearmanr

    results = {c: base(r) for c, r in per_language.items() if c in paper.index}
    pairs = list(combinations(results, 2))
    if len(pairs) < 3:
        return None
    cells = {p: jsd_cells(results[p[0]], results[p[1]]).set_index(["template", "attribute"])
             ["jsd"] for p in pairs}
    grid = list(dict.fromkeys(c for s in cells.values() for c in s.index))
    M = np.array([[cells[p].get(c, np.nan) for c in grid] for p in pairs])  # pairs x cells
    ours = [mean_jsd(results[a], results[b]) for a, b in pairs]
    theirs = np.array([paper.loc[p] for p in pairs])
    value = spearmanr(ours, theirs).statistic
    if not np.isfinite(value) or len(grid) < 2:
        return None
    ci = _cell_interval(len(grid), partial(drawn_spearman, M, theirs), level=level,
                        n_resamples=n_resamples, seed=seed)
    return replace(ci, value=float(value))


def drawn_spearman(jsd: np.ndarray, theirs: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Spearman's correlation with ``theirs`` (one value per pair) of each pair's mean JSD over
    the drawn cells: ``jsd`` is pairs x cells (NaN where a pair lacks the cell), ``drawn`` the
    cell indices of one resample per row (last axis). A pair with none of the drawn cells gives
    NaN.

    Used in: ethnic-bias/03.
    """
    from scipy.stats import rankdata

    values = jsd[:, drawn.astype(int)]  # pairs x ... x draws
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.nansum(values, axis=-1) / np.sum(np.isfinite(values), axis=-1)
    x = rankdata(means, axis=0, nan_policy="propagate")
    x = x - x.mean(axis=0)
    y = rankdata(theirs)
    y = (y - y.mean()).reshape(-1, *[1] * (x.ndim - 1))
    return (x * y).sum(axis=0) / np.sqrt((x ** 2).sum(axis=0) * (y ** 2).sum())


# --- the two readings of Table 3, summarised over a model's language pairs -----------------------

#: Notebook 03's two readings of "the JSD between two languages": the mean of the per-sentence
#: divergences (:func:`.tables.mean_jsd`), and the divergence of the distributions averaged over
#: templates and attributes first (``averaged=True``).
READINGS = (("mean of per-sentence JSDs", False), ("JSD of averages", True))
#: How a reading is summarised over a model's language pairs.
SUMMARIES = {"mean": np.mean, "max": np.max}


def jsd_readings(by_model: Mapping[tuple[str, str], Mapping[str, CBResult]], *,
                 level: float = 0.95, n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """Per model scored in two or more languages (base lists) and reading (:data:`READINGS`),
    the ``mean`` and the ``max`` of its divergences over its language pairs (from
    :func:`.tables.jsd_matrix`, as notebook 03 computes them), each with its percentile interval
    over the (template, attribute) cells, the record fields prefixed ``mean `` and ``max ``. One
    resample draws cells with replacement and recomputes every pair over the drawn cells it has
    (:func:`drawn_jsd_readings`). The JSD of averages of a resample tends to be larger than that
    of all the cells (repeated cells leave fewer distinct ones to average over), so its interval
    leans upwards of the value. The paper's printed Table 3 follows, one row per group, without
    an interval (it reports none).

    Used in: ethnic-bias/03.
    """
    rows = []
    for (_group, name), per_language in by_model.items():
        if len(per_language) < 2:
            continue
        results = {c: base(r) for c, r in per_language.items()}
        pairs, n_cells = reading_cells(results)
        for reading, averaged in READINGS:
            m = jsd_matrix(results, averaged=averaged).to_numpy()
            values = m[np.triu_indices(len(m), 1)]
            row = {"model": name, "reading": reading, "pairs": len(values)}
            for summary, reduce in SUMMARIES.items():
                row[summary] = reduce(values)
                ci = _reading_interval(pairs, n_cells, averaged, reduce, level=level,
                                       n_resamples=n_resamples, seed=seed)
                row.update({f"{summary} {k}": v for k, v in ci.items()})
            rows.append(row)
    for group in ("monolingual", "multilingual"):
        m = paper_table3(group).to_numpy()
        values = m[np.triu_indices(len(m), 1)]
        rows.append({"model": f"paper ({group})", "reading": "printed", "pairs": len(values),
                     **{summary: reduce(values) for summary, reduce in SUMMARIES.items()}})
    fields = [f"{s} {k}" for s in SUMMARIES for k in NO_INTERVAL]
    return pd.DataFrame(rows, columns=["model", "reading", "pairs", *SUMMARIES, *fields])


def reading_cells(results: Mapping[str, CBResult]) -> tuple[list[dict], int]:
    """Every language pair of ``results`` in :func:`.tables.jsd_matrix`'s order, as what
    :func:`drawn_jsd_readings` needs: the indices of the pair's cells in the grid of every
    (template, attribute) cell some pair has (``cells``), both languages' scaled ``P'`` on them
    (``p``, ``q``: cells x targets) and their divergences (``jsd``); and the grid's size.

    Used in: ethnic-bias/03.
    """
    grid: dict[tuple, int] = {}
    pairs = []
    for a, b in combinations(results, 2):
        p, q, templates, attributes = common_distributions(results[a], results[b])
        keys = [(t, x) for t in templates for x in attributes]
        cells = np.array([grid.setdefault(k, len(grid)) for k in keys])
        p, q = p.reshape(len(keys), -1), q.reshape(len(keys), -1)
        pairs.append({"cells": cells, "p": p, "q": q, "jsd": cb.jensen_shannon(p, q)})
    return pairs, len(grid)


def drawn_jsd_readings(pairs: list[dict], n_cells: int, drawn: np.ndarray,
                       averaged: bool) -> np.ndarray:
    """Each pair's divergence (:func:`reading_cells`' pairs) over the drawn cells of every
    resample: ``drawn`` holds the grid indices of one resample along its last axis; the result
    is pairs x resamples (the leading axes of ``drawn``). A cell drawn twice counts twice; a
    pair with none of the drawn cells gives NaN. Without ``averaged``, the mean of the pair's
    per-cell divergences; with it, the divergence of its two distributions averaged over the
    drawn cells.

    Used in: ethnic-bias/03.
    """
    drawn = np.asarray(drawn).astype(int)
    flat = drawn.reshape(-1, drawn.shape[-1])
    n = len(flat)
    counts = np.bincount((np.arange(n)[:, None] * n_cells + flat).ravel(),
                         minlength=n * n_cells).reshape(n, n_cells).astype(float)
    out = np.full((len(pairs), n), np.nan)
    for k, pair in enumerate(pairs):
        weights = counts[:, pair["cells"]]          # resamples x the pair's cells
        drawn_any = weights.sum(axis=1) > 0
        w = weights[drawn_any]
        if averaged:
            out[k, drawn_any] = cb.jensen_shannon(w @ pair["p"], w @ pair["q"])
        else:
            out[k, drawn_any] = (w @ pair["jsd"]) / w.sum(axis=1)
    return out.reshape(len(pairs), *drawn.shape[:-1])


def _reading_interval(pairs: list[dict], n_cells: int, averaged: bool, reduce, *,
                      level: float, n_resamples: int, seed: int) -> dict:
    """The record fields (less ``value``) of the percentile interval of ``reduce`` over the
    pairs' divergences, resampling the grid's cells; NaN bounds for fewer than 2 cells or where
    a resample leaves a pair without any of its cells."""
    if n_cells < 2:
        return {**NO_INTERVAL, "ci_units": n_cells}

    def statistic(drawn):
        return reduce(drawn_jsd_readings(pairs, n_cells, drawn, averaged), axis=0)

    ci = _cell_interval(n_cells, statistic, level=level, n_resamples=n_resamples, seed=seed)
    return {k: v for k, v in ci.row().items() if k != "value"}


def _cell_interval(n_cells: int, statistic, *, level: float, n_resamples: int,
                   seed: int) -> stats.Interval:
    """The percentile interval of ``statistic(drawn)`` (``drawn``: the indices of the cells of
    each resample along the last axis) over ``n_cells`` cells resampled with replacement; no
    value, and NaN bounds where some resample leaves a pair without any of its cells (or, for a
    rank correlation, ties every pair)."""
    def over_cells(idx, axis=-1):
        return statistic(np.moveaxis(np.asarray(idx), axis, -1))

    try:
        return stats.interval(np.arange(n_cells, dtype=float), over_cells, level=level,
                              method="percentile", n_resamples=n_resamples, seed=seed, unit=UNIT)
    except ValueError:
        return stats.Interval(np.nan, np.nan, np.nan, level, "percentile", n_cells, UNIT)
