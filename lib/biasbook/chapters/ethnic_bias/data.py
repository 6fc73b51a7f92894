"""The chapter's templates, targets and attributes (``data/ethnic-bias/<language>.yml``).

Each language file lists templates (ids are those of the English template with the same meaning),
targets and attributes, one row per term, keyed by the English term of Appendix A.2. The English
file flags the five additional targets and attributes (``extra: true``).

:func:`frames` renders a template with an attribute into a *frame*: the sentence with ``{}`` where
the target goes, and the character span of the attribute itself (what the masked-LM prior masks).

>>> en = language("en")
>>> len(en.templates), len(target_keys()), len(attribute_keys()), len(target_keys(extra=True))
(10, 30, 70, 35)
>>> f = frame(en, 5, "Enemy")
>>> f.text, f.text[f.start:f.end]
('An enemy is from {}.', 'enemy')
>>> target_terms(en, 1, ["America", "Iraq"])
['America', 'Iraq']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import pandas as pd

from biasbook import datafiles
from biasbook.chapters.ethnic_bias import grammar

CHAPTER = "ethnic-bias"
#: The paper's six languages (Sec. 5) and the two of Sec. 6.3, in the paper's order.
LANGUAGES: tuple[str, ...] = ("en", "de", "es", "ko", "tr", "zh", "ar", "el")
PLACEHOLDER = re.compile(r"\{(target|attribute)(?::(\w+))?\}")


@dataclass(frozen=True)
class Language:
    """One language file, parsed: rows keyed by their English key."""

    code: str
    name: str
    templates: dict[int, dict]
    targets: dict[str, dict]
    attributes: dict[str, dict]
    target_forms: dict[str, str]
    provenance: str
    same_as: dict[int, int]


@dataclass(frozen=True)
class Frame:
    """A template with its attribute filled in: ``text`` has ``{}`` for the target;
    ``text[start:end]`` is the attribute's core (article, particle and suffix excluded)."""

    text: str
    start: int
    end: int

    def masked(self, mask: str) -> str:
        """The frame with the attribute's core replaced by ``mask`` (the prior's sentence)."""
        return self.text[:self.start] + mask + self.text[self.end:]


@cache
def language(code: str) -> Language:
    """The parsed file ``data/ethnic-bias/<code>.yml``."""
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; the chapter has {', '.join(LANGUAGES)}")
    spec = datafiles.load(CHAPTER, code)
    return Language(code=code, name=spec["name"],
                    templates={int(t["id"]): t for t in spec["templates"]},
                    targets={r["key"]: r for r in spec["targets"]},
                    attributes={r["key"]: r for r in spec["attributes"]},
                    target_forms=spec.get("target_forms") or {},
                    provenance=spec["provenance"],
                    same_as={int(k): int(v) for k, v in (spec.get("same_as") or {}).items()})


def template_ids(lang: Language, wanted: list[int] | None = None) -> list[int]:
    """The language's templates for the English template ids ``wanted`` (None: all of its own).

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
    """The 30 targets of A.2 in the paper's order, plus the 5 additional ones if ``extra``."""
    rows = language("en").targets.values()
    return [r["key"] for r in rows if extra or not r.get("extra")]


def attribute_keys(extra: bool = False) -> list[str]:
    """The 70 attributes of A.2 in the paper's order, plus the 5 additional ones if ``extra``."""
    rows = language("en").attributes.values()
    return [r["key"] for r in rows if extra or not r.get("extra")]


def _slots(template: str) -> dict[str, str | None]:
    found = {kind: name for kind, name in PLACEHOLDER.findall(template)}
    if sorted(PLACEHOLDER.findall(template)) != sorted(found.items()) or set(found) != {
            "target", "attribute"}:
        raise ValueError(f"template {template!r} needs exactly one {{target}} and one "
                         "{attribute} placeholder")
    return {k: v or None for k, v in found.items()}


def frame(lang: Language, template_id: int, attribute: str) -> Frame:
    """Template ``template_id`` of ``lang`` with ``attribute`` (an English key) filled in."""
    text = lang.templates[template_id]["text"]
    form = _slots(text)["attribute"]
    before, core, after = grammar.attribute_form(lang.code, lang.attributes[attribute], form)
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
    # A sentence starts with a capital letter ("An enemy is from {}."; no-op without case).
    return Frame(sentence[:1].upper() + sentence[1:], start, end)


def target_form_name(lang: Language, template_id: int) -> str | None:
    """The target form template ``template_id`` asks for (None: the bare term)."""
    return _slots(lang.templates[template_id]["text"])["target"]


def target_terms(lang: Language, template_id: int, targets: list[str]) -> list[str]:
    """The strings that fill the target slot of a template, for the targets' English keys."""
    name = target_form_name(lang, template_id)
    return [grammar.target_form(lang.code, lang.targets[t], name, lang.target_forms)
            for t in targets]


def templates_table(codes: Sequence[str] = LANGUAGES) -> pd.DataFrame:
    """Every template of the languages, one row per English template id, one column per language
    (a language without that id shows the template it reads the same as, in brackets).

    >>> templates_table(["en", "zh"]).loc[7, "zh"]
    '[1] 来自{target}的人们是{attribute}。'
    """
    rows = {}
    for code in codes:
        lang = language(code)
        for t in language("en").templates:
            own = template_ids(lang, [t])[0]
            text = lang.templates[own]["text"]
            rows.setdefault(t, {})[code] = text if own == t else f"[{own}] {text}"
    return pd.DataFrame.from_dict(rows, orient="index")[list(codes)]


def terms_table(kind: str, codes: Sequence[str] = LANGUAGES) -> pd.DataFrame:
    """Targets (``kind="targets"``) or attributes as one row per English key, one column per
    language (the term), with the English file's ``extra`` flag, for review."""
    rows = {}
    for code in codes:
        for key, row in getattr(language(code), kind).items():
            rows.setdefault(key, {})[code] = row["term"]
    extra = {r["key"]: bool(r.get("extra")) for r in getattr(language("en"), kind).values()}
    out = pd.DataFrame.from_dict(rows, orient="index")[list(codes)]
    out.insert(0, "extra", pd.Series(extra))
    return out
