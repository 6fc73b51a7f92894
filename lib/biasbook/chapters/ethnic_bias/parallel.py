"""Parallel and source-language text for the mitigation runs, all from the offline mirror.

The paper aligns on XNLI / KorNLI (anchors) and fine-tunes on Europarl, the UN corpus, Naver movie
reviews, Leipzig and OpenSubtitles (Appendix B), none of which is mirrored. Offline:

- **XQuAD** (Artetxe et al. 2020; EN, DE, ES, TR, ZH): 1,190 questions, professionally translated
  one by one, are the parallel corpus for the anchors; the 240 paragraphs (48 Wikipedia
  articles), split into sentences, are the source-language text: articles 0-37 (80%) for
  fine-tuning, 38-47 held out for perplexity.
- **Korean**: the Korean-English news corpus (Park et al. 2016) gives the anchors (dev, 1,000
  pairs) and the held-out text (Korean side of test, 2,000 sentences); KorNLI's Korean XNLI
  sentences (Ham et al. 2020) are the fine-tuning text (their English originals are not
  mirrored, so KorNLI cannot serve as a parallel corpus here as it does in the paper).
- **Arabic and Greek** (Table 8): no parallel or Arabic/Greek text is mirrored, so
  :func:`has_corpus` is False for them.

>>> pairs = parallel_pairs("de")
>>> len(pairs), pairs[0][1]
(1190, 'How many points did the Panthers defense surrender?')
>>> split_sentences("Er kam, z. B. heute. Sie ging! 他来了。她走了。")
['Er kam, z. B. heute.', 'Sie ging!', '他来了。', '她走了。']
"""

from __future__ import annotations

import csv
import json
import re
from functools import cache

from biasbook import resources, validate

XQUAD_LANGUAGES = ("en", "de", "es", "tr", "zh")
TRAIN_ARTICLES = 38  # of XQuAD's 48: the first 80% fine-tune, the rest are held out
SPLITS = ("train", "heldout")
# Not after a one-letter abbreviation ("z. B.", "J. Smith").
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\s\w\.)\s+(?=\S)|(?<=[。！？])")


def has_corpus(language: str) -> bool:
    """Whether the mirror holds text (and a parallel corpus with English) for ``language``.

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """
    return language in XQUAD_LANGUAGES or language == "ko"


def _check(language: str) -> None:
    if not has_corpus(language):
        raise ValueError(f"no parallel corpus for {language!r} is mirrored offline (XQuAD gives "
                         f"{', '.join(XQUAD_LANGUAGES)}; Korean has its own): mitigation runs "
                         "that need one cannot run for it")


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph: cut after . ! ? before white space (not after a one-letter
    abbreviation) and after 。！？.

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """
    return [s.strip() for s in _SENTENCE_END.split(text.replace("\ufeff", "")) if s.strip()]


@cache
def _xquad(language: str) -> list[dict]:
    with open(resources.path("xquad", f"xquad.{language}.json"), encoding="utf-8") as fh:
        return json.load(fh)["data"]


def _xquad_questions(language: str) -> dict[str, str]:
    return {qa["id"]: qa["question"].replace("\ufeff", "").strip() for article in _xquad(language)
            for paragraph in article["paragraphs"] for qa in paragraph["qas"]}


@cache
def _news(split: str, side: str) -> list[str]:
    name = {"dev": "korean-english-park.dev", "test": "korean-english-park.test"}[split]
    folder = resources.unpacked("korean-english-news-v1", f"{name}.tar.gz")
    return (folder / f"{name}.{side}").read_text(encoding="utf-8").split("\n")


def parallel_pairs(language: str) -> list[tuple[str, str]]:
    """``(sentence in language, English sentence)`` pairs for the anchors.

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """
    _check(language)
    if language == "ko":
        pairs = zip(_news("dev", "ko"), _news("dev", "en"), strict=True)
        return [(k.strip(), e.strip()) for k, e in pairs if k.strip() and e.strip()]
    source, english = _xquad_questions(language), _xquad_questions("en")
    return [(source[i], english[i]) for i in english if source.get(i)]


def source_text(language: str, split: str) -> list[str]:
    """Sentences in ``language``: ``train`` (fine-tuning) or ``heldout`` (perplexity).

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """
    _check(language)
    validate.choice("split", split, SPLITS)
    if language == "ko":
        if split == "heldout":
            return [s.strip() for s in _news("test", "ko") if s.strip()]
        return _kornli_sentences()
    articles = _xquad(language)
    chosen = articles[:TRAIN_ARTICLES] if split == "train" else articles[TRAIN_ARTICLES:]
    return [s for article in chosen for paragraph in article["paragraphs"]
            for s in split_sentences(paragraph["context"])]


@cache
def _kornli_sentences() -> list[str]:
    seen: dict[str, None] = {}
    for name in ("xnli.dev.ko.tsv", "xnli.test.ko.tsv"):
        with open(resources.path("kornli-xnli-ko", name), encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                for key in ("sentence1", "sentence2"):
                    if (row.get(key) or "").strip():
                        seen[row[key].strip()] = None
    return list(seen)
