"""How the region-aware corpora's raw text becomes documents: UN speeches re-joined and split into
sentences, tweets stripped of URLs, mentions and ``#``, short and repeated texts dropped
(the rules :mod:`.corpora` states per domain).

>>> split_sentences("Mr. Kofi Annan spoke. We agree! Does Ms. J. Doe? Yes: 3.5 per cent rose.")
['Mr. Kofi Annan spoke.', 'We agree!', 'Does Ms. J. Doe?', 'Yes: 3.5 per cent rose.']
>>> clean_tweet("RT @abc: Happy #NewYear &amp; more https://t.co/xyz")
'Happy NewYear & more'
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

_ABBREVIATIONS = frozenset([
    "mr", "mrs", "ms", "messrs", "dr", "prof", "st", "sr", "jr", "hon", "rev", "gen", "col", "lt",
    "sgt", "capt", "no", "nos", "art", "arts", "para", "paras", "vol", "vols", "op", "cf", "e.g",
    "i.e", "etc", "vs", "sec", "secs", "fig", "figs", "h.e", "u.n", "u.s"])
_BOUNDARY = re.compile(r"[.!?][\"”’')\]]*\s+(?=[\"“‘(\[]?[A-Z0-9])")
_PARAGRAPH_NUMBER = re.compile(r"^[ \t]*\d{1,3}\.[ \t]+", re.M)
_LINE_BREAK_HYPHEN = re.compile(r"-[ \t]*\n[ \t]*(?=\w)")
_WORD = re.compile(r"[^\W_]+")  # the word tokens of biasbook.text.corpora.tokenize
_URL = re.compile(r"https?://\S+|www\.\S+")
_MENTION = re.compile(r"(^|\s)(RT\s+)?@\w+:?")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: a boundary is ``.``, ``!`` or ``?`` (closing quotes or brackets
    allowed) before white space and a capital letter or digit, unless the word before it is a
    title or a common abbreviation (``Mr.``, ``No.``, ``e.g.``) or a single letter (an initial).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    text = " ".join(text.split())
    sentences, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.start()  # the full stop; the word before it starts after the last space
        word = text[text.rfind(" ", start, end) + 1:end].lstrip("\"“‘([").lower()
        if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            continue
        sentences.append(text[start:match.end()].strip())
        start = match.end()
    if text[start:].strip():
        sentences.append(text[start:].strip())
    return sentences


def clean_speech(text: str) -> str:
    """A speech as running text: byte-order mark and paragraph numbers (``54.<tab>``) removed,
    hard-wrapped lines joined (a line ending in a hyphen joins without a space).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    >>> clean_speech("\\ufeff2.\\tThe fifty-\\nsecond session\\nopened.")
    'The fifty-second session opened.'
    """
    text = _PARAGRAPH_NUMBER.sub("", text.replace("\ufeff", ""))
    return " ".join(_LINE_BREAK_HYPHEN.sub("-", text).split())


def clean_tweet(text: str) -> str:
    """A tweet without URLs, @-mentions (and a retweet's ``RT``) and ``#`` signs; entities decoded.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    text = _URL.sub(" ", html.unescape(str(text)))
    text = _MENTION.sub(" ", text).replace("#", "")
    return " ".join(text.split())


def n_words(text: str) -> int:
    """Words as the book's tokenizer counts them (punctuation marks excluded).

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.

    >>> n_words("It's 3 p.m., isn't it?")  # it s 3 p m isn t it
    8
    """
    return len(_WORD.findall(text))


def kept(texts: Sequence[str], min_words: int) -> list[str]:
    """``texts`` with fewer than ``min_words`` words and repeats removed, first occurrence kept.

    Used in: region-aware/01, region-aware/02, region-aware/03, region-aware/04, region-aware/05,
        region-aware/06.
    """
    return list(dict.fromkeys(t for t in texts if t and n_words(t) >= min_words))
