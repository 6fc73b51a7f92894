"""One way to write files atomically and to key a cache by content.

Every long computation of the book (converted models, unpacked archives, trained vectors, LSTM
runs, fine-tuned weights, co-occurrence matrices) is stored under a key derived from *what was
computed from what*: the inputs' fingerprints, the parameters and a code version. A changed input
gives a new key; an unchanged one finds the stored result. Files and folders appear under their
final name only when complete, so an interrupted run leaves no half-written result behind (at
most a hidden staging file, cleaned up on failure) and the next run simply resumes.

- :func:`content_key`: a short hex sha256 of any JSON-able value (numpy arrays and bytes
  included), stable across runs and machines.
- :func:`atomic_file` / :func:`atomic_dir`: write to a hidden staging path beside the target,
  then rename into place.
- :func:`write_text`, :func:`write_json`: the common cases of :func:`atomic_file`.
- :func:`cached_json`, :func:`cached_arrays`: compute once, store under ``cache_dir()/<kind>/``,
  read back afterwards.
- :func:`cache_path`: where a result lives; :func:`slug` is the one rule that turns a model's (or
  run's) name into the readable part of a folder name.
- :class:`Checkpoint`: the latest state of a resumable computation (a training run) and, once it
  is finished, its result.
- :func:`read_or_set_aside`: read a cached file, or, when it cannot be read (truncated, a bad
  checksum, unparseable), move it aside as ``<name>.damaged`` with a :class:`DamagedCacheWarning`
  naming it, so that the caller computes it again instead of failing on every rerun. Every
  reader here goes through it.

>>> content_key({"b": 1, "a": [1, 2]}) == content_key({"a": [1, 2], "b": 1})
True
>>> len(content_key("x")), content_key("x") != content_key("y")
(16, True)
>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "numbers.json"
>>> write_json(target, {"mu": 0.5})
>>> json.loads(target.read_text())
{'mu': 0.5}
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from biasbook.paths import cache_dir

KEY_LENGTH = 16
T = TypeVar("T")
#: What reading a damaged cache file raises: a truncated ``.npz`` is "not a zip file" (or, to
#: numpy, "pickled data"), a flipped byte a bad CRC-32 (zipfile) or a zlib error, a cut JSON text
#: a ValueError, a cut ``torch.save`` file a RuntimeError, EOFError or UnpicklingError; a file
#: that lacks an expected array or key, a KeyError. OSError (permissions, a full disk) is not
#: damage: it propagates.
DAMAGE = (ValueError, KeyError, EOFError, RuntimeError, zipfile.BadZipFile, zlib.error,
          pickle.UnpicklingError)


class DamagedCacheWarning(UserWarning):
    """A cached file or folder could not be read or no longer holds what was stored: it was
    moved aside (``<name>.damaged``) and its result is computed again."""


def _canonical(value: Any) -> Any:
    """A JSON-able stand-in for ``value`` that is equal exactly when the values are equal."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {"__array__": str(data.dtype), "shape": list(data.shape),
                "sha256": hashlib.sha256(data.tobytes()).hexdigest()}
    if isinstance(value, bytes):
        return {"__bytes__": hashlib.sha256(value).hexdigest()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_canonical(v) for v in value)
    if isinstance(value, Path):
        return str(value)
    return value


