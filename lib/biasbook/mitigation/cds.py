"""Counterfactual Data Substitution (CDS; Maudslay, Gonen, Cotterell & Teufel 2019).

CDS rewrites the training corpus before the embeddings are trained: each document, with
probability 1/2, has every gendered word replaced by its counterpart (he ↔ she, king ↔ queen,
John ↔ Mary, ...). Unlike augmentation (CDA), the corpus keeps its size and no document appears
twice. Maudslay et al. also swap first names ("name intervention"), pairing each name with a name
of the other gender of similar frequency by bipartite matching over US Social Security data, and
tag "her" with a part-of-speech tagger to choose between "his" and "him".

This implementation, on lowercased token lists:

- swaps the word pairs it is given, in both directions (:func:`swap_table`); names are simply
  more pairs (the book's list pairs common US first names by popularity rank, a simplification of
  the bipartite matching, for which no offline name frequencies exist);
- decides the ambiguous "her" (→ "his" or "him") and "his" (→ "her" or "hers") by the next token
  instead of a tagger: before punctuation, the end of the document or a function word
  (:data:`FUNCTION_WORDS`) they are pronouns (her → him, his → hers), otherwise determiners
  (her → his, his → her);
- draws the coin of the ``i``-th document from ``numpy.random.default_rng([seed, i])``, so the
  coins of a corpus and of any prefix of it agree.

>>> table = swap_table([("he", "she"), ("his", "her"), ("him", "her"), ("his", "hers"),
...                     ("king", "queen")])
>>> " ".join(substitute("she gave her book to him and thanked her .".split(), table))
'he gave his book to her and thanked him .'
>>> " ".join(substitute("the king said it was his".split(), table))
'the queen said it was hers'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

# a pronoun, not a determiner, precedes these (or punctuation, or the end of the document)
FUNCTION_WORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "also", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "down", "during", "each", "for", "from", "had",
    "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most",
    "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "you", "your"
])
AMBIGUOUS = {"her": ("him", "his"), "his": ("hers", "her")}  # (as pronoun, as determiner)


def swap_table(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A word → counterpart map from (masculine, feminine) pairs, lowercased, both directions.

    "her" and "his" are resolved in context by :func:`substitute`, whatever the pairs say. A word
    listed with two different partners (other than those two) is an error.
    """
    table: dict[str, str] = {}
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise ValueError(f"pairs must be (masculine, feminine) word pairs, got {pair!r}")
        m, f = (w.lower() for w in pair)
        for a, b in ((m, f), (f, m)):
            if a in AMBIGUOUS:
                continue
            if table.get(a, b) != b:
                raise ValueError(f"{a!r} is paired with both {table[a]!r} and {b!r}")
            table[a] = b
    if not table:
        raise ValueError("no word pairs to swap")
    return table


def substitute(tokens: Sequence[str], table: dict[str, str]) -> list[str]:
    """Every gendered token of one document replaced by its counterpart (see the module doc)."""
    out = []
    for i, token in enumerate(tokens):
        if token in AMBIGUOUS:
            following = tokens[i + 1] if i + 1 < len(tokens) else ""
            pronoun = not following or not following[0].isalnum() or following in FUNCTION_WORDS
            out.append(AMBIGUOUS[token][0 if pronoun else 1])
        else:
            out.append(table.get(token, token))
    return out


def cds(
    documents: Iterable[Sequence[str]],
    pairs: Iterable[tuple[str, str]],
    *,
    seed: int = 0,
    probability: float = 0.5,
) -> Iterator[list[str]]:
    """Yield each document, swapped with ``probability`` (1/2 in the paper), else unchanged.

    >>> docs = [["he", "is", "a", "doctor"]] * 6
    >>> [" ".join(d) for d in cds(docs, [("he", "she")], seed=1)][:3]
    ['he is a doctor', 'she is a doctor', 'she is a doctor']
    """
    if not 0 <= probability <= 1:
        raise ValueError(f"probability must be in [0, 1], got {probability}")
    table = swap_table(pairs)
    for i, doc in enumerate(documents):
        if isinstance(doc, str):
            raise TypeError("documents must be token lists, not strings")
        swap = np.random.default_rng([seed, i]).random() < probability
        yield substitute(doc, table) if swap else list(doc)
