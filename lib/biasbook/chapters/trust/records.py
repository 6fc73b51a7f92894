"""What the recorded intervals and tests say across the book (the trust page, sections 1 and 2).

Every chapter records its numbers with :class:`biasbook.results.Recorder`, an interval with the
fields of :data:`biasbook.results.UNCERTAINTY` where it computes one, and the tests of its
differences under the atlas' naming convention: ``<test>_p_holm`` (Holm-corrected p, with the
labels of the pair's first side and ``versus=`` the other; the side is named by a label of
:data:`PAIR_LABELS`), ``<test>`` (the difference and its interval) and, optionally,
``<test>_holds`` (the chapter's own verdict, 1 or 0). This module reads
one profile's records of one or more run folders and summarises them; it computes nothing new.

- :func:`book_records`: the records, one row per number, with a ``labels`` text;
- :func:`interval_summary`: per chapter and metric, the resampling unit, how many numbers have an
  interval and how wide they are relative to the value;
- :func:`differences` and :func:`difference_summary`: every recorded test, whether it holds, and
  per chapter and test which differences held and which did not;
- :func:`sensitivity_summary`: where a chapter recorded one metric under several templates or
  word lists (a label such as ``template_set`` or ``condition`` with a reference value such as
  ``original``), how far the value moves and whether the models keep their order;
- :func:`missing_chapters`: the chapters without records, named in a sentence.

>>> frame = pd.DataFrame({"chapter": ["c"] * 3, "key": ["m", "m", "m_difference_p_holm"],
...                       "model": ["a", "b", "a"], "versus": [None, None, "b"],
...                       "value": [2.0, 4.0, 0.01], "ci_low": [1.0, 3.0, None],
...                       "ci_high": [3.0, 5.0, None], "ci_unit": ["words", "words", None],
...                       "ci_units": [10, 10, None], "ci_method": ["BCa", "BCa", None],
...                       "ci_level": [0.95, 0.95, None]})
>>> interval_summary(frame)[["metric", "unit", "numbers", "median relative width"]].values.tolist()
[['m', 'words', 2, 0.75]]
>>> differences(frame)[["pair", "p_holm", "holds"]].values.tolist()
[['a vs b', 0.01, True]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from biasbook import results
from biasbook.atlas import (  # the naming convention of recorded tests, in one place
    ALPHA,
    DIFFERENCE_SUFFIX,
    PAIR_LABELS,
    TEST_SUFFIX,
    VERDICT_SUFFIX,
)
from biasbook.paths import runs_dir

RUNS_DIR = runs_dir()
#: Columns of :func:`biasbook.results.load` that are not labels of a number.
NOT_LABELS = ("run", "chapter", "notebook", "status", "params", "profile", "key",
              *results.VALUE_FIELDS)
#: Labels under which a chapter records one metric for several templates or word lists, and
#: the value of each that is the reference (the paper's template, the full or base list).
VARIATION_LABELS = {"template_set": ("original",), "word_lists": ("authors", "caliskan"),
                    "word_list": ("authors", "caliskan"), "lists": ("authors", "caliskan"),
                    "condition": ("full", "base")}
#: Relative widths are left out where |value| is below this (a difference or effect near 0).
NEAR_ZERO = 1e-9


def book_records(runs: str | Sequence[str] = "default", profile: str | None = "book", *,
                 runs_dir: str | Path = RUNS_DIR) -> pd.DataFrame:
    """Every number recorded in the run folders ``runs`` (names under ``runs_dir``; the book's
    own build records into ``default``) under ``profile`` (``None``: any), one row per number.

    Used in: book/trust.

    A number recorded in several of the folders is kept from the last folder named. Folders that
    do not exist are skipped (:func:`missing_chapters` names the chapters that have no records).
    ``labels`` is the row's labels as text (``model=..., language=...``)."""
    names = [runs] if isinstance(runs, str) else list(runs)
    frames = [results.load(Path(runs_dir) / name)
              for name in names if (Path(runs_dir) / name).is_dir()]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["run", "chapter", "notebook", "profile", "key", "value",
                                     "labels"])
    tidy = pd.concat(frames, ignore_index=True)  # in the order of ``runs``
    if profile is not None:
        tidy = tidy[tidy["profile"] == profile]
    tidy = tidy.assign(labels=label_text(tidy))
    tidy = tidy.drop_duplicates(["chapter", "notebook", "key", "labels"], keep="last")
    return tidy.reset_index(drop=True)


