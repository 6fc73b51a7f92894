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

>>> import tempfile
>>> from biasbook.results import Recorder
>>> runs = Path(tempfile.mkdtemp())
>>> rec = Recorder("demo", "01-offline-models", {"profile": "smoke"}, run_dir=runs / "default")
>>> _ = rec.metric("grammatical_wins", 1.0, model="smollm2-135m")
>>> models_by_metrics(latest(headline(collect(runs)))).round(2).to_dict()
{'demo · grammatical_wins': {'smollm2-135m': 1.0}}
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biasbook import profiles, results
from biasbook.paths import PROJECT_ROOT

RUNS_DIR = PROJECT_ROOT / "runs"
FIXED = ("run", "chapter", "notebook", "profile", "status", "params", "key", "value", "paper",
         "model", "started")


def collect(runs_dir: str | Path = RUNS_DIR) -> pd.DataFrame:
    """Every recorded number under ``runs_dir``'s run folders, tidy, newest run first."""
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
        return pd.DataFrame(columns=[*FIXED, "interval", "labels", "page"])
    tidy = pd.concat(frames, ignore_index=True)
    if "model" not in tidy:
        tidy["model"] = None
    others = [c for c in tidy.columns if c not in (*FIXED, *results.VALUE_FIELDS)]
    tidy["labels"] = [", ".join(f"{c}={row[c]}" for c in others if pd.notna(row[c]))
                      for _, row in tidy.iterrows()]
    tidy["page"] = "notebooks/" + tidy["chapter"] + "/" + tidy["notebook"] + ".html"
    tidy["interval"] = interval_text(tidy)
    tidy = tidy.sort_values("started", ascending=False, kind="stable")
    return tidy[[*FIXED, "interval", "labels", "page"]].reset_index(drop=True)


def interval_text(tidy: pd.DataFrame) -> list[str]:
    """``[low, high] (95% over 40 cells)`` for each row that has an interval, else ``""``.

    >>> interval_text(pd.DataFrame({"ci_low": [0.11, None], "ci_high": [0.305, None],
    ...     "ci_level": [0.95, None], "ci_units": [40, None], "ci_unit": ["cells", None]}))
    ['[0.11, 0.305] (95% over 40 cells)', '']
    """
    if "ci_low" not in tidy:
        return [""] * len(tidy)
    return [f"[{r.ci_low:.3g}, {r.ci_high:.3g}] "
            f"({r.ci_level:.0%} over {r.ci_units:.0f} {r.ci_unit})"
            if pd.notna(r.ci_low) else "" for r in tidy.itertuples()]


def headline_keys(chapter: str) -> list[str] | None:
    """The metric keys a chapter's profile file names as ``headline``, if it names any."""
    try:
        return profiles.chapter_spec(chapter).get("headline")
    except profiles.ProfileError:  # a run of a chapter this checkout no longer has
        return None


def headline(tidy: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`collect` that are their chapter's headline numbers."""
    keep = []
    for chapter, rows in tidy.groupby("chapter", sort=False):
        keys = headline_keys(chapter)
        mask = rows["key"].isin(keys) if keys else rows["paper"].notna()
        keep.append(rows[mask])
    return pd.concat(keep).sort_index() if keep else tidy.iloc[:0]


def latest(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per (chapter, profile, params, notebook, key, model, labels): the most recent
    finished run's (or the book build's). Unfinished runs are left out."""
    done = tidy[tidy["status"].isin(["finished", "book"])]
    subset = ["chapter", "profile", "params", "notebook", "key", "model", "labels"]
    return done.assign(model=done["model"].fillna("")).drop_duplicates(subset, keep="first")


def models_by_metrics(tidy: pd.DataFrame) -> pd.DataFrame:
    """Models as rows, ``chapter · key [labels] (profile)`` as columns; rows without a model are
    left out. A chapter run with other parameters than the book's is a column of its own."""
    rows = tidy[tidy["model"].fillna("") != ""]
    column = rows["chapter"] + " · " + rows["key"] + \
        rows["labels"].map(lambda s: f" [{s}]" if s else "")
    several = rows.groupby("chapter")["profile"].transform("nunique") > 1
    column = column + [f" ({p})" if s else "" for p, s in zip(rows["profile"], several,
                                                               strict=True)]
    wide = rows.assign(metric=column).pivot_table(index="model", columns="metric",
                                                  values="value", aggfunc="first")
    wide.columns.name, wide.index.name = None, None
    return wide
