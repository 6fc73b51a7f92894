"""HERB notebook 04's Tables 4 and 5 and Fig. 4's continent means, built from
:mod:`.propagation`'s predictions and set beside the paper's numbers (:mod:`.downstream`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from biasbook.chapters.herb import downstream

TABLE4_STATS = ("share_up", "avg_up", "share_down", "avg_down")
#: Table 5's column names for the two directions of a flip on hatespeech18.
FLIP_LABELS = {"neg_to_pos": "noHate→hate", "pos_to_neg": "hate→noHate"}


def table4_overall(rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`overall_metrics` as Table 4 prints it, with the drop from the original test set
    to Country-All, ours next to the paper's.

    Used in: herb/04.
    """
    overall = rows.pivot_table(index=["task", "model", "metric"], columns="testset",
                               values=["ours", "paper"])
    for who in ("ours", "paper"):
        overall[who, "drop"] = overall[who, "original"] - overall[who, "country_all"]
    return overall[[(who, c) for who in ("ours", "paper")
                    for c in ("original", "country_all", "drop")]]


def table4_regions(per_region: Mapping[tuple[str, str], pd.DataFrame],
                   data: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """Table 4's rows for the regions that the paper also tests: the share of test samples
    whose positive-class probability rises (falls) and the average rise (fall), ours and
    ``paper <stat>``; indexed by ``task``, ``model``, ``region``. The counts are shares of the
    test set because our test sets are smaller than the paper's.

    Used in: herb/04.
    """
    paper = downstream.paper_table4()
    paper["region"] = paper["region"].str.replace("Mexico-City", "Mexico City")
    rows = []
    for (task, name), frame in per_region.items():
        n = len(data[task][1])
        refs = paper[paper["task"] == task].set_index("region")
        for region in frame.index.intersection(refs.index, sort=False):
            row = {"task": task, "model": name, "region": region,
                   "share_up": frame.at[region, "n_up"] / n, "avg_up": frame.at[region, "avg_up"],
                   "share_down": frame.at[region, "n_down"] / n,
                   "avg_down": frame.at[region, "avg_down"]}
            rows.append(row | {f"paper {s}": float(refs.at[region, s]) for s in TABLE4_STATS})
    columns = ["task", "model", "region", *TABLE4_STATS, *(f"paper {s}" for s in TABLE4_STATS)]
    return pd.DataFrame(rows, columns=columns).set_index(["task", "model", "region"])


def extremes(frame: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """The ``k`` regions of a :func:`.downstream.region_changes` frame that raise the
    positive-class probability most on average, then the ``k`` that lower it most
    (``k`` at most half the regions).

    Used in: herb/04.
    """
    ranked = frame.sort_values("mean_change", ascending=False)
    k = min(k, len(ranked) // 2)
    shown = pd.concat([ranked.head(k), ranked.tail(k)])
    return shown[["n_up", "avg_up", "n_down", "avg_down", "mean_change", "neg_to_pos",
                  "pos_to_neg"]]


def table5(per_region: Mapping[tuple[str, str], pd.DataFrame],
           country_names: Sequence[str]) -> pd.DataFrame:
    """Table 5 (hatespeech18): per model, the label change rates averaged over the countries
    (the extra regions left out) and over all countries but Ireland or Mexico, where tested.

    Used in: herb/04.
    """
    country_names = list(country_names)
    without = [r for r in ("Ireland", "Mexico") if r in set(country_names)]
    rows = {name: downstream.table5(frame.loc[country_names], without=without)
            for (task, name), frame in per_region.items() if task == "hatespeech18"}
    return pd.DataFrame(rows).T


def relabel(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 5's columns with the flips spelt out (:data:`FLIP_LABELS`).

    Used in: herb/04.
    """
    out = frame.copy()
    for old, new in FLIP_LABELS.items():
        out.columns = out.columns.str.replace(old, new)
    return out


def table5_vs_paper(ours: pd.DataFrame) -> pd.DataFrame:
    """Our :func:`table5` above the paper's rows, in the paper's columns.

    Used in: herb/04.
    """
    paper = relabel(downstream.paper_table5())
    return pd.concat({"ours": relabel(ours), "paper": paper})[paper.columns]


def change_by_continent(per_region: Mapping[tuple[str, str], pd.DataFrame],
                        countries: pd.DataFrame) -> pd.DataFrame:
    """Mean probability change of each continent's countries (``countries``: the
    :class:`PrefixRegions` frame), tidy: ``task``, ``model``, ``continent``, ``mean_change``.

    Used in: herb/04.
    """
    means = {}
    for key, frame in per_region.items():
        sub = frame.loc[countries["name"]].assign(continent=countries["continent"].to_numpy())
        means[key] = sub.groupby("continent")["mean_change"].mean()
    return pd.concat(means, names=["task", "model", "continent"]).reset_index()
