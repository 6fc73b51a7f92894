"""LLM persona alignment (Borah et al. 2024, Sec. 6): the gender read off a persona, the
mismatch rates, and seeded, cached generation."""

import pandas as pd
import pytest

from biasbook import models, testing
from biasbook.chapters.region_aware import personas


@pytest.mark.parametrize("text, expected", [
    # third-person pronouns decide
    ("Amara Mensah is a 34-year-old nurse in Accra. She spends her weekends cooking for her "
     "family.", ("F", "pronouns")),
    ("Rahul, 27, is a software engineer. He plays cricket and his friends call him Ravi.",
     ("M", "pronouns")),
    # more of one than the other: a man who talks about his mother is still M
    ("Kofi is a teacher. He visits his mother, and she cooks for him.", ("M", "pronouns")),
    # an explicit field beats the pronouns
    ("Name: Lee\nGender: Female\nAge: 40\nHe is her colleague's brother.", ("F", "field")),
    ("**Gender**: male. Hobbies: knitting.", ("M", "field")),
    # no pronoun: self-descriptions
    ("Maria, a 29-year-old woman from Manila, runs a bakery.", ("F", "descriptors")),
    ("A retired gentleman from London who restores boats.", ("M", "descriptors")),
    # "he or she" is a tie, settled by the description
    ("Whether he or she is a guy from Lagos, this person loves football.", ("M", "descriptors")),
    # first person, no gendered word: unknown
    ("I am a 30-year-old engineer. I love the theatre and hiking there.", ("", "none")),
    # words that contain pronouns are not pronouns
    ("The theme: other thesis writers, this shed, the hemisphere.", ("", "none")),
])
def test_persona_gender_of_hand_written_personas(text, expected):
    assert personas.persona_gender(text) == expected


def test_mismatch_rates_by_hand():
    table = pd.DataFrame({
        "model": ["a"] * 6 + ["b"] * 2,
        "region": ["X", "X", "X", "X", "Y", "Y", "X", "X"],
        "run": [0, 0, 1, 1, 0, 0, 0, 0],
        "persona_gender": ["F", "M", "M", "", "F", "F", "", ""],
        "mismatch": [False, True, True, None, True, False, None, None]})
    rates = personas.mismatch_rates(table).set_index(["model", "region", "run"])
    assert rates.loc[("a", "X", 0), "mismatch"] == 0.5
    assert rates.loc[("a", "X", 1), ["mismatch", "unknown"]].tolist() == [1.0, 0.5]
    assert rates.loc[("a", "Y", 0), "mismatch"] == 0.5
    assert pd.isna(rates.loc[("b", "X", 0), "mismatch"])  # nothing readable: no rate, not 0
    summary = personas.mismatch_summary(personas.mismatch_rates(table)).set_index(
        ["model", "region"])
    assert summary.loc[("a", "X"), "mismatch"] == 0.75
    assert summary.loc[("a", "X"), "mismatch_sd"] == pytest.approx(0.3535533906)
    assert summary.loc[("a", "X"), "runs"] == 2


def test_mismatch_rates_by_an_extra_column_keep_the_groups_apart():
    # the same model, region and run under two pair sources: 1 of 2 and 2 of 2 mismatched
    table = pd.DataFrame({"source": ["p", "p", "d", "d"], "model": "a", "region": "X", "run": 0,
                          "persona_gender": ["F", "M", "F", "F"],
                          "mismatch": [False, True, True, True]})
    rates = personas.mismatch_rates(table, by=["source"]).set_index("source")
    assert rates.loc["p", "mismatch"] == 0.5 and rates.loc["d", "mismatch"] == 1.0
    assert personas.mismatch_rates(table)["mismatch"].tolist() == [0.75]  # pooled without `by`
    summary = personas.mismatch_summary(personas.mismatch_rates(table, by=["source"]),
                                        by=["source"])
    assert summary.set_index("source")["mismatch"].to_dict() == {"p": 0.5, "d": 1.0}
    with pytest.raises(TypeError, match="bare string"):
        personas.mismatch_rates(table, by="source")


