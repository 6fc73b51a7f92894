"""The chapter's figures: distributions over targets per language (Figures 1, 3, 5) and
Jensen-Shannon heat maps (Table 3)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from biasbook.chapters.ethnic_bias import data, mitigation_tables, tables
from biasbook.chapters.ethnic_bias.pipeline import CBResult


def _panels(n: int, ncols: int, size: tuple[float, float], **options):
    """A figure and its axes for ``n`` panels, at most ``ncols`` a row, each ``size`` inches
    (width, height); the axes left over are hidden."""
    nrows, width = int(np.ceil(n / ncols)), min(n, ncols)
    fig, axes = plt.subplots(nrows, width, figsize=(size[0] * width, size[1] * nrows),
                             squeeze=False, **options)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes


def distribution_grid(results: Mapping[str, CBResult], attribute: str, template: int, *,
                      k: int = 3, ncols: int = 4) -> plt.Figure:
    """One bar chart per language: ``P'`` scaled to sum 1 over the 30 targets of A.2, the top
    ``k`` in colour and listed in the title with the (template, attribute) variance, as the
    paper's Figure 3 prints the CB score of each example.

    Used in: ethnic-bias/03.
    """
    fig, axes = _panels(len(results), ncols, (4.2, 3.4), sharey=True)
    for ax, (code, full) in zip(axes.flat, results.items(), strict=False):
        r = tables.base(full)
        own = data.template_ids(data.language(r.language, r.word_lists), [template])[0]
        dist = r.distribution(attribute, own)
        top = dist.sort_values(ascending=False).index[:k]
        colours = ["C3" if t in top else "C0" for t in dist.index]
        ax.bar(range(len(dist)), dist.to_numpy(), color=colours)
        ax.set_xticks(range(len(dist)), dist.index, rotation=90, fontsize=6)
        variance = tables.example_variance(r, attribute, own)
        ax.set_title(f"{code} ({variance:.2f}): " + ", ".join(top), fontsize=8)
    axes[0, 0].set_ylabel("scaled P'")
    fig.suptitle(f"{attribute!r}, template {template}; in brackets Var log P'", fontsize=10)
    fig.tight_layout()
    return fig


def jsd_heatmaps(matrices: Mapping[str, pd.DataFrame]) -> plt.Figure:
    """Side-by-side heat maps of language x language JSD matrices, on one colour scale
    (0 to ln 2).

    Used in: ethnic-bias/03.
    """
    import seaborn as sns

    fig, axes = plt.subplots(1, len(matrices), figsize=(4.6 * len(matrices), 4), squeeze=False)
    for ax, (title, matrix) in zip(axes[0], matrices.items(), strict=True):
        mask = np.eye(len(matrix), dtype=bool)
        sns.heatmap(matrix, ax=ax, vmin=0, vmax=np.log(2), cmap="rocket_r", annot=True,
                    fmt=".2f", mask=mask, square=True, cbar=False, annot_kws={"fontsize": 7})
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def mitigation_shares(outcomes, attribute: str, template: int, *, top: int = 10,
                      ncols: int = 3) -> plt.Figure:
    """Figures 4 and 6: for each source model, direction and language with more than one
    variant, the ``top`` countries by share of ``P'`` before mitigation and their shares under
    each variant (``outcomes``: :class:`~biasbook.chapters.ethnic_bias.mitigation.Outcome`).

    Used in: ethnic-bias/04.
    """
    groups: dict[tuple, list] = {}
    for o in outcomes:
        groups.setdefault((o.row["direction"], o.row["language"], o.row["model"]), []).append(o)
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups:
        raise ValueError("no direction and language has more than one variant to compare")
    fig, axes = _panels(len(groups), ncols, (5.5, 3.8))
    for ax, ((direction, lang, model), group) in zip(axes.flat, groups.items(), strict=False):
        shares = mitigation_tables.distributions(group, attribute, template)
        first = shares.iloc[:, 0].sort_values(ascending=False).index[:top]
        shares.loc[first].plot.bar(ax=ax, width=0.8)
        ax.set_title(f"{direction} {lang} ({model})", fontsize=9)
        ax.set_ylabel("share of normalised probability")
        ax.legend(fontsize=6)
    fig.suptitle(f"{attribute!r}, template {template}", fontsize=10)
    fig.tight_layout()
    return fig


def interval_dots(frame: pd.DataFrame, label: str, *, value: str = "value",
                  paper: str | None = "paper", by: str = "model", xlabel: str = "",
                  prefix: str = "") -> plt.Figure:
    """One panel per ``by`` value: each row's ``value`` with its interval as a horizontal error
    bar (labelled by column ``label``) and, where there is one, the paper's number as a cross.

    Used in: ethnic-bias/03.
    """
    groups = list(frame.groupby(by, sort=False))
    height = max(len(g) for _, g in groups) if groups else 1
    fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(5 * max(len(groups), 1),
                                                              0.3 * height + 1.5), squeeze=False)
    for ax, (name, group) in zip(axes[0], groups, strict=False):
        y = np.arange(len(group))[::-1]
        v = group[value].to_numpy(float)
        low, high = (group[prefix + c].to_numpy(float) for c in ("ci_low", "ci_high"))
        err = np.vstack([v - np.where(np.isnan(low), v, low),
                         np.where(np.isnan(high), v, high) - v])
        ax.errorbar(v, y, xerr=err, fmt="o", color="C0", capsize=2, label="ours, 95% interval")
        if paper is not None and group[paper].notna().any():
            ax.plot(group[paper].to_numpy(float), y, "x", color="C3", label="paper")
        ax.set_yticks(y, group[label].astype(str).tolist(), fontsize=7)
        ax.set_title(str(name), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def bias_quality(rows: pd.DataFrame) -> plt.Figure:
    """CB score against held-out perplexity (log scale), one colour per direction and language,
    with each row's CB interval over cells and perplexity interval over held-out sentences
    (:func:`~biasbook.chapters.ethnic_bias.uncertainty_mitigation.mitigation_intervals`' frame).

    Used in: ethnic-bias/04.
    """
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for k, ((direction, lang), group) in enumerate(rows.groupby(["direction", "language"])):
        x, y = group["perplexity"].to_numpy(float), group["cb"].to_numpy(float)
        yerr = np.vstack([y - group["ci_low"].to_numpy(float), group["ci_high"] - y])
        xerr = np.vstack([x - group["perplexity ci_low"].to_numpy(float),
                          group["perplexity ci_high"].to_numpy(float) - x])
        ax.errorbar(x, y, xerr=np.nan_to_num(xerr), yerr=np.nan_to_num(yerr), fmt="o",
                    color=f"C{k % 10}", capsize=2, label=f"{direction} {lang}")
        for _, row in group.iterrows():
            aligned = row["aligned_to"] if isinstance(row["aligned_to"], str) else ""
            ax.annotate(row["variant"] + (f"->{aligned}" if aligned else ""),
                        (row["perplexity"], row["cb"]), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("held-out perplexity (log scale; bars: 95% over held-out sentences)")
    ax.set_ylabel("CB score (bars: 95% over cells)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
