"""The building blocks of HERB (Li et al. 2022) on a cluster of regions, as pure functions on
arrays: descriptive vectors (Eq. 1-2), the sparseness of a cluster (Eq. 3) and of each
descriptor (Eq. 6), the descriptor weights alpha (Eq. 7), the pair weights w and z (Eq. 9-10)
and the pair-weighted sparseness of Eq. 8. :mod:`biasbook.metrics.herb` assembles them over a
region hierarchy; its docstring gives the equations and what ``mode="as-coded"`` changes.

Rows are regions and columns descriptors. A NaN or infinite row or term is refused, as it
would make every sparseness or softmax weight NaN.

>>> round(cluster_sparseness(descriptive_vectors([[-3.0, -4.0], [-4.0, -3.0]])), 4)
0.2828
"""

from __future__ import annotations

from functools import cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist, pdist

from biasbook import validate

Mode = Literal["paper", "as-coded"]


def raw_vectors(scores: ArrayLike, descriptors: ArrayLike | None = None) -> NDArray[np.float64]:
    """Un-normalised descriptive vectors v' (Eq. 2, first line), one row per region.

    ``scores`` is ``[region, descriptor]`` or ``[template, region, descriptor]`` (averaged over
    templates). ``descriptors`` (boolean mask or indices) keeps a subset of the columns.

    >>> raw_vectors([[[-1.0, -2.0]], [[-3.0, -4.0]]], descriptors=[1])
    array([[-3.]])
    """
    raw = np.asarray(scores, dtype=np.float64)
    if raw.ndim == 3:
        raw = raw.mean(axis=0)
    if raw.ndim != 2:
        raise ValueError(f"scores must be 2-D or 3-D, got shape {raw.shape}")
    if descriptors is not None:
        raw = raw[:, np.asarray(descriptors)]
    if raw.shape[0] == 0 or raw.shape[1] == 0:
        raise ValueError(f"scores of shape {raw.shape}: need at least one region and one "
                         "descriptor")
    bad = ~np.isfinite(raw).all(axis=1)
    if bad.any():
        raise ValueError(f"scores of regions {np.flatnonzero(bad)[:10].tolist()} contain NaN "
                         "or infinite values")
    return raw


def descriptive_vectors(
    scores: ArrayLike, descriptors: ArrayLike | None = None
) -> NDArray[np.float64]:
    """L2-normalised descriptive vectors v (Eq. 1-2), one row per region.

    >>> descriptive_vectors([[-3.0, -4.0]])
    array([[-0.6, -0.8]])
    """
    return unit_rows(raw_vectors(scores, descriptors))


