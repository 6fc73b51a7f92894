"""Anchor word pairs for contextual alignment (step 1 of :mod:`biasbook.mitigation.alignment`).

Anchors are word pairs that a statistical word aligner links in a parallel corpus (Ahn & Oh 2021,
section 4.2, after Wang et al. 2019). FastAlign (Dyer et al. 2013) runs in both directions and the
two alignments are symmetrised with grow-diag-final-and, through ``sil-thot`` (LGPL; the paper
runs the ``fast_align`` program). Only one-to-one links between words with a letter in them are
kept; every occurrence is an anchor, in its own sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from biasbook import store, validate

#: Bump when the anchors found change, so that cached anchors are not reused.
ANCHORS_VERSION = 1
HEURISTICS = ("grow-diag-final-and", "grow-diag-final", "grow-diag", "intersection", "union")

# Kana and CJK ideographs are one word each (no segmenter offline); other scripts split at spaces
# and punctuation, so a Korean word keeps its particles (eojeol).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")


# ------------------------------------------------------------------------------------ words


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text``: runs of letters/digits, single punctuation marks
    and single CJK characters.

    >>> text = "Leute aus China, 来自中国."
    >>> [text[s:e] for s, e in word_spans(text)]
    ['Leute', 'aus', 'China', ',', '来', '自', '中', '国', '.']
    """
    return [m.span() for m in _WORD.finditer(text)]


def _is_word(token: str) -> bool:
    return any(ch.isalpha() for ch in token)


# ---------------------------------------------------------------------------------- aligner


def align_words(src: Sequence[Sequence[str]], trg: Sequence[Sequence[str]], *,
                iterations: int = 5, heuristic: str = "grow-diag-final-and"
                ) -> list[list[tuple[int, int]]]:
    """Symmetrised FastAlign links ``(i, j)`` (source word i, target word j) for each sentence
    pair, trained on all the pairs given (sil-thot).

    >>> de = [s.split() for s in ["das haus", "das buch", "ein buch", "ein haus"] * 3]
    >>> en = [s.split() for s in ["the house", "the book", "a book", "a house"] * 3]
    >>> align_words(de, en)[:2]
    [[(0, 0), (1, 1)], [(0, 0), (1, 1)]]
    """
    import thot.alignment as ta

    validate.choice("heuristic", heuristic, HEURISTICS)
    if len(src) != len(trg):
        raise ValueError(f"{len(src)} source and {len(trg)} target sentences: a parallel corpus "
                         "needs one target sentence per source sentence")
    if not src:
        raise ValueError("the parallel corpus is empty")

    def train(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]]):
        model = ta.FastAlignModel()
        for s, t in zip(a, b, strict=True):
            model.add_sentence_pair(list(s), list(t))
        model.start_training()
        for _ in range(iterations):
            model.train()
        model.end_training()
        return model

    symmetrised = ta.SymmetrizedAlignmentModel(train(src, trg), train(trg, src))
    symmetrised.heuristic = getattr(ta.SymmetrizationHeuristic,
                                    heuristic.upper().replace("-", "_"))
    links = []
    for s, t in zip(src, trg, strict=True):
        if not s or not t:
            links.append([])
            continue
        matrix = symmetrised.get_best_alignment(list(s), list(t))[1].to_numpy()
        links.append([(int(i), int(j)) for i, j in zip(*np.nonzero(matrix), strict=True)])
    return links


@dataclass(frozen=True)
class Anchors:
    """Anchor word pairs: each links a word of sentence ``sentence[k]`` of the source side to a
    word of the same pair's target side, by character spans."""

    sentence: np.ndarray              # (n,) index of the sentence pair
    src_span: np.ndarray              # (n, 2) character span in the source sentence
    trg_span: np.ndarray              # (n, 2) character span in the target sentence
    src_word: list[str] = field(default_factory=list)
    trg_word: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.sentence)

    def top_pairs(self, n: int = 10) -> list[tuple[str, str, int]]:
        """The ``n`` most frequent (source word, target word) pairs with their counts."""
        counts = Counter(zip(self.src_word, self.trg_word, strict=True))
        return [(s, t, c) for (s, t), c in counts.most_common(n)]


