"""How sure is a mitigation row (notebook 04, Tables 2, 5, 8 and 9)?

A mitigation row is a CB score on the evaluation's (template, attribute) cells: its interval
resamples them (:func:`mitigation_intervals`), and its change against the reference row
(``base`` or ``ft``), scored on the same cells, is tested cell by cell (:func:`change_tests`);
Table 9's distances to English likewise (:func:`jsd_to_english_intervals`,
:func:`jsd_change_tests`). The perplexity's interval resamples the held-out sentences, whose
scores the run keeps (:attr:`.mitigation.Outcome.heldout`), and so does the interval of the
perplexity ratio, on which the ``usable`` flag is decided (:func:`usable_stability` says whether
the decision holds over the whole interval). Training seeds would belong in these intervals too
(the fine-tuned head depends on its seed), but one head per row is all the book profile can
afford, so the intervals say how sure the *measurement* of each trained model is, not how another
seed would have come out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasbook import reporting
from biasbook.chapters.ethnic_bias import mitigation_tables
from biasbook.chapters.ethnic_bias.tables import jsd_cells
from biasbook.chapters.ethnic_bias.uncertainty import (
    NO_INTERVAL,
    SENTENCES,
    UNIT,
    difference_row,
    family,
    interval_row,
    jsd_difference,
)
from biasbook.metrics import cb
from biasbook.results import UNCERTAINTY


def _perplexity(log_likelihood, tokens, axis=-1):
    return np.exp(-np.sum(log_likelihood, axis=axis) / np.sum(tokens, axis=axis))


def _ratio(ll_a, tok_a, ll_b, tok_b, axis=-1):
    return _perplexity(ll_a, tok_a, axis) / _perplexity(ll_b, tok_b, axis)


def _relative_change(a, b, axis=-1):
    return np.mean(a, axis=axis) / np.mean(b, axis=axis) - 1


def _heldout(scores: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The per-sentence log-likelihoods and token counts a perplexity is computed from."""
    return scores["log_likelihood"].to_numpy(), scores["tokens"].to_numpy(float)


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
    """:func:`.mitigation_tables.table` with each row's CB interval over its (template, attribute)
    cells (the record fields; ``value`` is the row's CB), its perplexity interval over the
    held-out sentences (the same fields prefixed ``perplexity ``; NaN without text) and whether
    the paper's CB lies inside (``paper vs ours``; ``comparable``: only the ``paper`` profile
    scores the paper's models, and even there the fine-tuning text is the mirror's).

    Used in: ethnic-bias/04.
    """
    reason = "" if comparable else "another model and scale"
    rows = []
    for o in outcomes:
        row = {**o.row, **interval_row(_cells(o), value=o.row["cb"], unit=UNIT, level=level,
                                       n_resamples=n_resamples, seed=seed)}
        ppl = NO_INTERVAL if o.heldout is None else interval_row(
            _heldout(o.heldout), _perplexity, value=o.row["perplexity"], unit=SENTENCES,
            level=level, n_resamples=n_resamples, seed=seed)
        row.update({f"perplexity {k}": v for k, v in ppl.items() if k != "value"})
        row["paper vs ours"] = reporting.paper_verdict(o.row.get("paper_cb"), row["ci_low"],
                                                   row["ci_high"], reason=reason)
        rows.append(row)
    return pd.DataFrame(rows)


