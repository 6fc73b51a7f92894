"""Word–context co-occurrence matrices, the input of GloVe (:mod:`biasbook.embeddings.glove`)
and, with the statistics of BIRM (the indirect-stereotypes paper, section 4), of
:mod:`biasbook.mitigation.birm`: :func:`word_context_matrix` counts them on the windowed kernel of
:mod:`biasbook.text.windows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from tqdm.auto import tqdm

from biasbook import validate
from biasbook.text.windows import encode_tokens, offset_pairs

CHANNELS = ("x", "y", "xy")


@dataclass(frozen=True)
class WordContextMatrix:
    """A symmetric word–context co-occurrence matrix and, optionally, its BIRM statistics.

    ``total[a, b]`` is the (distance-weighted) number of word–context pairs (a, b): a within the
    window of b in the same sentence, counted in both directions, so ``total`` is symmetric.
    ``near`` holds, for marker sets X and Y, the same sums restricted to the events X, Y and
    X∩Y (keys ``"x"``, ``"y"``, ``"xy"``), see :func:`word_context_matrix`.
    ``vocab`` is ordered by decreasing corpus frequency (``counts``), ties alphabetically.
    """

    vocab: np.ndarray
    counts: np.ndarray
    total: sparse.csr_matrix
    near: dict[str, sparse.csr_matrix] = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.vocab)

    @property
    def nnz(self) -> int:
        return self.total.nnz

    def index(self) -> dict[str, int]:
        """Word to row number."""
        return {w: i for i, w in enumerate(self.vocab.tolist())}

    def value(self, a: str, b: str, channel: str = "total") -> float:
        """One entry: ``total`` or a ``near`` channel; 0 for a pair never seen.

        >>> m = word_context_matrix([["a", "b", "c"]], window=1, min_count=1,
        ...                         min_sentence_length=1)
        >>> m.value("a", "b"), m.value("b", "a"), m.value("a", "c")
        (1.0, 1.0, 0.0)
        """
        idx = self.index()
        for w in (a, b):
            if w not in idx:
                raise KeyError(f"{w!r} is not in the matrix vocabulary ({len(self)} words)")
        source = self.total if channel == "total" else self.near[channel]
        return float(source[idx[a], idx[b]])

    def restrict(self, keep: np.ndarray) -> WordContextMatrix:
        """The matrix over the words where the boolean mask ``keep`` is true."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self),):
            raise ValueError(f"keep must be a boolean mask of length {len(self)}")
        rows = np.flatnonzero(keep)

        def pick(m):
            return canonical_csr(m[rows][:, rows])

        return WordContextMatrix(self.vocab[rows], self.counts[rows], pick(self.total),
                                 {k: pick(v) for k, v in self.near.items()}, dict(self.params))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (for :func:`biasbook.store.cached_arrays`); :meth:`from_arrays` inverts."""
        out = {"vocab": self.vocab.astype(str), "counts": self.counts,
               "params": np.array(json.dumps(self.params, sort_keys=True))}
        for name, m in {"total": self.total, **self.near}.items():
            out |= {f"{name}.data": m.data, f"{name}.indices": m.indices,
                    f"{name}.indptr": m.indptr}
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> WordContextMatrix:
        n = len(arrays["vocab"])

        def csr(name):
            return sparse.csr_matrix((arrays[f"{name}.data"], arrays[f"{name}.indices"],
                                      arrays[f"{name}.indptr"]), shape=(n, n))

        near = {ch: csr(ch) for ch in CHANNELS if f"{ch}.data" in arrays}
        return cls(np.asarray(arrays["vocab"]), np.asarray(arrays["counts"]), csr("total"), near,
                   json.loads(str(arrays["params"])))

    def fingerprint(self) -> str:
        """Content key of the vocabulary, the counts and every matrix."""
        from biasbook.store import content_key

        return content_key(self.to_arrays())


def word_context_matrix(
    sentences: Iterable[Sequence[str]],
    *,
    window: int = 15,
    min_count: int = 5,
    max_vocab: int | None = None,
    min_sentence_length: int = 5,
    lowercase: bool = True,
    distance_weighting: bool = True,
    markers: tuple[Iterable[str], Iterable[str]] | None = None,
    dense_words: int = 4096,
    chunk_tokens: int = 1 << 16,
    progress: bool = False,
) -> WordContextMatrix:
    """Count word–context pairs within ``window`` words inside each sentence (GloVe's input).

    - Sentences shorter than ``min_sentence_length`` tokens are skipped, tokens are lowercased,
      and words seen fewer than ``min_count`` times (or beyond the ``max_vocab`` most frequent)
      are removed before windows are laid, as GloVe's ``cooccur`` skips them (the paper: window
      15, minimum count 5, sentences of at least five words).
    - Each pair at distance ``d`` adds ``1/d`` (GloVe's default) or 1 when ``distance_weighting``
      is off, to both (a, b) and (b, a).
    - ``markers=(X, Y)`` also accumulates BIRM's statistics (section 4 of the indirect
      stereotypes paper). A token is *near X* when a word of X lies within ``window`` of it in
      its sentence (itself included); an occurrence of a pair counts in the event X with weight
      ``(near_X(a) + near_X(b)) / 2``: 1/2 when a marker is near one word only, 1 when near
      both. Likewise for Y and for X∩Y (a token near both X and Y). Because the weight splits
      over the two words, ``near["x"] = (S + S.T) / 2`` where ``S`` counts the pairs seen from
      the tokens near X only, which keeps the work proportional to those tokens.

    Counting is vectorised (no Python loop over tokens): pairs are generated one offset at a
    time over chunks of ``chunk_tokens`` source tokens; pairs of the ``dense_words`` most
    frequent words are summed with ``np.add.at`` into a dense block, the others by sorting
    packed 64-bit keys (:class:`_PairSum`).

    >>> m = word_context_matrix([["he", "is", "a", "nurse"]], window=2, min_count=1,
    ...                         min_sentence_length=1, markers=(["he"], ["she"]))
    >>> m.value("is", "nurse"), m.value("a", "nurse"), m.value("he", "nurse")
    (0.5, 1.0, 0.0)
    >>> m.value("a", "nurse", "x"), m.value("is", "nurse", "x")   # "he" is near "a" only
    (0.5, 0.25)
    """
    if window < 1 or int(window) != window:
        raise ValueError(f"window must be a whole number >= 1, got {window}")
    if min_count < 1 or min_sentence_length < 1:
        raise ValueError("min_count and min_sentence_length must be >= 1")
    window = int(window)
    marker_sets = None if markers is None else _marker_sets(markers, lowercase)
    vocab, counts, tokens, sent = _ranked_tokens(_long_enough(sentences, min_sentence_length),
                                                 lowercase, min_count, max_vocab)
    weights = np.array([0.0] + [1.0 / d if distance_weighting else 1.0
                                for d in range(1, window + 1)])
    params = {"window": window, "min_count": min_count, "max_vocab": max_vocab,
              "min_sentence_length": min_sentence_length, "lowercase": lowercase,
              "distance_weighting": distance_weighting, "n_tokens": int(len(tokens)),
              "n_sentences": int(np.count_nonzero(np.diff(sent)) + 1) if len(sent) else 0}

    def pair_sum(sources, offsets, n_dense):
        acc = _PairSum(len(vocab), min(n_dense, len(vocab)), weights, chunk_tokens * 4 * window)
        for start in tqdm(range(0, len(sources), chunk_tokens), disable=not progress,
                          desc="co-occurrence", unit="chunk", leave=False):
            chunk = sources[start : start + chunk_tokens]
            for d, left, right in offset_pairs(tokens, sent, chunk, offsets):
                acc.add(abs(d), left, right)
        return acc.matrix()

    forward = pair_sum(range(len(tokens)), range(1, window + 1), dense_words)
    near: dict[str, sparse.csr_matrix] = {}
    if marker_sets is not None:
        xs, ys = marker_sets
        both_sides = [*range(-window, 0), *range(1, window + 1)]
        for name, flag in _near_events(vocab, tokens, sent, window, xs, ys).items():
            seen = pair_sum(np.flatnonzero(flag), both_sides, min(dense_words, 2048))
            near[name] = canonical_csr((seen + seen.T) * 0.5)
        where = set(vocab.tolist())
        params |= {"markers": [list(xs), list(ys)],
                   "markers_missing": sorted(w for w in (*xs, *ys) if w not in where)}
    return WordContextMatrix(vocab, counts, canonical_csr(forward + forward.T), near, params)


def _marker_sets(markers: tuple[Iterable[str], Iterable[str]], lowercase: bool
                 ) -> tuple[list[str], list[str]]:
    """BIRM's X and Y, checked (non-empty, disjoint) and cased as the corpus will be."""
    xs, ys = (validate.word_list(f"markers[{i}]", s) for i, s in enumerate(markers))
    both = sorted(set(xs) & set(ys))
    if both:
        raise ValueError(f"words in both marker sets: {both}")
    return tuple([w.lower() for w in s] if lowercase else list(s) for s in (xs, ys))


