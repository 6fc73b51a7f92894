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
- decides the ambiguous "her" (→ "his" or "him") and "his" (→ "her" or "hers") by the words after
  it instead of a tagger (:func:`stands_alone`): a possessive determiner is followed by the rest
  of its noun phrase, so "her"/"his" is read as a pronoun (her → him, his → hers) only before
  punctuation, the end of the document or a word that cannot continue a noun phrase
  (:data:`NOT_IN_NOUN_PHRASE`: articles, pronouns, prepositions, conjunctions, auxiliaries), and
  "her" also before an adverb that follows objects (:data:`AFTER_OBJECT`: "brought her back",
  but "hurt his back"). "own", "other", "same", "every" and the like continue the noun phrase
  ("her own keys" → "his own keys"). The degree words of :data:`DEGREE` ("more", "most", "very",
  "only") fit both readings ("her more famous sister", "i love her more"), so after "her" the word
  after them decides; "his or her own" is read through the coordination. Without a tagger, "her"
  before a bare verb or a predicative adjective ("let her go", "made her happy") or in a double
  object ("gave her flowers") is still read as a determiner;
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

# Words that cannot continue the noun phrase a possessive determiner opens ("her ___"): before one
# of them "her" is an object and "his" stands alone. Words that can are deliberately absent:
# "own", "other", "same", "every", "first", nouns, adjectives, numbers, and the adverbs that
# premodify nouns after a possessive ("his then wife", "her later films", "his would-be killer",
# "her soon-to-be husband", "his ever-growing", "his will").
NOT_IN_NOUN_PHRASE = frozenset([
    # articles, demonstratives and quantifiers that open a noun phrase of their own
    "a", "an", "the", "this", "that", "these", "those", "some", "any", "no", "each", "all", "both",
    "either", "neither",
    # pronouns
    "i", "me", "you", "he", "him", "she", "her", "hers", "it", "we", "us", "they", "them", "my",
    "your", "his", "its", "our", "their", "mine", "yours", "ours", "theirs", "myself", "yourself",
    "himself", "herself", "itself", "ourselves", "themselves",
    # prepositions and particles
    "about", "above", "across", "after", "against", "along", "among", "around", "as", "at",
    "before", "behind", "below", "beneath", "beside", "besides", "between", "beyond", "by",
    "despite", "down", "during", "except", "for", "from", "in", "inside", "into", "like", "of",
    "off", "on", "onto", "out", "outside", "over", "since", "through", "throughout", "till", "to",
    "toward", "towards", "under", "unlike", "until", "up", "upon", "via", "with", "within",
    "without",
    # conjunctions, subordinators, wh-words
    "and", "or", "but", "nor", "yet", "because", "if", "although", "though", "while", "whereas",
    "unless", "than", "whether", "when", "where", "why", "how", "what", "which", "who", "whom",
    "whose",
    # auxiliaries, modals, negation
    "am", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "having", "do",
    "does", "did", "shall", "should", "can", "could", "may", "might", "must", "not",
])
# Adverbs that follow an object ("brought her back", "love her so much") but premodify a noun
# after "his" ("his back", "his so-called friend"): they make "her" an object only.
AFTER_OBJECT = frozenset([
    "again", "also", "too", "just", "now", "there", "here", "back", "away", "anymore", "really",
    "enough", "together", "alone", "instead", "anyway", "today", "tonight", "yesterday",
    "tomorrow", "even", "much", "so", "once",
])
# Degree words heading either a modifier in the noun phrase ("her more famous sister") or an
# adverbial after an object ("love her more"): after "her" the next word decides.
DEGREE = frozenset(["more", "most", "very", "only"])
# "his or her own": a possessive coordinated with the other gender's shares its noun phrase ("her
# and her husband", in contrast, is an object and a noun phrase).
COORDINATION = frozenset(["and", "or", "nor"])
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


def stands_alone(tokens: Sequence[str], i: int) -> bool:
    """Whether the "her" or "his" at ``tokens[i]`` is a pronoun (him, hers), not a determiner.

    >>> def reading(text):
    ...     tokens = text.split()
    ...     return stands_alone(tokens, next(i for i, t in enumerate(tokens) if t in AMBIGUOUS))
    >>> [reading(t) for t in ["saw her .", "lost her own keys", "love her more ,",
    ...                       "her more famous sister", "a friend of his", "brought her back",
    ...                       "hurt his back"]]
    [True, False, True, False, True, True, False]
    """
    if tokens[i] not in AMBIGUOUS:
        raise ValueError(f"token {i} is {tokens[i]!r}, not 'her' or 'his'")

    def at(j):
        return tokens[j] if j < len(tokens) else ""

    her, j = tokens[i] == "her", i + 1
    if at(j) in COORDINATION and at(j + 1) == ("his" if her else "her"):
        j += 2
    if her and at(j) in DEGREE:
        j += 1
    following = at(j)
    return (not following[:1].isalnum() or following in NOT_IN_NOUN_PHRASE
            or her and following in AFTER_OBJECT)


def substitute(tokens: Sequence[str], table: dict[str, str]) -> list[str]:
    """Every gendered token of one document replaced by its counterpart (see the module doc)."""
    return [AMBIGUOUS[t][0 if stands_alone(tokens, i) else 1] if t in AMBIGUOUS
            else table.get(t, t) for i, t in enumerate(tokens)]


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
