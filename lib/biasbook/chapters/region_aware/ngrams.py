"""Unigram and bigram analysis of the F/M-aligned examples (Borah et al. 2024, App. E).

The paper's Tables 10 and 11 list, for topics shared by several regions, the ten most frequent
unigrams and bigrams of the examples of each region's topic. It does not give its tokenizer or
stop-word list; its lists keep gender words (``women``, ``man``, ``she``) and frequent content
words (``one``, ``said``, ``also``) and drop function words (``of`` in "man god"), so bigrams are
read here after function words are removed. The rule implemented:

- a possessive ``'s`` is dropped; tokens are lower-cased runs of letters, digits and inner
  apostrophes (``don't``),
- tokens in :data:`STOP_WORDS` (English function words only) and single characters are dropped,
- bigrams are adjacent kept tokens within one example (never across examples),
- counts are occurrences over the examples; ties are broken alphabetically.

>>> top_ngrams(["The man of God said: God is good.", "A man and a god"], n=1, k=3)
[('god', 3), ('man', 2), ('good', 1)]
>>> top_ngrams(["The man of God said: God is good."], n=2, k=2)
[('god good', 1), ('god said', 1)]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

import pandas as pd

from biasbook.chapters.region_aware import gendered

# English function words (articles, pronouns other than the gendered ones, auxiliaries,
# prepositions, conjunctions, a few adverbs). Gender words are kept: the paper's lists have them.
_STOP_TEXT = """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having here how i i'm if
in into is isn't it it's its itself just me more most my myself no nor not now of off on once only
or other our ours ourselves out over own same should shouldn't so some such than that that's the
their theirs them themselves then there there's these they this those through to too under until
up very was wasn't we were weren't what when where which while who whom why will with won't would
wouldn't you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokens(text: str) -> list[str]:
    """The kept tokens of ``text`` in order (see the module's rule).

    Used in: region-aware/03.

    >>> tokens("She didn't see the U.N. report's 2 pages.")
    ['she', 'see', 'report', 'pages']
    """
    text = re.sub(r"['\u2019]s\b", "", text.lower().replace("\u2019", "'"))
    return [t for t in _TOKEN.findall(text) if len(t) > 1 and t not in STOP_WORDS]


def counts(texts: Iterable[str], n: int = 1) -> Counter:
    """Occurrences of every ``n``-gram (1 or 2) of the kept tokens, within each text.

    Used in: region-aware/03.
    """
    if n not in (1, 2):
        raise ValueError(f"n must be 1 or 2, got {n!r}")
    total: Counter = Counter()
    for text in texts:
        toks = tokens(text)
        total.update(toks if n == 1 else (" ".join(p) for p in zip(toks, toks[1:], strict=False)))
    return total


def top_ngrams(texts: Iterable[str], n: int = 1, k: int = 10) -> list[tuple[str, int]]:
    """The ``k`` most frequent ``n``-grams with their counts, ties alphabetical.

    Used in: region-aware/03.
    """
    return sorted(counts(texts, n).items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def _row(texts: list[str], k: int) -> dict:
    return {"examples": len(texts),
            "unigrams": ", ".join(w for w, _ in top_ngrams(texts, 1, k)),
            "bigrams": ", ".join(w for w, _ in top_ngrams(texts, 2, k))}


def group_ngrams(aligned: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Per region and group (F, M): the ``k`` most frequent unigrams and bigrams of the aligned
    examples (``aligned``: ``region``, ``group``, ``text``, as from :func:`gendered.aligned`).

    Used in: region-aware/03.
    """
    rows = []
    for region in dict.fromkeys(aligned["region"]):
        for group in gendered.GROUPS:
            sel = aligned[(aligned["region"] == region) & (aligned["group"] == group)]
            rows.append({"region": region, "group": group, **_row(sel["text"].tolist(), k)})
    return pd.DataFrame(rows, columns=["region", "group", "examples", "unigrams", "bigrams"])


def topic_ngrams(fits: Mapping, *, per_gender: int = 2, k: int = 10) -> pd.DataFrame:
    """Tables 10-11 form: for the ``per_gender`` most coherent F and M topics of each region,
    the ``k`` most frequent unigrams and bigrams of the examples assigned to the topic.

    Used in: region-aware/03.
    """
    rows = []
    for region, fit in fits.items():
        for gender in gendered.GROUPS:
            for _, topic in fit.top(gender, per_gender).iterrows():
                docs = fit.documents[fit.documents["topic"] == topic["topic"]]
                rows.append({"region": region, "gender": gender, "rank": topic["rank"],
                             "name": topic["name"], **_row(docs["text"].tolist(), k)})
    return pd.DataFrame(rows, columns=["region", "gender", "rank", "name", "examples",
                                       "unigrams", "bigrams"])


def paper_tables(paper: Mapping) -> pd.DataFrame:
    """The paper's Tables 10 and 11 (``paper_results.yml``) as one frame.

    Used in: region-aware/03.
    """
    rows = [{"table": table, **row} for table in ("table10_ngrams", "table11_ngrams")
            for row in paper[table]]
    return pd.DataFrame(rows, columns=["table", "topic", "region", "gender", "unigrams",
                                       "bigrams"])
