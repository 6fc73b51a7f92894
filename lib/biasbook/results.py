"""Record a notebook's numbers with provenance, and read them back across runs.

A :class:`Recorder` writes ``<run dir>/<chapter>/<notebook>.json`` after every call, so an
interrupted notebook leaves what it had computed. The run directory is ``BIASBOOK_RUN_DIR`` (set by
``biasbook run``) or ``runs/default`` in the project. Provenance: parameters, model fingerprints,
data sha256, library version, git commit, start time and wall time.

>>> import tempfile, os
>>> run_dir = tempfile.mkdtemp()
>>> rec = Recorder("demo", "01-example", params={"profile": "smoke"}, run_dir=run_dir)
>>> rec.metric("overall", 0.25, paper=0.5, model="tiny")
0.25
>>> df = load(run_dir)
>>> df[["chapter", "key", "value", "paper", "model"]].to_dict("records")
[{'chapter': 'demo', 'key': 'overall', 'value': 0.25, 'paper': 0.5, 'model': 'tiny'}]
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

import biasbook
from biasbook import resources
from biasbook.paths import PROJECT_ROOT


def default_run_dir() -> Path:
    return Path(os.environ.get("BIASBOOK_RUN_DIR", PROJECT_ROOT / "runs" / "default"))


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


def _plain(value):
    """JSON-safe scalar; NaN and infinities are refused rather than silently written."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"refusing to record a non-finite value ({value})")
    return value


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

    def model(self, lm) -> None:
        """Note a loaded :class:`biasbook.models.LanguageModel` (name, kind, fingerprint)."""
        self.record["provenance"]["models"][lm.name] = {"kind": lm.kind,
                                                        "fingerprint": lm.fingerprint}
        self._save()

    def data(self, name: str) -> None:
        """Note a registry dataset and the sha256 of its files."""
        self.record["provenance"]["data"][name] = resources.sha256_record(name)
        self._save()

    def metric(self, key: str, value, *, paper=None, **labels):
        """Record one number (and the paper's value for it, if any); returns ``value``."""
        row = {"key": key, "value": _plain(value),
               "paper": None if paper is None else _plain(paper),
               **{k: _plain(v) for k, v in labels.items()}}
        metrics = self.record["metrics"]
        metrics[:] = [m for m in metrics if not _same(m, row)] + [row]
        self._save()
        return value

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
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(self.record, fh, indent=1, default=str)
        os.replace(tmp, self.path)  # readers never see a half-written record


def _same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k not in ("value", "paper")} == \
        {k: v for k, v in b.items() if k not in ("value", "paper")}


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


def load(run_dir: str | Path) -> pd.DataFrame:
    """Every metric under a run directory as one tidy table (a row per recorded number)."""
    rows = []
    for record in records(run_dir):
        for metric in record["metrics"]:
            rows.append({"run": Path(run_dir).name, "chapter": record["chapter"],
                         "notebook": record["notebook"],
                         "profile": record["params"].get("profile"), **metric})
    return pd.DataFrame(rows)


def compare(run_dirs: list[str | Path]) -> pd.DataFrame:
    """Metrics of several runs side by side: one row per metric, one column per run."""
    frames = [load(d) for d in run_dirs]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    tidy = pd.concat(frames, ignore_index=True)
    labels = [c for c in tidy.columns if c not in ("run", "value", "paper", "profile")]
    tidy[labels] = tidy[labels].fillna("")
    wide = tidy.pivot_table(index=labels, columns="run", values="value", aggfunc="first")
    paper = tidy.groupby(labels)["paper"].first()
    return wide.join(paper).reset_index()
