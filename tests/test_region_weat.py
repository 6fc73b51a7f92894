"""Region-aware WEAT (Sec. 5) and WEAT across regions (Sec. 3): closed-form effect sizes on
constructed vectors, the paper's word lists and numbers, explicit OOV/missing-region rows, and the
smoke pipeline giving the same tables twice from empty caches."""

import math

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.region_aware import topic_pair_weat as rw
from biasbook.chapters.region_aware import weat_across_regions as wr
from biasbook.embeddings.vectors import from_arrays

# Two groups of n words, all words of a group on one vector: every association of group 1 is c1,
# of group 2 c2, so the pooled sample std is |c1 - c2| / 2 * sqrt(2n / (2n - 1)) and the effect
# size is +-2 sqrt((2n - 1) / (2n)), whatever c1 and c2 are.


def _closed_form(n):
    return 2 * math.sqrt((2 * n - 1) / (2 * n))


def _vectors(groups: dict[tuple[float, float], list[str]]):
    words, rows = [], []
    for vector, ws in groups.items():
        for w in ws:
            if w not in words:
                words.append(w)
                rows.append(vector)
    return from_arrays(words, np.array(rows, dtype=float))


def test_gender_words_follow_appendix_f_and_table_12():
    text = rw.gender_words("Europe", names=False)
    assert text["male"][:3] == ["brother", "father", "uncle"] and len(text["female"]) == 11
    table = rw.gender_words("Europe", terms="table-12", names=False)
    assert table["male"] == ["male", "man", "boy", "brother", "he", "him", "his", "son"]
    africa = rw.gender_words("Africa")
    assert len(africa["male"]) == 11 + 15 and africa["male"][11] == "kwame"
    with pytest.raises(ValueError, match="no names for region 'South America'"):
        rw.gender_words("South America")
    with pytest.raises(ValueError, match="terms must be one of"):
        rw.gender_words("Asia", terms="prose")


def test_paper_pairs_carry_table_12_words_and_table_4_numbers():
    pairs = rw.paper_pairs()
    assert len(pairs) == 25 and pairs.groupby("region").size().eq(5).all()
    assert pairs["female_words"].map(len).eq(10).all() and pairs["male_words"].map(len).eq(10).all()
    music = pairs[(pairs["region"] == "Africa") & (pairs["rank"] == 4)].iloc[0]
    assert (music["female_topic"], music["male_topic"]) == ("Music", "Social Media")
    assert (music["paper_reddit"], music["paper_un"]) == (1.894, 1.721)


def _one_pair(region="Europe"):
    return pd.DataFrame([{"region": region, "rank": 1, "female_topic": "Home",
                          "male_topic": "Work",
                          "female_words": ["kitchen", "garden", "cooking", "sewing"],
                          "male_words": ["office", "salary", "career", "boss"]}])


@pytest.mark.parametrize("roles, n", [("gender-targets", 8), ("topic-targets", 4)])
def test_effect_size_in_closed_form_and_sign(roles, n):
    gender = rw.gender_words("Europe", terms="table-12", names=False)
    pair = _one_pair()
    male_side = gender["male"] + pair["male_words"][0]
    female_side = gender["female"] + pair["female_words"][0]
    kv = _vectors({(1.0, 0.2): male_side, (0.1, 1.0): female_side})
    out = rw.region_weat(pair, {"Europe": kv}, terms="table-12", names=False, roles=roles,
                         oov="drop")
    assert out["effect_size"].iloc[0] == pytest.approx(_closed_form(n))
    assert out["p_value"].iloc[0] == pytest.approx(1 / math.comb(2 * n, n))
    swapped = pair.rename(columns={"female_words": "male_words", "male_words": "female_words"})
    back = rw.region_weat(swapped, {"Europe": kv}, terms="table-12", names=False, roles=roles,
                          oov="drop")
    assert back["effect_size"].iloc[0] == pytest.approx(-_closed_form(n))


def test_missing_region_and_oov_are_reported_not_silent():
    gender = rw.gender_words("Europe", terms="table-12", names=False)
    kv = _vectors({(1.0, 0.0): gender["male"], (0.0, 1.0): gender["female"] + ["kitchen"]})
    out = rw.region_weat(pd.concat([_one_pair(), _one_pair("Oceania")]), {"Europe": kv},
                         domain="tweets", terms="table-12", names=False, oov="drop")
    europe, oceania = out.iloc[0], out.iloc[1]
    assert not europe["computable"] and "keeps 0 of 4" in europe["reason"]
    assert "office" in europe["oov"] and "garden" in europe["oov"]
    assert not oceania["computable"] and "no documents of Oceania" in oceania["reason"]
    assert math.isnan(oceania["effect_size"])


