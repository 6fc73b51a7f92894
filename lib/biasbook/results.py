"""Record a notebook's numbers with provenance, and read them back across runs.

A :class:`Recorder` writes ``<run dir>/<chapter>/<notebook>.json`` after every call, so an
interrupted notebook leaves what it had computed. The run directory is ``BIASBOOK_RUN_DIR`` (set by
``biasbook run``) or ``runs/default`` in the project (outside a checkout, e.g. with the wheel
installed: in the current directory). Provenance: parameters, model fingerprints,
data sha256, library version, git commit, start time and wall time.

>>> import tempfile, os
>>> run_dir = tempfile.mkdtemp()
>>> rec = Recorder("demo", "01-example", params={"profile": "smoke"}, run_dir=run_dir)
>>> rec.metric("overall", 0.25, paper=0.5, model="tiny")
0.25
>>> df = load(run_dir)
>>> df[["chapter", "key", "value", "paper", "model"]].to_dict("records")
[{'chapter': 'demo', 'key': 'overall', 'value': 0.25, 'paper': 0.5, 'model': 'tiny'}]

One record schema serves every chapter. A row holds ``key``, ``value`` (a finite number),
``paper`` (the paper's number, or ``None`` where the paper reports none, with an optional
``note`` saying why), the labels that identify it (``model=...``, ``language=...``) and, where
the number has an uncertainty, the fields of :data:`UNCERTAINTY`. A chapter's table builders
return frames; the notebook records them with :meth:`Recorder.metrics`, one call per column:

>>> frame = pd.DataFrame({"model": ["a", "b"], "cb": [0.1, float("nan")],
...                       "paper": [float("nan"), 0.3]})
>>> rec.metrics("cb", frame, value="cb", paper="paper", labels=["model"])
1
>>> load(run_dir).query("key == 'cb'")[["value", "paper", "model"]].to_dict("records")
[{'value': 0.1, 'paper': nan, 'model': 'a'}]
>>> rec.record["skipped"]
[{'key': 'cb', 'model': 'b', 'reason': 'value not computable (NaN)'}]
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

import biasbook
from biasbook import resources, store
from biasbook.paths import PROJECT_ROOT, runs_dir


def default_run_dir() -> Path:
    """``BIASBOOK_RUN_DIR``, else ``runs/default`` in the checkout, else in the current directory
    (an installed wheel has no project folder: its ``PROJECT_ROOT`` is inside the environment)."""
    if "BIASBOOK_RUN_DIR" in os.environ:
        return Path(os.environ["BIASBOOK_RUN_DIR"])
    return runs_dir() / "default"


def git_commit() -> str:
    """The project's git commit (with ``+dirty`` if the work tree has changes), or ``unknown``."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=PROJECT_ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


# The uncertainty of a recorded number (biasbook.stats' interval rows have exactly these keys).
# All prefixed: chapters use "method", "level" and "unit" as labels of their own.
UNCERTAINTY = ("ci_low", "ci_high", "ci_level", "ci_unit", "ci_units", "ci_method")
# What a row says of its number; the rest (key and labels) is the row's identity.
VALUE_FIELDS = ("value", "paper", "note", *UNCERTAINTY)


