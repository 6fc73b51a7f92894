"""How sure is a CB score? Bootstrap intervals over template x attribute cells, paired tests.

CB averages ``Var_n log P'`` over (template, attribute) cells (Eq. 2 of the paper), so the cells
are the items resampled; the targets (countries) stay fixed, since the variance is taken over
them. A causal model's prior is the mean over the attributes scored; each cell keeps the prior of
the full list, so resampling cells does not re-derive it. Two models scored in the same language
on the same cells are compared cell by cell (:func:`biasbook.stats.paired_difference`), and the
family of comparisons is Holm-corrected.

The same cells carry the chapter's other numbers. A Jensen-Shannon divergence between two
languages (notebook 03, Table 3) is a mean over the cells both share, so its interval resamples
them, and two language pairs of one model are compared cell by cell (:func:`jsd_differences`).
A mitigation row (notebook 04) is a CB score on the evaluation's cells: its interval resamples
them, and its change against the reference row (``base`` or ``ft``), scored on the same cells, is
tested cell by cell (:func:`change_tests`); Table 9's distances to English likewise. Training
seeds would belong in these intervals too (the fine-tuned head depends on its seed), but one
head per row is all the book profile can afford, so the intervals say how sure the *measurement*
of each trained model is, not how another seed would have come out. The perplexity's interval
resamples the held-out sentences, whose scores the run keeps (:attr:`.mitigation.Outcome.heldout`).
A permutation test over ``n`` cells cannot give a p-value below ``2 / 2**n``
(:func:`smallest_p`): with 5 cells, 0.0625.

>>> import numpy as np
>>> from biasbook import stats
>>> cells_a, cells_b = np.array([0.9, 0.7, 1.1, 0.8]), np.array([0.2, 0.3, 0.1, 0.4])
>>> d = stats.paired_difference(cells_a, cells_b, unit="cells")
>>> round(d.value, 3), d.exact, round(d.p_value, 3)  # every one of the 16 swaps enumerated
(0.625, True, 0.125)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations

import numpy as np
import pandas as pd

from biasbook import stats
from biasbook.chapters.ethnic_bias.pipeline import CBResult
from biasbook.chapters.ethnic_bias.tables import (
    base,
    conditions,
    jsd_cells,
    mean_jsd,
    paper_table3,
    paper_table4,
)
from biasbook.metrics import cb

UNIT = "template x attribute cells"


def cb_intervals(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """One row per (group, result) of :func:`.tables.cb_table`: the CB score on the base lists
    with its percentile bootstrap interval over the cells (record schema columns)."""
    rows = []
    for group, full in results:
        r = base(full)
        cells = r.variances["variance"].to_numpy()
        ci = stats.interval(cells, np.mean, level=level, method="percentile",
                            n_resamples=n_resamples, seed=seed, unit=UNIT)
        # the estimate as cb_table computes it, bit for bit (a mean of the raveled cells
        # may differ in the last digit)
        rows.append({"language": r.language, "model": r.model, "group": group,
                     **ci.row(), "value": r.cb})
    return pd.DataFrame(rows)


def cb_differences(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                   n_resamples: int = 9999, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of models scored in the same language on the same cells: CB(model) -
    CB(versus) with a paired interval, the permutation p and Holm's p over all the pairs
    (``holds``: the difference is real at ``alpha`` after the correction)."""
    by_language: dict[str, list[CBResult]] = {}
    for _, full in results:
        by_language.setdefault(full.language, []).append(base(full))
    rows = []
    for language, scored in by_language.items():
        for a, b in combinations(scored, 2):
            if (a.templates, a.attributes) != (b.templates, b.attributes):
                raise ValueError(f"{a.model} and {b.model} were scored on different cells in "
                                 f"{language}: compare them on the same templates and attributes")
            d = stats.paired_difference(a.variances["variance"].to_numpy(),
                                        b.variances["variance"].to_numpy(), np.mean,
                                        level=level, method="percentile",
                                        n_resamples=n_resamples, seed=seed, unit=UNIT)
            rows.append({"language": language, "model": a.model, "versus": b.model,
                         **d.interval.row(), "p_value": d.p_value})
    columns = ["language", "model", "versus", "value", "ci_low", "ci_high", "ci_level",
               "ci_unit", "ci_units", "ci_method", "p_value"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["p_holm"] = stats.holm(frame["p_value"]) if len(frame) else []
    frame["holds"] = frame["p_holm"] < alpha
    return frame


def against_paper(intervals: pd.DataFrame, paper: pd.Series, comparable: bool) -> pd.Series:
    """Per row: whether the paper's CB lies inside our interval, or why it cannot be asked
    (the paper scored BERT; only the ``paper`` profile scores the same models)."""
    return pd.Series([paper_verdict(paper.get((r.language, r.group), np.nan), r.ci_low,
                                    r.ci_high, comparable) for r in intervals.itertuples()],
                     index=intervals.index)


def with_paper(intervals: pd.DataFrame, comparable: bool) -> pd.DataFrame:
    """:func:`cb_intervals` with the paper's Table 4 value (``paper``) and :func:`against_paper`'s
    verdict (``paper vs ours``)."""
    paper = paper_table4().set_index(["language", "group"])["cb"]
    return intervals.assign(
        paper=[paper.get((r.language, r.group), np.nan) for r in intervals.itertuples()],
        **{"paper vs ours": against_paper(intervals, paper, comparable)})


# --- shared ---------------------------------------------------------------------------------------

SENTENCES = "held-out sentences"
#: The record fields of an interval that could not be computed (fewer than two items).
_NO_INTERVAL = {"ci_low": np.nan, "ci_high": np.nan, "ci_level": np.nan, "ci_unit": None,
                "ci_units": np.nan, "ci_method": None}


def paper_verdict(theirs, low: float, high: float, comparable: bool,
                  why: str = "another model") -> str:
    """Whether the paper's number ``theirs`` lies inside our interval ``[low, high]``, or why the
    question cannot be asked.

    >>> paper_verdict(0.2, 0.1, 0.3, True), paper_verdict(0.5, 0.1, 0.3, True)
    ('inside', 'outside')
    >>> paper_verdict(None, 0.1, 0.3, True), paper_verdict(0.2, 0.1, 0.3, False)
    ('no paper value', 'not comparable: another model')
    >>> paper_verdict(0.2, float("nan"), float("nan"), True)
    'no interval (fewer than 2 cells)'
    """
    if theirs is None or pd.isna(theirs):
        return "no paper value"
    if not comparable:
        return f"not comparable: {why}"
    if pd.isna(low) or pd.isna(high):
        return "no interval (fewer than 2 cells)"
    return "inside" if low <= theirs <= high else "outside"


def _interval_row(items, statistic=np.mean, *, value: float, unit: str, level: float,
                  n_resamples: int, seed: int) -> dict:
    """The record fields of a percentile interval of ``statistic`` over ``items`` (an array or
    a tuple of aligned arrays), with ``value`` as the estimate; NaN bounds for fewer than 2."""
    n = len(items[0]) if isinstance(items, tuple) else len(items)
    if n < 2:
        return {"value": value, **_NO_INTERVAL, "ci_units": n}
    ci = stats.interval(items, statistic, level=level, method="percentile",
                        n_resamples=n_resamples, seed=seed, unit=unit)
    return {**ci.row(), "value": value}


def _difference_row(a: np.ndarray, b: np.ndarray, *, unit: str, level: float,
                    n_resamples: int, seed: int) -> dict:
    """mean(a) - mean(b) over paired items, its interval and permutation p (NaN for fewer than
    2 items)."""
    if len(a) < 2:
        return {"value": float(np.mean(a) - np.mean(b)), **_NO_INTERVAL, "ci_units": len(a),
                "p_value": np.nan}
    d = stats.paired_difference(a, b, np.mean, level=level, method="percentile",
                                n_resamples=n_resamples, seed=seed, unit=unit)
    return d.row()


def text(frame: pd.DataFrame, value: str = "value", prefix: str = "", digits: int = 3,
         percent: bool = False) -> pd.Series:
    """``value [low, high]`` per row, as the chapter's tables print an interval (the value alone
    where it has none); ``prefix`` names the interval's columns (``perplexity ci_low``...).

    >>> text(pd.DataFrame({"value": [0.123, 2.0], "ci_low": [0.1, float("nan")],
    ...                    "ci_high": [0.15, float("nan")]})).tolist()
    ['0.123 [0.100, 0.150]', '2.000']
    """
    fmt = f"{{:+.{max(digits - 2, 0)}%}}" if percent else f"{{:.{digits}f}}"

    def one(v, low, high) -> str:
        if pd.isna(v):
            return ""
        if pd.isna(low) or pd.isna(high):
            return fmt.format(v)
        return f"{fmt.format(v)} [{fmt.format(low)}, {fmt.format(high)}]"
    return pd.Series([one(v, lo, hi) for v, lo, hi in zip(
        frame[value], frame[prefix + "ci_low"], frame[prefix + "ci_high"], strict=True)],
        index=frame.index, dtype=object)


def ci_text(ci: stats.Interval, digits: int = 2) -> str:
    """An interval as the tables print it, or its value and "(no interval)".

    >>> ci_text(stats.Interval(0.5, 0.25, 0.75, 0.95, "percentile", 10))
    '0.50 [0.25, 0.75]'
    >>> ci_text(stats.Interval(0.5, float("nan"), float("nan"), 0.95, "percentile", 10))
    '0.50 (no interval)'
    """
    if np.isfinite(ci.low) and np.isfinite(ci.high):
        return ci.text(digits)
    return f"{ci.value:.{digits}f} (no interval)"


def family(frames: Iterable[pd.DataFrame], alpha: float = 0.05) -> list[pd.DataFrame]:
    """Holm's correction over every ``p_value`` of ``frames`` together (one family of
    comparisons): each frame gets ``p_holm`` and ``holds`` (Holm's p below ``alpha``); a test
    without a p-value (too few items) is left out of the family and does not hold.

    >>> a = pd.DataFrame({"p_value": [0.01, 0.04]})
    >>> b = pd.DataFrame({"p_value": [0.03, float("nan")]})
    >>> [f["p_holm"].round(2).tolist() for f in family([a, b])]
    [[0.03, 0.06], [0.06, nan]]
    """
    frames = [f.copy() for f in frames]
    p = np.concatenate([f["p_value"].to_numpy(dtype=float) for f in frames] or [np.empty(0)])
    adjusted = np.full(len(p), np.nan)
    finite = np.isfinite(p)
    if finite.any():
        adjusted[finite] = stats.holm(p[finite])
    start = 0
    for f in frames:
        f["p_holm"] = adjusted[start:start + len(f)]
        f["holds"] = f["p_holm"] < alpha
        start += len(f)
    return frames


def smallest_p(n_items: int) -> float:
    """The smallest two-sided p-value a paired permutation test over ``n_items`` items can give:
    every item's difference has the same sign, and only that arrangement and its mirror image
    are as extreme (``2 / 2**n``).

    >>> smallest_p(3), smallest_p(5)
    (0.25, 0.0625)
    """
    return min(1.0, 2.0 / 2 ** n_items)


# --- notebook 03: Jensen-Shannon divergences ------------------------------------------------------

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
    ``paper`` profile scores M-BERT)."""
    rows = []
    for (group, model), per_language in by_model.items():
        base_results = {c: base(r) for c, r in per_language.items()}
        paper = paper_table3(group)
        names = list(base_results)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                cells = jsd_cells(base_results[a], base_results[b])["jsd"].to_numpy()
                value = mean_jsd(base_results[a], base_results[b])
                theirs = paper.loc[a, b] if a in paper.index and b in paper.index else np.nan
                row = _interval_row(cells, value=value, unit=UNIT, level=level,
                                    n_resamples=n_resamples, seed=seed)
                rows.append({"group": group, "model": model, "pair": f"{a}-{b}", **row,
                             "paper": theirs,
                             "paper vs ours": paper_verdict(theirs, row["ci_low"],
                                                            row["ci_high"], comparable)})
    return pd.DataFrame(rows, columns=["group", "model", "pair", "value", "ci_low", "ci_high",
                                       "ci_level", "ci_unit", "ci_units", "ci_method", "paper",
                                       "paper vs ours"])


def jsd_differences(by_model: Mapping[tuple[str, str], Mapping[str, CBResult]],
                    claims=JSD_CLAIMS, *, level: float = 0.95, n_resamples: int = 9999,
                    seed: int = 0) -> pd.DataFrame:
    """For every model holding the three languages of a claim ``((a, b), (c, d))``: JSD(a-b) -
    JSD(c-d), cell by cell on the (template, attribute) cells both pairs share, with its paired
    interval and permutation p (the pairs' two divergences swapped within a cell). Holm's
    correction is :func:`family`'s, over the notebook's family. Columns: group, model, pair,
    other_pair, the record fields and p_value."""
    rows = []
    for (group, model), per_language in by_model.items():
        for first, second in claims:
            if not set(first + second) <= set(per_language):
                continue
            r = {c: base(per_language[c]) for c in {*first, *second}}
            both = jsd_cells(r[first[0]], r[first[1]]).merge(
                jsd_cells(r[second[0]], r[second[1]]), on=["template", "attribute"],
                suffixes=("", "_other"))
            row = _difference_row(both["jsd"].to_numpy(), both["jsd_other"].to_numpy(),
                                  unit=UNIT, level=level, n_resamples=n_resamples, seed=seed)
            rows.append({"group": group, "model": model, "pair": "-".join(first),
                         "other_pair": "-".join(second), **row})
    return pd.DataFrame(rows, columns=["group", "model", "pair", "other_pair", "value", "ci_low",
                                       "ci_high", "ci_level", "ci_unit", "ci_units",
                                       "ci_method", "p_value"])


def jsd_sentence(row) -> str:
    """What a row of :func:`jsd_differences` (after :func:`family`) supports, and no more."""
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
    without any of its cells or ties every pair (few cells)."""
    from scipy.stats import spearmanr

    results = {c: base(r) for c, r in per_language.items() if c in paper.index}
    names = list(results)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
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

    def statistic(idx, axis=-1):
        return drawn_spearman(M, theirs, np.moveaxis(np.asarray(idx), axis, -1))

    try:
        ci = stats.interval(np.arange(len(grid), dtype=float), statistic, level=level,
                            method="percentile", n_resamples=n_resamples, seed=seed, unit=UNIT)
    except ValueError:  # a resample left a pair without cells, or tied every pair
        return stats.Interval(float(value), np.nan, np.nan, level, "percentile", len(grid),
                              UNIT)
    return stats.Interval(float(value), ci.low, ci.high, ci.level, ci.method, ci.n_units,
                          ci.unit)


def drawn_spearman(jsd: np.ndarray, theirs: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Spearman's correlation with ``theirs`` (one value per pair) of each pair's mean JSD over
    the drawn cells: ``jsd`` is pairs x cells (NaN where a pair lacks the cell), ``drawn`` the
    cell indices of one resample per row (last axis). A pair with none of the drawn cells gives
    NaN."""
    from scipy.stats import rankdata

    values = jsd[:, drawn.astype(int)]  # pairs x ... x draws
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.nansum(values, axis=-1) / np.sum(np.isfinite(values), axis=-1)
    x = rankdata(means, axis=0, nan_policy="propagate")
    x = x - x.mean(axis=0)
    y = rankdata(theirs)
    y = (y - y.mean()).reshape(-1, *[1] * (x.ndim - 1))
    return (x * y).sum(axis=0) / np.sqrt((x ** 2).sum(axis=0) * (y ** 2).sum())


def sensitivity_intervals(results: Iterable[tuple[str, CBResult]], *, level: float = 0.95,
                          n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.tables.sensitivity` for every (group, result), each condition's CB score with its
    percentile interval over that condition's cells (the causal prior of each list fixed)."""
    rows = []
    for group, result in results:
        for name, part in conditions(result):
            cells = part.variances["variance"].to_numpy()
            rows.append({"condition": name, "group": group, "language": result.language,
                         "model": result.model, "cb": part.cb, "targets": len(part.targets),
                         "attributes": len(part.attributes),
                         **_interval_row(cells, value=part.cb, unit=UNIT, level=level,
                                         n_resamples=n_resamples, seed=seed)})
    return pd.DataFrame(rows)


# --- notebook 04: mitigation ----------------------------------------------------------------------

def _perplexity(log_likelihood, tokens, axis=-1):
    return np.exp(-np.sum(log_likelihood, axis=axis) / np.sum(tokens, axis=axis))


def _ratio(ll_a, tok_a, ll_b, tok_b, axis=-1):
    return _perplexity(ll_a, tok_a, axis) / _perplexity(ll_b, tok_b, axis)


def _relative_change(a, b, axis=-1):
    return np.mean(a, axis=axis) / np.mean(b, axis=axis) - 1


def _key(row) -> tuple:
    aligned = row.get("aligned_to")
    return (row["direction"], row["language"], row["role"], row["variant"],
            None if aligned is None or pd.isna(aligned) else aligned)


def _cells(outcome) -> np.ndarray:
    """``CBResult.variances``' values, without building its frame."""
    r = outcome.result
    return cb.target_variances(r.log_p_norm, ddof=r.ddof).ravel()


def _same_cells(a, b) -> None:
    ra, rb = a.result, b.result
    if (ra.templates, ra.attributes, ra.targets) != (rb.templates, rb.attributes, rb.targets):
        raise ValueError(f"{ra.model} {a.row['variant']} and {rb.model} {b.row['variant']} in "
                         f"{ra.language} were scored on different cells: a paired test needs "
                         "the same templates, attributes and targets")


def mitigation_intervals(outcomes, *, comparable: bool, level: float = 0.95,
                         n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.mitigation.table` with each row's CB interval over its (template, attribute)
    cells (the record fields; ``value`` is the row's CB), its perplexity interval over the
    held-out sentences (the same fields prefixed ``perplexity ``; NaN without text) and whether
    the paper's CB lies inside (``paper vs ours``; ``comparable``: only the ``paper`` profile
    scores the paper's models, and even there the fine-tuning text is the mirror's)."""
    rows = []
    for o in outcomes:
        row = {**o.row, **_interval_row(_cells(o), value=o.row["cb"], unit=UNIT, level=level,
                                        n_resamples=n_resamples, seed=seed)}
        if o.heldout is not None:
            h = o.heldout
            ppl = _interval_row((h["log_likelihood"].to_numpy(), h["tokens"].to_numpy(float)),
                                _perplexity, value=o.row["perplexity"], unit=SENTENCES,
                                level=level, n_resamples=n_resamples, seed=seed)
        else:
            ppl = {"value": o.row["perplexity"], **_NO_INTERVAL}
        row.update({f"perplexity {k}": v for k, v in ppl.items() if k != "value"})
        row["paper vs ours"] = paper_verdict(o.row.get("paper_cb"), row["ci_low"],
                                             row["ci_high"], comparable,
                                             "another model and scale")
        rows.append(row)
    return pd.DataFrame(rows)


def change_tests(outcomes, reference: str = "base", *, comparable: bool, level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.mitigation.against` with intervals and tests, cell by cell on the CB evaluation's
    (template, attribute) cells, which every row of one direction and language shares: the
    relative change of CB (``cb_change``) with its percentile interval (the record fields,
    ``value`` = ``cb_change``), the permutation p of CB - CB(reference) (the two rows' values
    swapped within a cell; Holm's correction is :func:`family`'s), the perplexity ratio's
    interval over the held-out sentences, and whether the paper's change lies inside."""
    from biasbook.chapters.ethnic_bias import mitigation

    by_key = {_key(o.row): o for o in outcomes}
    frame = mitigation.against(mitigation.table(outcomes), reference)
    rows = []
    for row in frame.to_dict("records"):
        o = by_key[_key(row)]
        ref = by_key[(row["direction"], row["language"], "monolingual", reference, None)]
        _same_cells(o, ref)
        a, b = _cells(o), _cells(ref)
        ci = _interval_row((a, b), _relative_change, value=row["cb_change"], unit=UNIT,
                           level=level, n_resamples=n_resamples, seed=seed)
        test = _difference_row(a, b, unit=UNIT, level=level, n_resamples=n_resamples, seed=seed)
        ratio = {"ci_low": np.nan, "ci_high": np.nan}
        if o.heldout is not None and ref.heldout is not None:
            h, g = o.heldout, ref.heldout
            if h["sentence"].tolist() != g["sentence"].tolist():
                raise ValueError("the two rows' perplexities are over different sentences")
            ratio = _interval_row((h["log_likelihood"].to_numpy(), h["tokens"].to_numpy(float),
                                   g["log_likelihood"].to_numpy(), g["tokens"].to_numpy(float)),
                                  _ratio, value=row["perplexity_ratio"], unit=SENTENCES,
                                  level=level, n_resamples=n_resamples, seed=seed)
        rows.append({**row, **ci, "cb_difference": test["value"], "p_value": test["p_value"],
                     "perplexity_ratio ci_low": ratio["ci_low"],
                     "perplexity_ratio ci_high": ratio["ci_high"],
                     "paper vs ours": paper_verdict(row["paper_change"], ci["ci_low"],
                                                    ci["ci_high"], comparable,
                                                    "another model and scale")})
    return pd.DataFrame(rows)


def change_sentence(row) -> str:
    """What a row of :func:`change_tests` (after :func:`family`) supports, and no more."""
    what = row.variant + (f"->{row.aligned_to}" if isinstance(row.aligned_to, str) else "")
    head = (f"{row.direction} {row.language} {what} ({row.role}) vs {row.reference}: CB change "
            f"{row.cb_change:+.1%} [{row.ci_low:+.1%}, {row.ci_high:+.1%}], Holm p = "
            f"{row.p_holm:.3f} over {row.ci_units:.0f} cells: ")
    verdict = ("a real change" if row.holds else "not a change these cells support")
    if not row.usable:
        verdict += f" (and a broken model: perplexity x{row.perplexity_ratio:.3g})"
    return head + verdict


def jsd_to_english_intervals(outcomes, *, comparable: bool, level: float = 0.95,
                             n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.mitigation.jsd_to_english` (Table 9) with each row's interval over the cells it
    shares with the English base row, and whether the paper's value lies inside."""
    from biasbook.chapters.ethnic_bias import mitigation

    frame = mitigation.jsd_to_english(outcomes)
    english, compared = mitigation.english_pairs(outcomes)
    rows = []
    for row, o in zip(frame.to_dict("records"), compared, strict=True):
        cells = jsd_cells(o.result, english.result)["jsd"].to_numpy()
        ci = _interval_row(cells, value=row["jsd_to_english_base"], unit=UNIT, level=level,
                           n_resamples=n_resamples, seed=seed)
        rows.append({**row, **ci, "paper vs ours": paper_verdict(
            row["paper"], ci["ci_low"], ci["ci_high"], comparable, "another model and scale")})
    return pd.DataFrame(rows)


def jsd_change_tests(outcomes, *, level: float = 0.95, n_resamples: int = 9999,
                     seed: int = 0) -> pd.DataFrame:
    """Table 9's comparison: each ``align`` row's JSD to the English base row against its ``ft``
    row's (X→EN: language X's fine-tuned row; EN→X: English's), cell by cell on the cells all
    three share; ``value`` = JSD(align) - JSD(ft). The paper: X→EN alignment comes closer to
    English (a negative difference), EN→X alignment moves away (positive)."""
    from biasbook.chapters.ethnic_bias import mitigation

    english, compared = mitigation.english_pairs(outcomes)
    ft = {(o.row["direction"], o.row["language"]): o for o in compared
          if o.row["variant"] == "ft"}
    rows = []
    for o in compared:
        partner = ft.get((o.row["direction"], o.row["language"]))
        if o.row["variant"] != "align" or partner is None:
            continue
        both = jsd_cells(o.result, english.result).merge(
            jsd_cells(partner.result, english.result), on=["template", "attribute"],
            suffixes=("", "_ft"))
        test = _difference_row(both["jsd"].to_numpy(), both["jsd_ft"].to_numpy(), unit=UNIT,
                               level=level, n_resamples=n_resamples, seed=seed)
        rows.append({"direction": o.row["direction"], "language": o.row["language"],
                     "aligned_to": o.row["aligned_to"], "variant": "align", "reference": "ft",
                     "paper_expects": "closer" if o.row["direction"] == "x->en" else "further",
                     **test})
    return pd.DataFrame(rows, columns=["direction", "language", "aligned_to", "variant",
                                       "reference", "paper_expects", "value", "ci_low",
                                       "ci_high", "ci_level", "ci_unit", "ci_units",
                                       "ci_method", "p_value"])


def jsd_change_sentence(row) -> str:
    """What a row of :func:`jsd_change_tests` (after :func:`family`) supports, and no more."""
    head = (f"{row.direction} {row.language} align->{row.aligned_to} vs ft: JSD to English "
            f"{row.value:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}], Holm p = "
            f"{row.p_holm:.3f} over {row.ci_units:.0f} cells: ")
    if not row.holds:
        return head + "not a change these cells support"
    moved = "closer to" if row.value < 0 else "further from"
    agrees = (row.value < 0) == (row.paper_expects == "closer")
    return head + f"{moved} English, {'as in the paper' if agrees else 'against the paper'}"
