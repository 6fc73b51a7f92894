"""Persistent score cache, one SQLite file per model fingerprint under ``cache_dir()/scores/``,
and :class:`Task`, a scoring computation that can be rebuilt anywhere (what
:mod:`biasbook.scoring.runner` runs, here or on Ray workers, to fill the cache).

A row is keyed by (method key, query) and holds a numpy array with a CRC32 over key and bytes.
Every finished batch is committed in one transaction, so an interrupted run keeps what it finished
and never leaves half a batch behind. A file SQLite cannot read is moved aside and replaced, and a
row whose checksum fails is recomputed; both with a warning.

>>> import numpy as np, tempfile, pathlib
>>> store = ScoreCache(pathlib.Path(tempfile.mkdtemp()) / "model.sqlite")
>>> store.put("clm/v1", {"A cat.": np.array([-1.5, -2.0], np.float32)})
>>> store.get("clm/v1", ["A cat.", "A dog."])
{'A cat.': array([-1.5, -2. ], dtype=float32)}
>>> store.close()
"""

from __future__ import annotations

import sqlite3
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from biasbook.models import LanguageModel
from biasbook.paths import cache_dir
from biasbook.store import DamagedCacheWarning

_SCHEMA = """CREATE TABLE IF NOT EXISTS scores (
    method TEXT NOT NULL, query TEXT NOT NULL, dtype TEXT NOT NULL, value BLOB NOT NULL,
    crc INTEGER NOT NULL, PRIMARY KEY (method, query)) WITHOUT ROWID"""
_QUERIES_PER_SELECT = 500  # below SQLite's limit on bound parameters
#: ``engine(queries, batch_tokens)`` yields ``(indices into queries, arrays)`` per finished batch.
Engine = Callable[[list[str], int], Iterator[tuple[list[int], list[np.ndarray]]]]


@dataclass(frozen=True)
class Task:
    """An engine that another process can rebuild: ``function(lm, queries, batch_tokens,
    **kwargs)``, a module-level generator function (pickled by reference) yielding what an
    :data:`Engine` yields, and picklable ``kwargs``. A Ray worker binds it to the model it
    loaded itself (:mod:`biasbook.scoring.distributed`); this process binds it to ``lm``."""

    function: Callable[..., Iterator[tuple[list[int], list[np.ndarray]]]]
    kwargs: dict[str, Any] = field(default_factory=dict, hash=False)

    def bind(self, lm: LanguageModel) -> Engine:
        return partial(self.function, lm, **self.kwargs)


class ScoreCache:
    """Arrays of scores by (method key, query) in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    @classmethod
    def for_model(cls, lm: LanguageModel) -> ScoreCache:
        """The cache of ``lm``'s weights read through ``lm``'s tokenizer; a fingerprint left
        stale by weights changed in place is recomputed first
        (:meth:`~biasbook.models.LanguageModel.check_fingerprint`)."""
        lm.check_fingerprint()
        return cls(cache_dir() / "scores" / f"{lm.fingerprint}-{lm.tokenizer_key}.sqlite")

    def get(self, method: str, queries: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached arrays of those ``queries`` that have an intact row."""
        queries = list(dict.fromkeys(queries))
        found: dict[str, np.ndarray] = {}
        damaged = 0
        for start in range(0, len(queries), _QUERIES_PER_SELECT):
            chunk = queries[start: start + _QUERIES_PER_SELECT]
            sql = (f"SELECT query, dtype, value, crc FROM scores WHERE method = ? "
                   f"AND query IN ({','.join('?' * len(chunk))})")
            for query, dtype, value, crc in self._run(sql, (method, *chunk)):
                if crc != _crc(method, query, dtype, value):
                    damaged += 1
                    continue
                found[query] = np.frombuffer(value, dtype=np.dtype(dtype)).copy()
        if damaged:
            warnings.warn(f"score cache {self.path}: {damaged} damaged row(s) ignored and "
                          "recomputed", DamagedCacheWarning, stacklevel=3)
        return found

    def put(self, method: str, values: Mapping[str, np.ndarray]) -> None:
        """Store ``values`` in one transaction (all or nothing)."""
        rows = []
        for query, array in values.items():
            array = np.ascontiguousarray(array)
            dtype, blob = array.dtype.str, array.tobytes()
            rows.append((method, query, dtype, blob, _crc(method, query, dtype, blob)))
        self._run("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)", rows, many=True)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _run(self, sql: str, params, many: bool = False) -> list[tuple]:
        try:
            return self._execute(sql, params, many)
        except (sqlite3.OperationalError, OSError) as err:  # locked, read-only, full: skip it
            warnings.warn(f"score cache {self.path} unusable ({err}); continuing without it",
                          stacklevel=4)
            return []
        except sqlite3.DatabaseError as err:  # not a database, malformed: damaged
            self._move_aside(err)
            return self._execute(sql, params, many)

    def _execute(self, sql: str, params, many: bool) -> list[tuple]:
        db = self._connect()
        with db:  # one transaction: committed on success, rolled back on error
            cursor = db.executemany(sql, params) if many else db.execute(sql, params)
            return cursor.fetchall()

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=60)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
            except sqlite3.DatabaseError:
                db.close()
                raise
            self._db = db
        return self._db

    def _move_aside(self, err: Exception) -> None:
        self.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        warnings.warn(f"score cache {self.path} is damaged ({err}); moved to {aside.name}, "
                      "starting an empty one", DamagedCacheWarning, stacklevel=5)
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.replace(aside.with_name(aside.name + suffix))


def _crc(method: str, query: str, dtype: str, value: bytes) -> int:
    return zlib.crc32(value, zlib.crc32(f"{method}\0{query}\0{dtype}".encode()))
