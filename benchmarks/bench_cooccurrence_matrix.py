"""Benchmark: the vectorised word–context matrix builder vs a naive Python dict counter.

Both do the same job on the same sentences, in the same run: drop sentences under five tokens,
keep words seen at least five times, count every pair within 15 words inside a sentence in both
directions with GloVe's 1/d weight, and, for BIRM, the weight of each occurrence in the events X,
Y and X∩Y (a marker word within the window of either word of the pair, half weight when near one
word only). The counts must agree to float rounding. The naive counter runs on a prefix of the
corpus (it is linear in tokens) and is also extrapolated to the whole sample.

    python benchmarks/bench_cooccurrence_matrix.py [--speeches 300] [--naive-tokens 300000]
                                                   [--repeat 3]
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

import numpy as np
from timing import best_time

from biasbook.mitigation.birm import FEMININE, MASCULINE
from biasbook.text import corpora
from biasbook.text.word_context import word_context_matrix

WINDOW, MIN_COUNT, MIN_LENGTH = 15, 5, 5


def naive_matrix(sentences, xs, ys):
    """Dicts keyed by (a, b): total, x, y, xy — loops over tokens and offsets in plain Python."""
    sentences = [[t.lower() for t in s] for s in sentences if len(s) >= MIN_LENGTH]
    freq = Counter(t for s in sentences for t in s)
    xs, ys = set(xs), set(ys)
    out = {k: defaultdict(float) for k in ("total", "x", "y", "xy")}
    total, cx, cy, cxy = out["total"], out["x"], out["y"], out["xy"]
    for s in sentences:
        s = [t for t in s if freq[t] >= MIN_COUNT]
        n = len(s)
        near_x = [any(s[k] in xs for k in range(max(0, i - WINDOW), min(n, i + WINDOW + 1)))
                  for i in range(n)]
        near_y = [any(s[k] in ys for k in range(max(0, i - WINDOW), min(n, i + WINDOW + 1)))
                  for i in range(n)]
        for i in range(n):
            a = s[i]
            for j in range(i + 1, min(n, i + WINDOW + 1)):
                b, w = s[j], 1.0 / (j - i)
                total[a, b] += w
                total[b, a] += w
                x = (near_x[i] + near_x[j]) / 2
                y = (near_y[i] + near_y[j]) / 2
                if x or y:
                    xy = ((near_x[i] and near_y[i]) + (near_x[j] and near_y[j])) / 2
                    for table, v in ((cx, x), (cy, y), (cxy, xy)):
                        if v:
                            table[a, b] += w * v
                            table[b, a] += w * v
    return out


def largest_difference(m, naive) -> float:
    idx = m.index()
    worst = 0.0
    for name, table in naive.items():
        mat = (m.total if name == "total" else m.near[name]).tocoo()
        got = {(int(r), int(c)): v for r, c, v in zip(mat.row, mat.col, mat.data, strict=True)}
        want = {(idx[a], idx[b]): v for (a, b), v in table.items()}
        for key in got.keys() | want.keys():
            worst = max(worst, abs(got.get(key, 0.0) - want.get(key, 0.0)))
    return worst


def un_sentences(n_speeches: int) -> list[list[str]]:
    return [s for doc in corpora.un_debate_speeches(n_speeches).values()
            for s in corpora.split_sentences(doc)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeches", type=int, default=300, help="UN General Debate speeches")
    parser.add_argument("--naive-tokens", type=int, default=300_000,
                        help="tokens of the sample the naive counter runs on")
    parser.add_argument("--repeat", type=int, default=3,
                        help="best of N for the vectorised builder (the naive one runs once)")
    args = parser.parse_args()

    sentences = un_sentences(args.speeches)
    n_tokens = sum(len(s) for s in sentences)
    prefix, taken = [], 0
    for s in sentences:
        if taken >= args.naive_tokens:
            break
        prefix.append(s)
        taken += len(s)

    def build(sents):
        return word_context_matrix(sents, window=WINDOW, min_count=MIN_COUNT,
                                   min_sentence_length=MIN_LENGTH,
                                   markers=(MASCULINE, FEMININE))

    fast_full, m_full = best_time(lambda: build(sentences), args.repeat)
    fast_prefix, m_prefix = best_time(lambda: build(prefix), args.repeat)
    naive_prefix, naive = best_time(lambda: naive_matrix(prefix, MASCULINE, FEMININE))
    worst = largest_difference(m_prefix, naive)
    scale = float(np.max(m_prefix.total.data))

    print(f"UN General Debates sample: {args.speeches} speeches, {len(sentences):,} sentences, "
          f"{n_tokens:,} tokens; vocabulary {len(m_full):,} words, {m_full.nnz:,} non-zeros")
    print(f"window {WINDOW}, min count {MIN_COUNT}, 1/d weighting, BIRM statistics for "
          f"|X| = |Y| = {len(MASCULINE)}")
    print(f"vectorised (best of {args.repeat}), {n_tokens:,} tokens: {fast_full:7.2f} s = "
          f"{n_tokens / fast_full:,.0f} tokens/s")
    print(f"vectorised, {taken:,}-token prefix: {fast_prefix:7.2f} s = "
          f"{taken / fast_prefix:,.0f} tokens/s")
    print(f"naive dict counter, same prefix: {naive_prefix:7.2f} s = "
          f"{taken / naive_prefix:,.0f} tokens/s")
    print(f"speed-up on the same tokens: {naive_prefix / fast_prefix:.1f}x; "
          f"whole sample, naive extrapolated linearly: "
          f"{naive_prefix * n_tokens / taken / fast_full:.1f}x (goal >= 20x)")
    same = worst <= 1e-9 * scale
    print(f"counts equal to float rounding: {same} (max |difference| {worst:.3g})")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
