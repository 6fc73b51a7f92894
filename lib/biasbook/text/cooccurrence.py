"""Windowed co-occurrence counts: of words with gendered words (Bordia & Bowman 2019, section
3.3.1: :func:`count_cooccurrences`), and word–context matrices for GloVe with the statistics of
BIRM (the indirect-stereotypes paper, section 4: :func:`word_context_matrix`). Both share one
vectorised kernel, :func:`_offset_pairs`, and one streaming encoder, :func:`_encode`.

**Counts with gendered words.**

``c(w, g)`` sums, over every token of a gendered word of class ``g`` (male or female) and every
token of ``w`` at distance ``d >= 1`` from it inside the same document, a weight ``weight(d)``:

- ``context="fixed"``: ``weight(d) = 1`` for ``d <= window`` (the paper's k = 10 words each side,
  "equal weight of 5%"; a constant factor cancels in P(w|g), so 1 is used).
- ``context="infinite"``: ``weight(d) = beta ** d`` with ``beta = 0.95`` (the paper's "5% to the
  adjacent word, 95% to the rest, applied recursively"; ``0.05 * 0.95 ** (d - 1)`` differs by a
  constant factor, which cancels). The window is truncated at ``window`` words each side, by
  default :func:`infinite_window` = 180, which leaves out a share ``beta ** 180 < 1e-4`` of the
  weight per side. ``window=math.inf`` takes the whole document, exactly, in O(tokens), with a
  first-order recursive filter (``scipy.signal.lfilter``) run forwards and backwards. The
  scores depend strongly on the truncation: a word whose nearest female (or male) word is d
  tokens away gets a count near ``beta ** d`` and ``|bias|`` near ``0.05 d``, so far-away
  co-occurrences dominate mu and sigma as the window grows (PTB sigma: 2.3 at 180, 4.0 at 400,
  11.8 untruncated). The authors' infinite-context script also took a window (``-w``).

Targets ``w`` exclude stop words (scikit-learn's ``ENGLISH_STOP_WORDS``, matched lowercased), the
gendered words themselves and tokens that are not words (no letter, or ``<unk>``-style markup).
Windows never cross documents; a corpus file read with :func:`read_tokens` is one document, as in
the authors' scripts (so windows cross sentence lines).

``mode="as-coded"`` reproduces the authors' ``fixed_context_bias_score.py`` (BordiaS/
language-model-bias; copies survive in forks such as ytyk668/language-model-bias): it slides an
n-gram of ``n = 2 * window + 1`` tokens over each document and, when the n-gram's near-centre
token (0-based index ``int((n + 1) / 2) - 2 = window - 1``, so ``window - 1`` tokens before it and
``window + 1`` after) is gendered, adds 1 to *every* token of the n-gram, the gendered word, stop
words and punctuation included. Only n-grams that fit in the document count, so gendered tokens
near a document's edges are skipped. No target filter is applied; the authors then score
``m / (m + f)`` (see :func:`biasbook.metrics.cooccurrence_bias.bias_scores`). Their
``infinite_context_bias_score.py`` is not public; as-coded infinite context assumes the same
n-gram loop adding ``beta ** |j - centre|`` instead of 1. One surviving copy of the fixed-context
script lowercases the text first: use ``read_tokens(path, lowercase=True)`` for that.

>>> docs = [["he", "likes", "cats", "she", "likes", "dogs"]]
>>> co = count_cooccurrences(docs, {"he"}, {"she"}, window=2, stop_words=())
>>> co.to_frame()[["male", "female"]].to_dict("index")["likes"]
{'male': 1.0, 'female': 2.0}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.signal import lfilter
from tqdm.auto import tqdm

from biasbook import validate

CONTEXTS = ("fixed", "infinite")
MODES = validate.MODES
DEFAULT_WINDOW = 10  # the paper's k for the fixed context
DEFAULT_BETA = 0.95
DEFAULT_TAIL = 1e-4  # weight left out per side by the truncated infinite window


@dataclass(frozen=True)
class Cooccurrence:
    """Weighted co-occurrence counts of target words with male and female words.

    ``words``, ``male`` (c(w, m)), ``female`` (c(w, f)) and ``counts`` (c(w)) are aligned arrays
    over the target vocabulary (sorted). ``n_male`` and ``n_female`` are c(m) and c(f), the number
    of gendered tokens of each class; ``excluded`` maps each corpus type that is not a target to
    the reason (empty in ``as-coded`` mode, which keeps every type); ``absent`` lists the gendered
    words that never occur in the corpus: they count nothing (check their spelling and case; a
    class all of whose words are absent has ``n_male`` or ``n_female`` 0).
    """

    words: np.ndarray
    male: np.ndarray
    female: np.ndarray
    counts: np.ndarray
    n_male: int
    n_female: int
    excluded: dict[str, str] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    absent: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """Counts as a DataFrame indexed by word, columns ``male``, ``female``, ``count``."""
        return pd.DataFrame(
            {"male": self.male, "female": self.female, "count": self.counts},
            index=pd.Index(self.words, name="word"),
        )




def english_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words, from the Glasgow IR group list).

    >>> {"the", "her", "he"} <= english_stop_words()
    True
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)




def gendered_words(pairs: Iterable[tuple[str, str]]) -> tuple[frozenset[str], frozenset[str]]:
    """Split (male, female) pairs into the male and the female word sets.

    >>> [sorted(s) for s in gendered_words([("he", "she"), ("his", "her"), ("him", "her")])]
    [['he', 'him', 'his'], ['her', 'she']]
    """
    pairs = list(pairs)
    return frozenset(m for m, _ in pairs), frozenset(f for _, f in pairs)


def infinite_window(beta: float = DEFAULT_BETA, tail: float = DEFAULT_TAIL) -> int:
    """Smallest window with ``beta ** window <= tail``: the share of weight it leaves out per side.

    >>> infinite_window(0.95, 1e-4)
    180
    """
    if not 0 < beta < 1 or not 0 < tail < 1:
        raise ValueError(f"need 0 < beta < 1 and 0 < tail < 1, got beta={beta}, tail={tail}")
    return math.ceil(math.log(tail) / math.log(beta))


def context_weights(
    context: str, window: float, beta: float = DEFAULT_BETA, mode: str = "paper"
) -> tuple[np.ndarray, np.ndarray]:
    """Signed offsets from a gendered token and the weight each offset gets.

    >>> context_weights("fixed", 2)
    (array([-2, -1,  1,  2]), array([1., 1., 1., 1.]))
    >>> context_weights("infinite", 1, beta=0.5, mode="as-coded")
    (array([0, 1, 2]), array([1.  , 0.5 , 0.25]))
    """
    validate.choice("context", context, CONTEXTS)
    validate.choice("mode", mode, MODES)
    if window < 1 or not float(window).is_integer():
        raise ValueError(f"window must be a whole number >= 1, got {window}")
    window = int(window)
    if mode == "paper":
        offsets = np.concatenate([np.arange(-window, 0), np.arange(1, window + 1)])
    else:  # the n-gram around the near-centre token: window - 1 before, window + 1 after
        offsets = np.arange(-(window - 1), window + 2)
    weights = np.ones(len(offsets)) if context == "fixed" else beta ** np.abs(offsets)
    return offsets, weights.astype(float)


def count_cooccurrences(
    docs: Iterable[Sequence[str]],
    male: Iterable[str],
    female: Iterable[str],
    *,
    context: str = "fixed",
    window: float | None = None,
    beta: float = DEFAULT_BETA,
    mode: str = "paper",
    stop_words: Iterable[str] | None = None,
) -> Cooccurrence:
    """Co-occurrence counts c(w, m), c(w, f) over documents (see the module docstring).

    ``docs`` is an iterable of token sequences; pass ``[tokens]`` for a single stream.
    ``window`` (words each side) defaults to 10 (fixed; as-coded) or :func:`infinite_window`
    (paper infinite context, where ``math.inf`` means untruncated). ``stop_words`` defaults to
    :func:`english_stop_words` (paper mode only; as-coded keeps every type).

    >>> co = count_cooccurrences([["a", "he", "b", "c"]], ["he"], ["she"], window=1,
    ...                          context="infinite", beta=0.5, mode="as-coded")
    >>> co.to_frame()["male"].to_dict()
    {'a': 0.0, 'b': 0.5, 'c': 0.25, 'he': 1.0}
    """
    validate.choice("context", context, CONTEXTS)
    validate.choice("mode", mode, MODES)
    male = frozenset(validate.word_list("male", male))
    female = frozenset(validate.word_list("female", female))
    _check_gender_sets(male, female)
    if window is None:
        paper_infinite = context == "infinite" and mode == "paper"
        window = infinite_window(beta) if paper_infinite else DEFAULT_WINDOW
    exact_infinite = window == math.inf
    if exact_infinite and (context, mode) != ("infinite", "paper"):
        raise ValueError("window=math.inf needs context='infinite' and mode='paper'")
    types, ids, doc = _encode(docs)
    is_male, is_female = np.isin(types, list(male)), np.isin(types, list(female))
    counts = np.bincount(ids, minlength=len(types)).astype(np.int64)
    if exact_infinite:
        c = {
            g: _exponential(ids, doc, is_g[ids], beta, len(types))
            for g, is_g in (("male", is_male), ("female", is_female))
        }
    else:
        offsets, weights = context_weights(context, window, beta, mode)
        sources = {"male": np.flatnonzero(is_male[ids]), "female": np.flatnonzero(is_female[ids])}
        if mode == "as-coded":
            sources = {g: _complete_ngrams(s, doc, offsets) for g, s in sources.items()}
        c = {g: _accumulate(ids, doc, s, offsets, weights, len(types)) for g, s in sources.items()}
    if mode == "paper":
        stops = english_stop_words() if stop_words is None else frozenset(stop_words)
        reasons = _exclusion_reasons(types, is_male | is_female, stops)
    else:
        reasons = np.full(len(types), "", dtype=object)
    keep = reasons == ""
    return Cooccurrence(
        words=types[keep],
        male=c["male"][keep],
        female=c["female"][keep],
        counts=counts[keep],
        n_male=int(counts[is_male].sum()),
        n_female=int(counts[is_female].sum()),
        excluded=dict(zip(types[~keep].tolist(), reasons[~keep].tolist(), strict=True)),
        params={"context": context, "window": window, "beta": beta, "mode": mode},
        absent=tuple(sorted((male | female) - set(types.tolist()))),
    )


def _check_gender_sets(male: frozenset[str], female: frozenset[str]) -> None:
    if not male or not female:
        raise ValueError("both the male and the female word lists must be non-empty")
    if male & female:
        raise ValueError(f"words listed as both male and female: {sorted(male & female)}")
    spaced = sorted(w for w in male | female if not w or w.split() != [w])
    if spaced:
        raise ValueError(f"gendered words must be single tokens, got {spaced}: a corpus token "
                         "never holds a space, so these would count nothing")



def _encode(
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


def _complete_ngrams(sources: np.ndarray, doc: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Gendered positions whose whole n-gram lies inside their document (as-coded mode)."""
    first, last = sources + offsets[0], sources + offsets[-1]
    ok = (first >= 0) & (last < len(doc))
    ok[ok] = (doc[first[ok]] == doc[sources[ok]]) & (doc[last[ok]] == doc[sources[ok]])
    return sources[ok]


