"""Windowed co-occurrence counts of words with gendered words (Bordia & Bowman 2019, section
3.3.1: :func:`count_cooccurrences`), on the kernel of :mod:`biasbook.text.windows` that the
word–context matrices of :mod:`biasbook.text.word_context` share.

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

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.signal import lfilter

from biasbook import validate
from biasbook.text.windows import encode_tokens, offset_pairs

CONTEXTS = ("fixed", "infinite")
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
    validate.choice("mode", mode, validate.MODES)
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
    validate.choice("mode", mode, validate.MODES)
    male = frozenset(validate.word_list("male", male))
    female = frozenset(validate.word_list("female", female))
    _check_gender_sets(male, female)
    paper_infinite = (context, mode) == ("infinite", "paper")
    if window is None:
        window = infinite_window(beta) if paper_infinite else DEFAULT_WINDOW
    exact_infinite = window == math.inf
    if exact_infinite and not paper_infinite:
        raise ValueError("window=math.inf needs context='infinite' and mode='paper'")
    types, ids, doc = encode_tokens(docs)
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


def _complete_ngrams(sources: np.ndarray, doc: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Gendered positions whose whole n-gram lies inside their document (as-coded mode)."""
    first, last = sources + offsets[0], sources + offsets[-1]
    ok = (first >= 0) & (last < len(doc))
    ok[ok] = (doc[first[ok]] == doc[sources[ok]]) & (doc[last[ok]] == doc[sources[ok]])
    return sources[ok]


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
    for d, _, targets in offset_pairs(ids, doc, sources, offsets.tolist()):
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
