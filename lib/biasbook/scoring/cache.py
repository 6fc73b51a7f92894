"""Persistent score cache, one SQLite file per model fingerprint under ``cache_dir()/scores/``,
and :func:`cached_run`, which computes only what the cache lacks and stores it batch by batch,
in this process or (``workers=``, given a :class:`Task`) sharded over Ray workers
(:mod:`biasbook.scoring.distributed`).

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

import numbers
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
import torch
from tqdm.auto import tqdm

from biasbook.models import LanguageModel
from biasbook.paths import cache_dir
from biasbook.scoring.batching import cpu_threads, default_batch_tokens
from biasbook.store import DamagedCacheWarning

_SCHEMA = """CREATE TABLE IF NOT EXISTS scores (
    method TEXT NOT NULL, query TEXT NOT NULL, dtype TEXT NOT NULL, value BLOB NOT NULL,
    crc INTEGER NOT NULL, PRIMARY KEY (method, query)) WITHOUT ROWID"""
_QUERIES_PER_SELECT = 500  # below SQLite's limit on bound parameters
#: Runs with at least this many uncached queries show a progress bar when ``progress=None``.
PROGRESS_THRESHOLD = 256
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


def cached_run(lm: LanguageModel, key: str, queries: dict[str, None], engine: Engine | Task, *,
               batch_tokens: int | None, cache: bool | ScoreCache, progress: bool | None,
               desc: str, workers=None) -> dict[str, np.ndarray]:
    """Cached values of ``queries``; ``engine(todo, budget)`` yields the missing ones by batch.

    Every yielded batch is stored at once, so an interrupted run loses at most one batch.
    ``workers`` (an ``engine`` that is a :class:`Task` only): score the missing queries on Ray
    workers instead (:func:`biasbook.scoring.distributed.run`); this process stores each shard
    they return as it arrives, so an interrupted run keeps every shard that came back. Without
    it, the environment variable ``BIASBOOK_WORKERS`` may ask for workers
    (:func:`~biasbook.scoring.distributed.from_environment`).
    """
    if batch_tokens is not None and (isinstance(batch_tokens, bool) or
                                     not isinstance(batch_tokens, numbers.Integral) or
                                     batch_tokens < 1):
        raise ValueError("batch_tokens must be a whole number >= 1 (the padded tokens of one "
                         f"forward pass), or None for the default; got {batch_tokens!r}")
    store = ScoreCache.for_model(lm) if cache is True else cache or None
    try:
        values = store.get(key, queries) if store else {}
        todo = [q for q in queries if q not in values]
        if todo and workers is None and isinstance(engine, Task):
            from biasbook.scoring import distributed

            workers = distributed.from_environment(lm, len(todo))
        if todo and workers is not None:
            if not isinstance(engine, Task):
                raise ValueError(f"{desc}: this computation cannot run on workers (its engine "
                                 "is not a scoring Task); leave workers=None")
            from biasbook.scoring import distributed

            values.update(distributed.run(lm, key, todo, engine, workers, store=store,
                                          batch_tokens=batch_tokens, progress=progress,
                                          desc=desc))
        elif todo:
            bound = engine.bind(lm) if isinstance(engine, Task) else engine
            values.update(_run(bound, todo, store, key, batch_tokens or
                               default_batch_tokens(lm.device), progress, desc))
        return values
    finally:
        if cache is True:
            store.close()


def _run(engine: Engine, todo: list[str], store: ScoreCache | None, key: str, budget: int,
         progress: bool | None, desc: str) -> dict[str, np.ndarray]:
    values = {}
    show = len(todo) >= PROGRESS_THRESHOLD if progress is None else progress
    with cpu_threads(), torch.inference_mode(), tqdm(total=len(todo), desc=desc, unit="query",
                                                     disable=not show, leave=False) as bar:
        for indices, arrays in engine(todo, budget):
            batch = {todo[i]: a for i, a in zip(indices, arrays, strict=True)}
            if store:
                store.put(key, batch)
            values.update(batch)
            bar.update(len(batch))
    return values
