"""Where things live: the project checkout, the offline data mirror and the user cache.

Every location can be overridden by an environment variable, so that a user's machine, CI and the
book build can all point the library at their own folders:

- ``BIASBOOK_DATA``   the offline data mirror (default: ``<project>/../shared/data``)
- ``BIASBOOK_CACHE``  the cache for unpacked archives, converted models and scores
  (default: ``~/.cache/biasbook``)
- ``BIASBOOK_PROJECT_DATA``  the project's own small data files (default: ``<project>/data``)
"""

from __future__ import annotations

import os
from pathlib import Path

#: The project checkout (``lib/biasbook`` is two levels below it in an editable install).
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def in_checkout() -> bool:
    """Whether the library runs from the project checkout (an editable install) rather than from
    an installed wheel, whose ``PROJECT_ROOT`` is a folder of the Python environment."""
    return (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "lib").is_dir()


def runs_dir() -> Path:
    """Where run folders go: ``runs/`` in the checkout, else in the current directory (an
    installed wheel's ``PROJECT_ROOT`` is a folder of the Python environment, no place for
    results)."""
    return (PROJECT_ROOT if in_checkout() else Path.cwd()) / "runs"


def mirror_dir() -> Path:
    """The offline data mirror (read-only)."""
    return Path(os.environ.get("BIASBOOK_DATA", PROJECT_ROOT.parent / "shared" / "data"))


def cache_dir() -> Path:
    """The user cache; created on first use."""
    path = Path(os.environ.get("BIASBOOK_CACHE", Path.home() / ".cache" / "biasbook"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def project_data_dir() -> Path:
    """The project's own data: word lists, templates, profiles, the papers' reported numbers.

    ``BIASBOOK_PROJECT_DATA`` if set, else the checkout's ``data/``, else the copy an installed
    wheel carries (``biasbook/data``, in the checkout a link to ``data/``).
    """
    if "BIASBOOK_PROJECT_DATA" in os.environ:
        return Path(os.environ["BIASBOOK_PROJECT_DATA"])
    checkout = PROJECT_ROOT / "data"
    return checkout if checkout.is_dir() else Path(__file__).resolve().parent / "data"
