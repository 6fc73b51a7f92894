"""Are the paper's continent columns mislabelled? A test on the printed numbers alone.

Tables 1, 2, 3 and 6 of Li et al. (2022) head their continent columns AF, AS, EU, OC, SA, NA. The
authors' ``calculateBias.py`` and ``NonHierarchicalBias.py`` loop over the continents in the order
Africa, Asia, Europe, North America, Oceania, South America (``cc1 = ['AF', 'AS', 'EU', 'NA',
'OC', 'SA']``) and print one number per line in that order, then the overall bias. If the table
was filled from that output under the other header, the printed columns OC, SA, NA hold North
America, Oceania and South America.

The test: with the hierarchy's weights uniform (notebook 02), a continent's C is its countries'
mean pairwise distance times ``2/(n(n-1))``, so ``C * n(n-1)/2`` is an *implied mean country
distance*. A model has no reason to hold North American countries 7-9 times further apart than
every other continent's; if one reading makes the implied distances uniform and the other does
not, the uniform one is the likelier labelling. Table 2 (plain sparseness of every region of a
continent pooled, no ``1/n^2`` factor) shares the print order but cannot tell the two apart.

>>> from biasbook.chapters.herb.data import reading_map
>>> reading_map("code print order")
{'AF': 'AF', 'AS': 'AS', 'EU': 'EU', 'OC': 'NA', 'SA': 'OC', 'NA': 'SA'}
>>> d = implied_distances({"AF": 58, "AS": 52, "EU": 54, "NA": 42, "OC": 27, "SA": 14})
>>> bert = d.query("table == 'table1' and model == 'BERT-base' and metric == 'C_w'")
>>> wide = bert.pivot(index="continent", columns="reading", values="implied distance")
>>> wide.rename_axis(index=None, columns=None).round(4)
    code print order  printed header
AF            0.0375          0.0375
AS            0.0375          0.0375
EU            0.0351          0.0351
NA            0.0383          0.2742
OC            0.0372          0.0156
SA            0.0290          0.0097
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from biasbook.chapters.herb.data import CONTINENT_COLUMNS, READINGS
from biasbook.chapters.herb.paper_comparison import paper_values, relabel

#: The tables whose continent values are C of Eq. 8 (Table 2 is plain sparseness).
HIERARCHICAL_TABLES: tuple[str, ...] = ("table1", "table3", "table6")




def implied_distances(countries: Mapping[str, int]) -> pd.DataFrame:
    """Every printed continent value of :data:`HIERARCHICAL_TABLES` under both readings, with
    ``n`` (the continent's number of countries in ``countries``), ``C`` (unscaled) and the
    implied mean country distance ``C * n(n-1)/2``. Columns: ``table``, ``model``, ``metric``,
    ``condition``, ``reading``, ``printed column``, ``continent``, ``n``, ``C``,
    ``implied distance``.

    Used in: herb/02.
    """
    missing = set(CONTINENT_COLUMNS) - set(countries)
    if missing:
        raise ValueError(f"countries per continent missing for {sorted(missing)}")
    parts = []
    for name in HIERARCHICAL_TABLES:
        printed = paper_values(name, "printed header").query("region != 'overall'")
        for reading in READINGS:
            frame = relabel(printed, reading).rename(columns={"region": "continent",
                                                              "paper": "C"})
            n = frame["continent"].map(countries).astype(int)
            parts.append(frame.assign(table=name, reading=reading, n=n,
                                      **{"implied distance": frame["C"] * n * (n - 1) / 2}))
    columns = ["table", "model", "metric", "condition", "reading", "printed column",
               "continent", "n", "C", "implied distance"]
    return pd.concat(parts, ignore_index=True)[columns]


def uniformity(implied: pd.DataFrame) -> pd.DataFrame:
    """Per printed row and reading: how uniform the implied distances are across the six
    continents (coefficient of variation = std / mean, population std; the largest over the
    smallest) and the continent ranking by C, largest first.

    Used in: herb/02.

    >>> rows = pd.DataFrame({"table": "t", "model": "m", "metric": "C_w", "condition": "full",
    ...                      "reading": "r", "continent": ["AF", "NA"], "C": [1.0, 3.0],
    ...                      "implied distance": [2.0, 4.0]})
    >>> row = uniformity(rows).iloc[0]
    >>> round(float(row["CV"]), 4), float(row["max / min"]), row["ranking by C"]
    (0.3333, 2.0, 'NA > AF')
    """
    def summary(group: pd.DataFrame) -> pd.Series:
        d = group["implied distance"].to_numpy()
        order = group.sort_values("C", ascending=False, kind="stable")["continent"]
        return pd.Series({"CV": d.std() / d.mean(), "max / min": d.max() / d.min(),
                          "ranking by C": " > ".join(order)})

    keys = ["table", "model", "metric", "condition", "reading"]
    return (implied.groupby(keys, sort=False)[["continent", "C", "implied distance"]]
            .apply(summary).reset_index())


def verdict(summary: pd.DataFrame) -> pd.DataFrame:
    """Per reading, over every printed row of :func:`uniformity`: the median and largest CV,
    and the number of rows whose CV is smaller under this reading than under the other.

    Used in: herb/02.
    """
    wide = summary.pivot_table(index=["table", "model", "metric", "condition"],
                               columns="reading", values="CV")
    rows = {}
    for reading in READINGS:
        others = wide.drop(columns=reading).min(axis=1)
        rows[reading] = {"median CV": wide[reading].median(), "max CV": wide[reading].max(),
                         "rows more uniform": int((wide[reading] < others).sum()),
                         "rows": len(wide)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("reading")


def ranking_agreement(summary: pd.DataFrame, ours: Mapping[str, str]) -> pd.DataFrame:
    """Does each paper model's Table 1 C_w ranking equal our models' rankings (``ours``: model
    -> ranking string as :func:`uniformity` writes it), under each reading?

    Used in: herb/02.
    """
    t1 = summary.query("table == 'table1' and metric == 'C_w'")
    out = t1[["model", "reading", "ranking by C"]].copy()
    for name, ranking in ours.items():
        out[f"same as {name}"] = out["ranking by C"] == ranking
    return out.reset_index(drop=True)


def c_against_n(implied: pd.DataFrame, ours: pd.DataFrame | None = None, *, axes=None):
    """The figure of the test: C (x 10^3, log) against n (log), one panel per reading, the
    paper's Table 1 C_w points per model with that model's curve ``2 d / (n(n-1))`` (``d`` its
    median implied distance under the reading), and our models' continents (``ours``: columns
    ``model``, ``n``, ``C``, unscaled) where given. Returns the figure.

    Used in: herb/02.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    if axes is None:
        _, axes = plt.subplots(1, len(READINGS), figsize=(12, 4.4), sharey=True)
    t1 = implied.query("table == 'table1' and metric == 'C_w'")
    grid = np.geomspace(max(2, t1["n"].min() - 2), t1["n"].max() + 10, 100)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (reading, group) in zip(axes, t1.groupby("reading", sort=False), strict=True):
        for colour, (model, points) in zip(colours, group.groupby("model", sort=False),
                                           strict=False):
            d = points["implied distance"].median()
            ax.scatter(points["n"], points["C"] * 1e3, color=colour, s=30,
                       label=f"{model} (paper), d = {d:.3f}")
            ax.plot(grid, 2 * d / (grid * (grid - 1)) * 1e3, color=colour, ls="--", lw=0.8)
        for r in group.drop_duplicates("continent").itertuples():
            ax.annotate(r.continent, (r.n, r.C * 1e3), textcoords="offset points",
                        xytext=(4, 4), fontsize=8)
        ticks = sorted(set(group["n"]))
        if ours is not None:
            mine = ours[ours["n"] > 1]
            for model, points in mine.groupby("model", sort=False):
                ax.scatter(points["n"], points["C"] * 1e3, marker="x", s=40, color="black",
                           label=f"{model} (ours)")
            ticks = sorted(set(ticks) | set(mine["n"]))
        ax.set(xscale="log", yscale="log", xlabel="countries in the continent, n",
               title=f"paper's columns read by the {reading}")
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=7)
    axes[0].set_ylabel("$C_w$ x 1e3 (log); dashed: 2d/(n(n-1))")
    fig = axes[0].figure
    fig.tight_layout()
    return fig
