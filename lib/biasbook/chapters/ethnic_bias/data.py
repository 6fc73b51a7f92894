"""The chapter's templates, targets and attributes, from one of two word lists (:data:`WORD_LISTS`).

- ``authors`` (the default): the authors' own published lists, read from the registry resource
  ``ethnic-bias-ahn-oh`` (their repository, MIT licence) by
  :mod:`~biasbook.chapters.ethnic_bias.authors`.
- ``book``: the book's own translations, ``data/ethnic-bias/<language>.yml``.

Either way a language has templates (ids are those of the English template with the same
meaning), targets and attributes, one row per term, keyed by the English term of Appendix A.2.
The book's English file flags the five additional targets and attributes (``extra: true``).

:func:`frame` renders a template with an attribute into a *frame*: the sentence with ``{}`` where
the target goes, and the character span of the attribute itself (what the masked-LM prior masks).
An article or particle that agrees with the attribute is written in its neutral form in the
prior's frame (:data:`grammar.NEUTRAL`), so that the prior cannot tell the masked attribute.

>>> en = language("en")
>>> len(en.templates), len(target_keys()), len(attribute_keys()), len(target_keys(extra=True))
(10, 30, 70, 35)
>>> f = frame(en, 5, "Enemy")
>>> f.text, f.text[f.start:f.end], f.masked("[MASK]")
('An enemy is from {}.', 'enemy', 'A [MASK] is from {}.')
>>> frame(en, 5, "Enemy", mode="as-coded").text      # the authors' template, as their code fills it
'A enemy is from {}.'
>>> target_terms(en, 1, ["America", "North Korea"]), target_terms(en, 1, ["America"], "as-coded")
(['America', 'North Korea'], ['america'])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from biasbook import validate
from biasbook.chapters.ethnic_bias import authors, grammar
from biasbook.chapters.ethnic_bias.languages import LANGUAGES, Language, book_language

#: ``authors``: the authors' published lists (default); ``book``: the book's translations.
WORD_LISTS: tuple[str, ...] = ("authors", "book")
PLACEHOLDER = re.compile(r"\{(target|attribute)(?::(\w+))?\}")


@dataclass(frozen=True)
class Frame:
    """A template with its attribute filled in: ``text`` has ``{}`` for the target;
    ``text[start:end]`` is the attribute's core (article, particle and suffix excluded).
    ``prior``: the frame the prior masks, where it differs (neutral article or particle).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """

    text: str
    start: int
    end: int
    prior: Frame | None = None

    def masked(self, mask: str) -> str:
        """The prior's sentence: its frame with the attribute's core replaced by ``mask``."""
        base = self.prior or self
        return base.text[:base.start] + mask + base.text[base.end:]


def language(code: str, word_lists: str = "authors") -> Language:
    """One language's templates, targets and attributes from ``word_lists`` (module notes).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    validate.choice("word_lists", word_lists, WORD_LISTS)
    # an unknown code fails in book_language, which both lists read first
    return book_language(code) if word_lists == "book" else authors.language(code)


def template_ids(lang: Language, wanted: list[int] | None = None) -> list[int]:
    """The language's templates for the English template ids ``wanted`` (None: all of its own).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.

    An id the language lacks becomes the template that reads the same there (``same_as``:
    Chinese 7, "People who came from ...", is its template 1); repeats are dropped.

    >>> template_ids(language("zh"), [2, 5, 7])
    [2, 5, 1]
    """
    if wanted is None:
        return list(lang.templates)
    ids = [int(t) if int(t) in lang.templates else lang.same_as.get(int(t), int(t))
           for t in wanted]
    unknown = sorted({t for t in ids if t not in lang.templates})
    if unknown:
        raise ValueError(f"templates {unknown} not in {lang.code}; it has {list(lang.templates)}")
    return list(dict.fromkeys(ids))


def target_keys(extra: bool = False) -> list[str]:
    """The 30 targets of A.2 in the paper's order, plus the 5 additional ones if ``extra``.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    rows = book_language("en").targets.values()
    return [r["key"] for r in rows if extra or not r.get("extra")]


def attribute_keys(extra: bool = False) -> list[str]:
    """The 70 attributes of A.2 in the paper's order, plus the 5 additional ones if ``extra``.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    rows = book_language("en").attributes.values()
    return [r["key"] for r in rows if extra or not r.get("extra")]


def _slots(template: str) -> dict[str, str | None]:
    found = {kind: name for kind, name in PLACEHOLDER.findall(template)}
    if sorted(PLACEHOLDER.findall(template)) != sorted(found.items()) or set(found) != {
            "target", "attribute"}:
        raise ValueError(f"template {template!r} needs exactly one {{target}} and one "
                         "{attribute} placeholder")
    return {k: v or None for k, v in found.items()}


