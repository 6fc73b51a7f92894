"""The results atlas: every chapter's headline numbers, per model and run, in one place.

Every notebook records its numbers with :class:`biasbook.results.Recorder` into a run folder:
``runs/default`` for the book's own build, ``runs/<time>-<chapter>`` for ``biasbook run``. The
atlas reads all of them, so a chapter re-run with a new model shows up beside the book's models.

- :func:`collect`: one tidy row per recorded number (run, chapter, notebook, key, model, the other
  labels, value, paper value, run time) with a link to the page that produced it.
- :func:`headline`: the numbers a chapter names as its headline (``headline:`` in its profile
  file), or, for a chapter that names none, those recorded with a paper value.
- :func:`latest`: for each profile, model, metric and setting, the value of the most recent run
  that finished (a failed or interrupted run of ``biasbook run`` never replaces a number).
- :func:`models_by_metrics`: that as a models x metrics table (the atlas' heat map).
- :func:`recorded_tests` and :func:`comparisons`: which pairs of models (or methods) a recorded test
  tells apart, which it does not, and which were never tested.

>>> import tempfile
>>> from biasbook.results import Recorder
>>> runs = Path(tempfile.mkdtemp())
>>> rec = Recorder("demo", "01-offline-models", {"profile": "smoke"}, run_dir=runs / "default")
>>> _ = rec.metric("grammatical_wins", 1.0, model="smollm2-135m")
>>> models_by_metrics(latest(headline(collect(runs)))).round(2).to_dict()
{'demo · grammatical_wins': {'smollm2-135m': 1.0}}

**Marks on pairs.** A *pair* is two values of one metric that differ in their *pair label*
(:data:`PAIR_LABELS`: ``model``, ``method``, ``lam``, ``group``, ``pair`` or ``template_set``).
The atlas never tests a pair itself; it reads the tests the chapters recorded, found by this
naming convention:

- ``<test>_p_holm``, with the labels of the pair's first side (``model=a`` or ``method=a``), a
  ``versus=b`` label for the other side and the setting's labels: the Holm-corrected p-value of
  the difference a - b within the chapter's family of comparisons (e.g. ethnic-bias'
  ``cb_difference_p_holm`` with ``language, model, versus``; lm-gender-bias'
  ``lambda_effect_p_holm`` with ``corpus, lam, versus``; a ``*_p_holm`` key without a
  ``versus`` label names no pair and is not read);
- ``<test>`` with the same labels (optional): the difference itself and its interval;
- ``<test>_holds`` with the same labels (optional): the chapter's own verdict (1 or 0), which
  then decides instead of the threshold below.

The metric a test compares is ``<test>`` without its ``_difference`` suffix (``cb_difference``
compares ``cb``), or, for a test whose name does not say it, the one :data:`DIFFERENCE_OF`
declares. Its two values are that metric's rows for ``a`` and ``b`` in the test's run whose labels
include the test's setting (a test recorded per ``language`` covers values recorded per ``group``
and ``language``); values of another run or another profile are not covered by it.

A tested pair is marked *supported* when the chapter's recorded verdict says so, or, without a
verdict, when Holm's p is below :data:`ALPHA` (strictly: a chapter that accepts p = 0.05 may
differ at exactly that value) and the difference's interval (where recorded) excludes 0;
otherwise *not supported*. Two values in one column of the atlas (same chapter, profile, metric
and setting) that no recorded test covers are marked *no test recorded* when both have an
interval (a pair where one lacks it is not listed); whether the two intervals overlap is added as
a hint, and named as one: overlapping intervals do not show that two values are equal, nor
separate ones that the difference would survive a test.

>>> runs = Path(tempfile.mkdtemp())
>>> rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=runs / "default")
>>> ci = {"ci_level": 0.95, "ci_unit": "cells", "ci_units": 40, "ci_method": "BCa"}
>>> for model, value in [("a", 0.40), ("b", 0.50), ("c", 0.45)]:
...     _ = rec.metric("grammatical_wins", value, model=model,
...                    ci={**ci, "ci_low": value - 0.1, "ci_high": value + 0.1})
>>> _ = rec.metric("grammatical_wins_difference_p_holm", 0.2, model="a", versus="b")
>>> _ = rec.metric("grammatical_wins_difference_p_holm", 0.01, model="a", versus="c")
>>> tidy = collect(runs)  # the tests are not headline numbers: look them up among all rows
>>> for pair in comparisons(latest(headline(tidy)), latest(tidy)).itertuples():
...     print(f"{pair.a} vs {pair.b}: {pair.mark}")
a vs b: not supported (Holm p = 0.2 ≥ 0.05)
a vs c: supported (Holm p = 0.01 < 0.05)
b vs c: no test recorded (intervals overlap: a hint, not a test)
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from biasbook import profiles, reporting, results
from biasbook.paths import runs_dir

RUNS_DIR = runs_dir()
FIXED = ("run", "chapter", "notebook", "profile", "status", "params", "key", "value", "paper",
         "model", "started")


def collect(runs_dir: str | Path = RUNS_DIR) -> pd.DataFrame:
    """Every recorded number under ``runs_dir``'s run folders, tidy, newest run first.

    ``labels`` is the row's labels other than ``model`` as text, ``label_map`` the same as a dict
    (what :func:`comparisons` matches on); the :data:`biasbook.results.UNCERTAINTY` columns are
    NaN where a number has no interval."""
    columns = [*FIXED, "interval", *results.UNCERTAINTY, "labels", "label_map", "page"]
    frames = []
    for run in sorted(p for p in Path(runs_dir).glob("*") if p.is_dir()):
        frame = results.load(run)
        if frame.empty:
            continue
        started = {(r["chapter"], r["notebook"]): r["provenance"]["started"]
                   for r in results.records(run)}
        frame["started"] = [started.get((c, n), "") for c, n in
                            zip(frame["chapter"], frame["notebook"], strict=True)]
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=columns)
    tidy = pd.concat(frames, ignore_index=True)
    for column in ("model", *results.UNCERTAINTY):
        if column not in tidy:
            tidy[column] = None
    others = [c for c in tidy.columns if c not in (*FIXED, *results.VALUE_FIELDS)]
    tidy["label_map"] = [{c: row[c] for c in others if pd.notna(row[c])}
                         for _, row in tidy.iterrows()]
    tidy["labels"] = [", ".join(f"{c}={v}" for c, v in m.items()) for m in tidy["label_map"]]
    tidy["page"] = "notebooks/" + tidy["chapter"] + "/" + tidy["notebook"] + ".html"
    tidy["interval"] = interval_description(tidy)
    tidy = tidy.sort_values("started", ascending=False, kind="stable")
    return tidy[columns].reset_index(drop=True)


def interval_description(tidy: pd.DataFrame) -> list[str]:
    """``[low, high] (95% over 40 cells)`` for each row that has an interval, else ``""``.

    >>> interval_description(pd.DataFrame({"ci_low": [0.11, None], "ci_high": [0.305, None],
    ...     "ci_level": [0.95, None], "ci_units": [40, None], "ci_unit": ["cells", None]}))
    ['[0.11, 0.305] (95% over 40 cells)', '']
    """
    if "ci_low" not in tidy:
        return [""] * len(tidy)
    return [f"[{r.ci_low:.3g}, {r.ci_high:.3g}] "
            f"({r.ci_level:.0%} over {r.ci_units:.0f} {r.ci_unit})"
            if pd.notna(r.ci_low) else "" for r in tidy.itertuples()]


def headline(tidy: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`collect` that are their chapter's headline numbers."""
    keep = []
    for chapter, rows in tidy.groupby("chapter", sort=False):
        try:  # the metric keys the chapter's profile file names as ``headline``, if any
            keys = profiles.chapter_spec(chapter).get("headline")
        except profiles.ProfileError:  # a run of a chapter this checkout no longer has
            keys = None
        keep.append(rows[rows["key"].isin(keys) if keys else rows["paper"].notna()])
    return pd.concat(keep).sort_index() if keep else tidy.iloc[:0]


