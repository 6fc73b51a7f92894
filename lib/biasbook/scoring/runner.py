"""Computing what the score cache lacks: :func:`cached_run` looks the queries up in the
:class:`~biasbook.scoring.cache.ScoreCache` and computes only the missing ones, in this process
batch by batch or (``workers=``, given a :class:`~biasbook.scoring.cache.Task`) sharded over Ray
workers (:mod:`biasbook.scoring.distributed`).
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from tqdm.auto import tqdm

from biasbook.models import LanguageModel
from biasbook.scoring import distributed
from biasbook.scoring.batching import cpu_threads, default_batch_tokens
from biasbook.scoring.cache import Engine, ScoreCache, Task

#: Runs with at least this many uncached queries show a progress bar when ``progress=None``.
PROGRESS_THRESHOLD = 256


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
            workers = distributed.from_environment(lm, len(todo))
        if todo and workers is not None:
            if not isinstance(engine, Task):
                raise ValueError(f"{desc}: this computation cannot run on workers (its engine "
                                 "is not a scoring Task); leave workers=None")
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