def frame(lang: Language, template_id: int, attribute: str, mode: str = "paper") -> Frame:
    """Template ``template_id`` of ``lang`` with ``attribute`` (an English key) filled in.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.

    ``paper``: an article or particle agrees with the attribute, and the prior's frame keeps the
    neutral one; ``as-coded``: the neutral one in both and no capital added at the start, as the
    authors' code fills their templates.
    """
    validate.choice("mode", mode, validate.MODES)
    text = lang.templates[template_id]["text"]
    form = _slots(text)["attribute"]
    row = lang.attributes[attribute]
    paper = mode == "paper"
    neutral = _render(text, grammar.attribute_form(lang.code, row, form, agree=False), paper)
    if not paper:
        return neutral
    filled = _render(text, grammar.attribute_form(lang.code, row, form), paper)
    return filled if filled == neutral else replace(filled, prior=neutral)


def _render(text: str, form: tuple[str, str, str], capital: bool) -> Frame:
    before, core, after = form
    parts, start, end, pos = [], 0, 0, 0
    for match in PLACEHOLDER.finditer(text):
        parts.append(text[pos:match.start()])
        if match.group(1) == "target":
            parts.append("{}")
        else:
            offset = sum(map(len, parts))
            start, end = offset + len(before), offset + len(before) + len(core)
            parts.append(before + core + after)
        pos = match.end()
    parts.append(text[pos:])
    sentence = "".join(parts)
    # A capital starts the sentence ("An enemy is from {}."; no-op without case). The authors'
    # templates have one on a leading article ("A [AAA] is") but not on "[AAAs] are".
    if capital or (before and start == len(before)):
        sentence = sentence[:1].upper() + sentence[1:]
    return Frame(sentence, start, end)


def target_terms(lang: Language, template_id: int, targets: list[str], mode: str = "paper"
                 ) -> list[str]:
    """The strings that fill the target slot of a template, for the targets' English keys.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.

    ``as-coded`` lower-cases them, as the authors' ``how_many_tokens`` does before filling the
    slot (a no-op for their uncased BERTs).
    """
    validate.choice("mode", mode, validate.MODES)
    name = _slots(lang.templates[template_id]["text"])["target"]  # the target form asked for
    terms = [grammar.target_form(lang.code, lang.targets[t], name, lang.target_forms)
             for t in targets]
    return [t.lower() for t in terms] if mode == "as-coded" else terms


def templates_table(codes: Sequence[str] = LANGUAGES, word_lists: str = "authors"
                    ) -> pd.DataFrame:
    """Every template of the languages, one row per English template id, one column per language
    (a language without that id shows the template it reads the same as, in brackets).

    Used in: ethnic-bias/01.

    >>> templates_table(["en", "zh"]).loc[7, "zh"]
    '[1] 来自{target}的人们是{attribute}。'
    """
    rows = {}
    for code in codes:
        lang = language(code, word_lists)
        for t in language("en", word_lists).templates:
            own = template_ids(lang, [t])[0]
            text = lang.templates[own]["text"]
            rows.setdefault(t, {})[code] = text if own == t else f"[{own}] {text}"
    return pd.DataFrame.from_dict(rows, orient="index")[list(codes)]


def terms_table(kind: str, codes: Sequence[str] = LANGUAGES, word_lists: str = "authors"
                ) -> pd.DataFrame:
    """Targets (``kind="targets"``) or attributes as one row per English key, one column per
    language (the term), with the English file's ``extra`` flag, for review.

    Used in: ethnic-bias/01.
    """
    validate.choice("kind", kind, ("targets", "attributes"))
    rows = {}
    for code in codes:
        for key, row in getattr(language(code, word_lists), kind).items():
            rows.setdefault(key, {})[code] = row["term"]
    extra = {r["key"]: bool(r.get("extra")) for r in getattr(book_language("en"), kind).values()}
    out = pd.DataFrame.from_dict(rows, orient="index")[list(codes)]
    out.insert(0, "extra", pd.Series(extra))
    return out


def lists_agreement(codes: Sequence[str] = LANGUAGES) -> pd.DataFrame:
    """Per language, how many templates, attributes and targets the authors publish, and how many
    of them read the same in the book's translations (templates as placeholders, words without
    regard to case).

    Used in: ethnic-bias/01.

    >>> lists_agreement(["en"]).loc["en"].tolist()
    [10, 8, 70, 70, 35, 35]
    """
    rows = {}
    for code in codes:
        theirs, ours = language(code, "authors"), book_language(code)
        row = {"templates": len(theirs.templates),
               "same templates": sum(t["text"] == ours.templates[i]["text"]
                                     for i, t in theirs.templates.items())}
        for kind in ("attributes", "targets"):
            published = [k for k, r in getattr(theirs, kind).items() if r["source"] == "authors"]
            row[kind] = len(published)
            row[f"same {kind}"] = sum(
                getattr(theirs, kind)[k]["term"].casefold()
                == getattr(ours, kind)[k]["term"].casefold() for k in published)
        rows[code] = row
    return pd.DataFrame.from_dict(rows, orient="index")