def latest(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per (chapter, profile, params, notebook, key, model, labels): the most recent
    finished run's (or the book build's). Unfinished runs are left out."""
    done = tidy[tidy["status"].isin(["finished", "book"])]
    subset = ["chapter", "profile", "params", "notebook", "key", "model", "labels"]
    return done.assign(model=done["model"].fillna("")).drop_duplicates(subset, keep="first")


def models_by_metrics(tidy: pd.DataFrame, values: str = "value") -> pd.DataFrame:
    """Models as rows, ``chapter · key [labels] (profile)`` as columns; rows without a model are
    left out. A chapter run with other parameters than the book's is a column of its own.
    ``values`` names the column shown in the cells: ``"cell"`` is the value with its interval
    (``0.38 [0.3, 0.45]``) as text."""
    rows = tidy[tidy["model"].fillna("") != ""]
    if values == "cell":
        rows = rows.assign(cell=[_value_text(v, lo, hi) for v, lo, hi in
                                 zip(rows["value"], rows["ci_low"], rows["ci_high"], strict=True)])
    column = rows["chapter"] + " · " + rows["key"] + \
        rows["labels"].map(lambda s: f" [{s}]" if s else "")
    several = rows.groupby("chapter")["profile"].transform("nunique") > 1
    column = column + [f" ({p})" if s else "" for p, s in zip(rows["profile"], several,
                                                               strict=True)]
    wide = rows.assign(metric=column).pivot_table(index="model", columns="metric",
                                                  values=values, aggfunc="first")
    wide.columns.name, wide.index.name = None, None
    return wide


# --- pairs: which differences a recorded test supports -------------------------------------------

ALPHA = 0.05  # a recorded test supports a difference when Holm's p is below this
#: The labels that can name a pair's two sides. A value's side is the first it has (its model,
#: where it has one); a test's side is the last, the most specific: ethnic-bias' mitigation
#: tests compare ``method=align`` with ``versus=base`` for one ``model``.
PAIR_LABELS = ("model", "method", "lam", "group", "pair", "template_set")
TEST_SUFFIX, VERDICT_SUFFIX, DIFFERENCE_SUFFIX = "_p_holm", "_holds", "_difference"
# Tests whose key does not name the metric they compare: (chapter, test) -> metric. The
# indirect-stereotypes family compares each method's mean WEAT effect size with Original's; its
# RIPA row (test=ripa-mean-abs) matches no weat_effect_size value and is listed on its own.
DIFFERENCE_OF = {("indirect-stereotypes", "method_difference"): "weat_effect_size",
                 ("lm-gender-bias", "lambda_effect"): "mu_seed_mean"}
MARKS = ("A pair of models (or methods) is marked *supported* only where its chapter recorded a "
         "test of their difference and the test holds (Holm-corrected p < 0.05, and the "
         "difference's interval excludes 0 where one is recorded); *not supported* where that "
         "test does not hold; *no test recorded* where the chapter recorded none, and whether "
         "the two intervals overlap is then only a hint, not a test.")
PAIR_COLUMNS = ["chapter", "profile", "metric", "setting", "a", "b", "value_a", "value_b",
                "difference", "p_holm", "supported", "mark", "run"]


def _labels(model, label_map: dict) -> dict:
    """A row's labels with its model (``versus`` is not one)."""
    labels = {k: v for k, v in label_map.items() if k != "versus"}
    return {"model": model, **labels} if isinstance(model, str) and model else labels