def test_subword_mode_embeds_unseen_words_and_lists_them():
    from biasbook.embeddings import train

    corpus = [["my", "brother", "and", "his", "boss", "went", "to", "the", "office"],
              ["my", "sister", "and", "her", "mother", "were", "in", "the", "kitchen"]] * 30
    kv = train.fasttext(corpus, vector_size=8, min_count=1, epochs=2, bucket=1000, cache=False)
    out = rw.region_weat(_one_pair(), {"Europe": kv}, terms="table-12", names=False)
    row = out.iloc[0]
    assert row["computable"] and np.isfinite(row["effect_size"])
    synthesised = row["synthesised"].split(", ")
    assert "salary" in synthesised and "boss" not in synthesised and row["oov"] == ""
    assert row["shared"] == ""


def test_table4_has_one_row_per_pair_and_a_column_per_domain():
    results = pd.DataFrame({
        "domain": ["tweets", "un-debates", "un-debates"], "region": ["Asia", "Asia", "Africa"],
        "rank": [1, 1, 1], "female_topic": ["F", "F", "G"], "male_topic": ["M", "M", "N"],
        "effect_size": [0.5, -0.2, 0.1], "paper_un": [1.0, 1.0, 2.0]})
    table = rw.table4(results)
    assert table["region"].tolist() == ["Africa", "Asia"]
    assert table[["ours_tweets", "ours_un-debates", "paper_un"]].values.tolist()[1] == \
        [0.5, -0.2, 1.0]
    assert math.isnan(table["ours_tweets"].iloc[0])


def test_filled_pairs_keep_their_mark_and_are_set_beside_the_passing_ones():
    """A passing pair whose words point the pair's way and a filled pair pointing the other way:
    +d and -d in closed form, so the passing set's mean is +d, the filled set's -d, both 0."""
    gender = rw.gender_words("Europe", terms="table-12", names=False)
    home, work = _one_pair().iloc[0]["female_words"], _one_pair().iloc[0]["male_words"]
    kv = _vectors({(1.0, 0.2): gender["male"] + work, (0.1, 1.0): gender["female"] + home})
    swapped = _one_pair().rename(columns={"female_words": "male_words",
                                          "male_words": "female_words"}).assign(rank=2)
    pairs = pd.concat([_one_pair().assign(pairs="passing"), swapped.assign(pairs="filled")],
                      ignore_index=True)
    out = rw.weat_by_domain(pairs, {"un": {"Europe": kv}}, terms="table-12", names=False,
                            oov="drop")
    d = _closed_form(8)
    assert out[["rank", "pairs"]].values.tolist() == [[1, "passing"], [2, "filled"]]
    assert out["effect_size"].tolist() == pytest.approx([d, -d])
    table = rw.table4(out)
    assert table[["rank", "pairs"]].values.tolist() == [[1, "passing"], [2, "filled"]]
    assert rw.heatmap_frame(table).index.tolist() == ["Europe P1: Home - Work",
                                                      "Europe P2: Home - Work [filled]"]
    sets = rw.pair_sets(out).set_index("pairs")
    assert sets["n_pairs"].to_dict() == {"passing": 1, "filled": 1, "passing+filled": 2}
    assert sets["mean_effect"].tolist() == pytest.approx([d, -d, 0.0], abs=1e-12)
    assert sets["positive"].tolist() == [1.0, 0.0, 0.5]
    # a region with no passing pair has an empty passing set: NaN, not 0
    none_pass = rw.pair_sets(out[out["pairs"] == "filled"]).set_index("pairs")
    assert none_pass.loc["passing", "n_pairs"] == 0
    assert math.isnan(none_pass.loc["passing", "mean_effect"])
    # pairs without a mark (a reader's own) get no mark column
    assert "pairs" not in rw.region_weat(_one_pair(), {"Europe": kv}, terms="table-12",
                                         names=False, oov="drop")
    assert (rw.paper_pairs()["pairs"] == "passing").all()  # Table 3 lists passing pairs only