def change_tests(outcomes, reference: str = "base", *, comparable: bool, level: float = 0.95,
                 n_resamples: int = 9999, seed: int = 0) -> pd.DataFrame:
    """:func:`.mitigation_tables.against` with intervals and tests, cell by cell on the CB
    evaluation's (template, attribute) cells, which every row of one direction and language
    shares: the relative change of CB (``cb_change``) with its percentile interval (the record
    fields, ``value`` = ``cb_change``), the permutation p of CB - CB(reference) (the two rows'
    values swapped within a cell; Holm's correction is :func:`.uncertainty.family`'s), the
    perplexity ratio's interval over the held-out sentences (the record fields prefixed
    ``perplexity_ratio ``), and whether the paper's change lies inside. ``versus`` names the
    reference row as the records' convention wants the other side of a test named: the reference
    variant, prefixed ``monolingual`` where the row's own role is another.

    Used in: ethnic-bias/04.
    """
    reason = "" if comparable else "another model and scale"
    by_key = {_key(o.row): o for o in outcomes}
    frame = mitigation_tables.against(mitigation_tables.table(outcomes), reference)
    rows = []
    for row in frame.to_dict("records"):
        o = by_key[_key(row)]
        ref = by_key[(row["direction"], row["language"], "monolingual", reference, None)]
        _same_cells(o, ref)
        a, b = _cells(o), _cells(ref)
        ci = interval_row((a, b), _relative_change, value=row["cb_change"], unit=UNIT,
                          level=level, n_resamples=n_resamples, seed=seed)
        test = difference_row(a, b, unit=UNIT, level=level, n_resamples=n_resamples, seed=seed)
        ratio = {"value": row["perplexity_ratio"], **NO_INTERVAL}
        if o.heldout is not None and ref.heldout is not None:
            if o.heldout["sentence"].tolist() != ref.heldout["sentence"].tolist():
                raise ValueError("the two rows' perplexities are over different sentences")
            ratio = interval_row((*_heldout(o.heldout), *_heldout(ref.heldout)), _ratio,
                                 value=row["perplexity_ratio"], unit=SENTENCES, level=level,
                                 n_resamples=n_resamples, seed=seed)
        versus = reference if row["role"] == "monolingual" else f"monolingual {reference}"
        rows.append({**row, "versus": versus, **ci, "cb_difference": test["value"],
                     "p_value": test["p_value"],
                     **{f"perplexity_ratio {k}": v for k, v in ratio.items() if k != "value"},
                     "paper vs ours": reporting.paper_verdict(row["paper_change"], ci["ci_low"],
                                                          ci["ci_high"], reason=reason)})
    return pd.DataFrame(rows)


