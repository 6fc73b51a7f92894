"""What varies in a HERB score matrix: the region, the descriptor, or the pair?

A score f(S_ij) of region j and descriptor i mixes how likely the descriptor is anywhere, how
likely the region's name is, and the pair. The two-way decomposition

    f(S_ij) = mu + a_j + b_i + e_ij

(grand mean ``mu``, region effect ``a_j``, descriptor effect ``b_i``, interaction ``e_ij``: row and
column means of a complete table) splits them; only ``e`` is a region-specific judgement.
:func:`variance_shares` splits the total sum of squares between the three (01), and
:func:`effect_shares` measures how much of HERB's overall C_w the additive part alone, and the
matrix without its region effect, still get (02).

>>> x = np.array([[1.0, 2.0], [3.0, 4.0]])  # purely additive: no interaction
>>> parts = two_way(x)
>>> parts.region.ravel().tolist(), parts.descriptor.ravel().tolist(), bool(parts.interaction.any())
([-1.0, 1.0], [-0.5, 0.5], False)
>>> {k: round(v, 2) for k, v in variance_shares(x).items()}
{'region': 0.8, 'descriptor': 0.2, 'interaction': 0.0}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from biasbook.chapters.herb.model_scores import ModelScores
from biasbook.chapters.herb.regions import region_tree
from biasbook.metrics.herb import hierarchical_bias


@dataclass
class TwoWay:
    """``x = mu + region + descriptor + interaction``; ``region`` is a column ``[n_regions, 1]``,
    ``descriptor`` a row ``[1, n_descriptors]`` (both centred), ``interaction`` the residual.

    Used in: herb/01, herb/02.
    """

    mu: float
    region: NDArray[np.float64]
    descriptor: NDArray[np.float64]
    interaction: NDArray[np.float64]

    @property
    def additive(self) -> NDArray[np.float64]:
        """The matrix without interaction, ``mu + a_j + b_i``: no region-specific judgement."""
        return self.mu + self.region + self.descriptor


def two_way(scores: ArrayLike) -> TwoWay:
    """The two-way decomposition of a ``[region, descriptor]`` matrix (module docstring).

    Used in: herb/01, herb/02.
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or min(x.shape) < 1:
        raise ValueError(f"expected a [region, descriptor] matrix, got shape {x.shape}")
    mu = x.mean()
    region = x.mean(axis=1, keepdims=True) - mu
    descriptor = x.mean(axis=0, keepdims=True) - mu
    return TwoWay(mu, region, descriptor, x - mu - region - descriptor)


def variance_shares(scores: ArrayLike) -> dict[str, float]:
    """Shares of the total sum of squares around ``mu`` carried by the region effect, the
    descriptor effect and the interaction (they add up to 1).

    Used in: herb/01.
    """
    x = np.asarray(scores, dtype=np.float64)
    parts = two_way(x)
    total = ((x - parts.mu) ** 2).sum()
    if total == 0:
        raise ValueError("a constant matrix has no variance to split")
    return {"region": float((parts.region ** 2).sum() * x.shape[1] / total),
            "descriptor": float((parts.descriptor ** 2).sum() * x.shape[0] / total),
            "interaction": float((parts.interaction ** 2).sum() / total)}


def variance_table(scores: Mapping[str, ArrayLike]) -> pd.DataFrame:
    """:func:`variance_shares` of every model: one row per model, one column per effect.

    Used in: herb/01.
    """
    return pd.DataFrame({name: variance_shares(x) for name, x in scores.items()}).T


def region_effect_correlations(scored: Mapping[str, ModelScores]) -> pd.DataFrame:
    """Per model, Pearson's correlation of each region's mean score (the region effect, up to a
    constant) with f(r) of its bare name and with the number of tokens in its name (``scored``
    needs ``region_scores`` and ``token_counts``).

    Used in: herb/01.
    """
    rows = {}
    for name, s in scored.items():
        if s.region_scores is None or s.token_counts is None:
            raise ValueError(f"{name}: score with region_scores=True and token_counts=True")
        effect = s.scores.mean(axis=1)
        rows[name] = {
            "corr(region effect, f(r))": np.corrcoef(effect, s.region_scores)[0, 1],
            "corr(region effect, tokens in name)": np.corrcoef(effect, s.token_counts)[0, 1]}
    return pd.DataFrame(rows).T


def effect_shares(table: pd.DataFrame, scores: Mapping[str, ArrayLike]) -> pd.DataFrame:
    """Per model: the overall C_w (x 10^3, paper mode) of the scores, and the share of it that
    the additive matrix (``mu + a_j + b_i``) and the matrix without its region effect
    (``x - a_j``) get, on the region tree of ``table``.

    Used in: herb/02.
    """
    tree = region_tree(table)
    rows = []
    for name, x in scores.items():
        parts = two_way(x)
        full = hierarchical_bias(tree, x).overall
        additive = hierarchical_bias(tree, parts.additive).overall
        no_region = hierarchical_bias(tree, np.asarray(x, dtype=np.float64) - parts.region).overall
        rows.append({"model": name, "overall C_w x 1e3": full * 1e3,
                     "additive only (share)": additive / full,
                     "region effect removed (share)": no_region / full})
    return pd.DataFrame(rows).set_index("model")
