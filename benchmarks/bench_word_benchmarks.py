"""Benchmark: blocked-matrix 3CosAdd analogies vs gensim's per-question ``most_similar`` loop.

Both score the same Google analogy questions on the same vectors (the first ``--vocab`` words of
GloVe 6B 50d, lower-cased questions, questions with a missing word skipped, the three question
words excluded from the answers) and must agree on the accuracy. gensim's
``KeyedVectors.evaluate_word_analogies`` is the reference: one matrix-vector product per question.
The run also times the whole :func:`biasbook.embeddings.benchmarks.evaluate` suite.

    python benchmarks/bench_word_benchmarks.py [--vocab 50000] [--questions 3000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from biasbook.embeddings import benchmarks, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--questions", type=int, default=3000,
                        help="Google questions timed (both methods see the same ones)")
    args = parser.parse_args()

    glove = vectors.load("glove-6b-50d")
    kv = vectors.from_arrays(glove.index_to_key[:args.vocab], glove.vectors[:args.vocab])
    (questions,) = benchmarks.items("Google")
    questions = questions[:args.questions]

    start = time.perf_counter()
    ours, used, n_oov = benchmarks.analogy_accuracy(kv, questions, oov="drop", lowercase=True)
    t_ours = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions-words.txt"
        path.write_text(": google\n" + "\n".join(" ".join(q) for q in questions) + "\n")
        start = time.perf_counter()
        reference, _ = kv.evaluate_word_analogies(str(path), restrict_vocab=args.vocab,
                                                  case_insensitive=True)
        t_ref = time.perf_counter() - start

    print(f"vocabulary {len(kv):,} x {kv.vector_size}; {used:,} questions scored, "
          f"{n_oov:,} with a missing word")
    print(f"accuracy: blocked 3CosAdd {ours:.4f}, gensim loop {reference:.4f}")
    print(f"time: blocked {t_ours:.2f} s, gensim loop {t_ref:.2f} s, "
          f"ratio {t_ref / t_ours:.1f}x")
    if abs(ours - reference) > 1e-9:
        raise SystemExit("the two methods disagree")

    start = time.perf_counter()
    table = benchmarks.evaluate(kv)
    print(f"\nfull suite ({len(table)} benchmarks) in {time.perf_counter() - start:.1f} s")
    print(table.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
