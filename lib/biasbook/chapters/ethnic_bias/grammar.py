"""Word forms the templates need that follow a rule rather than a list.

- English ``a``: the indefinite article, ``an`` before a vowel letter (``an enemy``, ``a C.E.O.``).
- Korean ``topic``: the topic particle (josa) 은 after a final consonant (batchim), 는 after a
  vowel (``의사는``, ``군인은``). The paper's Korean templates otherwise use particles that do not
  change with the noun (이다, 들은, 에서, A.1); only template 5 needs this one.
- Turkish suffixes follow vowel harmony and devoicing: ablative ``abl`` (-dan/-den/-tan/-ten),
  locative ``loc`` (-da/-de/-ta/-te), ``plural`` (-lar/-ler) and the copula ``cop``
  (-dır/-dir/-dur/-dür, -tır/...), with an apostrophe after a proper noun (``Irak'tan``). The
  paper prints one suffix for all targets (``target 'den``); see the chapter for why we inflect.

A form is returned as ``(before, core, after)``: the core is the attribute itself, the part that
the masked-LM prior replaces by mask tokens; ``before``/``after`` (article, particle, suffix)
stay in the prior sentence, as the paper's Korean templates keep ``[MASK]이다``. A form that
agrees with the attribute would tell the prior something about the masked word ("is an [MASK]":
a vowel follows), so the prior takes the :data:`NEUTRAL` form instead, the one the authors'
templates write for every attribute (``agree=False``). A Turkish suffix is part of the word: the
inflected word is the core, masked whole, as a plural written out in a row is.

>>> english_article("enemy"), english_article("C.E.O.")
('an', 'a')
>>> korean_topic("의사"), korean_topic("군인")
('는', '은')
>>> turkish_suffix("Irak", "abl", proper=True), turkish_suffix("doktor", "cop")
("Irak'tan", 'doktordur')
>>> attribute_form("en", {"key": "Enemy", "term": "enemy"}, "a", agree=False)
('a ', 'enemy', '')
"""

from __future__ import annotations

_TR_VOWELS = "aeıioöuü"
_TR_BACK = "aıou"
_TR_VOICELESS = "çfhkpsşt"
# Copula vowel by the last vowel of the word (four-way harmony).
_TR_HIGH = {"a": "ı", "ı": "ı", "o": "u", "u": "u", "e": "i", "i": "i", "ö": "ü", "ü": "ü"}
#: (language, form) -> (before, after) written for every attribute alike: the article and the
#: particle of the authors' templates ("a [AAA]", "[AAA]는").
NEUTRAL = {("en", "a"): ("a ", ""), ("ko", "topic"): ("", "는")}


def english_article(word: str) -> str:
    """``an`` before a vowel letter, else ``a`` (the attribute lists need no exceptions).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    return "an" if word[:1].lower() in "aeiou" else "a"


def korean_topic(word: str) -> str:
    """은 if the last Hangul syllable has a final consonant, else 는.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    code = ord(word[-1]) - 0xAC00
    if not 0 <= code < 11172:
        raise ValueError(f"{word!r} does not end in a Hangul syllable: write the josa by hand "
                         "in the data file (forms: {topic: ...})")
    return "은" if code % 28 else "는"


def _turkish_lower(text: str) -> str:
    return text.replace("I", "ı").replace("İ", "i").lower()


def _last_vowel(word: str) -> str:
    for ch in reversed(_turkish_lower(word)):
        if ch in _TR_VOWELS:
            return ch
    raise ValueError(f"{word!r} has no Turkish vowel")


def turkish_suffix(word: str, kind: str, *, proper: bool = False) -> str:
    """``word`` with the suffix ``kind`` (``abl``, ``loc``, ``plural``, ``cop``) in harmony.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.

    Proper nouns take an apostrophe before the suffix.
    """
    vowel = _last_vowel(word)
    back = vowel in _TR_BACK
    d = "t" if _turkish_lower(word)[-1] in _TR_VOICELESS else "d"  # devoicing
    suffix = {"abl": d + ("an" if back else "en"), "loc": d + ("a" if back else "e"),
              "plural": "lar" if back else "ler", "cop": d + _TR_HIGH[vowel] + "r"}.get(kind)
    if suffix is None:
        raise ValueError(f"unknown Turkish suffix {kind!r}; known: abl, loc, plural, cop")
    return word + ("'" if proper else "") + suffix


def attribute_form(language: str, row: dict, name: str | None, *, agree: bool = True
                   ) -> tuple[str, str, str]:
    """(before, core, after) of an attribute row in form ``name`` (None: the term).

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.

    A form given in the row (``forms: {name: ...}``, or ``plural``) is used as it stands, whole
    as the core; otherwise English ``a``, Korean ``topic`` and Turkish ``plural``/``cop`` follow
    the rules above, or with ``agree=False`` take their :data:`NEUTRAL` form. Any other missing
    form is an error naming the row.
    """
    term = row["term"]
    if name is None:
        return "", term, ""
    given = {**({"plural": row["plural"]} if row.get("plural") else {}), **row.get("forms", {})}
    if name in given:
        return "", given[name], ""
    if not agree and (language, name) in NEUTRAL:
        before, after = NEUTRAL[(language, name)]
        return before, term, after
    if language == "en" and name == "a":
        return english_article(term) + " ", term, ""
    if language == "ko" and name == "topic":
        return "", term, korean_topic(term)
    if language == "tr" and name in ("plural", "cop"):
        return "", turkish_suffix(term, name), ""
    raise ValueError(f"{language}: attribute {row['key']!r} has no form {name!r}; add it to "
                     f"data/ethnic-bias/{language}.yml")


def target_form(language: str, row: dict, name: str | None, defaults: dict | None = None) -> str:
    """A target row in form ``name``: given in the row, computed (Turkish ``abl``/``loc``), or
    the term where the file declares ``target_forms: {name: term}``.

    Used in: ethnic-bias/01, ethnic-bias/02, ethnic-bias/03, ethnic-bias/04, biasbook plan,
        book/class/ethnic-bias, book/trust.
    """
    if name is None:
        return row["term"]
    if name in row.get("forms", {}):
        return row["forms"][name]
    if language == "tr" and name in ("abl", "loc"):
        return turkish_suffix(row["term"], name, proper=True)
    if (defaults or {}).get(name) == "term":
        return row["term"]
    raise ValueError(f"{language}: target {row['key']!r} has no form {name!r}; add it to "
                     f"data/ethnic-bias/{language}.yml")
