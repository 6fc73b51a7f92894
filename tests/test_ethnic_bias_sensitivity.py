"""The English CB score's template sensitivity (notebook 02, "Robustness to rewording")."""

import numpy as np
import pytest

from biasbook.chapters.ethnic_bias import data, languages, sensitivity
from biasbook.chapters.ethnic_bias.pipeline import cb_scores

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

TARGETS = ["Iraq", "Japan", "Cuba", "Spain"]
ATTRIBUTES = ["Enemy", "Pirate", "Doctor"]


@pytest.fixture(scope="module")
def lms(spell_models):
    return spell_models


def test_the_books_paraphrase_sets_load_with_the_originals_slots():
    sets = sensitivity.paraphrase_sets()
    assert len(sets) >= 2
    english = languages.book_language("en").templates
    for s in sets.values():
        assert s.templates
        for tid, text in s.templates.items():
            assert text != english[tid]["text"]
            assert sensitivity._slots(text) == sensitivity._slots(english[tid]["text"])
    table = sensitivity.paraphrase_table(sets)
    assert table.columns.tolist() == ["template", "original", *sets]


@pytest.mark.parametrize("text, has", [("Someone is {attribute:a}.", "{attribute:a}"),
                                       ("Someone from {target} is nice.", "{target}"),
                                       ("People from {target} are {attribute:plural}.",
                                        "{attribute:plural}, {target}"),
                                       ("{target} and {target} are {attribute:a}.",
                                        "{attribute:a}, {target}, {target}")])
def test_a_rewording_without_the_originals_slots_is_refused_by_name(text, has):
    with pytest.raises(ValueError, match=f"it has {has}$"):
        sensitivity.check_template(text, "A person from {target} is {attribute:a}.")


def test_unknown_sets_and_non_english_languages_are_refused():
    with pytest.raises(KeyError, match="not in data/ethnic-bias/paraphrases.yml"):
        sensitivity.paraphrase_sets(["no-such-set"])
    with pytest.raises(ValueError, match="English"):
        sensitivity.reworded_language(data.language("de"), {2: "x"})
    with pytest.raises(ValueError, match="slots"):
        sensitivity.reworded_language(data.language("en"), {2: "Someone is here."})


@pytest.mark.parametrize("arch", ["gpt2", "bert"])
def test_cb_scores_of_a_language_object_is_cb_scores_of_its_code(lms, arch):
    lm = lms[arch]
    theirs = cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=[2, 5],
                       cache=False)
    ours = cb_scores(lm, data.language("en"), targets=TARGETS, attributes=ATTRIBUTES,
                     templates=[2, 5], cache=False)
    assert np.array_equal(ours.log_p_target, theirs.log_p_target)
    assert np.array_equal(ours.log_p_prior, theirs.log_p_prior)
    assert ours.cb == theirs.cb and ours.word_lists == theirs.word_lists


def run(lm, templates=(2, 5, 7)):
    return cb_scores(lm, "en", targets=TARGETS, attributes=ATTRIBUTES, templates=list(templates))


def test_rewording_with_the_original_text_changes_nothing(lms, monkeypatch):
    lm = lms["gpt2"]
    full = run(lm)
    en = data.language("en").templates
    same = sensitivity.ParaphraseSet("same", "test", {2: en[2]["text"], 5: en[5]["text"]})
    reworded = sensitivity.score_sets(lm, full, {"same": same})
    assert reworded["same"].templates == (2, 5)
    frame = sensitivity.rewording_table([("monolingual", full)], {lm.name: reworded},
                                        n_resamples=199).set_index("template_set")
    assert frame.loc["same", "value"] == frame.loc["original", "value"]
    assert frame.loc["same", "change"] == 0 and frame.loc["same", "relative"] == 0
    assert frame.loc["original", "headline"] == pytest.approx(full.cb)
    assert frame.loc["original", "value"] == pytest.approx(full.subset(templates=[2, 5]).cb)


def test_a_real_rewording_is_scored_on_the_runs_template_ids_only(lms):
    lm = lms["bert"]
    sets = sensitivity.paraphrase_sets()
    full = run(lm, templates=(2, 7))  # the smoke-like run: 5 is not scored, so not compared
    reworded = sensitivity.score_sets(lm, full, sets)
    assert set(reworded) == set(sets) and all(r.templates == (2,) for r in reworded.values())
    assert all(r.attributes == tuple(ATTRIBUTES) for r in reworded.values())
    frame = sensitivity.rewording_table([("monolingual", full)], {lm.name: reworded},
                                        n_resamples=199)
    moved = frame[frame["template_set"] != "original"]
    assert (moved["change"] != 0).all()  # other sentences, other scores
    assert (moved["change"] == moved["value"] - frame["value"].iloc[0]).all()
    assert moved["p_holm"].notna().all() and (moved["p_holm"] >= moved["p_value"]).all()
    assert (moved["change ci_low"] <= moved["change"]).all()
    assert (moved["change ci_unit"] == "template x attribute cells").all()
    assert sensitivity.score_sets(lm, cb_scores(lm, "de", targets=TARGETS,
                                                attributes=ATTRIBUTES, templates=[2]),
                                  sets) == {}



def test_a_run_without_english_gives_the_columns_and_no_rows(lms):
    lm = lms["gpt2"]
    german = cb_scores(lm, "de", targets=TARGETS, attributes=ATTRIBUTES, templates=[2])
    frame = sensitivity.rewording_table([("multilingual", german)], {lm.name: {}})
    assert frame.empty and {"template_set", "model", "value", "change"} <= set(frame.columns)