def content_key(*parts: Any, length: int = KEY_LENGTH) -> str:
    """Hex sha256 (first ``length`` characters) of ``parts`` in a canonical JSON form.

    Dict order does not matter; list order does; arrays are keyed by dtype, shape and bytes.
    """
    text = json.dumps(_canonical(list(parts)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a staging path beside ``path``; on success rename it to ``path``, else delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)  # readers never see a half-written file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``path``; on success it replaces ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        yield staging
        shutil.rmtree(path, ignore_errors=True)
        staging.rename(path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_file(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically."""
    write_text(path, json.dumps(value, indent=1, default=str))


def slug(name: str) -> str:
    """``name`` (a model id, a local path, a run's label) as the readable part of a folder name:
    every run of characters other than letters, digits and ``_ . + -`` becomes ``_``, and no
    leading dot or underscore is kept (a hidden name would look like a staging folder).

    >>> slug("google/mt5-small"), slug("/tmp/models/tiny"), slug("bert-base-uncased+head")
    ('google_mt5-small', 'tmp_models_tiny', 'bert-base-uncased+head')
    """
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).lstrip("._")


def cache_path(kind: str, key: str, suffix: str = "", *, name: str | None = None) -> Path:
    """Where the result ``key`` of computation ``kind`` lives: ``cache_dir()/<kind>/<key><suffix>``,
    or ``cache_dir()/<kind>/<slug(name)>-<key><suffix>`` with a ``name`` for people to read.

    >>> cache_path("finetune", "0123", name="openai/gpt2").relative_to(cache_dir()).as_posix()
    'finetune/openai_gpt2-0123'
    """
    return cache_dir() / kind / (f"{slug(name)}-{key}{suffix}" if name else f"{key}{suffix}")


def set_aside(path: str | Path, problem: str, then: str = "computed again") -> Path:
    """Move the damaged ``path`` (a file or a folder) to ``<name>.damaged``, replacing an older
    one, and say so with a :class:`DamagedCacheWarning` (``then``: what happens next); returns
    where it went."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.damaged")
    if aside.is_dir():
        shutil.rmtree(aside)
    path.replace(aside)  # also replaces an older damaged file
    warnings.warn(f"{path} is damaged ({problem}); moved aside to {aside.name} and {then}",
                  DamagedCacheWarning, stacklevel=3)
    return aside


def read_or_set_aside(path: str | Path, read: Callable[[Path], T]) -> T | None:
    """``read(path)``; None when ``path`` does not exist or is damaged (``read`` raises one of
    :data:`DAMAGE`), in which case it is :func:`set_aside` first.

    ``read`` must read everything it returns (not a lazy view of the file), so that damage shows
    here rather than later.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        return read(path)
    except DAMAGE as err:
        first_line = (str(err).splitlines() or [""])[0][:200]
        set_aside(path, f"{type(err).__name__}: {first_line}")
        return None


def _read_json(path: Path) -> tuple[Any]:
    return (json.loads(path.read_text()),)  # in a tuple: a stored null is not "no value"


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as stored:  # lazy: read every array now
        return {name: stored[name] for name in stored.files}


def cached_json(kind: str, key: str, compute: Callable[[], Any], *, cache: bool = True) -> Any:
    """``compute()``, stored as JSON under ``(kind, key)`` and read back on later calls (a
    damaged file is set aside and computed again: :func:`read_or_set_aside`)."""
    path = cache_path(kind, key, ".json")
    if cache and (found := read_or_set_aside(path, _read_json)) is not None:
        return found[0]
    value = compute()
    if cache:
        write_json(path, value)
    return json.loads(json.dumps(value, default=str))  # the same types as a cache hit


def cached_arrays(kind: str, key: str, compute: Callable[[], dict[str, np.ndarray]], *,
                  cache: bool = True) -> dict[str, np.ndarray]:
    """``compute()`` (a mapping of names to arrays), stored as ``.npz`` under ``(kind, key)``
    (a damaged file is set aside and computed again: :func:`read_or_set_aside`)."""
    path = cache_path(kind, key, ".npz")
    if cache and (found := read_or_set_aside(path, _read_arrays)) is not None:
        return found
    arrays = {name: np.asarray(value) for name, value in compute().items()}
    if cache:
        with atomic_file(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return arrays


class Checkpoint:
    """The latest state of a resumable computation, kept in ``folder``, and its final result.

    :meth:`save` replaces the state atomically: a crash while saving leaves the previous state
    readable. :meth:`load` returns the last saved state (None before the first save).
    :meth:`finish` yields a staging folder for the result; when the block succeeds the folder
    becomes :attr:`result` and the state is deleted, so that a finished computation is a lookup
    (:attr:`finished`). States are anything ``torch.save`` writes (tensors, arrays, dicts).

    A damaged state (truncated, or a record whose CRC-32 fails) is set aside and :meth:`load`
    returns None: the computation starts over. :meth:`read_result` does the same for a result
    its reader cannot read.

    >>> import pathlib, tempfile
    >>> run = Checkpoint(pathlib.Path(tempfile.mkdtemp()) / "run")
    >>> run.load() is None
    True
    >>> run.save({"epoch": 1, "losses": [0.5]})
    >>> run.load()
    {'epoch': 1, 'losses': [0.5]}
    >>> with run.finish() as out:
    ...     write_json(out / "run.json", {"losses": [0.5]})
    >>> run.finished, run.load(), json.loads((run.result / "run.json").read_text())
    (True, None, {'losses': [0.5]})
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @property
    def state_file(self) -> Path:
        return self.folder / "state.pt"

    @property
    def result(self) -> Path:
        return self.folder / "result"

    @property
    def finished(self) -> bool:
        return self.result.is_dir()

    def save(self, state: Any) -> None:
        """Replace the saved state with ``state``, atomically."""
        import torch

        with atomic_file(self.state_file) as tmp:
            torch.save(state, tmp)

    def load(self) -> Any:
        """The last saved state (tensors on the CPU), or None (none saved, or damaged)."""
        return read_or_set_aside(self.state_file, _read_state)

    def read_result(self, read: Callable[[Path], T]) -> T | None:
        """``read(result)`` once finished, else None; a result that ``read`` finds damaged is
        set aside whole, so that the computation runs again (:func:`read_or_set_aside`)."""
        return read_or_set_aside(self.result, read) if self.finished else None

    @contextmanager
    def finish(self) -> Iterator[Path]:
        """Yield a staging folder for the result; on success it becomes :attr:`result`."""
        with atomic_dir(self.result) as staging:
            yield staging
        self.state_file.unlink(missing_ok=True)


def _read_state(path: Path) -> Any:
    import torch

    with zipfile.ZipFile(path) as archive:  # torch.load does not check the CRCs torch.save writes
        bad = archive.testzip()
    if bad is not None:
        raise zipfile.BadZipFile(f"bad CRC-32 for record {bad}")
    # Our own cache: optimiser and schedule states are more than weights_only reads.
    return torch.load(path, map_location="cpu", weights_only=False)
