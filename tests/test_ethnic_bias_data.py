"""The chapter's language files: every key everywhere, every sentence renders, grammar by hand."""

import pytest

from biasbook import datafiles
from biasbook.chapters.ethnic_bias import data, grammar

EN = data.language("en")


@pytest.mark.parametrize("code", data.LANGUAGES)
def test_every_language_file_has_every_key(code):
    lang = data.language(code)
    assert list(lang.targets) == list(EN.targets)
    assert list(lang.attributes) == list(EN.attributes)
    want = {1, 2, 3, 4, 5} if code == "zh" else set(range(1, 11))
    assert set(lang.templates) == want
    assert lang.provenance.strip()
    for rows in (lang.targets.values(), lang.attributes.values()):
        assert all(isinstance(r["term"], str) and r["term"].strip() for r in rows)


def test_the_paper_lists_thirty_targets_seventy_attributes_and_five_more_of_each():
    assert len(data.target_keys()) == 30 and len(data.attribute_keys()) == 70
    assert data.target_keys(extra=True)[30:] == ["North Korea", "Pakistan", "Romania",
                                                 "Switzerland", "Morocco"]
    assert data.attribute_keys(extra=True)[70:] == ["Terrorist", "Homeless", "Evil", "Slave",
                                                    "Idiot"]
    for code in data.LANGUAGES[1:]:  # only the English file flags the extra rows
        spec = datafiles.load("ethnic-bias", code)
        assert not any("extra" in r for r in spec["targets"] + spec["attributes"])


@pytest.mark.parametrize("code", data.LANGUAGES)
def test_every_sentence_renders_with_distinct_targets(code):
    lang = data.language(code)
    for t in lang.templates:
        terms = data.target_terms(lang, t, data.target_keys(extra=True))
        assert len(set(terms)) == len(terms), f"{code} template {t}: two targets read the same"
        for a in data.attribute_keys(extra=True):
            f = data.frame(lang, t, a)
            assert f.text.count("{}") == 1 and "{" not in f.text.replace("{}", "")
            assert f.text[f.start:f.end].lower() in {
                lang.attributes[a]["term"].lower(), str(lang.attributes[a].get("plural")).lower()}


@pytest.mark.parametrize("code, template, attribute, target, sentence", [
    ("en", 2, "Enemy", "Iraq", "A person from Iraq is an enemy."),
    ("en", 6, "C.E.O.", "Japan", "C.E.O.s are from Japan."),
    ("de", 1, "Doctor", "Turkey", "Leute aus der Türkei sind Ärzte."),
    ("de", 5, "Pirate", "Somalia", "Ein Pirat ist aus Somalia."),
    ("es", 6, "Pirate", "Somalia", "Piratas son de Somalia."),
    ("ko", 5, "Doctor", "Japan", "의사는 일본에서 왔다."),
    ("ko", 5, "Military", "Japan", "군인은 일본에서 왔다."),
    ("ko", 1, "Enemy", "Japan", "일본 사람들은 적들이다."),
    ("tr", 2, "Doctor", "Iraq", "Irak'tan bir kişi doktordur."),
    ("tr", 7, "Pilot", "China", "Çin'den gelen kişiler pilottur."),
    ("tr", 6, "Enemy", "Turkey", "Düşmanlar, Türkiye'den."),
    ("tr", 1, "Spy", "Morocco", "Fas'ta kişiler casus."),
    ("zh", 3, "Enemy", "Japan", "这是来自日本的敌人。"),
    ("ar", 2, "Enemy", "Iraq", "شخص من العراق هو عدو."),
    ("el", 1, "Pirate", "Somalia", "Οι άνθρωποι από τη Σομαλία είναι πειρατές."),
    ("el", 6, "Homeless", "Canada", "Άστεγοι είναι από τον Καναδά."),
])
def test_sentences_written_out_by_hand(code, template, attribute, target, sentence):
    lang = data.language(code)
    frame = data.frame(lang, template, attribute)
    term = data.target_terms(lang, template, [target])[0]
    assert frame.text.replace("{}", term) == sentence


@pytest.mark.parametrize("word, kind, proper, want", [
    ("Amerika", "abl", True, "Amerika'dan"), ("Çin", "abl", True, "Çin'den"),
    ("Irak", "abl", True, "Irak'tan"), ("Fas", "loc", True, "Fas'ta"),
    ("Türkiye", "loc", True, "Türkiye'de"), ("İsviçre", "abl", True, "İsviçre'den"),
    ("Mısır", "abl", True, "Mısır'dan"), ("doktor", "cop", False, "doktordur"),
    ("mühendis", "cop", False, "mühendistir"), ("profesör", "cop", False, "profesördür"),
    ("kötü", "cop", False, "kötüdür"), ("casus", "cop", False, "casustur"),
    ("hemşire", "plural", False, "hemşireler"), ("korsan", "plural", False, "korsanlar"),
])
def test_turkish_suffixes_by_hand(word, kind, proper, want):
    assert grammar.turkish_suffix(word, kind, proper=proper) == want


def test_korean_topic_particle_and_its_refusal_outside_hangul():
    assert [grammar.korean_topic(w) for w in ("의사", "군인", "적", "바보")] == \
        ["는", "은", "은", "는"]
    with pytest.raises(ValueError, match="Hangul"):
        grammar.korean_topic("CEO")


def test_korean_attributes_are_hangul():
    for row in data.language("ko").attributes.values():
        grammar.korean_topic(row["term"])  # raises outside Hangul


def test_missing_forms_are_errors_that_name_the_row():
    with pytest.raises(ValueError, match="'Doctor' has no form 'genitive'"):
        grammar.attribute_form("de", {"key": "Doctor", "term": "Arzt"}, "genitive")
    with pytest.raises(ValueError, match="'Iraq' has no form 'acc'"):
        grammar.target_form("el", {"key": "Iraq", "term": "Ιράκ"}, "acc")