def _plain(value):
    """JSON-safe scalar; NaN and infinities are refused rather than silently written."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"refusing to record a non-finite value ({value})")
    return value


def _missing(value) -> bool:
    """``None`` or NaN: a number the paper (or an uncertainty) does not give."""
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    return value is None or (isinstance(value, float) and not math.isfinite(value))


class Recorder:
    """Collects one notebook's metrics and tables, with provenance, on disk."""

    def __init__(self, chapter: str, notebook: str, params: dict,
                 run_dir: str | Path | None = None):
        self.dir = Path(run_dir or default_run_dir()) / chapter
        self.dir.mkdir(parents=True, exist_ok=True)
        self.notebook = notebook
        self._start = time.perf_counter()
        self.record = {
            "chapter": chapter, "notebook": notebook, "params": params,
            "provenance": {"biasbook": biasbook.__version__, "git_commit": git_commit(),
                           "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                           "models": {}, "data": {}, "wall_time_s": 0.0},
            "metrics": [], "tables": [],
        }
        self._save()

    def model(self, *lms) -> None:
        """Note each loaded :class:`biasbook.models.LanguageModel`, or anything else with its
        ``name``, ``kind`` and ``fingerprint`` (a chapter's scores of a model)."""
        for lm in lms:
            self.record["provenance"]["models"][lm.name] = {"kind": lm.kind,
                                                            "fingerprint": lm.fingerprint}
        self._save()

    def data(self, name: str) -> None:
        """Note a registry dataset and the sha256 of its files."""
        self.record["provenance"]["data"][name] = resources.sha256_record(name)
        self._save()

    def metric(self, key: str, value, *, paper=None, note: str | None = None, ci=None,
               **labels):
        """Record one number; returns ``value``.

        ``paper`` is the paper's number for it: ``None`` or NaN records it as absent (``note``
        may say why). ``ci`` is its uncertainty: a mapping with the keys of :data:`UNCERTAINTY`
        (``biasbook.stats`` intervals give one with ``.row()``). A row with the same key and
        labels replaces the earlier one, so a re-executed cell does not duplicate it.
        """
        row = {"key": key, "value": _plain(value),
               "paper": None if _missing(paper) else _plain(paper)}
        if note is not None:
            row["note"] = note
        if ci is not None:
            ci = ci.row() if hasattr(ci, "row") else ci
            if lacking := [k for k in UNCERTAINTY if k not in ci]:
                raise ValueError(f"the uncertainty of {key!r} lacks {', '.join(lacking)}")
            row.update({k: _plain(ci[k]) for k in UNCERTAINTY})
        row.update({k: _plain(v) for k, v in labels.items()})
        metrics = self.record["metrics"]
        metrics[:] = [m for m in metrics if _identity(m) != _identity(row)] + [row]
        self._save()
        return value

    def metrics(self, key: str, frame: pd.DataFrame, *, value: str, paper: str | None = None,
                labels: Sequence[str] | Mapping[str, str] = (), ci: bool | str = False) -> int:
        """Record column ``value`` of every row of ``frame`` as ``key``; returns the count.

        ``paper`` names the column of the paper's numbers; ``labels`` the columns that identify
        a row (a mapping renames them: ``{"lam": "λ"}`` records column ``λ`` as ``lam``; a NaN
        label, such as no target language, is recorded as ``None``). ``ci=True`` records the
        frame's :data:`UNCERTAINTY` columns too; a string is their prefix in a frame that holds
        several statistics (``ci="μ "`` reads ``μ ci_low``, ``μ ci_high``...). A row without an
        interval (one seed, too few items) is recorded without one. A row whose value is not
        computable (NaN) is listed under ``skipped`` in the record, not as a metric.
        """
        labels = dict(labels) if isinstance(labels, Mapping) else {c: c for c in labels}
        prefix = ci if isinstance(ci, str) else ""
        count = 0
        for _, row in frame.iterrows():
            named = {label: None if _missing(row[column]) else row[column]
                     for label, column in labels.items()}
            if _missing(row[value]):
                skipped = {"key": key, **{k: _plain(v) for k, v in named.items()},
                           "reason": "value not computable (NaN)"}
                listed = self.record.setdefault("skipped", [])
                listed[:] = [s for s in listed if s != skipped] + [skipped]
                continue
            interval = {k: row[prefix + k] for k in UNCERTAINTY} if ci is not False else None
            if interval and (_missing(interval["ci_low"]) or _missing(interval["ci_high"])):
                interval = None
            self.metric(key, row[value], paper=None if paper is None else row[paper],
                        ci=interval, **named)
            count += 1
        self._save()
        return count

    def table(self, name: str, frame: pd.DataFrame) -> pd.DataFrame:
        """Save a table as CSV beside the record; returns it unchanged for display."""
        frame.to_csv(self.table_path(name))
        if name not in self.record["tables"]:
            self.record["tables"].append(name)
        self._save()
        return frame

    def table_path(self, name: str) -> Path:
        """Where :meth:`table` saves ``name``: model ids such as ``facebook/bart-base`` or a local
        folder become one file name.

        >>> rec = Recorder("demo", "01", {}, run_dir=getfixture("tmp_path"))
        >>> rec.table_path("corpus_a/b c").name
        '01.corpus_a_b_c.csv'
        """
        return self.dir / f"{self.notebook}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.csv"

    @property
    def path(self) -> Path:
        return self.dir / f"{self.notebook}.json"

    def _save(self) -> None:
        self.record["provenance"]["wall_time_s"] = round(time.perf_counter() - self._start, 3)
        store.write_json(self.path, self.record)  # readers never see a half-written record


def _identity(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in VALUE_FIELDS}


class RecordError(ValueError):
    """A run folder or result record that cannot be read."""


def records(run_dir: str | Path) -> list[dict]:
    """The notebook records of a run directory, in file order; a damaged one is named."""
    if not Path(run_dir).is_dir():
        raise RecordError(f"run folder {run_dir} does not exist")
    found = []
    for path in sorted(Path(run_dir).glob("*/*.json")):
        try:
            record = json.loads(path.read_text())
            record["metrics"], record["provenance"]["started"]  # noqa: B018 (must be there)
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise RecordError(f"result record {path} is malformed ({err}); delete it or "
                              "re-run its notebook") from err
        found.append(record)
    return found


RUN_STATUS = "run.json"  # written by ``biasbook run`` beside the chapter folders


def mark_run(run_dir: str | Path, status: str, **details) -> None:
    """Note a run folder's state (``running``, ``finished``, ``failed``) for the atlas."""
    store.write_json(Path(run_dir) / RUN_STATUS, {"status": status, **details})


def run_status(run_dir: str | Path) -> str:
    """``finished``, ``failed`` or ``running`` (also a run that was killed) for a folder of
    ``biasbook run``; ``book`` for a folder without a status (the book's own build)."""
    path = Path(run_dir) / RUN_STATUS
    if not path.exists():
        return "book"
    try:
        return json.loads(path.read_text())["status"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise RecordError(f"run status {path} is malformed ({err}); delete it") from err


def load(run_dir: str | Path) -> pd.DataFrame:
    """Every metric under a run directory as one tidy table (a row per recorded number), with the
    run's profile and status and a short hash of each notebook's parameters (``params``), so that
    numbers of different profiles or settings are never taken for one another."""
    rows, status = [], run_status(run_dir)
    for record in records(run_dir):
        params = store.content_key(record["params"], length=8)
        for metric in record["metrics"]:
            rows.append({"run": Path(run_dir).name, "chapter": record["chapter"],
                         "notebook": record["notebook"], "status": status, "params": params,
                         "profile": record["params"].get("profile"), **metric})
    return pd.DataFrame(rows)


def compare(run_dirs: list[str | Path]) -> pd.DataFrame:
    """Metrics of several runs side by side: one row per metric, one column per run, named
    ``<run> [<profile>]``; an unfinished run's column says so (``<run> [smoke, failed]``)."""
    frames = [f for f in map(load, run_dirs) if not f.empty]
    if not frames:
        return pd.DataFrame()
    tidy = pd.concat(frames, ignore_index=True)
    tidy["column"] = [f"{run} [{profile}{'' if status in ('finished', 'book') else ', ' + status}]"
                      for run, profile, status in zip(tidy["run"], tidy["profile"],
                                                      tidy["status"], strict=True)]
    not_labels = ("run", "column", "profile", "status", "params", *VALUE_FIELDS)
    labels = [c for c in tidy.columns if c not in not_labels]
    tidy[labels] = tidy[labels].fillna("")
    wide = tidy.pivot_table(index=labels, columns="column", values="value", aggfunc="first")
    wide.columns.name = None
    return wide.join(tidy.groupby(labels)["paper"].first()).reset_index()
