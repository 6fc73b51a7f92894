"""Benchmark: our GloVe trainer vs mittens 0.2 (NumPy GloVe) on one shared matrix.

Part 1: both train on the same co-occurrence matrix (the most frequent ``--words`` words of a UN
General Debates sample; mittens needs it dense, so at most ~5k words) for the same number of
epochs, single-threaded (BLAS limited to one thread for mittens). Reported: seconds per epoch
(ours: median over epochs, with the first epoch, which includes numba's compilation when its
on-disk cache is cold, shown apart) and the final GloVe objective J of both, computed by the same
function on their final parameters, for both of our backends (the numba CPU loop, the default,
and the torch step on the CPU). mittens makes one full-batch AdaGrad step per epoch; ours makes
one per mini-batch, which is why its loss falls faster per epoch.

Part 2: our trainer alone on a vocabulary of at least ``--large-words`` words (UN speeches + IMDB
reviews), a size mittens cannot hold in memory (dense V x V float64 arrays).

    python benchmarks/bench_glove.py [--speeches 300] [--words 5000] [--epochs 5] [--dim 50]
                                     [--large-words 50000] [--large-epochs 2]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from biasbook.embeddings import glove
from biasbook.text import corpora
from biasbook.text.word_context import word_context_matrix


def un_matrix(speeches: int, words: int, imdb: int = 0):
    docs = list(corpora.un_debate_speeches(speeches).values())
    if imdb:
        docs += list(corpora.imdb_reviews(imdb).values())
    sentences = (s for d in docs for s in corpora.split_sentences(d))
    return word_context_matrix(sentences, max_vocab=words)


@contextlib.contextmanager
def torch_threads(n: int):
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def run_mittens(dense: np.ndarray, dim: int, epochs: int, lr: float):
    from mittens import GloVe

    model = GloVe(n=dim, max_iter=epochs, learning_rate=lr, display_progress=0)
    with threadpool_limits(limits=1):
        start = time.perf_counter()
        model.fit(dense)
        seconds = time.perf_counter() - start
    return seconds / epochs, model


def run_ours(m, dim: int, epochs: int, lr: float, batch: int, backend: str):
    with threadpool_limits(limits=1), torch_threads(1):
        fit = glove.train(m, dim=dim, epochs=epochs, lr=lr, batch_size=batch, backend=backend,
                          cache=False, progress=False)
    steady = fit.seconds[1:] if len(fit.seconds) > 1 else fit.seconds
    return statistics.median(steady), fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeches", type=int, default=300)
    parser.add_argument("--words", type=int, default=5000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=1 << 16)
    parser.add_argument("--large-words", type=int, default=50000)
    parser.add_argument("--large-speeches", type=int, default=8000)
    parser.add_argument("--large-imdb", type=int, default=50000)
    parser.add_argument("--large-epochs", type=int, default=2)
    args = parser.parse_args()

    m = un_matrix(args.speeches, args.words)
    n = len(m)
    print(f"shared matrix: {n:,} words from {args.speeches} UN speeches "
          f"({m.params['n_tokens']:,} tokens), {m.nnz:,} non-zeros "
          f"(density {m.nnz / n**2:.1%}); dim {args.dim}, {args.epochs} epochs, lr {args.lr}, "
          f"one thread each")
    mit_epoch, model = run_mittens(m.total.toarray(), args.dim, args.epochs, args.lr)
    mit_loss = glove.objective(m.total, model.W, model.C, model.bw.ravel(), model.bc.ravel())
    print(f"mittens 0.2 (NumPy, full batch):  {mit_epoch:8.2f} s/epoch, final J = {mit_loss:,.0f}")
    for backend in ("numba", "torch"):
        ours_epoch, fit = run_ours(m, args.dim, args.epochs, args.lr, args.batch, backend)
        loss = glove.objective(m.total, **fit.params)
        print(f"ours ({backend}, batch {args.batch:,}): {ours_epoch:8.2f} s/epoch "
              f"(first epoch {fit.seconds[0]:.2f} s), final J = {loss:,.0f}; "
              f"{mit_epoch / ours_epoch:.1f}x faster per epoch (goal >= 10x), "
              f"loss {'<=' if loss <= mit_loss else '>'} mittens'")

    big = un_matrix(args.large_speeches, None, args.large_imdb)
    if len(big) < args.large_words:
        print(f"note: only {len(big):,} words reach the minimum count")
    print(f"large matrix: {len(big):,} words ({big.params['n_tokens']:,} tokens of UN speeches "
          f"and IMDB reviews), {big.nnz:,} non-zeros; mittens would need "
          f"{len(big) ** 2 * 8 * 6 / 2**30:,.0f} GiB for its dense arrays")
    epoch, fit = run_ours(big, args.dim, args.large_epochs, args.lr, args.batch, "numba")
    print(f"ours (numba): {epoch:.1f} s/epoch (first {fit.seconds[0]:.1f} s), "
          f"J per epoch {[round(x) for x in fit.losses]}")


if __name__ == "__main__":
    main()