def _long_enough(sentences: Iterable[Sequence[str]], min_length: int) -> Iterator[Sequence[str]]:
    """The sentences of at least ``min_length`` tokens, lazily; none at all is an error."""
    n_kept = 0
    for s in sentences:
        if isinstance(s, str):
            raise TypeError("sentences must be token lists, not strings")
        if len(s) >= min_length:
            n_kept += 1
            yield s
    if not n_kept:
        raise ValueError(f"no sentence has min_sentence_length={min_length} tokens")


def _ranked_tokens(sentences: Iterable[Sequence[str]], lowercase: bool, min_count: int,
                   max_vocab: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(vocab, counts, tokens, sent)``: the kept words by decreasing frequency (ties
    alphabetically) with their counts, and the corpus as their ranks with each token's sentence;
    rare words are dropped before windows are laid, as GloVe's ``cooccur`` does."""
    types, ids, sent = encode_tokens(sentences, chunk_tokens=1 << 20)
    if lowercase:
        types, inverse = np.unique(np.char.lower(types), return_inverse=True)
        ids = inverse.astype(np.int32)[ids]
    counts = np.bincount(ids, minlength=len(types))
    order = np.lexsort((types, -counts))
    order = order[counts[order] >= min_count][:max_vocab]
    if len(order) == 0:
        raise ValueError(f"no word occurs at least min_count={min_count} times")
    rank = np.full(len(types), -1, dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    tokens = rank[ids]
    kept = tokens >= 0
    return types[order], counts[order].astype(np.int64), tokens[kept], sent[kept]


def _near_events(vocab: np.ndarray, tokens: np.ndarray, sent: np.ndarray, window: int,
                 xs: Sequence[str], ys: Sequence[str]) -> dict[str, np.ndarray]:
    """Per token, whether it is near X, near Y, and near both (keys ``x``, ``y``, ``xy``)."""
    flags = {name: _near_flags(np.isin(vocab, list(words))[tokens], sent, window)
             for name, words in (("x", xs), ("y", ys))}
    flags["xy"] = flags["x"] & flags["y"]
    return flags


def _near_flags(is_marker: np.ndarray, sent: np.ndarray, window: int) -> np.ndarray:
    """Whether a marker token lies within ``window`` positions of each token (itself included),
    inside its sentence: a difference of prefix sums, no loop over tokens."""
    n = len(is_marker)
    prefix = np.concatenate([[0], np.cumsum(is_marker, dtype=np.int64)])
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(sent)) + 1, [n]])
    lengths = np.diff(bounds)
    starts, ends = np.repeat(bounds[:-1], lengths), np.repeat(bounds[1:], lengths)
    idx = np.arange(n)
    lo, hi = np.maximum(idx - window, starts), np.minimum(idx + window + 1, ends)
    return prefix[hi] - prefix[lo] > 0


