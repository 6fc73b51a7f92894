"""A language's word lists as one record (:class:`Language`), and the book's own translations.

Both word lists of the chapter (:data:`.data.WORD_LISTS`) give a :class:`Language`: the book's
translations, ``data/ethnic-bias/<code>.yml``, are read here (:func:`book_language`); the
authors' lists (:mod:`.authors`) take the keys of the book's English file.
:func:`.data.language` picks one.

>>> en = book_language("en")
>>> en.word_lists, len(en.templates), en.targets["America"]["term"]
('book', 10, 'America')
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from biasbook import datafiles

CHAPTER = "ethnic-bias"
#: The paper's six languages (Sec. 5) and the two of Sec. 6.3, in the paper's order.
LANGUAGES: tuple[str, ...] = ("en", "de", "es", "ko", "tr", "zh", "ar", "el")


@dataclass(frozen=True)
class Language:
    """One language file, parsed: rows keyed by their English key.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """

    code: str
    name: str
    templates: dict[int, dict]
    targets: dict[str, dict]
    attributes: dict[str, dict]
    target_forms: dict[str, str]
    provenance: str
    same_as: dict[int, int]
    word_lists: str = "book"


@cache
def book_language(code: str) -> Language:
    """The parsed file ``data/ethnic-bias/<code>.yml`` (the book's translations).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
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
