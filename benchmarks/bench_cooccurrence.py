"""Benchmark: vectorised co-occurrence counting vs a pure-Python n-gram loop like the authors'.

Both count in ``mode="as-coded"`` (Bordia & Bowman's ``fixed_context_bias_score.py``: every token
of an n-gram whose near-centre token is gendered gets +1, or beta**distance for the infinite
context), in the same run, on the same tokens, and must give the same counts. The baseline keeps
the authors' structure (n-gram loop, inner loop over the n-gram, dict of dicts) but looks gendered
words up in sets, not lists, so that it is not slower than it needs to be.

    python benchmarks/bench_cooccurrence.py [--corpus ptb] [--path FILE] [--naive-tokens N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from timing import best_time

from biasbook import datafiles
from biasbook.text.cooccurrence import count_cooccurrences, gendered_words
from biasbook.text.corpora import read_tokens

FILES = {"ptb": ["ptb.train.txt"], "wikitext-2": ["valid.txt", "test.txt"]}


def corpus_paths(corpus: str, path: str | None) -> list[Path]:
    """``--path`` if given, else the files from the project's resource registry."""
    if path:
        return [Path(path)]
    try:
        from biasbook.resources import path as resource_path
    except ImportError as err:
        raise SystemExit("biasbook.resources is not available: pass --path FILE") from err
    return [resource_path(corpus, name) for name in FILES[corpus]]


def naive_counts(tokens, male, female, n, beta=None):
    """The authors' loop over n-grams (``nltk.ngrams`` replaced by ``zip``)."""
    data = {}
    centre = int((n + 1) / 2) - 2
    for grams in zip(*(tokens[i:] for i in range(n)), strict=False):
        pos = 1
        for w in grams:
            pos += 1
            if w not in data:
                data[w] = {"m": 0, "f": 0}
            if pos == int((n + 1) / 2):
                for gender, words in (("m", male), ("f", female)):
                    if w in words:
                        for j, t in enumerate(grams):
                            if t not in data:
                                data[t] = {"m": 0, "f": 0}
                            data[t][gender] += 1 if beta is None else beta ** abs(j - centre)
    return data


def compare(co, naive) -> float:
    """Largest absolute difference between the two count tables over all word types."""
    got = dict(zip(co.words.tolist(), zip(co.male, co.female, strict=True), strict=True))
    words = set(got) | set(naive)
    worst = 0.0
    for w in words:
        m, f = got.get(w, (0.0, 0.0))
        ref = naive.get(w, {"m": 0, "f": 0})
        worst = max(worst, abs(m - ref["m"]), abs(f - ref["f"]))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="ptb", choices=sorted(FILES))
    parser.add_argument("--path", help="corpus file (default: the resource registry's)")
    parser.add_argument("--context", default="fixed", choices=["fixed", "infinite"])
    parser.add_argument("--window", type=int, default=10, help="words each side (n = 2w + 1)")
    parser.add_argument(
        "--naive-tokens", type=int, default=None, help="time the naive loop on this prefix only"
    )
    parser.add_argument("--repeat", type=int, default=3, help="best of N for the vectorised code")
    args = parser.parse_args()

    paths = corpus_paths(args.corpus, args.path)
    tokens = [t for p in paths for t in read_tokens(p)]
    # the chapter's Appendix A pairs as printed: the side a swapped pair falls on changes no work
    male, female = gendered_words(datafiles.load("lm-gender-bias", args.corpus)["pairs"])
    n, beta = 2 * args.window + 1, (0.95 if args.context == "infinite" else None)
    prefix = tokens[: args.naive_tokens] if args.naive_tokens else tokens

    def vectorised(toks):
        return count_cooccurrences(
            [toks], male, female, context=args.context, window=args.window, mode="as-coded"
        )

    vec_full, co_full = best_time(lambda: vectorised(tokens), args.repeat)
    naive_time, naive = best_time(lambda: naive_counts(prefix, male, female, n, beta), 1)
    co_prefix = co_full if prefix is tokens else vectorised(prefix)
    worst = compare(co_prefix, naive)
    naive_full = naive_time * len(tokens) / len(prefix)  # the loop is linear in tokens

    print(f"corpus: {', '.join(map(str, paths))} ({len(tokens):,} tokens)")
    print(f"as-coded {args.context} context, window {args.window} (n-grams of {n} tokens)")
    print(f"vectorised, full corpus:  {vec_full:8.3f} s (best of {args.repeat})")
    if prefix is tokens:
        print(f"naive loop, full corpus:  {naive_time:8.3f} s")
    else:
        print(
            f"naive loop, {len(prefix):,}-token prefix: {naive_time:.3f} s; "
            f"extrapolated linearly to the full corpus: {naive_full:.3f} s"
        )
    print(f"speed-up: {naive_full / vec_full:.1f}x (goal >= 20x)")
    exact = args.context == "fixed"
    same = worst == 0 if exact else worst <= 1e-9 * max(1.0, float(np.max(co_prefix.male)))
    check = "identical" if exact else "equal to float rounding"
    print(f"counts {check} on {len(prefix):,} tokens: {same} (max |difference| {worst:.3g})")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
