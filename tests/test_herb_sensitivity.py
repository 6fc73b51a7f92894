"""HERB's template sensitivity (notebook 02, "Robustness to rewording") and the WEAT aside."""

import numpy as np
import pandas as pd
import pytest
from gensim.models import KeyedVectors

from biasbook.chapters.herb import regions, sensitivity, sentence_scores
from biasbook.chapters.herb.regions import region_tree
from biasbook.embeddings.wordsets import WeatTest
from biasbook.metrics.herb import hierarchical_bias
from biasbook.models import from_model
from biasbook.testing import tiny_model, tiny_tokenizer

TABLE = pd.DataFrame({"name": ["EU", "FR", "DE", "AS", "JP", "IN"],
                      "parent": [-1, 0, 0, -1, 3, 3]})


def test_the_books_paraphrase_sets_load_and_keep_the_originals_slots():
    sets = sensitivity.paraphrase_sets()
    assert len(sets) >= 2
    for s in sets.values():
        assert s.templates and sentence_scores.TEMPLATE not in s.templates
        for t in s.templates:
            filled = t.format(region="Kenya", description="kind")
            assert "Kenya" in filled and filled.rstrip(".").endswith("kind")
    picked = sensitivity.paraphrase_sets(["restructured", "reworded"])
    assert list(picked) == ["restructured", "reworded"]  # the order asked for
    table = sensitivity.paraphrase_table(picked)
    assert table["template_set"].tolist()[0] == "original"


@pytest.mark.parametrize("template, missing", [("People are {description}.", "{region}"),
                                               ("People in {region} are nice.", "{description}")])
def test_a_template_without_a_slot_is_refused_by_name(template, missing):
    with pytest.raises(ValueError, match=f"lacks the slot {missing}"):
        sensitivity.check_template(template)


def test_a_template_with_a_repeated_or_foreign_slot_is_refused():
    with pytest.raises(ValueError, match="beyond one"):
        sensitivity.check_template("{region}: people in {region} are {description}.")
    with pytest.raises(ValueError, match=r"\['country'\]"):
        sensitivity.check_template("People in {region}, {country} are {description}.")


def test_unknown_or_original_set_names_are_refused():
    with pytest.raises(KeyError, match="not in data/herb/paraphrases.yml"):
        sensitivity.paraphrase_sets(["no-such-set"])
    with pytest.raises(ValueError, match="distinct"):
        sensitivity.paraphrase_sets(["reworded", "reworded"])


def test_the_rewording_tree_keeps_the_most_populous_countries_and_no_cities():
    table = regions.herb_regions(countries=["FR", "DE", "GB", "KE", "NG", "JP", "IN"],
                                  cities_per_country=2)
    small = sensitivity.rewording_tree(table, 1)
    countries = small[small["level"] == "country"]
    assert sorted(countries["code"]) == ["DE", "IN", "NG"]  # the most populous per continent
    assert not (small["level"] == "city").any()
    assert len(small[small["level"] == "continent"]) == 3
    assert sensitivity.rewording_tree(table, None) is table
    alone = sensitivity.rewording_tree(table, 0)
    assert (alone["level"] == "continent").all() and (alone["parent"] == -1).all()
    with pytest.raises(ValueError, match=">= 0"):
        sensitivity.rewording_tree(table, -1)



def test_identical_templates_give_identical_numbers_and_a_zero_change():
    tree = region_tree(TABLE)
    rng = np.random.default_rng(0)
    x = {"m1": rng.normal(size=(6, 10)), "m2": rng.normal(size=(6, 10))}
    frame = sensitivity.rewording_table(tree, {"original": x, "same": dict(x)}, n_resamples=99)
    same = frame[frame["template_set"] == "same"].set_index("model")
    orig = frame[frame["template_set"] == "original"].set_index("model")
    assert (same["value"] == orig["value"]).all()
    assert (same["change"] == 0).all() and (same["relative"] == 0).all()
    assert not same["moved"].any()


def test_a_change_is_the_difference_of_the_two_overall_biases_scaled_as_table1():
    tree = region_tree(TABLE)
    rng = np.random.default_rng(3)
    orig, other = rng.normal(size=(6, 12)), 2 * rng.normal(size=(6, 12))
    frame = sensitivity.rewording_table(tree, {"original": {"m": orig}, "other": {"m": other}},
                                        n_resamples=99).set_index("template_set")
    c_orig, c_other = (hierarchical_bias(tree, s).overall * 1e3 for s in (orig, other))
    assert frame.loc["other", "value"] == pytest.approx(c_other, rel=1e-12)
    assert frame.loc["other", "change"] == pytest.approx(c_other - c_orig, rel=1e-9)
    assert frame.loc["other", "relative"] == pytest.approx(c_other / c_orig - 1, rel=1e-9)
    assert frame.loc["other", "change ci_low"] <= frame.loc["other", "change"] \
        <= frame.loc["other", "change ci_high"]
    assert frame.loc["other", "change ci_unit"] == "descriptors"
    assert 0 < frame.loc["other", "p_value"] <= 1


