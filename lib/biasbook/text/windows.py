"""The kernel every windowed count of :mod:`biasbook.text` runs on: a corpus encoded once as
integer ids (:func:`encode_tokens`) and the pairs (token, token ``d`` positions away) generated
one offset at a time (:func:`offset_pairs`), so no Python loop visits a token.

>>> types, ids, doc = encode_tokens([["b", "a"], ["a"]])
>>> types.tolist(), ids.tolist(), doc.tolist()
(['a', 'b'], [1, 0, 0], [0, 0, 1])
>>> [(d, left.tolist(), right.tolist()) for d, left, right in offset_pairs(ids, doc, range(3), [1])]
[(1, [1], [0])]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd


def encode_tokens(
    docs: Iterable[Sequence[str]], *, chunk_tokens: int = 1 << 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted types, the token-id stream and each token's document index.

    ``docs`` may be a lazy iterable: it is consumed ``chunk_tokens`` tokens at a time and only the
    integer ids are kept, so a corpus of tens of millions of tokens never sits in memory as
    Python strings.
    """
    index: dict[str, int] = {}
    parts: list[np.ndarray] = []
    lengths: list[int] = []
    buffer: list[str] = []

    def flush() -> None:
        # pandas' hash-based factorize is several times faster than np.unique's sort on strings
        codes, uniques = pd.factorize(np.array(buffer, dtype=object))
        lookup = np.array([index.setdefault(u, len(index)) for u in uniques.tolist()],
                          dtype=np.int64)
        parts.append(lookup[codes])
        buffer.clear()

    for d in docs:
        if isinstance(d, str):
            raise TypeError("docs must be a non-empty iterable of token lists, e.g. [tokens]")
        buffer.extend(d)
        lengths.append(len(d))
        if len(buffer) >= chunk_tokens:
            flush()
    if not lengths:
        raise TypeError("docs must be a non-empty iterable of token lists, e.g. [tokens]")
    if buffer:
        flush()
    if not parts:
        raise ValueError("docs contain no tokens")
    uniques = np.array([str(u) for u in index], dtype=str)
    order = np.argsort(uniques)
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    doc_dtype = np.int32 if len(lengths) < 2**31 else np.int64
    doc = np.repeat(np.arange(len(lengths), dtype=doc_dtype), lengths)
    return uniques[order], rank[np.concatenate(parts)], doc


def offset_pairs(
    ids: np.ndarray, doc: np.ndarray, sources: np.ndarray | range, offsets: Iterable[int]
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """For each offset ``d``, the ids at the
    sources and at ``source + d``, over the sources whose partner lies in the same document (or
    sentence). ``sources`` is an index array, or a ``range`` of consecutive positions (then
    slices replace gathers)."""
    n = len(ids)
    for d in offsets:
        if isinstance(sources, range):
            lo, hi = max(sources.start, -d), min(sources.stop, n - d)
            if hi > lo:
                same = doc[lo:hi] == doc[lo + d : hi + d]
                yield d, ids[lo:hi][same], ids[lo + d : hi + d][same]
            continue
        pos = sources + d
        ok = (pos >= 0) & (pos < n)
        ok[ok] = doc[pos[ok]] == doc[sources[ok]]
        yield d, ids[sources[ok]], ids[pos[ok]]
