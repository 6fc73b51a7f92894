"""Notebook 03: one descriptor's likelihood on a map (HERB Fig. 1) and the models' country
representations (Fig. 3), with the numbers that make each picture checkable.

- :func:`descriptor_likelihood`: f(S) of one descriptor for every continent and country;
- :func:`europe_summary`: where the continent's own name, *Europe*, falls among its countries;
- :func:`likelihood_map`: the world and Europe panels of Fig. 1, the value of *Europe* marked
  on the colour bar;
- :func:`umap_2d`: the 2-D UMAP projection of Fig. 3;
- :func:`agreement_table`: the share of a country's nearest neighbours on its own continent, in
  the models' hidden states, in real geography and by chance.

>>> likelihood = pd.Series({"EU": -3.0, "FR": -2.0, "DE": -4.0, "IT": -2.5})
>>> countries = pd.DataFrame({"code": ["FR", "DE", "IT"], "name": ["France", "Germany", "Italy"],
...                           "continent": "EU"})
>>> summary = europe_summary({"m": likelihood}, countries)
>>> summary.loc["m", ["share of European countries above Europe", "most likely European country"]]
share of European countries above Europe    0.666667
most likely European country                  France
Name: m, dtype: object
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from biasbook.chapters.herb.representations import chance_agreement, neighbour_agreement
from biasbook.chapters.herb.sentence_scores import descriptor_scores
from biasbook.models import LanguageModel
from biasbook.plotting import world_choropleth

EUROPE_EXTENT = (-25, 45, 34, 72)  # lon_min, lon_max, lat_min, lat_max


def descriptor_likelihood(lm: LanguageModel, table: pd.DataFrame, word: str) -> pd.Series:
    """f(S) of "People in [region] are [word]." for every row of ``table`` (a region table),
    indexed by the region's code (continent code, ISO country code, GeoNames id).

    Used in: herb/03.
    """
    return pd.Series(descriptor_scores(lm, table["name"], [word])[:, 0], index=table["code"])


def _europe(likelihood: pd.Series, countries: pd.DataFrame) -> pd.Series:
    return likelihood[countries.loc[countries["continent"] == "EU", "code"]]


def europe_summary(likelihood: Mapping[str, pd.Series], countries: pd.DataFrame) -> pd.DataFrame:
    """Per model: f(S) of *Europe*, the median over the European countries, the share of them
    above *Europe*, the most likely one and its f(S). ``countries`` has the columns ``code``,
    ``name`` and ``continent``; models without *Europe* or its countries are left out.

    Used in: herb/03.
    """
    rows = []
    for name, f in likelihood.items():
        eu_countries = _europe(f, countries)
        if "EU" not in f.index or not len(eu_countries):
            continue
        eu_value = float(f["EU"])
        rows.append({"model": name, "f(Europe)": eu_value,
                     "median over European countries": eu_countries.median(),
                     "share of European countries above Europe":
                         float((eu_countries > eu_value).mean()),
                     "most likely European country":
                         countries.set_index("code").at[eu_countries.idxmax(), "name"],
                     "its f(S)": eu_countries.max()})
    columns = ["model", "f(Europe)", "median over European countries",
               "share of European countries above Europe", "most likely European country",
               "its f(S)"]
    return pd.DataFrame(rows, columns=columns).set_index("model")


def likelihood_map(f: pd.Series, countries: pd.DataFrame, word: str, *, title: str = ""):
    """Fig. 1 for one model: (a) f(S) of ``word`` for every country with a value, (b) Europe on
    its own colour scale, with the value of *Europe* itself marked on the colour bar (only
    when ``f`` has it). Returns the figure.

    Used in: herb/03.
    """
    fig, axes = plt.subplots(1, 2, figsize=(15, 4.2), gridspec_kw={"width_ratios": [1.9, 1]},
                             layout="constrained")
    label = f"f(S) for [{word}]"
    world_choropleth(f[countries["code"]].to_dict(), ax=axes[0], label=label,
                     title="(a) Regions worldwide")
    eu_countries = _europe(f, countries)
    if "EU" in f.index and len(eu_countries):
        eu_value = float(f["EU"])
        lo, hi = min(eu_countries.min(), eu_value), max(eu_countries.max(), eu_value)
        world_choropleth(eu_countries.to_dict(), ax=axes[1], extent=EUROPE_EXTENT, vmin=lo,
                         vmax=hi, label=label, title="(b) Regions in Europe")
        bar = fig.axes[-1]  # the colour bar world_choropleth just added
        bar.annotate("Europe ▶", xy=(0.0, eu_value), xycoords=bar.get_yaxis_transform(),
                     xytext=(-2, 0), textcoords="offset points", ha="right", va="center",
                     fontsize=9, fontweight="bold", annotation_clip=False,
                     bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
    if title:
        fig.suptitle(title)
    return fig


def umap_2d(x: ArrayLike, seed: int = 0) -> NDArray[np.float32]:
    """A 2-D UMAP projection (cosine metric, 15 neighbours or fewer for small sets) of the rows
    of ``x``, reproducible with ``seed``.

    Used in: herb/03.
    """
    import umap  # imported here: its first import compiles numba code

    n = len(x)
    if n < 3:
        raise ValueError("umap_2d needs at least three points")
    reducer = umap.UMAP(n_neighbors=min(15, n - 1), metric="cosine", random_state=seed,
                        init="spectral" if n > 50 else "random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n_jobs is forced to 1 by random_state
        return reducer.fit_transform(x)


def agreement_table(coords: pd.DataFrame, continent: Sequence[str],
                    agreement: Mapping[str, float], k: int = 5) -> pd.DataFrame:
    """Share of the ``k`` nearest neighbours on the same continent: in geography (the capitals'
    longitude and latitude ``coords``, countries without coordinates left out), in each model's
    hidden states (``agreement``, from :func:`~.representations.neighbour_agreement`) and by chance.

    Used in: herb/03.

    >>> coords = pd.DataFrame({"lon": [0.0, 1.0, 90.0, 91.0], "lat": [0.0, 0.0, 0.0, np.nan]})
    >>> agreement_table(coords, ["EU", "EU", "AS", "AS"], {"m": 0.5}, k=1).iloc[:, 0].tolist()
    [0.6666666666666666, 0.5, 0.3333333333333333]
    """
    continent = np.asarray(continent)
    known = coords["lon"].notna().to_numpy() & coords["lat"].notna().to_numpy()
    column = f"same continent among {k} nearest"
    rows = {"geography (capitals, lon/lat)": neighbour_agreement(
        coords.to_numpy()[known], continent[known], k, metric_name="euclidean")}
    rows |= {f"{name}, last layer": value for name, value in agreement.items()}
    rows["chance"] = chance_agreement(continent)
    return pd.Series(rows, name=column).rename_axis("space").to_frame()