def test_caliskan_test_per_region_in_closed_form_with_paper_numbers():
    test = wr.caliskan_tests()["names-career-family"]
    kv = _vectors({(1.0, 0.1): [*test.x, *test.a], (0.2, 1.0): [*test.y, *test.b]})
    table = wr.weat_table({"Africa": kv, "Asia": kv}, domain="d",
                          tests={"names-career-family": test})
    assert table["effect_size"].tolist() == pytest.approx([_closed_form(8)] * 2)
    assert table["p_value"].tolist() == pytest.approx([1 / 12870] * 2)
    assert table["paper_effect_size"].tolist() == [1.798, 1.508]
    assert table["caliskan_effect_size"].tolist() == [1.81, 1.81]
    assert wr.table7(table)["region"].tolist() == ["Africa", "Asia"]


def test_caliskan_test_with_missing_words_is_not_computable_and_lists_them():
    test = wr.caliskan_tests()["math-arts-gender"]
    kv = _vectors({(1.0, 0.0): list(test.x), (0.0, 1.0): list(test.y)})
    table = wr.weat_table({"Europe": kv}, tests={"math-arts-gender": test})
    assert not table["computable"].iloc[0] and "keeps 0 of 8" in table["reason"].iloc[0]
    oov = wr.oov_table(table)
    assert oov["n_oov"].iloc[0] == 16 and "female" in oov["oov"].iloc[0]


def _smoke_pipeline():
    """Sections 3 and 5 at smoke size on the tweets: the tables the notebooks record."""
    w2v = wr.region_vectors("tweets", max_docs=300, seed=0, progress=False,
                            word2vec={"vector_size": 20, "min_count": 2, "epochs": 2})
    sec3 = wr.weat_table(w2v, domain="tweets", n_samples=500)
    ft = rw.evaluation_vectors("tweets", max_docs=300, seed=0, progress=False,
                               fasttext={"vector_size": 20, "min_count": 2, "epochs": 2,
                                         "bucket": 5000})
    sec5 = rw.region_weat(rw.paper_pairs(), ft, domain="tweets", n_samples=500)
    return sec3, sec5


def test_smoke_pipeline_twice_from_empty_caches_gives_the_same_tables(tmp_path, monkeypatch):
    runs = []
    for name in ("first", "second"):
        monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / name))
        runs.append(_smoke_pipeline())
    for a, b in zip(*runs, strict=True):
        pd.testing.assert_frame_equal(a, b)
    sec3, sec5 = runs[0]
    assert set(sec3["region"]) == {"Africa", "Asia", "Europe", "North America"}
    assert sec5.loc[sec5["region"] == "Oceania", "computable"].eq(False).all()
    assert sec5.loc[sec5["region"] != "Oceania", "computable"].all()


def test_iat_blocks_keys_and_scores():
    from biasbook.chapters.region_aware import iat

    plan = iat.trials(["nurse", "cook"], ["pilot"], female=["she", "her"], male=["he"],
                      repeats=2, seed=1)
    assert plan.groupby("block").size().tolist() == [12, 12]  # 6 stimuli, twice each
    keyed = plan.groupby(["block", "category"])["key"].unique().map(list).to_dict()
    assert keyed[("unreversed", "F topic")] == ["e"] and keyed[("reversed", "F topic")] == ["i"]
    assert keyed[("unreversed", "male")] == keyed[("reversed", "male")] == ["i"]
    answers = iter(["", *plan["key"][:12], "", *["x"] * 12])  # second block all wrong
    ticks = iter(np.arange(0, 100, 0.5))
    taken = iat.run_in_terminal(plan, ask=lambda _: next(answers), clock=lambda: next(ticks))
    assert taken["correct"].tolist() == [True] * 12 + [False] * 12
    assert taken["rt_ms"].tolist() == pytest.approx([500.0] * 24)
    with pytest.raises(ValueError, match="no correct response in block"):
        iat.score(taken)
    simulated = iat.score(iat.simulate(plan, effect_ms=200, noise_ms=1, error_rate=0, seed=0))
    assert simulated["difference_ms"] == pytest.approx(200, abs=2)
    assert simulated["errors"] == 0 and simulated["d_score"] > 1


def test_subword_summary_counts_synthesised_words_where_a_region_has_vectors():
    results = pd.DataFrame({
        "domain": "d", "region": ["A", "A", "B"], "rank": [1, 2, 1],
        "n_gender": [6, 6, 6], "n_topic": [4, 4, 4], "n_synthesised": [2, 0, 0],
        "has_vectors": [True, True, False], "computable": [True, True, False]})
    table = rw.subword_summary(results).set_index("region")
    assert table.loc["A", "synthesised_share"] == pytest.approx((2 / 10 + 0 / 10) / 2)
    assert table.loc["A", "computable"] == 2 and table.loc["A", "pairs"] == 2
    assert np.isnan(table.loc["B", "synthesised_share"])  # no vectors: no share, not 0
