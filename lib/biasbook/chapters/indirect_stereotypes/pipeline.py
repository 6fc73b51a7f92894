"""Original / BIRM / CDS: co-occurrence matrices and GloVe vectors, cached by content.

- :func:`matrices` counts the Original matrix (with BIRM's near-marker statistics), derives the
  BIRM matrix from it (Eq. 3) and counts the CDS matrix on the substituted corpus. Each is stored
  under a key made of the corpus sample, the counting parameters, the method and
  :data:`MATRIX_VERSION`; the corpus is read and tokenised only when a matrix is missing.
- :func:`vectors` trains GloVe for every method and seed through
  :func:`biasbook.embeddings.glove.train`, which caches by matrix hash and resumes per epoch.
- :func:`loss_curves` tabulates GloVe's objective per epoch and how much it still falls;
  :func:`learning_rates` trains one matrix at several learning rates to compare their curves
  (notebook 02 chooses the profile's learning rate and epochs from them).

The paper trains CDS on a new substitution of the corpus; here one substitution (``corpus
seed``) serves every GloVe seed, so the spread over seeds is GloVe's alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from biasbook import store
from biasbook.embeddings import glove
from biasbook.mitigation.birm import FEMININE, MASCULINE, birm
from biasbook.processes import in_processes
from biasbook.text.word_context import WordContextMatrix, word_context_matrix

from .corpus import cds_documents, cds_pairs, documents, sentences

MATRIX_VERSION = 1  # bump when counting, BIRM or CDS change what a matrix holds
CDS_VERSION = 2  # CDS's matrix alone: 2 = her/his resolved by the noun-phrase rule (issue 28)
METHODS = ("original", "birm", "cds")
LABELS = {"original": "Original", "birm": "BIRM (proposed)", "cds": "CDS"}
KIND = "indirect-stereotypes-matrix"


def matrix_key(corpus: dict, matrix: dict, method: str, birm_options: dict) -> str:
    """The cache key of one method's matrix.

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.
    """
    extra = {"birm": birm_options} if method == "birm" else {}
    if method == "cds":
        extra = {"cds_pairs": cds_pairs(), "cds_version": CDS_VERSION}
    return store.content_key(KIND, MATRIX_VERSION, corpus, matrix, method, extra,
                             [MASCULINE, FEMININE])


def matrices(corpus: dict, matrix: dict, birm_options: dict, *, methods: Iterable[str] = METHODS,
             progress: bool = True) -> dict[str, WordContextMatrix]:
    """``{method: matrix}`` for the corpus ``corpus`` (see :func:`.corpus.documents`), counted
    with ``matrix`` (keyword arguments of
    :func:`~biasbook.text.word_context.word_context_matrix`) and BIRM options ``birm_options``.

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.
    """
    docs = functools.cache(lambda: documents(corpus))

    def cached(method, compute):
        key = matrix_key(corpus, matrix, method, birm_options)
        return WordContextMatrix.from_arrays(
            store.cached_arrays(KIND, key, lambda: compute().to_arrays()))

    def original():
        return word_context_matrix(sentences(docs()), markers=(MASCULINE, FEMININE),
                                   progress=progress, **matrix)

    def proposed():
        result = birm(cached("original", original), **birm_options)
        m = result.matrix
        return WordContextMatrix(m.vocab, m.counts, m.total, {},
                                 {**m.params, "birm_summary": result.summary,
                                  "birm_dropped": result.dropped})

    def substituted():
        return word_context_matrix(sentences(cds_documents(docs(), corpus.get("seed", 0))),
                                   progress=progress, **matrix)

    build = {"original": original, "birm": proposed, "cds": substituted}
    return {m: cached(m, build[m]) for m in methods}


def vectors(mats: dict[str, WordContextMatrix], glove_options: dict, seeds: Iterable[int], *,
            workers: int = 1, spec: tuple[dict, dict, dict] | None = None,
            progress: bool = True) -> dict[tuple[str, int], glove.GloveFit]:
    """GloVe fits ``{(method, seed): fit}`` for every matrix and seed (cached).

    Used in: indirect-stereotypes/02, indirect-stereotypes/03.

    GloVe's CPU step runs on one core. With ``workers > 1`` the runs are shared among that many
    processes, each reading its matrix back from the cache; ``spec`` is the ``(corpus, matrix,
    birm_options)`` that :func:`matrices` counted them with. Every run is the same as on one
    core (a run depends on its seed only), and is then read back from the cache here.
    """
    seeds = list(seeds)
    jobs = [(method, seed) for method in mats for seed in seeds]
    if workers > 1 and len(jobs) > 1:
        if spec is None:
            raise ValueError("workers > 1 needs spec=(corpus, matrix, birm_options), with which "
                             "the workers read the matrices back from the cache")
        in_processes(_train_one, [(spec, method, seed, glove_options) for method, seed in jobs],
                     workers, desc="GloVe runs", progress=progress)
    return {(method, seed): glove.train(mats[method], seed=seed, progress=progress,
                                        **glove_options) for method, seed in jobs}


def _train_one(spec: tuple[dict, dict, dict], method: str, seed: int, glove_options: dict) -> None:
    """One GloVe run in a worker process: the matrix from the cache, the result into it. The
    worker keeps its last matrix: it often trains the next seed of the same one."""
    key = (store.content_key(*spec), method)
    if key not in _WORKER_MATRIX:
        _WORKER_MATRIX.clear()
        corpus, matrix, birm_options = spec
        _WORKER_MATRIX[key] = matrices(corpus, matrix, birm_options, methods=[method],
                                       progress=False)[method]
    glove.train(_WORKER_MATRIX[key], seed=seed, progress=False, **glove_options)


_WORKER_MATRIX: dict[tuple[str, str], WordContextMatrix] = {}


def loss_curves(fits: Mapping[tuple[str, int], glove.GloveFit]) -> pd.DataFrame:
    """One row per (method, seed, epoch): GloVe's J and how much it fell in that epoch, in % of
    the previous epoch's J (``drop_pct``, NaN for the first epoch).

    Used in: indirect-stereotypes/02.

    >>> from types import SimpleNamespace
    >>> curves = loss_curves({("birm", 0): SimpleNamespace(losses=[200.0, 150.0, 147.0])})
    >>> curves[["method", "epoch", "J", "drop_pct"]].values.tolist()[1:]
    [['BIRM (proposed)', 2, 150.0, 25.0], ['BIRM (proposed)', 3, 147.0, 2.0]]
    """
    frames = []
    for (method, seed), fit in fits.items():
        j = np.asarray(fit.losses, dtype=float)
        drop = np.concatenate([[np.nan], 100 * (j[:-1] - j[1:]) / j[:-1]])
        frames.append(pd.DataFrame({"method": LABELS.get(method, method), "seed": seed,
                                    "epoch": np.arange(1, len(j) + 1), "J": j,
                                    "drop_pct": drop}))
    return pd.concat(frames, ignore_index=True)


def learning_rates(matrix: WordContextMatrix, glove_options: dict, lrs: Sequence[float], *,
                   epochs: int, seed: int = 0,
                   progress: bool = True) -> dict[tuple[str, int], glove.GloveFit]:
    """GloVe on ``matrix`` at each learning rate in ``lrs`` (the other options as
    ``glove_options``, ``epochs`` epochs, one seed), keyed ``(f"lr {lr}", seed)`` for
    :func:`loss_curves`. Cached like every training: the profile's own setting costs nothing
    when notebook 02 has trained it already.

    Used in: indirect-stereotypes/02.
    """
    return {(f"lr {lr:g}", seed): glove.train(matrix, seed=seed, progress=progress,
                                              **{**glove_options, "lr": lr, "epochs": epochs})
            for lr in lrs}
