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

from collections.abc import Sequence
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


def paraphrase_sets(chapter: str, names: Sequence[str] | None = None, *,
                    original: str = "original") -> tuple[dict, list[str]]:
    """``data/<chapter>/paraphrases.yml`` and the names of its sets in ``names`` (None: all),
    checked: each one the file has, none twice, none called ``original`` (the chapter's own
    wording's name in its tables).

    >>> spec, names = paraphrase_sets("herb")
    >>> names == list(spec["sets"])
    True
    >>> paraphrase_sets("herb", ["reworded", "reworded"])
    Traceback (most recent call last):
    ...
    ValueError: paraphrase sets must be distinct and not 'original': ['reworded', 'reworded']
    """
    spec = load(chapter, "paraphrases")
    known = spec["sets"]
    names = list(known) if names is None else list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"paraphrase sets {unknown} are not in data/{chapter}/paraphrases.yml; "
                       f"it has {list(known)}")
    if len(set(names)) != len(names) or original in names:
        raise ValueError(f"paraphrase sets must be distinct and not {original!r}: {names}")
    return spec, names
