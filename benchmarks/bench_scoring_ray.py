"""Benchmark: scoring on 2 Ray workers x 1 thread vs 1 Ray worker x 1 thread, on HERB's workload.

Workload as in ``bench_scoring.py``: "People in {region} are {description}." for ``--regions``
countries x HERB's 112 descriptors, scored with ``clm`` (``--model``, default SmolLM2-135M, which
the workers load by its registry name). In one run, on one local Ray: the in-process engine on one
thread (the reference, and the scores every Ray run must match), then 1 worker and 2 workers, each
over the same sentences and shards (``--shard``) with no cache (``--repeats`` alternates them, so
that a change of the machine's load hits both alike). Each Ray run's time includes its actors'
start-up (a process importing torch and loading the model) and is also given *steady*: from the
first shard back to the last, the rate once every actor is loaded. The load average is printed with
the result: on a machine shared with other work the speed-up measures the CPU share Ray's processes
got, so the workers' CPU time per sentence is printed too (sharding adds no work if it is equal).

    python benchmarks/bench_scoring_ray.py [--regions 60] [--model smollm2-135m] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from bench_scoring import descriptors, regions

from biasbook.models import load
from biasbook.scoring import distributed, score_sentences
from biasbook.scoring.distributed import Workers


def in_process(lm, sentences: list[str]) -> tuple[float, np.ndarray]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        means = score_sentences(lm, sentences, cache=False, progress=False).mean
        return time.perf_counter() - start, means
    finally:
        torch.set_num_threads(before)


def on_ray(lm, sentences: list[str], n: int, shard: int) -> tuple[dict, np.ndarray]:
    means = score_sentences(lm, sentences, cache=False, progress=False,
                            workers=Workers(n=n, threads=1, shard=shard)).mean
    return dict(distributed.last_run), means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--regions", type=int, default=60)
    parser.add_argument("--shard", type=int, default=448,
                        help="sentences per shard, the same for 1 and 2 workers (448: 4 regions)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="rounds of 1 worker, 2 workers (the best of each is reported)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    lm = load(args.model, device="cpu")
    sentences = [f"People in {r} are {w}." for r in regions(args.regions) for w in descriptors()]
    load_start = os.getloadavg()
    distributed.connect(Workers(n=2))  # Ray's own start is not timed
    reference_s, reference = in_process(lm, sentences)
    runs: dict[int, list[dict]] = {1: [], 2: []}
    difference = 0.0
    for _ in range(args.repeats):
        for n in (1, 2):
            stats, means = on_ray(lm, sentences, n, args.shard)
            runs[n].append(stats)
            difference = max(difference, float(np.max(np.abs(means - reference)
                                                      / np.abs(reference))))
    load_end = os.getloadavg()
    best = {n: min(r, key=lambda s: s["seconds"]) for n, r in runs.items()}
    steady = {n: min((s["seconds"] - s["first_shard_s"]) / (s["queries"] - s["queries"] /
                                                          s["shards"]) for s in r)
              for n, r in runs.items()}  # seconds per sentence after the first shard
    print(f"{lm.name}: {len(sentences)} sentences ({args.regions} regions x "
          f"{len(descriptors())} descriptors), clm; {os.cpu_count()} CPUs; load average "
          f"{load_start[0]:.1f} / {load_start[1]:.1f} / {load_start[2]:.1f} (1/5/15 min) before, "
          f"{load_end[0]:.1f} / {load_end[1]:.1f} / {load_end[2]:.1f} after")
    print(f"  in process, 1 thread:  {len(sentences) / reference_s:7.1f} sent/s "
          f"({reference_s:.1f} s)")
    for n in (1, 2):
        s = best[n]
        print(f"  Ray, {n} worker(s) x 1 thread: {len(sentences) / s['seconds']:7.1f} sent/s "
              f"({s['seconds']:.1f} s, of which {s['first_shard_s']:.1f} s to the first shard; "
              f"{s['shards']} shards), steady {1 / steady[n]:7.1f} sent/s")
    cpu = {n: min(s["cpu_s"] / s["queries"] for s in r) * 1000 for n, r in runs.items()}
    print(f"  CPU time of the workers' scoring per 1,000 sentences: 1 worker {cpu[1]:.2f} s, "
          f"2 workers {cpu[2]:.2f} s (equal: sharding adds no work; a core per worker would give "
          f"close to 2x)")
    print(f"  speed-up of 2 workers over 1: {best[1]['seconds'] / best[2]['seconds']:.2f}x "
          f"end to end, {steady[1] / steady[2]:.2f}x steady; max relative difference of the "
          f"means from the in-process engine {difference:.1e}")


if __name__ == "__main__":
    main()