def notebook_tests(outcomes, *, comparable: bool, level: float = 0.95, n_resamples: int = 9999,
                   seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every test of notebook 04 as one family (Holm's correction over all of them): each row
    against ``base`` and against ``ft`` (:func:`change_tests`, one frame) and Table 9's ``align``
    rows against ``ft`` (:func:`jsd_change_tests`).

    Used in: ethnic-bias/04.
    """
    opts = {"level": level, "n_resamples": n_resamples, "seed": seed}
    changes = pd.concat([change_tests(outcomes, ref, comparable=comparable, **opts)
                         for ref in ("base", "ft")], ignore_index=True)
    changes, jsd_tests = family([changes, jsd_change_tests(outcomes, **opts)])
    return changes, jsd_tests


def usable_stability(compared: pd.DataFrame, max_perplexity_ratio: float = 2.0) -> pd.Series:
    """Whether each row's ``usable`` flag (:func:`.mitigation_tables.against`: perplexity ratio
    at most ``max_perplexity_ratio``), decided on the ratio's point value, would be the same at
    every point of the ratio's interval (:func:`change_tests`' ``perplexity_ratio ci_low`` and
    ``ci_high``): ``stable`` where the whole interval lies on the value's side of the threshold,
    ``would flip inside the interval`` where the interval reaches the other side, and why the
    question cannot be asked otherwise.

    Used in: ethnic-bias/04.

    >>> rows = pd.DataFrame({"perplexity_ratio": [1.2, 2.4, 1.9, 50.0, float("nan"), 1.5],
    ...                      "perplexity_ratio ci_low": [1.1, 1.8, 1.7, 30.0, float("nan"),
    ...                                                  float("nan")],
    ...                      "perplexity_ratio ci_high": [1.3, 3.0, 2.0, 80.0, float("nan"),
    ...                                                   float("nan")]})
    >>> usable_stability(rows).tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['stable', 'would flip inside the interval', 'stable', 'stable', 'no quality measure',
     'no interval (fewer than 2 sentences)']
    """
    def one(ratio, low, high) -> str:
        if pd.isna(ratio):
            return "no quality measure"
        if pd.isna(low) or pd.isna(high):
            return "no interval (fewer than 2 sentences)"
        usable = ratio <= max_perplexity_ratio
        same = [(bound <= max_perplexity_ratio) == usable for bound in (low, high)]
        return "stable" if all(same) else "would flip inside the interval"
    return pd.Series([one(*r) for r in zip(
        compared["perplexity_ratio"], compared["perplexity_ratio ci_low"],
        compared["perplexity_ratio ci_high"], strict=True)], index=compared.index, dtype=object)


def change_sentence(row) -> str:
    """What a row of :func:`change_tests` (after :func:`.uncertainty.family`) supports, and no
    more.

    Used in: ethnic-bias/04.
    """
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
    """:func:`.mitigation_tables.jsd_to_english` (Table 9) with each row's interval over the
    cells it shares with the English base row, and whether the paper's value lies inside.

    Used in: ethnic-bias/04.
    """
    reason = "" if comparable else "another model and scale"
    frame = mitigation_tables.jsd_to_english(outcomes)
    english, compared = mitigation_tables.english_pairs(outcomes)
    rows = []
    for row, o in zip(frame.to_dict("records"), compared, strict=True):
        cells = jsd_cells(o.result, english.result)["jsd"].to_numpy()
        ci = interval_row(cells, value=row["jsd_to_english_base"], unit=UNIT, level=level,
                          n_resamples=n_resamples, seed=seed)
        rows.append({**row, **ci, "paper vs ours": reporting.paper_verdict(
            row["paper"], ci["ci_low"], ci["ci_high"], reason=reason)})
    return pd.DataFrame(rows)


def jsd_change_tests(outcomes, *, level: float = 0.95, n_resamples: int = 9999,
                     seed: int = 0) -> pd.DataFrame:
    """Table 9's comparison: each ``align`` row's JSD to the English base row against its ``ft``
    row's (X→EN: language X's fine-tuned row; EN→X: English's), cell by cell on the cells all
    three share; ``value`` = JSD(align) - JSD(ft). The paper: X→EN alignment comes closer to
    English (a negative difference), EN→X alignment moves away (positive).

    Used in: ethnic-bias/04.
    """
    english, compared = mitigation_tables.english_pairs(outcomes)
    ft = {(o.row["direction"], o.row["language"]): o for o in compared
          if o.row["variant"] == "ft"}
    rows = []
    for o in compared:
        partner = ft.get((o.row["direction"], o.row["language"]))
        if o.row["variant"] != "align" or partner is None:
            continue
        test = jsd_difference((o.result, english.result), (partner.result, english.result),
                              level=level, n_resamples=n_resamples, seed=seed)
        rows.append({**{k: o.row[k] for k in ("direction", "language", "aligned_to")},
                     "variant": "align", "reference": "ft", "versus": "ft",
                     "paper_expects": "closer" if o.row["direction"] == "x->en" else "further",
                     **test})
    return pd.DataFrame(rows, columns=["direction", "language", "aligned_to", "variant",
                                       "reference", "versus", "paper_expects", "value",
                                       *UNCERTAINTY, "p_value"])


def jsd_change_sentence(row) -> str:
    """What a row of :func:`jsd_change_tests` (after :func:`.uncertainty.family`) supports, and
    no more.

    Used in: ethnic-bias/04.
    """
    head = (f"{row.direction} {row.language} align->{row.aligned_to} vs ft: JSD to English "
            f"{row.value:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}], Holm p = "
            f"{row.p_holm:.3f} over {row.ci_units:.0f} cells: ")
    if not row.holds:
        return head + "not a change these cells support"
    moved = "closer to" if row.value < 0 else "further from"
    agrees = (row.value < 0) == (row.paper_expects == "closer")
    return head + f"{moved} English, {'as in the paper' if agrees else 'against the paper'}"