def anchor_pairs(pairs: Sequence[tuple[str, str]], *, sentences: int | None = None,
                 max_anchors: int | None = None, max_per_pair: int | None = None,
                 iterations: int = 5,
                 heuristic: str = "grow-diag-final-and", seed: int = 0,
                 cache: bool = True) -> Anchors:
    """Anchors from a parallel corpus of ``(source sentence, target sentence)`` pairs.

    Words are :func:`word_spans`, lower-cased for the aligner. Kept: one-to-one links between
    words that contain a letter. The aligner learns from every pair, but anchors come from at
    most ``sentences`` of them (each sentence costs a forward pass later); ``max_per_pair`` caps
    the occurrences of one (source word, target word) pair (frequent function words would
    otherwise dominate ``W``), ``max_anchors`` the total. Subsets are random (``seed``). Cached by
    content.

    >>> pairs = [("das haus ist klein", "the house is small"),
    ...          ("das buch ist gross", "the book is big")] * 4
    >>> a = anchor_pairs(pairs, cache=False)
    >>> len(a), a.top_pairs(2)
    (32, [('das', 'the', 8), ('ist', 'is', 8)])
    """
    pairs = [(str(s), str(t)) for s, t in pairs]
    options = dict(sentences=sentences, max_anchors=max_anchors, max_per_pair=max_per_pair,
                   iterations=iterations, heuristic=heuristic, seed=seed)

    def compute() -> dict:
        spans = [(word_spans(s), word_spans(t)) for s, t in pairs]
        src = [[s[a:b].lower() for a, b in spans[k][0]] for k, (s, _) in enumerate(pairs)]
        trg = [[t[a:b].lower() for a, b in spans[k][1]] for k, (_, t) in enumerate(pairs)]
        found = _one_to_one_links(src, trg, iterations=iterations, heuristic=heuristic)
        kept = _subsample(found, src, trg, np.random.default_rng(seed), sentences=sentences,
                          max_per_pair=max_per_pair, max_anchors=max_anchors)
        return {"sentence": [k for k, _, _ in kept],
                "src_span": [list(spans[k][0][i]) for k, i, _ in kept],
                "trg_span": [list(spans[k][1][j]) for k, _, j in kept],
                "src_word": [src[k][i] for k, i, _ in kept],
                "trg_word": [trg[k][j] for k, _, j in kept]}

    key = store.content_key("anchors", ANCHORS_VERSION, pairs, options)
    raw = store.cached_json("alignment-anchors", key, compute, cache=cache)
    return Anchors(sentence=np.asarray(raw["sentence"], dtype=int),
                   src_span=np.asarray(raw["src_span"], dtype=int).reshape(-1, 2),
                   trg_span=np.asarray(raw["trg_span"], dtype=int).reshape(-1, 2),
                   src_word=raw["src_word"], trg_word=raw["trg_word"])


Link = tuple[int, int, int]  # (sentence pair, source word, target word)


def _one_to_one_links(src: list[list[str]], trg: list[list[str]], *, iterations: int,
                      heuristic: str) -> list[Link]:
    """The aligner's links between two words that link nowhere else and contain a letter."""
    found = []
    for k, links in enumerate(align_words(src, trg, iterations=iterations, heuristic=heuristic)):
        n_src, n_trg = Counter(i for i, _ in links), Counter(j for _, j in links)
        found += [(k, i, j) for i, j in links if n_src[i] == 1 and n_trg[j] == 1
                  and _is_word(src[k][i]) and _is_word(trg[k][j])]
    return found


def _subsample(found: list[Link], src: list[list[str]], trg: list[list[str]],
               rng: np.random.Generator, *, sentences: int | None, max_per_pair: int | None,
               max_anchors: int | None) -> list[Link]:
    """A random subset of the links, in corpus order: those of ``sentences`` random sentences,
    at most ``max_per_pair`` of each word pair, at most ``max_anchors`` in all."""
    if sentences is not None:
        linked = sorted({k for k, _, _ in found})
        chosen = set(rng.permutation(linked)[:sentences].tolist())
        found = [f for f in found if f[0] in chosen]
    per_pair: Counter = Counter()
    kept = []
    for idx in rng.permutation(len(found)):
        k, i, j = found[idx]
        key = (src[k][i], trg[k][j])
        if max_per_pair is not None and per_pair[key] >= max_per_pair:
            continue
        per_pair[key] += 1
        kept.append((k, i, j))
        if max_anchors is not None and len(kept) == max_anchors:
            break
    return sorted(kept)