class _PairSum:
    """Weighted counts of (left, right) word pairs, for words numbered by frequency rank.

    Pairs of the ``n_dense`` most frequent words go to a dense block with ``np.add.at`` (they
    are most of the pairs in running text); the rest are packed into 64-bit keys
    ``(left * n + right) * offsets + (d - 1)`` and summed by sorting once ``flush_every`` keys
    are pending. Partial sparse sums merge like a binary counter, so that every entry takes
    part in O(log chunks) additions.
    """

    def __init__(self, n_words: int, n_dense: int, weights: np.ndarray, flush_every: int):
        self.n, self.k, self.weights = n_words, n_dense, weights
        # with distance weighting the offset travels in the key; without, all offsets weigh 1
        self.n_offsets = len(weights) - 1 if len(set(weights[1:].tolist())) > 1 else 1
        if n_words**2 * self.n_offsets >= 2**63:
            raise ValueError(f"vocabulary of {n_words} words too large for 64-bit pair keys")
        self.dense = np.zeros(n_dense * n_dense)
        self.flush_every = flush_every
        self.pending: list[np.ndarray] = []
        self.n_pending = 0
        self.stack: list[sparse.csr_matrix] = []

    def add(self, d: int, left: np.ndarray, right: np.ndarray) -> None:
        inside = (left < self.k) & (right < self.k)
        np.add.at(self.dense, left[inside].astype(np.intp) * self.k + right[inside],
                  self.weights[d])
        out = ~inside
        key = left[out].astype(np.int64) * self.n + right[out]
        if self.n_offsets > 1:
            key = key * self.n_offsets + (d - 1)
        self.pending.append(key)
        self.n_pending += len(key)
        if self.n_pending >= self.flush_every:
            self._flush()

    def _flush(self) -> None:
        if not self.n_pending:
            return
        uniq, count = np.unique(np.concatenate(self.pending), return_counts=True)
        self.pending, self.n_pending = [], 0
        if self.n_offsets > 1:
            value = count * self.weights[uniq % self.n_offsets + 1]
            pair = uniq // self.n_offsets
            starts = np.flatnonzero(np.concatenate([[True], pair[1:] != pair[:-1]]))
            pair, value = pair[starts], np.add.reduceat(value, starts)
        else:
            pair, value = uniq, count * self.weights[1]
        indptr = np.searchsorted(pair, np.arange(self.n + 1, dtype=np.int64) * self.n)
        part = sparse.csr_matrix((value, (pair % self.n).astype(np.int32), indptr),
                                 shape=(self.n, self.n))
        self.stack.append(part)
        while len(self.stack) > 1 and self.stack[-2].nnz <= 2 * self.stack[-1].nnz:
            top = self.stack.pop()
            self.stack.append(self.stack.pop() + top)

    def matrix(self) -> sparse.csr_matrix:
        self._flush()
        at = np.flatnonzero(self.dense)
        indptr = np.searchsorted(at, np.arange(self.n + 1, dtype=np.int64) * self.k)
        indptr[self.k + 1 :] = len(at)
        block = sparse.csr_matrix((self.dense[at], (at % self.k).astype(np.int32), indptr),
                                  shape=(self.n, self.n))
        for part in self.stack:
            block = block + part
        return block


def canonical_csr(m) -> sparse.csr_matrix:
    """``m`` as CSR in canonical form: duplicates summed, explicit zeros dropped, indices sorted
    (so equal matrices have equal arrays)."""
    m = sparse.csr_matrix(m)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.sort_indices()
    return m
