"""One way to read the project's own data: ``data/<chapter>/<name>.yml``.

Word lists, templates, region configurations and the numbers each paper reports are small YAML
files written by the book's authors, one folder per chapter (``paths.project_data_dir()``, i.e.
``<project>/data`` or ``$BIASBOOK_PROJECT_DATA``). Chapters read them with :func:`load`; the
papers' reported numbers always live in ``paper_results.yml`` (:func:`paper_results`).

>>> sorted(load("herb", "descriptors"))[:2]
['appearance', 'intelligence']
>>> load("herb", "no-such-file")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
FileNotFoundError: no data file herb/no-such-file.yml; herb has: descriptors, paper_results, ...
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from biasbook.paths import project_data_dir


def path(chapter: str, name: str) -> Path:
    """``data/<chapter>/<name>.yml``; a missing file is an error that lists the chapter's files."""
    folder = project_data_dir() / chapter
    file = folder / f"{name}.yml"
    if not file.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yml"))) or "no data files"
        raise FileNotFoundError(f"no data file {chapter}/{name}.yml; {chapter} has: {known}")
    return file


@cache
def _parsed(file: Path, mtime_ns: int) -> Any:
    return yaml.safe_load(file.read_text(encoding="utf-8"))


def load(chapter: str, name: str) -> Any:
    """The parsed contents of ``data/<chapter>/<name>.yml`` (cached until the file changes)."""
    file = path(chapter, name)
    return _parsed(file, file.stat().st_mtime_ns)


def paper_results(chapter: str) -> Any:
    """The numbers a chapter's paper reports, transcribed in ``data/<chapter>/paper_results.yml``.
    """
    return load(chapter, "paper_results")