def unit_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows scaled to unit length. A row whose norm overflows (scores near 1e200) is first
    divided by its largest magnitude, instead of silently becoming a row of zeros."""
    with np.errstate(over="ignore"):
        norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("a region's scores are all zero: its vector cannot be normalised")
    huge = ~np.isfinite(norms[..., 0])
    if huge.any():
        x = x.copy()
        x[huge] /= np.abs(x[huge]).max(axis=-1, keepdims=True)
        norms[huge] = np.linalg.norm(x[huge], axis=-1, keepdims=True)
    return x / norms


def cluster_sparseness(vectors: ArrayLike, block: int = 2048) -> float:
    """Sparseness c(R) of a cluster (Eq. 3): the mean pairwise L2 distance of its rows.

    Rows are processed ``block`` at a time so that the ~26k regions of the plain metric
    (Table 2) fit in memory. Fewer than 2 rows give 0.

    >>> cluster_sparseness([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])  # distances 5, 3, 4
    4.0
    """
    x = _finite_rows(vectors)
    n = len(x)
    if n < 2:
        return 0.0
    total = 0.0
    for start in range(0, n - 1, block):  # pairs with k2 > k1 only
        total += np.triu(cdist(x[start : start + block], x[start:]), k=1).sum()
    return float(2.0 * total / (n * (n - 1)))


def descriptor_sparseness(vectors: ArrayLike, mode: Mode = "paper") -> NDArray[np.float64]:
    """Per-descriptor sparseness c(R)_i (Eq. 6), one value per column.

    ``mode="as-coded"`` keeps only the last pair ``(n-2, n-1)`` of the sum, squared.

    >>> descriptor_sparseness([[0.0], [1.0], [3.0]])  # (1 + 3 + 2) / 3
    array([2.])
    >>> descriptor_sparseness([[0.0], [1.0], [3.0]], mode="as-coded")  # (3 - 1)**2 / 3
    array([1.33333333])
    """
    validate.choice("mode", mode, validate.MODES)
    x = _finite_rows(vectors)
    n = len(x)
    if n < 2:
        return np.zeros(x.shape[1])
    if mode == "as-coded":
        pair_sum = (x[-2] - x[-1]) ** 2
    else:
        # sum_{k1<k2} |x_k2 - x_k1| over sorted values: the k-th smallest enters 2k-n+1 times
        ranks = 2 * np.arange(n) - n + 1
        pair_sum = ranks @ np.sort(x, axis=0)
    return 2.0 * pair_sum / (n * (n - 1))


def descriptor_weights(vectors: ArrayLike, mode: Mode = "paper") -> NDArray[np.float64]:
    """Weights alpha (Eq. 7): softmax of the per-descriptor sparseness of the cluster.

    >>> descriptor_weights([[1.0, 0.0], [1.0, 0.0]])  # no spread: uniform weights
    array([0.5, 0.5])
    """
    return _softmax(descriptor_sparseness(vectors, mode))


def pair_weights(terms: ArrayLike) -> NDArray[np.float64]:
    """Pair weights of Eq. 9 (terms C(r)) and Eq. 10 (terms f(r)), over the unordered pairs
    ``k1 < k2`` in :func:`scipy.spatial.distance.pdist` order.

    >>> pair_weights([0.0, 0.0, np.log(4.0)]).round(3)  # pairs (0,1), (0,2), (1,2)
    array([0.111, 0.444, 0.444])
    """
    t = _finite_terms(terms)
    k1, k2 = _pairs(len(t))
    return _softmax(t[k1] + t[k2])


# C_w evaluates these for every cluster of every bootstrap resample: scipy's softmax and
# np.triu_indices cost more in call overhead than in arithmetic at these sizes.
@cache
def _pairs(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    return np.triu_indices(n, k=1)


def _softmax(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """scipy.special.softmax of a 1-D array, the same operations without its dispatch."""
    e = np.exp(x - x.max())
    return e / e.sum()


def weighted_sparseness(vectors: ArrayLike, terms: ArrayLike) -> float:
    """Aggregated sparseness of a cluster (Eq. 8, l > 1), weighting each pair by
    :func:`pair_weights` of ``terms``. Fewer than 2 rows give 0.

    >>> weighted_sparseness([[0.0], [1.0], [3.0]], [0.0, 0.0, 0.0])  # (1+3+2)/3 * 2/(3*2)
    0.6666666666666666
    """
    x, t = _finite_rows(vectors), _finite_terms(terms)
    n = len(x)
    if len(t) != n:
        raise ValueError(f"{len(t)} terms for a cluster of {n} rows: need one term per row")
    if n < 2:
        return 0.0
    return float(2.0 / (n * (n - 1)) * pair_weights(t) @ pdist(x))


def _finite_rows(vectors: ArrayLike) -> NDArray[np.float64]:
    """``vectors`` as a 2-D float array; a NaN or inf would make every sparseness NaN."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"vectors must be 2-D (one row per region), got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if bad.size:
        raise ValueError(f"vectors: rows {bad[:10].tolist()} are NaN or infinite")
    return x


def _finite_terms(terms: ArrayLike) -> NDArray[np.float64]:
    """``terms`` as a 1-D float array; a NaN or inf would make every softmax weight NaN."""
    t = np.asarray(terms, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"terms must be 1-D (one per region), got shape {t.shape}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValueError(f"terms: entries {bad[:10].tolist()} are NaN or infinite")
    return t
