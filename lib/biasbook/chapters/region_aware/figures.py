"""Figures of the region-aware chapter that are more than a one-line seaborn call.

- :func:`pipeline`: the paper's method (its Fig. 1) as boxes and arrows, each box naming the
  notebook and library module that implements it.
- :func:`effect_heatmap`: a diverging heat map of effect sizes (rows: tests or topic pairs;
  columns: domains/regions), NaN cells (not computable) hatched and labelled.
- :func:`interval_plot`: numbers with their 95% intervals as error bars (one row each), the
  paper's numbers as crosses (the heat maps cannot show an interval).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

#: (label, where in the book, column, row) of the pipeline's boxes.
STEPS = [
    ("Region-labelled corpus\n(GeoWAC; here UN\ndebates and tweets)", "01 · corpora.py", 0, 0.5),
    ("Caliskan's WEAT tests\nword2vec per region", "02 · weat_across_regions.py", 1, 1.5),
    ("F/M-aligned examples\n52 gendered word pairs", "03 · gendered.py", 1, -0.5),
    ("BERTopic per region\nF/M topics, u_mass rank", "03 · topics.py", 2, -0.5),
    ("Topic pairs\n|cos(F,she) - cos(M,he)|\n< 0.01", "04 · topics.py", 3, -0.5),
    ("Region-aware WEAT\nfastText per domain", "05 · topic_pair_weat.py", 4, 0.7),
    ("IAT with people\n(here: self-run)", "05 · iat.py", 4, -0.5),
    ("LLM personas\ngender mismatch", "06 · personas.py", 4, -1.7),
]
ARROWS = [(0, 1), (0, 2), (2, 3), (3, 4), (4, 5), (4, 6), (4, 7)]


def pipeline(ax=None):
    """Draw the pipeline; returns the axes.

    Used in: region-aware/01.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 4.6))
    boxes = []
    for i, (label, where, col, row) in enumerate(STEPS):
        boxes.append(ax.text(col * 2.5, row, f"{label}\n[{where}]", ha="center", va="center",
                             fontsize=8.5, bbox={"boxstyle": "round,pad=0.45", "ec": "#3b75af",
                                                 "fc": "#f8f1e6" if i == 1 else "#eef3f8"}))
    for a, b in ARROWS:  # from the right edge of one box to the left edge of the next
        ax.annotate("", xy=(0, 0.5), xycoords=boxes[b], xytext=(1, 0.5), textcoords=boxes[a],
                    arrowprops={"arrowstyle": "->", "color": "#555555", "shrinkA": 4,
                                "shrinkB": 4})
    ax.set_xlim(-1.3, 4 * 2.5 + 1.3)
    ax.set_ylim(-2.4, 2.2)
    ax.axis("off")
    return ax


def effect_heatmap(frame: pd.DataFrame, *, ax=None, title: str = "", limit: float = 2.0):
    """A diverging heat map of ``frame`` (numbers; NaN = not computable), values annotated.

    Used in: region-aware/02, region-aware/05.
    """
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 1.1 * frame.shape[1], 0.9 + 0.32 * frame.shape[0]))
    values = frame.astype(float)
    sns.heatmap(values, ax=ax, cmap="RdBu_r", center=0, vmin=-limit, vmax=limit, annot=True,
                fmt=".2f", annot_kws={"fontsize": 7}, linewidths=0.4, linecolor="white",
                cbar_kws={"label": "effect size"})
    for (r, c), missing in np.ndenumerate(values.isna().to_numpy()):
        if missing:
            ax.add_patch(plt.Rectangle((c, r), 1, 1, fill=False, hatch="///", ec="#bbbbbb",
                                       lw=0))
            ax.text(c + 0.5, r + 0.5, "n/c", ha="center", va="center", fontsize=6.5,
                    color="#777777")
    ax.set(xlabel="", ylabel="", title=title)
    return ax


def interval_plot(frame: pd.DataFrame, labels, *, ax=None, paper: str | None = None,
                  reference: float | None = 0.0, title: str = "", xlabel: str = ""):
    """One row per row of ``frame``: ``value`` as a dot with its interval (``ci_low`` to
    ``ci_high``; a dot alone where there is none), the column ``paper`` as a red cross where
    given, a dashed vertical line at ``reference``; ``labels`` name the rows (top to bottom).

    Used in: region-aware/02, region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    labels = list(labels)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.9 + 0.26 * len(frame)))
    y = np.arange(len(frame))[::-1]
    value = frame["value"].to_numpy(float)
    low = frame["ci_low"].to_numpy(float) if "ci_low" in frame else np.full(len(frame), np.nan)
    high = frame["ci_high"].to_numpy(float) if "ci_high" in frame else np.full(len(frame), np.nan)
    has = ~np.isnan(low) & ~np.isnan(high)
    ax.errorbar(value[has], y[has], xerr=[value[has] - low[has], high[has] - value[has]],
                fmt="o", color="#3b75af", ecolor="#3b75af", capsize=2.5, ms=4, lw=1,
                label="ours, 95% interval")
    ax.plot(value[~has], y[~has], "o", color="#3b75af", mfc="white", ms=4,
            label="ours, no interval" if (~has).any() else None)
    if paper is not None and frame[paper].notna().any():
        ax.plot(frame[paper].to_numpy(float), y, "x", color="#c0392b", ms=6, label="paper")
    if reference is not None:
        ax.axvline(reference, color="#777777", ls="--", lw=0.8)
    ax.set_yticks(y, labels, fontsize=7.5)
    ax.set(ylim=(-0.7, len(frame) - 0.3), xlabel=xlabel, title=title)
    ax.legend(fontsize=7, loc="best")
    return ax