def _offset_pairs(
    ids: np.ndarray, doc: np.ndarray, sources: np.ndarray | range, offsets: Iterable[int]
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The windowed kernel of every count in this module: for each offset ``d``, the ids at the
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


def _accumulate(
    ids: np.ndarray,
    doc: np.ndarray,
    sources: np.ndarray,
    offsets: np.ndarray,
    weights: np.ndarray,
    n_types: int,
) -> np.ndarray:
    """Sum ``weight(d)`` onto the type at ``source + d``, one vectorised pass per offset ``d``."""
    total = np.zeros(n_types)
    weight = dict(zip(offsets.tolist(), weights.tolist(), strict=True))
    for d, _, targets in _offset_pairs(ids, doc, sources, offsets.tolist()):
        total += weight[d] * np.bincount(targets, minlength=n_types)
    return total


def _exponential(
    ids: np.ndarray, doc: np.ndarray, is_source: np.ndarray, beta: float, n_types: int
) -> np.ndarray:
    """Untruncated sum of ``beta ** |t - q|`` over source tokens q != t, per type of token t.

    ``y[t] = beta * (y[t-1] + x[t-1])`` gives ``y[t] = sum_{q<t} beta**(t-q) x[q]``; the same
    filter on the reversed stream adds the sources after t. Documents are filtered separately.
    """
    x = is_source.astype(float)
    weight = np.zeros(len(ids))
    for start, stop in _doc_spans(doc):
        seg = x[start:stop]
        before = lfilter([0.0, beta], [1.0, -beta], seg)
        after = lfilter([0.0, beta], [1.0, -beta], seg[::-1])[::-1]
        weight[start:stop] = before + after
    return np.bincount(ids, weights=weight, minlength=n_types)


def _doc_spans(doc: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each document in the token stream."""
    edges = np.flatnonzero(np.diff(doc)) + 1
    bounds = np.concatenate([[0], edges, [len(doc)]]).tolist()
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _exclusion_reasons(
    types: np.ndarray, gendered: np.ndarray, stops: frozenset[str]
) -> np.ndarray:
    """Why each type is not a target word ("" for targets)."""
    lower = np.char.lower(types)
    markup = np.char.startswith(types, "<") & np.char.endswith(types, ">")
    has_letter = np.array([any(ch.isalpha() for ch in t) for t in types.tolist()], dtype=bool)
    reasons = np.full(len(types), "", dtype=object)
    reasons[~has_letter | markup] = "not a word"
    reasons[np.isin(lower, list(stops))] = "stop word"
    reasons[gendered] = "gendered word"
    return reasons


# --- Word–context matrices (the input of GloVe and of BIRM) ----------------------------------

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
            return _canonical_csr(m[rows][:, rows])

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
    if markers is not None:
        from biasbook.validate import word_list

        xs, ys = (word_list(f"markers[{i}]", s) for i, s in enumerate(markers))
        both = sorted(set(xs) & set(ys))
        if both:
            raise ValueError(f"words in both marker sets: {both}")
        xs, ys = ([w.lower() for w in s] if lowercase else s for s in (xs, ys))

    def long_enough():
        n_kept = 0
        for s in sentences:
            if isinstance(s, str):
                raise TypeError("sentences must be token lists, not strings")
            if len(s) >= min_sentence_length:
                n_kept += 1
                yield s
        if not n_kept:
            raise ValueError(f"no sentence has min_sentence_length={min_sentence_length} tokens")

    types, ids, sent = _encode(long_enough(), chunk_tokens=max(chunk_tokens, 1 << 20))
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
    tokens, sent = tokens[kept], sent[kept]
    vocab, n_words = types[order], len(order)
    weights = np.array([0.0] + [1.0 / d if distance_weighting else 1.0
                                for d in range(1, window + 1)])
    params = {"window": window, "min_count": min_count, "max_vocab": max_vocab,
              "min_sentence_length": min_sentence_length, "lowercase": lowercase,
              "distance_weighting": distance_weighting, "n_tokens": int(len(tokens)),
              "n_sentences": int(np.count_nonzero(np.diff(sent)) + 1) if len(sent) else 0}

    def pair_sum(sources, offsets, n_dense):
        acc = _PairSum(n_words, min(n_dense, n_words), weights, chunk_tokens * 4 * window)
        for start in tqdm(range(0, len(sources), chunk_tokens), disable=not progress,
                          desc="co-occurrence", unit="chunk", leave=False):
            chunk = sources[start : start + chunk_tokens]
            for d, left, right in _offset_pairs(tokens, sent, chunk, offsets):
                acc.add(abs(d), left, right)
        return acc.matrix()

    forward = pair_sum(range(len(tokens)), range(1, window + 1), dense_words)
    total = _canonical_csr(forward + forward.T)
    near: dict[str, sparse.csr_matrix] = {}
    if markers is not None:
        where = {w: i for i, w in enumerate(vocab.tolist())}
        flags = {}
        for name, words in (("x", xs), ("y", ys)):
            is_marker = np.zeros(n_words, dtype=bool)
            is_marker[[where[w] for w in words if w in where]] = True
            flags[name] = _near_flags(is_marker[tokens], sent, window)
        flags["xy"] = flags["x"] & flags["y"]
        both_sides = [*range(-window, 0), *range(1, window + 1)]
        for name, flag in flags.items():
            seen = pair_sum(np.flatnonzero(flag), both_sides, min(dense_words, 2048))
            near[name] = _canonical_csr((seen + seen.T) * 0.5)
        params |= {"markers": [list(xs), list(ys)],
                   "markers_missing": sorted(w for w in (*xs, *ys) if w not in where)}
    return WordContextMatrix(vocab, counts[order].astype(np.int64), total, near, params)


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


def _canonical_csr(m: sparse.spmatrix) -> sparse.csr_matrix:
    m = sparse.csr_matrix(m)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.sort_indices()
    return m