def label_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` that label its numbers (``model``, ``language``, ...).

    Used in: book/trust.
    """
    return [c for c in frame.columns if c not in (*NOT_LABELS, "labels")]


def label_text(frame: pd.DataFrame, leave_out: Iterable[str] = ()) -> list[str]:
    """Each row's labels other than ``leave_out`` as ``name=value, ...`` (missing ones skipped).

    Used in: book/trust.

    >>> label_text(pd.DataFrame({"key": ["k"], "model": ["a"], "lam": [None]}))
    ['model=a']
    """
    columns = [c for c in label_columns(frame) if c not in set(leave_out)]
    return [", ".join(f"{c}={_plain(row[c])}" for c in columns if _present(row[c]))
            for _, row in frame.iterrows()]


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))


def _plain(value):
    """1.0 -> 1: labels stored as floats by the frame (``epoch=1.0``) print as written."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def is_test_key(key: str) -> bool:
    """Whether ``key`` is a test's record (``<test>_p_holm`` or ``<test>_holds``).

    Used in: book/trust.
    """
    return key.endswith((TEST_SUFFIX, VERDICT_SUFFIX))


def relative_width(frame: pd.DataFrame) -> pd.Series:
    """``(ci_high - ci_low) / |value|``; NaN without an interval or where the value is ~0.

    Used in: book/trust.

    >>> relative_width(pd.DataFrame({"value": [2.0, 0.0], "ci_low": [1.5, -1.0],
    ...                              "ci_high": [2.5, 1.0]})).tolist()
    [0.5, nan]
    """
    value = frame["value"].astype(float).abs()
    width = frame["ci_high"].astype(float) - frame["ci_low"].astype(float)
    return (width / value).where(value > NEAR_ZERO)


def interval_summary(records: pd.DataFrame) -> pd.DataFrame:
    """One row per chapter and metric that has numbers with an interval: the unit resampled
    (``ci_unit``, several joined by ``;``), how many units (``min–max``), the method and level,
    how many ``numbers`` have an interval, and the median, smallest and largest relative width
    (:func:`relative_width`; over the numbers whose value is not ~0). Differences (a key with a
    recorded ``_p_holm`` test) are left to :func:`difference_summary`.

    Used in: book/trust.
    """
    columns = ["chapter", "metric", "unit", "units", "method", "level", "numbers",
               "median relative width", "smallest", "largest"]
    if records.empty or "ci_low" not in records:
        return pd.DataFrame(columns=columns)
    tested = {(c, k[:-len(TEST_SUFFIX)]) for c, k in zip(records["chapter"], records["key"],
                                                         strict=True) if k.endswith(TEST_SUFFIX)}
    rows = []
    with_ci = records[records["ci_low"].notna() & records["ci_high"].notna()]
    for (chapter, key), group in with_ci.groupby(["chapter", "key"], sort=True):
        if (chapter, key) in tested or is_test_key(key):
            continue
        rel = relative_width(group).dropna()
        units = group["ci_units"].astype(float)
        rows.append({
            "chapter": chapter, "metric": key,
            "unit": _joined(group["ci_unit"]),
            "units": _span(units.min(), units.max()),
            "method": _joined(group["ci_method"]),
            "level": _joined(f"{float(v):.0%}" for v in group["ci_level"] if _present(v)),
            "numbers": len(group),
            "median relative width": float(rel.median()),  # NaN where every value is ~0
            "smallest": float(rel.min()), "largest": float(rel.max())})
    return pd.DataFrame(rows, columns=columns)


def _joined(values: Iterable) -> str:
    """The distinct values present, in order, joined by ``; `` (``unstated`` if none)."""
    return "; ".join(dict.fromkeys(str(v) for v in values if _present(v))) or "unstated"


def _span(low: float, high: float) -> str:
    if not (_present(low) and _present(high)):
        return "unstated"
    low, high = int(round(low)), int(round(high))
    return str(low) if low == high else f"{low}–{high}"


def differences(records: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Every recorded test (a ``<test>_p_holm`` row): its chapter, ``test``, the ``pair``
    (``a vs b`` from the pair label and ``versus``, or the test's labels where it names no
    pair), the ``setting`` (its other labels), the difference and its interval where ``<test>``
    is recorded with the same labels, ``p_holm``, and whether it ``holds``: the chapter's
    recorded verdict (``<test>_holds``) where there is one, else Holm's p below ``alpha`` and a
    difference interval (where recorded) that excludes 0.

    Used in: book/trust.
    """
    columns = ["chapter", "test", "pair", "setting", "difference", "ci_low", "ci_high",
               "p_holm", "holds", "why"]
    if records.empty:
        return pd.DataFrame(columns=columns)
    keyed = records.assign(labels=label_text(records))
    lookup = {(r.chapter, r.key, r.labels): r for r in keyed.itertuples()}
    rows = []
    for r in keyed[keyed["key"].str.endswith(TEST_SUFFIX)].itertuples():
        test = r.key[:-len(TEST_SUFFIX)]
        diff = lookup.get((r.chapter, test, r.labels))
        verdict = lookup.get((r.chapter, test + VERDICT_SUFFIX, r.labels))
        low, high = (getattr(diff, bound, np.nan) for bound in ("ci_low", "ci_high"))
        holds, why = decide(r.value, getattr(verdict, "value", None), low, high, alpha)
        pair, setting = _pair(keyed.loc[r.Index])
        rows.append({"chapter": r.chapter, "test": test, "pair": pair, "setting": setting,
                     "difference": getattr(diff, "value", np.nan),
                     "ci_low": low, "ci_high": high, "p_holm": r.value, "holds": holds,
                     "why": why})
    return pd.DataFrame(rows, columns=columns)


def _pair(row: pd.Series) -> tuple[str, str]:
    """(``a vs b``, the other labels) of a test's row; without ``versus``, (its labels, "").
    Sides that are numbers carry their label's name (``lam=1 vs lam=0``)."""
    labels = {c: _plain(row[c]) for c in label_columns(row.to_frame().T) if _present(row[c])}
    versus = labels.pop("versus", None)
    side = next((name for name in reversed(PAIR_LABELS) if name in labels), None)  # as atlas
    if versus is None or side is None:
        return ", ".join(f"{k}={v}" for k, v in labels.items()), ""
    a = labels.pop(side)
    if not isinstance(a, str):
        a, versus = f"{side}={a}", f"{side}={_plain(versus)}"
    return f"{a} vs {versus}", ", ".join(f"{k}={v}" for k, v in labels.items())


def decide(p_holm: float, verdict=None, low: float = np.nan, high: float = np.nan,
           alpha: float = ALPHA) -> tuple[bool, str]:
    """Whether a recorded test supports its difference, and why.

    Used in: book/trust.

    >>> decide(0.01)
    (True, 'Holm p < 0.05')
    >>> decide(0.01, low=-0.2, high=0.4)
    (False, "Holm p < 0.05, but the difference's interval includes 0")
    >>> decide(0.01, verdict=0.0)
    (False, "the chapter's recorded verdict")
    """
    if verdict is not None and _present(verdict):
        return bool(verdict), "the chapter's recorded verdict"
    if not p_holm < alpha:
        return False, f"Holm p ≥ {alpha:g}"
    if _present(low) and _present(high) and low <= 0 <= high:
        return False, f"Holm p < {alpha:g}, but the difference's interval includes 0"
    return True, f"Holm p < {alpha:g}"


def difference_summary(diffs: pd.DataFrame, examples: int = 3) -> pd.DataFrame:
    """Per chapter and test: how many differences were ``tested``, how many ``held``, and which
    (``held``: every one, with its difference and interval; ``did not hold``: the ``examples``
    with the smallest p, and how many more).

    Used in: book/trust.
    """
    columns = ["chapter", "test", "tested", "held", "which held", "which did not"]
    rows = []
    for (chapter, test), group in diffs.groupby(["chapter", "test"], sort=True):
        held = group[group["holds"]]
        rest = group[~group["holds"]].sort_values("p_holm", kind="stable")
        shown = [_difference_text(r) for r in rest.head(examples).itertuples()]
        if len(rest) > examples:
            shown.append(f"and {len(rest) - examples} more")
        rows.append({"chapter": chapter, "test": test, "tested": len(group),
                     "held": len(held),
                     "which held": "; ".join(_difference_text(r) for r in held.itertuples())
                     or "none",
                     "which did not": "; ".join(shown) or "none"})
    return pd.DataFrame(rows, columns=columns)


def _difference_text(r) -> str:
    """``a vs b (setting): 0.18 [0.01, 0.35], Holm p 0.03``."""
    where = f" ({r.setting})" if r.setting else ""
    value = ""
    if _present(r.difference):
        value = f": {r.difference:+.3g}"
        if _present(r.ci_low):
            value += f" [{r.ci_low:.3g}, {r.ci_high:.3g}]"
    return f"{r.pair}{where}{value}, Holm p {r.p_holm:.2g}"


@dataclass(frozen=True)
class Variation:
    """One metric recorded under several values of ``label`` (templates, word lists), one of
    which, ``reference``, is the chapter's main one.

    Used in: book/trust.
    """

    chapter: str
    metric: str
    label: str
    reference: str


def variations(records: pd.DataFrame) -> list[Variation]:
    """The metrics recorded under two or more values of a :data:`VARIATION_LABELS` label, one of
    them a reference value.

    Used in: book/trust.

    >>> frame = pd.DataFrame({"chapter": ["c", "c"], "key": ["m", "m"], "value": [1.0, 2.0],
    ...                       "template_set": ["original", "reworded"]})
    >>> variations(frame)
    [Variation(chapter='c', metric='m', label='template_set', reference='original')]
    """
    found = []
    for (chapter, key), group in records.groupby(["chapter", "key"], sort=True):
        if is_test_key(key) or key.endswith(DIFFERENCE_SUFFIX):
            continue
        for label, references in VARIATION_LABELS.items():
            if label not in group:
                continue
            values = set(group[label].dropna().astype(str))
            reference = next((r for r in references if r in values), None)
            if reference is not None and len(values) > 1:
                found.append(Variation(chapter, key, label, reference))
                break
    return found


def sensitivity_table(records: pd.DataFrame, variation: Variation) -> pd.DataFrame:
    """One row per setting and variant of ``variation``: the reference value, the variant's
    value and the relative change ``(variant - reference) / |reference|`` (NaN where the
    reference is ~0); ``setting`` is the other labels, ``model`` included.

    Used in: book/trust.
    """
    rows = records[(records["chapter"] == variation.chapter)
                   & (records["key"] == variation.metric)].copy()
    rows[variation.label] = rows[variation.label].astype(str)
    rows["setting"] = [f"{n}: {t}" if t else n for n, t in zip(
        rows["notebook"], label_text(rows, leave_out=[variation.label]), strict=True)]
    if "model" not in rows:
        rows["model"] = None
    ref = rows[rows[variation.label] == variation.reference].set_index("setting")["value"]
    out = rows[rows[variation.label] != variation.reference][
        ["setting", "model", variation.label, "value"]].rename(
        columns={variation.label: "variant"})
    out["reference"] = out["setting"].map(ref)
    out = out.dropna(subset=["reference"])
    base = out["reference"].abs()
    out["relative change"] = ((out["value"] - out["reference"]) / base).where(base > NEAR_ZERO)
    return out.reset_index(drop=True)


def order_kept(records: pd.DataFrame, variation: Variation) -> tuple[int, int]:
    """In how many (setting without the model, variant) groups that hold two or more models the
    models' order under the variant is their order under the reference; ``(kept, groups)``.

    Used in: book/trust.
    """
    rows = records[(records["chapter"] == variation.chapter)
                   & (records["key"] == variation.metric)]
    if "model" not in rows or rows["model"].dropna().nunique() < 2:
        return 0, 0
    # labels that only restate the model (ethnic bias' group) do not split the comparison
    per_model = [c for c in label_columns(rows) if c not in ("model", variation.label)
                 and rows[c].nunique() > 1
                 and rows.groupby("model")[c].nunique(dropna=False).max() == 1]
    leave_out = [variation.label, "model", *per_model]
    rows = rows.assign(variant=rows[variation.label].astype(str),
                       setting=[f"{n}: {t}" for n, t in zip(
                           rows["notebook"], label_text(rows, leave_out=leave_out),
                           strict=True)])
    kept = groups = 0
    for _, group in rows.groupby("setting"):
        order = {v: tuple(g.sort_values("value", kind="stable")["model"])
                 for v, g in group.groupby("variant")}
        reference = order.get(variation.reference)
        if reference is None or len(reference) < 2:
            continue
        for variant, ranked in order.items():
            if variant != variation.reference and set(ranked) == set(reference):
                groups += 1
                kept += ranked == reference
    return kept, groups


def sensitivity_summary(records: pd.DataFrame) -> pd.DataFrame:
    """Per :func:`variations` entry: the variants, how many values were compared with the
    reference, the median |relative change| and its range, and in how many groups of two or
    more models their order was kept (:func:`order_kept`).

    Used in: book/trust.
    """
    columns = ["chapter", "metric", "varied", "reference", "variants", "compared",
               "median |relative change|", "smallest change", "largest change", "order kept"]
    rows = []
    for v in variations(records):
        table = sensitivity_table(records, v)
        change = table["relative change"].dropna()
        kept, groups = order_kept(records, v)
        rows.append({"chapter": v.chapter, "metric": v.metric, "varied": v.label,
                     "reference": v.reference,
                     "variants": ", ".join(dict.fromkeys(table["variant"])),
                     "compared": len(table),
                     "median |relative change|": float(change.abs().median()),  # NaN if none
                     "smallest change": float(change.min()),
                     "largest change": float(change.max()),
                     "order kept": f"{kept} of {groups}" if groups else "one model only"})
    return pd.DataFrame(rows, columns=columns)


def missing_chapters(records: pd.DataFrame, chapters: Iterable[str]) -> list[str]:
    """The chapters among ``chapters`` with no number in ``records``.

    Used in: book/trust.

    >>> missing_chapters(pd.DataFrame({"chapter": ["herb"]}), ["herb", "ethnic-bias"])
    ['ethnic-bias']
    """
    present = set(records["chapter"]) if "chapter" in records else set()
    return [c for c in chapters if c not in present]
