"""Independent, cached jobs shared among worker processes.

Some loops run one job per core at best: a GloVe fit (its numba step is serial) or a small LSTM
(one torch thread trains it as fast as two). On two cores such a loop finishes sooner as
processes. :func:`in_processes` runs ``fn(*job)`` for every job in ``workers`` spawned processes.
Each job stores what it computes in the content-keyed cache (:mod:`biasbook.store`), and the
caller then runs its ordinary loop, which reads every result back. So one code path computes,
in one process or several. A result does not depend on which process made it (a job depends on
its own arguments and seed only), and an interrupted loop resumes from what the cache holds.

With ``workers=1`` the jobs run here, in order:

>>> in_processes(pow, [(2, 3), (3, 2)], workers=1, progress=False)
[8, 9]
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed

from tqdm.auto import tqdm


def in_processes(fn: Callable, jobs: Iterable[tuple], workers: int, *,
                 torch_threads: int | None = None, desc: str = "jobs",
                 progress: bool = True) -> list:
    """``[fn(*job) for job in jobs]``, computed by ``workers`` spawned processes (module
    docstring); ``fn`` and the jobs must pickle. ``torch_threads`` sets each worker's torch
    intra-op threads (the same count as this process gives the same arithmetic). The first job
    to fail stops the rest and raises here.
    """
    jobs = [tuple(job) for job in jobs]
    if workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if workers == 1 or len(jobs) <= 1:
        return [fn(*job) for job in tqdm(jobs, desc=desc, disable=not progress)]
    workers = min(workers, len(jobs))
    # spawn, not fork: a notebook kernel has threads, and a forked copy of them can deadlock
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_set_threads, initargs=(torch_threads,)) as pool:
        futures = [pool.submit(fn, *job) for job in jobs]
        for future in tqdm(as_completed(futures), total=len(futures),
                           desc=f"{desc} ({workers} processes)", disable=not progress):
            if future.exception() is not None:
                pool.shutdown(cancel_futures=True)
                raise future.exception()
        return [future.result() for future in futures]


def _set_threads(n: int | None) -> None:
    if n is not None:
        import torch

        torch.set_num_threads(n)
