"""Scoring sharded over worker processes with Ray Data (optional: ``pip install 'biasbook[ray]'``).

``score_sentences(lm, sentences, workers=2)`` (and :func:`~biasbook.scoring.slot_probabilities`,
PLL included) scores the queries that the cache lacks as a Ray Data ``map_batches`` over a
callable-class scorer (:class:`Scorer`): a pool of actors, each of which loads the model once,
from a picklable :class:`ModelRecipe` (the registry name, hub id or folder that
:func:`biasbook.models.load` reads; never a pickled model), with ``num_gpus`` per actor where the
cluster has GPUs. Each actor runs the same engine as the in-process path on a *shard* of queries
and returns the arrays; this process writes every shard into the content-keyed score cache as it
arrives (one SQLite writer, on the driver's disk: the workers need no shared file system). So a
run that stops -- a worker killed, an error, Ctrl-C -- keeps every shard that came back, and the
rerun, on any number of workers or none, computes only the rest.

``workers`` is a number (that many actors on a Ray started here, one torch thread each), an
address string (``"auto"``: the cluster this node joined with ``ray start``; ``"ray://head:10001"``:
Ray Client), or a :class:`Workers` for the rest (threads, GPUs per actor, shard size). A Ray
already initialised in this process (``ray.init(...)``) is used as it is.

An actor checks that the model it loaded has the fingerprint, tokenizer and BOS of ``lm``, so that
no worker scores other weights into ``lm``'s cache: a model built in memory or changed in place
must be saved and loaded from its folder first (:func:`ModelRecipe.of` says so).

>>> Workers.of(2)
Workers(n=2, address=None, threads=1, gpus=None, shard=None, fail_after=None, failure='raise')
>>> Workers.of("auto").address
'auto'
>>> shard_size(100_000, workers=2)
4096
>>> shard_size(10_000, workers=2), shard_size(1_000, workers=2)
(625, 256)
"""

from __future__ import annotations

import logging
import math
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from biasbook.models import LanguageModel, load, problem
from biasbook.scoring.batching import default_batch_tokens
from biasbook.scoring.cache import ScoreCache, Task

#: The pinned Ray of the ``biasbook[ray]`` extra (pyproject.toml and environment.yml).
RAY_VERSION = "2.60.0"
#: Shards per worker when :attr:`Workers.shard` is not given: enough to balance the load and to
#: lose little when a worker dies, few enough that per-shard overhead stays negligible.
SHARDS_PER_WORKER = 8
#: Bounds of the default shard size, in queries: a shard much smaller than a few hundred short
#: sentences fills a forward pass poorly (and shares fewer prefixes).
SHARD_MIN, SHARD_MAX = 256, 4096

#: What the last :func:`run` in this process did: queries scored, shards, forward passes (calls of
#: the model's input embedding, summed over the workers), workers, ``cpu_s`` (the CPU time the
#: workers spent scoring, summed), ``seconds`` from the start of the run to its end and
#: ``first_shard_s`` to the first shard back (the actors' start-up and one shard). For tests and
#: benchmarks.
last_run: dict[str, float] = {}


