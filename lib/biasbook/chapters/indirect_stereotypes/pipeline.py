"""Original / BIRM / CDS: co-occurrence matrices and GloVe vectors, cached by content.

- :func:`matrices` counts the Original matrix (with BIRM's near-marker statistics), derives the
  BIRM matrix from it (Eq. 3) and counts the CDS matrix on the substituted corpus. Each is stored
  under a key made of the corpus sample, the counting parameters, the method and
  :data:`MATRIX_VERSION`; the corpus is read and tokenised only when a matrix is missing.
- :func:`vectors` trains GloVe for every method and seed through
  :func:`biasbook.embeddings.glove.train`, which caches by matrix hash and resumes per epoch.

The paper trains CDS on a new substitution of the corpus; here one substitution (``corpus
seed``) serves every GloVe seed, so the spread over seeds is GloVe's alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from biasbook import store
from biasbook.embeddings import glove
from biasbook.mitigation.birm import FEMININE, MASCULINE, birm
from biasbook.text.cooccurrence import WordContextMatrix, word_context_matrix

from .corpus import cds_documents, cds_pairs, documents, sentences

MATRIX_VERSION = 1  # bump when counting, BIRM or CDS change what a matrix holds
CDS_VERSION = 2  # CDS's matrix alone: 2 = her/his resolved by the noun-phrase rule (issue 28)
METHODS = ("original", "birm", "cds")
LABELS = {"original": "Original", "birm": "BIRM (proposed)", "cds": "CDS"}
KIND = "indirect-stereotypes-matrix"


def matrix_key(corpus: dict, matrix: dict, method: str, birm_options: dict) -> str:
    """The cache key of one method's matrix."""
    extra = {"birm": birm_options} if method == "birm" else {}
    if method == "cds":
        extra = {"cds_pairs": cds_pairs(), "cds_version": CDS_VERSION}
    return store.content_key(KIND, MATRIX_VERSION, corpus, matrix, method, extra,
                             [MASCULINE, FEMININE])


def matrices(corpus: dict, matrix: dict, birm_options: dict, *, methods: Iterable[str] = METHODS,
             progress: bool = True) -> dict[str, WordContextMatrix]:
    """``{method: matrix}`` for the corpus ``corpus`` (see :func:`.corpus.documents`), counted
    with ``matrix`` (keyword arguments of
    :func:`~biasbook.text.cooccurrence.word_context_matrix`) and BIRM options ``birm_options``.
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
            progress: bool = True) -> dict[tuple[str, int], glove.GloveFit]:
    """GloVe fits ``{(method, seed): fit}`` for every matrix and seed (cached)."""
    return {(method, seed): glove.train(m, seed=seed, progress=progress, **glove_options)
            for method, m in mats.items() for seed in seeds}