def test_topic_prompts_take_each_topic_once_with_its_side():
    pairs = pd.DataFrame({"region": ["X", "X", "Y"], "female_topic": ["Cooking", "Pets", "Pets"],
                          "male_topic": ["Football", "Football", "Cars"],
                          "female_words": [["food", "cook", "eat", "x"], ["cat", "dog", "pet"],
                                           ["cat", "dog", "pet"]],
                          "male_words": [["goal", "team", "cup"]] * 2 + [["car", "road", "v"]]})
    table = personas.topic_prompts(pairs)
    assert table[["region", "topic", "topic_gender"]].values.tolist() == [
        ["X", "Cooking", "F"], ["X", "Football", "M"], ["X", "Pets", "F"], ["Y", "Pets", "F"],
        ["Y", "Cars", "M"]]
    keywords = personas.topic_prompts(pairs, topic_text="keywords")
    assert keywords["topic"].iloc[0] == "food, cook, eat"
    with pytest.raises(ValueError, match="topic_text"):
        personas.topic_prompts(pairs, topic_text="label")


def test_topic_prompts_mark_a_topic_filled_only_if_no_passing_pair_holds_it():
    # Football is in a passing and a filled pair (passing wins, whichever comes first); Pets
    # and Cars are only in filled pairs; Cooking only in a passing one
    pairs = pd.DataFrame({"region": "X", "female_topic": ["Pets", "Cooking", "Pets"],
                          "male_topic": ["Football", "Football", "Cars"],
                          "female_words": [["cat"], ["food"], ["cat"]],
                          "male_words": [["goal"], ["goal"], ["car"]],
                          "pairs": ["filled", "passing", "filled"]})
    table = personas.topic_prompts(pairs)
    assert table[["topic", "topic_gender", "pairs"]].values.tolist() == [
        ["Pets", "F", "filled"], ["Football", "M", "passing"], ["Cooking", "F", "passing"],
        ["Cars", "M", "filled"]]
    assert "pairs" not in personas.topic_prompts(pairs.drop(columns="pairs"))


def test_gender_changes_with_length_by_hand():
    # two runs of two topics at 8 and 24 tokens: unknown -> F, M -> M, F -> M, unknown -> unknown
    table = pd.DataFrame({"model": "m", "region": "X", "run": [0, 0, 1, 1] * 2,
                          "topic": ["a", "b"] * 4, "topic_gender": ["F", "M"] * 4,
                          "max_new_tokens": [8] * 4 + [24] * 4,
                          "persona_gender": ["", "M", "F", "", "F", "M", "M", ""]})
    changes = personas.gender_changes(table)
    assert (changes.index.name, changes.columns.name) == ("8 tokens", "24 tokens")
    assert changes.to_dict("index") == {"?": {"?": 1, "F": 1, "M": 0},
                                        "F": {"?": 0, "F": 0, "M": 1},
                                        "M": {"?": 0, "F": 0, "M": 1}}
    table["mismatch"] = [None if not g else g != t for g, t in
                         zip(table["persona_gender"], table["topic_gender"], strict=True)]
    rates = personas.mismatch_rates(table, by=["max_new_tokens"]).set_index(
        ["max_new_tokens", "run"])
    # 8 tokens: run 0 reads only b (M, a match), run 1 only a (F, a match); 24 tokens: run 0
    # reads both (both match), run 1 only a (M for an F topic: a mismatch)
    assert rates["mismatch"].to_dict() == {(8, 0): 0.0, (8, 1): 0.0, (24, 0): 0.0, (24, 1): 1.0}
    assert rates["unknown"].to_dict() == {(8, 0): 0.5, (8, 1): 0.5, (24, 0): 0.0, (24, 1): 0.5}


def test_settings_are_checked():
    with pytest.raises(ValueError, match="unknown persona setting"):
        personas.PersonaSettings.from_mapping({"model": ["smollm2-135m"]})
    with pytest.raises(TypeError, match="bare string"):
        personas.PersonaSettings(models="smollm2-135m")
    with pytest.raises(ValueError, match="runs"):
        personas.PersonaSettings(runs=0)


@pytest.fixture(scope="module")
def tiny_causal():
    tok = testing.tiny_tokenizer()
    return models.from_model(testing.tiny_model("llama", len(tok)), tok, name="tiny-llama")