@dataclass(frozen=True)
class Workers:
    """Where and how to run: ``n`` actors (None: one per GPU of the cluster, else one per
    ``threads`` CPUs), on the Ray at ``address`` (None: a Ray started in this process),
    ``threads`` torch threads per actor, ``gpus`` per actor (None: 1 where the cluster has GPUs,
    else 0), ``shard`` queries per ``map_batches`` batch (None: :func:`shard_size`).
    ``fail_after`` and ``failure`` are for tests: each actor raises (``"raise"``) or its process
    exits (``"exit"``: a killed worker, which Ray restarts; once) after scoring that many
    shards."""

    n: int | None = None
    address: str | None = None
    threads: int = 1
    gpus: float | None = None
    shard: int | None = None
    fail_after: int | None = None
    failure: str = "raise"

    @classmethod
    def of(cls, workers: int | str | Workers) -> Workers:
        """A :class:`Workers` from what ``workers=`` accepts."""
        if isinstance(workers, Workers):
            spec = workers
        elif isinstance(workers, str):
            spec = cls(address=workers)
        elif isinstance(workers, int) and not isinstance(workers, bool):
            spec = cls(n=workers)
        else:
            raise ValueError(f"workers must be a number of workers, a Ray address or a "
                             f"Workers(...); got {workers!r}")
        for name in ("n", "threads", "shard"):
            value = getattr(spec, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ValueError(f"workers: {name} must be a whole number >= 1, got {value!r}")
        if spec.failure not in ("raise", "exit"):
            raise ValueError(f"workers: failure must be 'raise' or 'exit', got {spec.failure!r}")
        if spec.gpus is not None and spec.gpus < 0:
            raise ValueError(f"workers: gpus must be >= 0, got {spec.gpus!r}")
        return spec


@dataclass(frozen=True)
class ModelRecipe:
    """How a worker rebuilds ``lm``: :func:`biasbook.models.load` of ``source`` (a registry name,
    hub id or folder) with this kind and dtype, and what the result must match."""

    source: str
    kind: str
    dtype: str
    fingerprint: str
    tokenizer_key: str
    prefix_ids: tuple[int, ...]

    @classmethod
    def of(cls, lm: LanguageModel) -> ModelRecipe:
        """The recipe of ``lm``, which must have been loaded by name or folder."""
        if found := problem(lm.name):
            raise ValueError(
                f"{lm.name} cannot be rebuilt on a worker ({found}). Workers load a model by "
                "name, never a pickled one: save it with lm.model.save_pretrained(folder) and "
                "lm.tokenizer.save_pretrained(folder), then use biasbook.models.load(folder)")
        lm.check_fingerprint()
        dtype = str(next(lm.model.parameters()).dtype).removeprefix("torch.")
        source = str(Path(lm.name).resolve()) if Path(lm.name).is_dir() else lm.name
        return cls(source, lm.kind, dtype, lm.fingerprint, lm.tokenizer_key, tuple(lm.prefix_ids))

    def load(self, device: str) -> LanguageModel:
        """The model, checked against the driver's: other weights would poison its cache."""
        lm = load(self.source, kind=self.kind, device=device, dtype=getattr(torch, self.dtype))
        found = (lm.fingerprint, lm.tokenizer_key, tuple(lm.prefix_ids))
        wanted = (self.fingerprint, self.tokenizer_key, self.prefix_ids)
        if found != wanted:
            raise RuntimeError(
                f"the worker loaded {self.source} with another fingerprint, tokenizer or BOS "
                f"than the driver's model ({found[0][:12]} vs {wanted[0][:12]}): the driver's "
                "weights were changed after loading (save them and load that folder), or the "
                "nodes hold other files or library versions")
        return lm


#: Runs with fewer uncached queries stay in process under ``BIASBOOK_WORKERS`` (a Ray run costs
#: seconds to start its actors).
ENVIRONMENT_MIN_QUERIES = 2048
_refused: set[str] = set()


def from_environment(lm: LanguageModel, queries: int) -> int | str | None:
    """The workers that ``BIASBOOK_WORKERS`` asks for (a number or an address), so that
    ``biasbook run`` can shard a chapter's scoring without changing its notebooks; None (score in
    this process) when it is unset, for runs of fewer than :data:`ENVIRONMENT_MIN_QUERIES`
    queries, and, with a warning (once per model), for a model that a worker cannot rebuild (one
    built or fine-tuned in memory). An explicit ``workers=`` is used as given instead."""
    value = os.environ.get("BIASBOOK_WORKERS", "").strip()
    if not value or queries < ENVIRONMENT_MIN_QUERIES:
        return None
    if problem(lm.name):
        if lm.name not in _refused:
            _refused.add(lm.name)
            warnings.warn(f"BIASBOOK_WORKERS: {lm.name} cannot be rebuilt on a worker (not a "
                          "registry name, hub id or folder); scoring it in this process",
                          stacklevel=4)
        return None
    return int(value) if value.isdigit() else value


def shard_size(queries: int, workers: int) -> int:
    """Queries per shard: :data:`SHARDS_PER_WORKER` shards per worker, within
    [:data:`SHARD_MIN`, :data:`SHARD_MAX`]."""
    return min(SHARD_MAX, max(SHARD_MIN, math.ceil(queries / (workers * SHARDS_PER_WORKER))))


class WorkerFailure(RuntimeError):
    """Raised by a :class:`Scorer` told to fail (``Workers(fail_after=k)``, for tests)."""


class Scorer:
    """The callable class of ``map_batches``: one model per actor, one shard per call."""

    def __init__(self, recipe: ModelRecipe, task: Task, batch_tokens: int | None,
                 threads: int, fail_after: int | None = None, failure: str = "raise"):
        logging.getLogger("transformers").setLevel(logging.ERROR)
        torch.set_num_threads(threads)
        self.lm = recipe.load("cuda" if torch.cuda.is_available() else "cpu")
        self.engine = task.bind(self.lm)
        self.batch_tokens = batch_tokens or default_batch_tokens(self.lm.device)
        self.fail_after, self.failure, self.shards, self.forwards = fail_after, failure, 0, 0
        self.lm.model.get_input_embeddings().register_forward_hook(self._count)

    def _count(self, *_) -> None:
        """A forward hook on the input embedding: one more forward pass."""
        self.forwards += 1

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self.fail_after is not None and self.shards >= self.fail_after:
            if self.failure == "raise":
                raise WorkerFailure(f"worker {os.getpid()} stops after {self.shards} shard(s), "
                                    "as told (Workers.fail_after)")
            import ray

            if not ray.get_runtime_context().was_current_actor_reconstructed:
                os._exit(1)  # killed once: no exception, no clean-up; Ray restarts it
        queries = [str(q) for q in batch["query"]]
        values: list[np.ndarray | None] = [None] * len(queries)
        before, cpu = self.forwards, time.process_time()
        with torch.inference_mode():
            for indices, arrays in self.engine(queries, self.batch_tokens):
                for i, array in zip(indices, arrays, strict=True):
                    values[i] = np.ascontiguousarray(array)
        self.shards += 1
        forwards, cpu_s = np.zeros(len(queries), dtype=np.int64), np.zeros(len(queries))
        forwards[0], cpu_s[0] = self.forwards - before, time.process_time() - cpu
        return {"query": np.array(queries, dtype=object),
                "value": np.array([v.tobytes() for v in values], dtype=object),
                "dtype": np.array([v.dtype.str for v in values], dtype=object),
                "forwards": forwards, "cpu_s": cpu_s}


def run(lm: LanguageModel, key: str, todo: list[str], task: Task, workers, *,
        store: ScoreCache | None, batch_tokens: int | None, progress: bool | None,
        desc: str) -> dict[str, np.ndarray]:
    """Score ``todo`` (distinct queries) with ``task`` on Ray workers, storing each returned shard
    under ``key`` in ``store``; the arrays of ``todo``, as the in-process engine returns them."""
    spec = Workers.of(workers)
    recipe = ModelRecipe.of(lm)
    ray = connect(spec)
    resources = ray.cluster_resources()
    gpus = spec.gpus if spec.gpus is not None else (1.0 if resources.get("GPU", 0) else 0.0)
    n = spec.n or max(1, int(resources.get("GPU", 0) // gpus) if gpus else
                      int(resources.get("CPU", 1) // spec.threads))
    shard = spec.shard or shard_size(len(todo), n)
    dataset = ray.data.from_items([{"query": q} for q in todo],
                                  override_num_blocks=math.ceil(len(todo) / shard))
    scored = dataset.map_batches(
        Scorer, batch_size=shard, batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=n), num_cpus=spec.threads,
        num_gpus=gpus, fn_constructor_kwargs=dict(recipe=recipe, task=task,
                                                  batch_tokens=batch_tokens,
                                                  threads=spec.threads,
                                                  fail_after=spec.fail_after,
                                                  failure=spec.failure))
    values: dict[str, np.ndarray] = {}
    last_run.clear()
    last_run.update(queries=0, shards=0, forwards=0, workers=n, cpu_s=0.0)
    start = time.perf_counter()
    show = len(todo) >= 256 if progress is None else progress
    with tqdm(total=len(todo), desc=f"{desc} ({n} workers)", unit="query", disable=not show,
              leave=False) as bar:
        # the scored blocks, streamed to this process as the workers finish them
        for block in scored.iter_batches(batch_size=None, batch_format="numpy",
                                         prefetch_batches=0):
            batch = {str(q): np.frombuffer(v, dtype=np.dtype(d)).copy()
                     for q, v, d in zip(block["query"], block["value"], block["dtype"],
                                        strict=True)}
            if store:
                store.put(key, batch)
            values.update(batch)
            last_run["queries"] += len(batch)
            last_run["forwards"] += int(block["forwards"].sum())
            last_run["cpu_s"] += float(block["cpu_s"].sum())
            last_run["shards"] += int(np.count_nonzero(block["forwards"]))
            last_run.setdefault("first_shard_s", time.perf_counter() - start)
            bar.update(len(batch))
    last_run["seconds"] = time.perf_counter() - start
    if len(values) != len(todo):
        raise RuntimeError(f"{desc}: the workers returned {len(values)} of {len(todo)} queries")
    return values


#: Tries to start a local Ray: its raylet must register within 30 s (fixed in Ray), which a
#: heavily loaded machine can miss.
START_TRIES = 3


def _start_local(ray, cpus: int) -> None:
    for attempt in range(1, START_TRIES + 1):
        try:
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
            return
        except Exception as err:  # Ray raises a bare Exception for a start-up time-out
            ray.shutdown()
            if "timed out during startup" not in str(err) or attempt == START_TRIES:
                raise
            warnings.warn(f"Ray did not start in time (try {attempt} of {START_TRIES}; a busy "
                          "machine?): trying again", stacklevel=4)


def connect(workers: int | str | Workers = 1):
    """The ``ray`` module, initialised: the Ray already running in this process, the cluster at
    the address of ``workers``, or a new local Ray with room for its actors (a local start takes
    seconds; scoring calls it themselves, so call it only to start Ray ahead of them)."""
    spec = Workers.of(workers)
    try:
        import ray
        import ray.data
    except ImportError as err:
        raise ImportError(f"workers= needs Ray: pip install 'biasbook[ray]' (ray[data]=="
                          f"{RAY_VERSION}); leave workers=None to score in this process"
                          ) from err
    if not ray.is_initialized():
        if spec.address is not None:
            ray.init(address=spec.address, log_to_driver=False)
        else:
            _start_local(ray, max(os.cpu_count() or 1, (spec.n or 1) * spec.threads))
    ray.data.DataContext.get_current().enable_progress_bars = False
    for name in ("ray.data", "ray"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return ray
