"""The chapter's corpus: UN General Debate speeches and IMDB reviews as lowercased sentences.

The paper trains on UMBC WebBase (3 billion words of web text, one sentence per line, tokenised
with Stanford CoreNLP), which is not available offline. The book uses the mirrored UN General
Debates (formal political speech, about 36 million tokens) and IMDB reviews (informal text rich
in people, names and adjectives), tokenised by :func:`biasbook.text.corpora.tokenize` and cut
into sentences at ``.``, ``!`` and ``?``.

>>> list(sentences([["he", "is", "tall", ".", "she", "is", "too", "."]]))
[['he', 'is', 'tall', '.'], ['she', 'is', 'too', '.']]
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence

from biasbook import datafiles
from biasbook.mitigation.cds import cds
from biasbook.text import corpora

CHAPTER = "indirect-stereotypes"


def documents(corpus: dict) -> list[list[str]]:
    """Token lists of the corpus a profile describes.

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.

    ``source: un+imdb`` (the book): ``un_speeches`` UN speeches, then ``imdb_reviews`` IMDB
    reviews, drawn with ``seed`` (``0`` leaves a corpus out, ``None`` takes all of it).
    ``source: umbc`` (the paper, on a user's machine): every ``*.txt`` file under ``path``, as
    the UMBC WebBase corpus is distributed (one sentence per line), up to ``max_sentences``
    lines. Tokens are interned, so that millions of them share a few tens of thousands of
    strings.
    """
    source = corpus.get("source", "un+imdb")
    if source == "umbc":
        return _text_files(corpus.get("path"), corpus.get("max_sentences"))
    if source != "un+imdb":
        raise ValueError(f"corpus source must be 'un+imdb' or 'umbc', got {source!r}")
    seed = corpus.get("seed", 0)
    readers = ((corpora.un_debate_speeches, corpus["un_speeches"]),
               (corpora.imdb_reviews, corpus["imdb_reviews"]))
    docs = [[sys.intern(t) for t in d] for read, n in readers if n != 0
            for d in read(n, seed=seed).values()]
    if not docs:
        raise ValueError("no documents: un_speeches and imdb_reviews are both 0")
    return docs


def _text_files(path: str | None, max_sentences: int | None) -> list[list[str]]:
    """One document per line of the ``*.txt`` files under ``path`` (sorted), tokenised."""
    from pathlib import Path

    if not path or not Path(path).is_dir():
        raise FileNotFoundError(
            "the paper's corpus, UMBC WebBase (Han et al. 2013), is not in the offline mirror: "
            "download it from https://ebiquity.umbc.edu/resource/html/id/351 and set the "
            f"profile's corpus.path to the folder of its .txt files (got {path!r})")
    docs: list[list[str]] = []
    for file in sorted(Path(path).rglob("*.txt")):
        with open(file, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                tokens = [sys.intern(t) for t in corpora.tokenize(line)]
                if tokens:
                    docs.append(tokens)
                if max_sentences is not None and len(docs) >= max_sentences:
                    return docs
    return docs


def sentences(docs: Iterable[Sequence[str]]) -> Iterator[list[str]]:
    """The sentences of every document, in order.

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.
    """
    for doc in docs:
        yield from corpora.split_sentences(doc)


def cds_pairs() -> list[tuple[str, str]]:
    """The (masculine, feminine) word and first-name pairs CDS swaps (``cds_pairs.yml``).

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.
    """
    raw = datafiles.load(CHAPTER, "cds_pairs")
    return [tuple(p) for p in raw["words"] + raw["names"]]


def cds_documents(docs: Iterable[Sequence[str]], seed: int = 0) -> Iterator[list[str]]:
    """The documents after Counterfactual Data Substitution (each swapped with probability 1/2).

    Used in: indirect-stereotypes/01, indirect-stereotypes/02, indirect-stereotypes/03.
    """
    return cds(docs, cds_pairs(), seed=seed)