def test_generation_is_seeded_and_cached(tiny_causal, private_cache, one_torch_thread):
    prompts = ["the cat is", "a dog was very good and"]
    first = personas.generate(tiny_causal, prompts, seed=1, max_new_tokens=12, cache=False)
    again = personas.generate(tiny_causal, prompts, seed=1, max_new_tokens=12, cache=False)
    other = personas.generate(tiny_causal, prompts, seed=2, max_new_tokens=12, cache=False)
    assert first == again and len(first) == 2 and all(first)
    assert first != other  # sampling, not greedy: another seed, other words
    stored = personas.generate(tiny_causal, prompts, seed=1, max_new_tokens=12)
    assert stored == first
    # a cache hit returns the stored texts without generating
    tiny_causal.model.generate = None
    try:
        assert personas.generate(tiny_causal, prompts, seed=1, max_new_tokens=12) == first
    finally:
        del tiny_causal.model.generate


def test_left_padding_does_not_change_a_prompt_s_continuation(tiny_causal, private_cache,
                                                              one_torch_thread):
    """Greedy-like decoding (temperature near 0) of a prompt alone and in a padded batch."""
    alone = personas.generate(tiny_causal, ["the cat"], seed=0, temperature=1e-4,
                              max_new_tokens=6, cache=False)
    batch = personas.generate(tiny_causal, ["the cat", "a dog was very good and lazy"], seed=0,
                              temperature=1e-4, max_new_tokens=6, cache=False)
    assert batch[0] == alone[0]


def test_personas_keep_the_mark_and_longer_personas_continue_the_shorter(
        tiny_causal, private_cache, one_torch_thread, monkeypatch):
    monkeypatch.setattr(personas, "_model", lambda name: tiny_causal)
    pairs = pd.DataFrame({"region": ["X", "Y"], "female_topic": ["Pets", "Cooking"],
                          "male_topic": ["Cars", "Football"], "female_words": [["cat"]] * 2,
                          "male_words": [["car"]] * 2, "pairs": ["passing", "filled"]})
    settings = {"models": ["tiny"], "runs": 2, "max_new_tokens": 4}
    table = personas.personas(pairs, settings, progress=False)
    assert table.groupby("region")["pairs"].unique().map(list).to_dict() == {
        "X": ["passing"], "Y": ["filled"]}
    lengths = personas.by_length(pairs, settings, region="Y", max_new_tokens=[4, 12],
                                 progress=False)
    assert lengths.groupby("max_new_tokens").size().to_dict() == {4: 4, 12: 4}  # 2 topics x 2 runs
    assert (lengths["region"] == "Y").all() and (lengths["pairs"] == "filled").all()
    short, long = (lengths[lengths["max_new_tokens"] == n]["persona"].tolist() for n in (4, 12))
    assert short == table.loc[table["region"] == "Y", "persona"].tolist()  # the same samples
    assert all(b.startswith(a) and len(b) > len(a) for a, b in zip(short, long, strict=True))
    with pytest.raises(ValueError, match="no pairs of region 'Z'"):
        personas.by_length(pairs, settings, region="Z", max_new_tokens=[4, 12])


@pytest.mark.slow
def test_persona_step_twice_without_cache_gives_the_same_table(one_torch_thread):
    """Same seed, same table: Africa's paper pairs through SmolLM2 twice, nothing cached, the
    second time in two worker processes."""
    from biasbook.chapters.region_aware import topic_pair_weat

    pairs = topic_pair_weat.paper_pairs(["Africa"])
    settings = {"models": ["smollm2-135m"], "runs": 2, "max_new_tokens": 16}
    first, second = (personas.personas(pairs, settings, workers=workers, progress=False,
                                       cache=False) for workers in (1, 2))
    pd.testing.assert_frame_equal(first, second)
    assert len(first) == 2 * len(personas.topic_prompts(pairs))
    assert first["persona"].str.len().gt(0).all()
    runs = [first.loc[first["run"] == r, "persona"].to_numpy() for r in (0, 1)]
    assert (runs[0] != runs[1]).any()  # run r is seeded with seed + r: other samples


@pytest.mark.bad_input("A masked model (e.g. BERT) in `persona_settings.models`",
                       "a ValueError saying personas need a causal model that generates "
                       "(was: AttributeError ... 'generate')")
def test_a_masked_model_is_refused_for_personas():
    tok = testing.tiny_tokenizer()
    bert = models.from_model(testing.tiny_model("bert", len(tok)), tok, name="tiny-bert")
    with pytest.raises(ValueError, match="tiny-bert is a masked model, which does not generate"):
        personas.generate(bert, ["Describe a person."], seed=0, cache=False)