def _side(model, label_map: dict, *, test: bool = False) -> tuple[str, object, dict] | None:
    """``(pair label, its value, the other labels)`` of a row (a test's row with ``test``), or
    ``None`` for a row that has none of :data:`PAIR_LABELS`.

    >>> _side("m", {"method": "align", "versus": "base"}, test=True)
    ('method', 'align', {'model': 'm'})
    >>> _side("m", {"method": "align"})
    ('model', 'm', {'method': 'align'})
    """
    labels = _labels(model, label_map)
    present = [name for name in PAIR_LABELS if name in labels]
    if not present:
        return None
    name = present[-1] if test else present[0]
    return name, labels[name], {k: v for k, v in labels.items() if k != name}


def _value_text(value, low, high) -> str:
    """``0.38 [0.3, 0.45]``, or the value alone without an interval."""
    return reporting.interval_text(value, low, high, digits=3, style="g", missing="")


def _setting_text(setting: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items())


def decide(p_holm: float, verdict=None, low: float = float("nan"), high: float = float("nan"),
           alpha: float = ALPHA) -> tuple[bool, str]:
    """Whether a recorded test supports a difference, and the mark that says so.

    >>> decide(0.01)
    (True, 'supported (Holm p = 0.01 < 0.05)')
    >>> decide(0.2)
    (False, 'not supported (Holm p = 0.2 ≥ 0.05)')
    >>> decide(0.01, low=-0.1, high=0.3)[1]
    "not supported (Holm p = 0.01 < 0.05, but the difference's interval includes 0)"
    >>> decide(0.04, verdict=0)[1]
    'not supported (recorded verdict; Holm p = 0.04)'
    """
    p_text = "" if pd.isna(p_holm) else f"Holm p = {p_holm:.3g}"
    if verdict is not None and pd.notna(verdict):
        word = "supported" if bool(verdict) else "not supported"
        return bool(verdict), f"{word} (recorded verdict{'; ' + p_text if p_text else ''})"
    if p_holm < alpha:
        if pd.notna(low) and pd.notna(high) and low <= 0 <= high:
            return False, (f"not supported ({p_text} < {alpha:g}, but the difference's interval "
                           "includes 0)")
        return True, f"supported ({p_text} < {alpha:g})"
    return False, f"not supported ({p_text} ≥ {alpha:g})"