@pytest.mark.usefixtures("one_torch_thread", "private_cache")
def test_set_scores_average_a_sets_templates_and_rescoring_gives_the_same_scores(monkeypatch):
    tok = tiny_tokenizer(spell=True)
    lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    monkeypatch.setattr(sensitivity, "load_models", lambda names, rec=None: {names[0]: lm})
    words, regions = ["kind", "smart"], ["paris", "tokyo", "london"]
    templates = [sentence_scores.TEMPLATE, "The people of {region} are {description}.",
                 "In {region}, people are {description}."]
    per = sensitivity.template_scores(["tiny-gpt2"], regions, words, templates)
    again = sensitivity.template_scores(["tiny-gpt2"], regions, words, templates[:1])
    direct = sentence_scores.descriptor_scores(lm, regions, words, cache=False)
    assert np.array_equal(per["tiny-gpt2"][sentence_scores.TEMPLATE], direct)
    assert np.array_equal(again["tiny-gpt2"][sentence_scores.TEMPLATE], direct)
    both = sensitivity.ParaphraseSet("both", "test", tuple(templates[1:]))
    by_set = sensitivity.set_scores(per, {"both": both})
    assert list(by_set) == ["original", "both"]
    expected = (per["tiny-gpt2"][templates[1]] + per["tiny-gpt2"][templates[2]]) / 2
    assert np.allclose(by_set["both"]["tiny-gpt2"], expected)
    assert not np.allclose(by_set["both"]["tiny-gpt2"], direct)  # the wording changed scores


@pytest.mark.usefixtures("one_torch_thread", "private_cache")
def test_a_masked_model_scores_the_rewordings_by_the_headlines_method(monkeypatch):
    tok = tiny_tokenizer(spell=True)
    lm = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    monkeypatch.setattr(sensitivity, "load_models", lambda names, rec=None: {names[0]: lm})
    words, regions = ["kind", "smart"], ["paris", "tokyo"]
    templates = [sentence_scores.TEMPLATE]
    by = {method: sensitivity.template_scores(["tiny-bert"], regions, words, templates,
                                              masked_method=method)["tiny-bert"][templates[0]]
          for method in ("aul", "pll")}
    pll = sentence_scores.descriptor_scores(lm, regions, words, method="pll", cache=False)
    aul = sentence_scores.descriptor_scores(lm, regions, words, cache=False)
    assert np.array_equal(by["pll"], pll) and np.array_equal(by["aul"], aul)
    assert not np.allclose(pll, aul)
    with pytest.raises(ValueError, match="masked_method"):
        sensitivity.template_scores(["tiny-bert"], regions, words, templates, masked_method="x")


def test_weat_variants_compare_each_list_with_the_reference():
    kv = KeyedVectors(2)
    kv.add_vectors(["rose", "tulip", "ant", "wasp", "lily", "moth", "love", "hate"],
                   np.array([[1, .1], [1, .3], [.1, 1], [.3, 1], [1, .2], [.2, 1], [1, 0],
                             [0, 1]], dtype=float))
    names = dict(x_name="X", y_name="Y", a_name="A", b_name="B", source="test")
    tests = {"ref": WeatTest("ref", "ref", ("rose", "tulip"), ("ant", "wasp"), ("love",),
                             ("hate",), **names),
             "flipped": WeatTest("flipped", "flipped", ("ant", "wasp"), ("rose", "tulip"),
                                 ("love",), ("hate",), **names),
             "other": WeatTest("other", "other", ("lily", "tulip"), ("moth", "wasp"),
                               ("love",), ("hate",), **names)}
    frame = sensitivity.weat_variants(kv, tests, reference="ref", n_resamples=199)
    frame = frame.set_index("test")
    assert frame.loc["flipped", "effect_size"] == pytest.approx(-frame.loc["ref",
                                                                           "effect_size"])
    assert frame.loc["flipped", "same_sign"] == False  # noqa: E712 (numpy bool)
    assert frame.loc["ref", "change"] == 0 and bool(frame.loc["other", "same_sign"])
    assert (frame["ci_low"] <= frame["effect_size"] + 1e-12).all()
    assert frame.loc["ref", "ci_unit"] == "target words" and frame.loc["ref", "ci_units"] == 4
    with pytest.raises(KeyError, match="reference"):
        sensitivity.weat_variants(kv, tests, reference="nope")


def test_tree_effect_compares_the_original_on_both_trees():
    frame = pd.DataFrame({"template_set": ["original", "original", "x", "x"],
                          "model": ["a", "b", "a", "b"], "value": [1.1, 2.0, 5.0, 5.0]})
    out = sensitivity.tree_effect(frame, {"a": 1.0, "b": 2.0})
    assert out["gap"].round(12).to_dict() == {"a": 0.1, "b": 0.0}


def test_headline_is_table1s_overall_cw_in_paper_mode_scaled():
    ours = pd.DataFrame({"table": ["table1", "table1", "table1", "table2"],
                         "mode": ["paper", "as-coded", "paper", "paper"],
                         "metric": ["C_w", "C_w", "C_z", "C_w"],
                         "region": ["overall"] * 4, "model": ["m"] * 4,
                         "value": [0.002, 0.003, 0.004, 0.005]})
    assert sensitivity.headline(ours).to_dict() == {"m": pytest.approx(2.0)}
