"""HERB's Eq. 2-9 on a few made-up regions, step by step: the paper's Fig. 2 (a compact and a
sparse cluster) as a table a student can edit and a figure.

:func:`toy_example` gives the scores (made-up f(S), rows regions, columns descriptors) and the
parent of each region; :func:`walk_through` computes every intermediate quantity with the
functions of :mod:`biasbook.metrics.herb` and checks the result against
:func:`~biasbook.metrics.herb.hierarchical_bias`; :func:`plot_walk_through` draws it.

>>> scores, parents = toy_example()
>>> walk = walk_through(scores, parents)
>>> walk.clusters[["n", "c(R), Eq. 3"]].round(3)
           n  c(R), Eq. 3
Compactia  3        0.023
Sparsia    3        0.467
the Earth  2        0.031
>>> bool(walk.clusters.loc["Sparsia", "C_w, Eq. 8"] > 10 * walk.clusters.loc["Compactia",
...                                                                           "C_w, Eq. 8"])
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from biasbook.metrics import herb, sparseness

EARTH = "the Earth"


def toy_example() -> tuple[pd.DataFrame, dict[str, str | None]]:
    """Made-up scores f(S) for two continents of three countries each, over three descriptors:
    Compactia's countries get nearly the same judgements (a compact cluster), Sparsia's very
    different ones (a sparse cluster). ``parents`` maps each region to its parent (None: a
    continent, under "the Earth"). Edit either and call :func:`walk_through` again.

    Used in: herb/02, book/class/herb.
    """
    scores = pd.DataFrame(
        [[-5.0, -6.0, -5.5],   # Compactia
         [-5.1, -6.0, -5.4],   # Alpha
         [-5.0, -6.1, -5.5],   # Beta
         [-4.9, -5.9, -5.6],   # Gamma
         [-5.2, -5.8, -5.6],   # Sparsia
         [-3.0, -8.0, -5.0],   # Delta: kind, not lazy
         [-7.0, -4.0, -6.0],   # Epsilon: lazy, not kind
         [-5.0, -6.0, -2.5]],  # Zeta: rich
        index=["Compactia", "Alpha", "Beta", "Gamma", "Sparsia", "Delta", "Epsilon", "Zeta"],
        columns=["kind", "lazy", "rich"])
    parents = {"Compactia": None, "Alpha": "Compactia", "Beta": "Compactia",
               "Gamma": "Compactia", "Sparsia": None, "Delta": "Sparsia", "Epsilon": "Sparsia",
               "Zeta": "Sparsia"}
    return scores, parents


@dataclass(frozen=True)
class ToyWalk:
    """``regions``: per region its level, parent, v (Eq. 2), V (Eq. 4) and C_w (Eq. 8);
    ``clusters``: per region with sub-regions (and the Earth) the quantities of Eq. 3 and 5-9.

    Used in: herb/02, book/class/herb.
    """

    regions: pd.DataFrame
    clusters: pd.DataFrame
    tree: herb.RegionTree


def _tree(scores: pd.DataFrame, parents: Mapping[str, str | None]) -> herb.RegionTree:
    names = list(scores.index)
    unknown = ({p for p in parents.values() if p is not None} | set(parents)) - set(names)
    if unknown or set(names) - set(parents):
        raise ValueError("every region needs a row of scores and an entry in parents "
                         f"(unknown or missing: {sorted(unknown | (set(names) - set(parents)))})")
    return herb.RegionTree(tuple(names), [herb.ROOT if parents[n] is None else
                                            names.index(parents[n]) for n in names])


def walk_through(scores: pd.DataFrame, parents: Mapping[str, str | None]) -> ToyWalk:
    """Eq. 2-9 (``paper`` mode) on ``scores`` (rows regions, columns descriptors) and the
    hierarchy ``parents``, every step kept; the C_w column equals
    :func:`~biasbook.metrics.herb.hierarchical_bias` (checked here).

    Used in: herb/02, book/class/herb.
    """
    tree = _tree(scores, parents)
    x = scores.to_numpy(dtype=np.float64)
    v = sparseness.descriptive_vectors(x)                            # Eq. 2
    V = herb.aggregated_vectors(tree, x)                             # Eq. 4-7
    result = herb.hierarchical_bias(tree, x)                         # Eq. 8-9
    words = list(scores.columns)
    rows = []
    for region in [*np.unique(tree.parent[tree.parent != herb.ROOT]).tolist(), herb.ROOT]:
        kids = tree.children_of(region)
        terms = result.bias[kids]
        k1, k2 = np.triu_indices(len(kids), k=1)
        n = len(kids)
        c_i = sparseness.descriptor_sparseness(v[kids])
        alpha = sparseness.descriptor_weights(v[kids])
        rows.append({
            "region": EARTH if region == herb.ROOT else tree.names[region],
            "members": ", ".join(tree.names[k] for k in kids), "n": n,
            "c(R), Eq. 3": sparseness.cluster_sparseness(v[kids]),
            **{f"c_i {w}, Eq. 6": c for w, c in zip(words, c_i, strict=True)},
            **{f"alpha {w}, Eq. 7": a for w, a in zip(words, alpha, strict=True)},
            "pair weights w, Eq. 9": {f"{tree.names[kids[a]]}-{tree.names[kids[b]]}":
                                      round(float(w), 4) for a, b, w in
                                      zip(k1, k2, sparseness.pair_weights(terms), strict=True)},
            "C_w, Eq. 8": result.overall if region == herb.ROOT else result.bias[region],
            "2/(n(n-1)) c(R)": 2 / (n * (n - 1)) * sparseness.cluster_sparseness(v[kids])
                               if n > 1 else 0.0})
    clusters = pd.DataFrame(rows).set_index("region").rename_axis(None)
    regions = pd.DataFrame({"level": tree.depth,
                            "parent": [parents[n] or EARTH for n in tree.names],
                            **{f"v {w}": v[:, j] for j, w in enumerate(words)},
                            **{f"V {w}": V[:, j] for j, w in enumerate(words)},
                            "C_w, Eq. 8": result.bias}, index=list(tree.names))
    return ToyWalk(regions=regions, clusters=clusters, tree=tree)


def plot_walk_through(walk: ToyWalk, *, axes=None):
    """Left: the sub-regions' descriptive vectors v in the plane of their first two principal
    components, each cluster's pairs joined (Eq. 3 averages these lengths) and its centroid
    (Eq. 5) marked; right: C_w of every region (Eq. 8; leaves: distance to the centroid of
    their siblings). Returns the figure.

    Used in: herb/02.
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.2), width_ratios=[1.2, 1])
    ax, bar = axes
    tree, frame = walk.tree, walk.regions
    v = frame.filter(like="v ").to_numpy()
    centred = v - v.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    xy = centred @ vt[:2].T
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    inner = [r for r in np.unique(tree.parent).tolist() if r != herb.ROOT]
    for colour, region in zip(colours, inner, strict=False):
        kids = tree.children_of(region)
        for a, b in zip(*np.triu_indices(len(kids), k=1), strict=True):
            ax.plot(*xy[[kids[a], kids[b]]].T, color=colour, lw=0.8, alpha=0.6)
        ax.scatter(*xy[kids].T, color=colour, s=40,
                   label=f"{tree.names[region]}: c(R) = "
                         f"{walk.clusters.loc[tree.names[region], 'c(R), Eq. 3']:.3f}")
        ax.scatter(*xy[kids].mean(axis=0), color=colour, marker="x", s=80)
        for k in kids:
            ax.annotate(tree.names[k], xy[k], textcoords="offset points", xytext=(4, 3),
                        fontsize=8)
    ax.set(title="sub-regions' vectors v (Eq. 2), PCA plane; x = centroid (Eq. 5)",
           xlabel="PC 1", ylabel="PC 2")
    ax.legend(fontsize=8)
    order = frame.sort_values(["level"], kind="stable")
    bar.barh(order.index[::-1], order["C_w, Eq. 8"][::-1],
             color=["grey" if lv > 1 else "black" for lv in order["level"][::-1]])
    bar.set(xscale="log", xlabel="C_w (Eq. 8, log scale)",
            title=f"bias per region (black: continents); the Earth: "
                  f"{walk.clusters.loc[EARTH, 'C_w, Eq. 8']:.2e}")
    bar.title.set_fontsize(9)
    fig = ax.figure
    fig.tight_layout()
    return fig