def untested_mark(low_a: float, high_a: float, low_b: float, high_b: float) -> str:
    """The mark of a pair without a recorded test, both of whose values have an interval.

    >>> untested_mark(0.1, 0.3, 0.2, 0.4)
    'no test recorded (intervals overlap: a hint, not a test)'
    >>> untested_mark(0.1, 0.3, 0.5, 0.6)
    'no test recorded (intervals do not overlap: a hint, not a test)'
    """
    overlap = max(low_a, low_b) <= min(high_a, high_b)
    return f"no test recorded (intervals {'overlap' if overlap else 'do not overlap'}: " \
        "a hint, not a test)"


def recorded_tests(tidy: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """The pair tests recorded among ``tidy``'s rows (the convention of the module docstring):
    one row per test with the metric it compares, the pair (``a`` - ``b``), its setting, the
    difference with its interval where recorded, Holm's p, the verdict and the mark."""
    rows = []
    found = tidy[tidy["key"].str.endswith(TEST_SUFFIX) &
                 tidy["label_map"].map(lambda m: "versus" in m)]
    for row in found.itertuples():
        side = _side(row.model, row.label_map, test=True)
        if side is None:
            continue
        name, a, setting = side
        test = row.key.removesuffix(TEST_SUFFIX)
        same = tidy[(tidy["chapter"] == row.chapter) & (tidy["run"] == row.run)
                    & (tidy["model"].fillna("") == (row.model or ""))
                    & (tidy["labels"] == row.labels)]
        difference = same[same["key"] == test].head(1)
        verdict = same.loc[same["key"] == test + VERDICT_SUFFIX, "value"].head(1)
        low, high, value = (difference[c].iloc[0] if len(difference) else float("nan")
                            for c in ("ci_low", "ci_high", "value"))
        supported, mark = decide(row.value, verdict.iloc[0] if len(verdict) else None,
                                 low, high, alpha)
        rows.append({"chapter": row.chapter, "profile": row.profile, "run": row.run,
                     "test": test, "metric": DIFFERENCE_OF.get(
                         (row.chapter, test), test.removesuffix(DIFFERENCE_SUFFIX)),
                     "pair_label": name, "a": a, "b": row.label_map["versus"],
                     "setting_map": setting, "setting": _setting_text(setting),
                     "difference": _value_text(value, low, high), "p_holm": row.value,
                     "supported": supported, "mark": mark})
    return pd.DataFrame(rows, columns=["chapter", "profile", "run", "test", "metric",
                                       "pair_label", "a", "b", "setting_map", "setting",
                                       "difference", "p_holm", "supported", "mark"])


def _covers(test: dict, setting: dict) -> bool:
    return all(k in setting and setting[k] == v for k, v in test.items())


def _test_side(numbers: pd.DataFrame, test: pd.Series, side) -> SimpleNamespace | None:
    """The row of ``test``'s metric and run whose pair label is ``side`` and whose other labels
    include the test's setting (with that row's setting for the column)."""
    rows = numbers[(numbers["chapter"] == test["chapter"]) & (numbers["run"] == test["run"])
                   & (numbers["key"] == test["metric"])]
    for _, row in rows.iterrows():
        labels = _labels(row["model"], row["label_map"])
        setting = {k: v for k, v in labels.items() if k != test["pair_label"]}
        if labels.get(test["pair_label"]) == side and _covers(test["setting_map"], setting):
            return SimpleNamespace(value=row["value"], ci_low=row["ci_low"],
                                   ci_high=row["ci_high"], setting_map=setting,
                                   setting=_setting_text(setting))
    return None


def _tested_rows(numbers: pd.DataFrame, recorded: pd.DataFrame) -> tuple[list[dict], list]:
    """:func:`comparisons`' rows of the recorded tests, and the tests found with both values."""
    shown = set(zip(numbers["chapter"], numbers["profile"], numbers["key"], strict=True))
    rows, tested = [], []
    for _, test in recorded.iterrows():
        a, b = _test_side(numbers, test, test["a"]), _test_side(numbers, test, test["b"])
        found = a is not None and b is not None
        if not found and not {(test["chapter"], test["profile"], k)
                              for k in (test["metric"], test["test"] + TEST_SUFFIX)} & shown:
            continue
        if found:
            tested.append(test)
        # shown under the values' column where they share one (ethnic-bias' models do not)
        same_column = found and a.setting_map == b.setting_map
        rows.append({**{k: test[k] for k in PAIR_COLUMNS if k in test.index},
                     "metric": test["metric"] if found else test["test"],
                     "setting": a.setting if same_column else test["setting"],
                     "value_a": _value_text(a.value, a.ci_low, a.ci_high) if found else "",
                     "value_b": _value_text(b.value, b.ci_low, b.ci_high) if found else ""})
    return rows, tested


def _untested_rows(values: pd.DataFrame, tested: list) -> list[dict]:
    """:func:`comparisons`' rows of the pairs of one column that no recorded test covers."""
    def covered(one, other) -> bool:
        return any(t["chapter"] == one.chapter and t["run"] == one.run == other.run
                   and t["metric"] == one.key and t["pair_label"] == one.pair_label
                   and {t["a"], t["b"]} == {one.side, other.side}
                   and _covers(t["setting_map"], one.setting_map) for t in tested)

    rows = []
    columns = ["chapter", "profile", "key", "pair_label", "setting"]
    with_ci = values[values["ci_low"].notna()].drop_duplicates([*columns, "side"], keep="first")
    for (chapter, profile, key, _, setting), group in with_ci.groupby(columns, sort=False):
        listed = list(group.sort_values("side", key=lambda s: s.astype(str)).itertuples())
        for i, one in enumerate(listed):
            for other in listed[i + 1:]:
                if not covered(one, other):
                    rows.append({
                        "chapter": chapter, "profile": profile, "metric": key,
                        "setting": setting, "a": one.side, "b": other.side,
                        "value_a": _value_text(one.value, one.ci_low, one.ci_high),
                        "value_b": _value_text(other.value, other.ci_low, other.ci_high),
                        "difference": "", "p_holm": float("nan"), "supported": None,
                        "mark": untested_mark(one.ci_low, one.ci_high, other.ci_low,
                                              other.ci_high),
                        "run": one.run if one.run == other.run else f"{one.run}, {other.run}"})
    return rows


def comparisons(numbers: pd.DataFrame, every: pd.DataFrame | None = None,
                alpha: float = ALPHA) -> pd.DataFrame:
    """The pairs of ``numbers`` (rows of :func:`latest`) with their marks (module docstring).

    A recorded test gives a pair whose two values are the rows of its metric for ``a`` and ``b``
    in the test's run whose labels include the test's setting (they need not share a column: a
    label that describes the model, such as ethnic-bias' ``group``, differs between them). Every
    other pair of values in one column (same chapter, profile, metric and setting) whose values
    both have an interval is listed as untested. The tests are looked up in ``every`` (default
    ``numbers``; pass ``latest(collect())`` so that a headline table finds tests that are not
    headline numbers themselves); a test whose metric (or itself) is among ``numbers`` is listed
    even where its values are not (then without them, and with the test's own key, such as
    ``method_difference``, as its metric).

    One row per pair, newest run first: the chapter, profile, metric and setting, the sides ``a``
    and ``b`` (in the test's order: the difference is a - b), their values with intervals, the
    difference, Holm's p, ``supported`` (``True``, ``False``, or ``None`` without a test) and the
    ``mark``.
    """
    recorded = recorded_tests(numbers if every is None else every, alpha)
    sides = [_side(m, lm) for m, lm in zip(numbers["model"], numbers["label_map"], strict=True)]
    values = numbers.loc[[s is not None for s in sides]].assign(
        pair_label=[s[0] for s in sides if s], side=[s[1] for s in sides if s],
        setting_map=[s[2] for s in sides if s])
    values["setting"] = values["setting_map"].map(_setting_text)
    rows, tested = _tested_rows(numbers, recorded)
    rows += _untested_rows(values, tested)
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    # one row per pair and setting: the newest run's (the other runs' settings differ only in
    # parameters that the atlas' columns do not show either)
    pairs = pairs.drop_duplicates(["chapter", "profile", "metric", "setting", "a", "b"])
    return pairs.sort_values(["chapter", "profile", "metric"], kind="stable").reset_index(
        drop=True)
