"""HERB metric (biasbook.metrics.herb and its parts in biasbook.metrics.sparseness) against
values derived independently of it.

``Reference`` is written straight from Eq. 2-10 of Li et al. (2022) with plain Python loops over
pairs, top-down recursion and the ``math`` module; the implementation is vectorised and
bottom-up. ``code_reference`` is written from a reading of the authors' repository
(Bernard-Yang/HERB: prepareContinent.py's country loop, calculateBias.py's continent loop and
root, calculateBiasVariant.py's ``cal_z``, NonHierarchicalBias.py), stage by stage over
continents, countries and cities as the scripts go, for ``mode="as-coded"``. Edge cases and each
as-coded deviation are checked against hand-worked numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from biasbook.metrics import herb, sparseness
from biasbook.metrics.herb import RegionTree

# Toy hierarchy: 2 continents, 4 countries (one without cities), 6 cities, 3 descriptors.
#   0 Asia:    2 Japan (cities 6, 7, 8), 3 Nepal (city 9), 5 Bhutan (no city: a leaf)
#   1 Europe:  4 France (cities 10, 11)
NAMES = ("Asia", "Europe", "Japan", "Nepal", "France", "Bhutan",
         "Tokyo", "Osaka", "Kyoto", "Kathmandu", "Paris", "Lyon")
PARENT = [-1, -1, 0, 0, 1, 0, 2, 2, 2, 3, 4, 4]
TREE = RegionTree(NAMES, PARENT)
SCORES = np.random.default_rng(7).uniform(-9.0, -1.0, size=(len(NAMES), 3))
REGION_SCORES = np.random.default_rng(8).normal(-5.0, 2.0, size=len(NAMES))

# A third continent, so that the root's pair weights matter (with two continents they are 1):
#   12 Oceania: 13 Fiji (cities 15, 16, 17, 18), 14 Tonga (city 19)
PARENT3 = [*PARENT, -1, 12, 12, 13, 13, 13, 13, 14]
TREE3 = RegionTree((*NAMES, "Oceania", "Fiji", "Tonga", "Suva", "Nadi", "Lautoka", "Labasa",
                    "Nukualofa"), PARENT3)
SCORES3 = np.random.default_rng(9).uniform(-9.0, -1.0, size=(len(PARENT3), 4))
REGION_SCORES3 = np.random.default_rng(10).normal(-5.0, 2.0, size=len(PARENT3))


# ---------------------------------------------------------------- independent reference


def _norm(x):
    return math.sqrt(sum(a * a for a in x))


def _dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def _pairs(items):
    return [(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items))]


def _softmax(values):
    top = max(values)
    exps = [math.exp(x - top) for x in values]
    return [e / sum(exps) for e in exps]


class Reference:
    """Eq. 2-10 with lists and loops; ``region_f`` switches Eq. 9 (C_w) to Eq. 10 (C_z)."""

    def __init__(self, parent, scores, region_f=None):
        self.parent, self.region_f = list(parent), region_f
        self.raw = [list(map(float, row)) for row in scores]
        self.v = [[a / _norm(row) for a in row] for row in self.raw]
        self.n_desc = len(self.raw[0])

    def kids(self, j):
        return [k for k, p in enumerate(self.parent) if p == j]

    def centroid(self, ids):
        return [sum(self.v[k][i] for k in ids) / len(ids) for i in range(self.n_desc)]

    def alpha(self, ids):  # Eq. 6-7
        n = len(ids)
        if n < 2:
            return [1.0 / self.n_desc] * self.n_desc
        c = [2.0 / (n * (n - 1)) * sum(abs(self.v[a][i] - self.v[b][i]) for a, b in _pairs(ids))
             for i in range(self.n_desc)]
        return _softmax(c)

    def V(self, j):  # Eq. 4-5
        ids = self.kids(j)
        if not ids:
            return self.v[j]
        return [o + a * c for o, a, c in zip(self.v[j], self.alpha(ids), self.centroid(ids),
                                              strict=True)]

    def C(self, j):  # Eq. 8 (j = -1 is the root, "the Earth")
        ids = self.kids(j)
        if not ids:
            return _dist(self.v[j], self.centroid(self.kids(self.parent[j])))
        n = len(ids)
        if n < 2:
            return 0.0
        if self.region_f is not None:
            term = {k: self.region_f[k] for k in ids}
        else:
            term = {k: self.C(k) for k in ids}
        pairs = _pairs(ids)
        w = _softmax([term[a] + term[b] for a, b in pairs])
        d = [_dist(self.V(a), self.V(b)) for a, b in pairs]
        return 2.0 / (n * (n - 1)) * sum(wi * di for wi, di in zip(w, d, strict=True))


def _unit(x):
    return [a / _norm(x) for a in x]


def _mean(rows):
    return [sum(col) / len(rows) for col in zip(*rows, strict=True)]


def _last_pair_alpha(rows):
    """The repository's Eq. 6-7: only the last pair survives its loop, and it is squared."""
    n = len(rows)
    return _softmax([2.0 * (a - b) ** 2 / (n * (n - 1)) for a, b in zip(rows[-2], rows[-1],
                                                                         strict=True)])


def _weighted(rows, terms):
    """Eq. 8-9 as the repository's double loops: softmax over pairs, times 2/(n(n-1))."""
    n = len(rows)
    pairs = _pairs(list(range(n)))
    exps = [math.exp(terms[a] + terms[b]) for a, b in pairs]
    total = sum(e / sum(exps) * _dist(rows[a], rows[b]) for e, (a, b) in zip(exps, pairs,
                                                                             strict=True))
    return 2.0 * total / (n * (n - 1))


def _z_terms(ids, region_f):
    """cal_z scores only the last location of its list; the other entries stay 0."""
    return [0.0] * (len(ids) - 1) + [region_f[ids[-1]]]


def code_reference(parent, scores, region_f=None):
    """The repository's three stages on a continent -> country -> city tree.

    Returns (V per region, C per region, overall); ``region_f`` gives C_z (cRV.npy and cal_z).
    """
    raw = [list(map(float, row)) for row in scores]
    kids = {j: [k for k, p in enumerate(parent) if p == j] for j in [-1, *range(len(parent))]}
    V, C = {}, {}
    for continent in kids[-1]:
        # prepareContinent.py: one country at a time, from its cities' normalised scores
        for country in kids[continent]:
            cities = kids[country]
            own = _unit(raw[country])
            city_v = [_unit(raw[k]) for k in cities]
            for k in cities:
                V[k], C[k] = city_v[cities.index(k)], 0.0
            if not cities:
                V[country], C[country] = own, 0.0
            elif len(cities) == 1:
                V[country], C[country] = [a + b for a, b in zip(own, city_v[0], strict=True)], 0.0
            else:
                centre = _mean(city_v)
                c_r = [_dist(x, centre) for x in city_v[:-1]] + [0.0]  # C_R, last left at 0
                for k, value in zip(cities, c_r, strict=True):
                    C[k] = value
                alpha = _last_pair_alpha(city_v)
                V[country] = [o + a * m for o, a, m in zip(own, alpha, centre, strict=True)]
                terms = c_r if region_f is None else _z_terms(cities, region_f)
                C[country] = _weighted(city_v, terms)
        # calculateBias.py: alpha from the stored V, centroid and distances from V normalised
        countries = kids[continent]
        stored = [V[k] for k in countries]
        units = [_unit(x) for x in stored]
        if len(countries) == 1:  # the code would divide by 0 here; herb.py's decision
            V[continent] = [r + u for r, u in zip(raw[continent], units[0], strict=True)]
            C[continent] = 0.0
            continue
        alpha = _last_pair_alpha(stored)
        V[continent] = [r + a * m for r, a, m in zip(raw[continent], alpha, _mean(units),
                                                     strict=True)]
        terms = [C[k] for k in countries] if region_f is None else _z_terms(countries, region_f)
        C[continent] = _weighted(units, terms)
    # calculateBias.py, the root: continents' V normalised, continents' C as weights
    top = kids[-1]
    terms = [C[k] for k in top] if region_f is None else _z_terms(top, region_f)
    overall = _weighted([_unit(V[k]) for k in top], terms)
    n = len(parent)
    return [V[j] for j in range(n)], [C[j] for j in range(n)], overall


# ---------------------------------------------------------------- building blocks


def test_descriptive_vectors_normalise_after_masking():
    assert sparseness.descriptive_vectors([[-3.0, -4.0]])[0] == pytest.approx([-0.6, -0.8])
    masked = sparseness.descriptive_vectors([[-3.0, -4.0, -12.0]], descriptors=[True, True, False])
    assert masked[0] == pytest.approx([-0.6, -0.8])


def test_template_axis_is_averaged_before_normalising():
    per_template = np.stack([SCORES, SCORES - 2.0])
    assert sparseness.descriptive_vectors(per_template) == pytest.approx(
        sparseness.descriptive_vectors(SCORES - 1.0))


@pytest.mark.parametrize("bad", [[[np.nan, 1.0]], [[0.0, 0.0]], [1.0, 2.0]])
def test_descriptive_vectors_reject_bad_scores(bad):
    with pytest.raises(ValueError):
        sparseness.descriptive_vectors(bad)


def test_cluster_sparseness_blocks_match_brute_force():
    x = np.random.default_rng(0).normal(size=(23, 4))
    rows = x.tolist()
    expected = sum(_dist(a, b) for a, b in _pairs(rows)) / (23 * 22 / 2)
    assert sparseness.cluster_sparseness(x, block=5) == pytest.approx(expected, rel=1e-12)
    assert sparseness.cluster_sparseness(x[:1]) == 0.0


def test_descriptor_sparseness_both_modes():
    x = np.random.default_rng(1).normal(size=(5, 3))
    for i in range(3):
        col = x[:, i].tolist()
        paper = sum(abs(a - b) for a, b in _pairs(col)) / 10
        as_coded = (col[3] - col[4]) ** 2 / 10  # the last pair (3, 4), squared; 2/(n(n-1))
        assert sparseness.descriptor_sparseness(x)[i] == pytest.approx(paper)
        assert sparseness.descriptor_sparseness(x, mode="as-coded")[i] == pytest.approx(as_coded)


def test_descriptor_weights_are_a_softmax():
    # column sparseness: (1 + 3 + 2) / 3 = 2 and 0 -> alpha = (e^2, 1) / (e^2 + 1)
    alpha = sparseness.descriptor_weights([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    assert alpha == pytest.approx([math.e**2 / (math.e**2 + 1), 1 / (math.e**2 + 1)])


def test_pair_weights_survive_large_terms():
    assert sparseness.pair_weights([1e4, 1e4, 1e4]) == pytest.approx([1 / 3] * 3)


@pytest.mark.bad_input(
    "NaN or infinite vectors or terms given to HERB's helpers (`cluster_sparseness`, "
    "`descriptor_weights`, `pair_weights`, `weighted_sparseness`), or terms that do not match "
    "the cluster's rows",
    "`ValueError` naming the argument and the rows (or entries) at fault")
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_helpers_refuse_non_finite_input(bad):
    good = [[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    vectors = [[0.0, 1.0], [1.0, bad], [1.0, 1.0]]
    calls = [(sparseness.cluster_sparseness, vectors), (sparseness.descriptor_weights, vectors),
             (sparseness.descriptor_weights, vectors, "as-coded"),
             (sparseness.weighted_sparseness, vectors, [0.0, 0.0, 0.0])]
    for f, *args in calls:
        with pytest.raises(ValueError, match=r"vectors: rows \[1\] are NaN or infinite"):
            f(*args)
    for f, *args in [(sparseness.pair_weights, [0.0, 0.0, bad]),
                     (sparseness.weighted_sparseness, good, [0.0, 0.0, bad])]:
        with pytest.raises(ValueError, match=r"terms: entries \[2\] are NaN or infinite"):
            f(*args)
    with pytest.raises(ValueError, match="2 terms for a cluster of 3 rows"):
        sparseness.weighted_sparseness(good, [0.0, 0.0])


def test_topic_mask():
    topics = ["strength", "morality", "strength", "appearance"]
    assert herb.topic_mask(topics, ["strength", "morality"]).tolist() == [0, 0, 0, 1]
    with pytest.raises(ValueError, match="unknown topic"):
        herb.topic_mask(topics, "occupation")


def test_region_tree_validation():
    with pytest.raises(ValueError, match="cycle"):
        RegionTree(("a", "b", "c"), [-1, 2, 1])
    with pytest.raises(ValueError, match="parent indices"):
        RegionTree(("a",), [3])
    with pytest.raises(ValueError, match="one entry per name"):
        RegionTree(("a", "b"), [-1])
    assert TREE.children_of(0).tolist() == [2, 3, 5]
    assert TREE.depth.tolist() == [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]
    assert sorted(TREE.descendants(0).tolist()) == [2, 3, 5, 6, 7, 8, 9]


def test_shape_and_mode_errors():
    with pytest.raises(ValueError, match="rows"):
        herb.hierarchical_bias(TREE, SCORES[:-1])
    with pytest.raises(ValueError, match="rows"):
        herb.region_weighted_bias(TREE, SCORES, REGION_SCORES[:-1])
    with pytest.raises(ValueError, match="mode"):
        herb.hierarchical_bias(TREE, SCORES, mode="code")


# ---------------------------------------------------------------- the whole metric


def test_hierarchical_bias_matches_reference():
    ref = Reference(PARENT, SCORES)
    result = herb.hierarchical_bias(TREE, SCORES)
    assert result.bias == pytest.approx([ref.C(j) for j in range(len(NAMES))], rel=1e-10)
    assert result.overall == pytest.approx(ref.C(-1), rel=1e-10)
    assert result.vectors == pytest.approx(np.array([ref.V(j) for j in range(len(NAMES))]))


def test_region_weighted_bias_matches_reference():
    ref = Reference(PARENT, SCORES, region_f=REGION_SCORES.tolist())
    result = herb.region_weighted_bias(TREE, SCORES, REGION_SCORES)
    assert result.bias == pytest.approx([ref.C(j) for j in range(len(NAMES))], rel=1e-10)
    assert result.overall == pytest.approx(ref.C(-1), rel=1e-10)


@pytest.mark.parametrize("tree, scores, f", [(TREE, SCORES, REGION_SCORES),
                                             (TREE3, SCORES3, REGION_SCORES3)])
def test_as_coded_matches_the_code_reference(tree, scores, f):
    parent = tree.parent.tolist()
    V, C, overall = code_reference(parent, scores)
    result = herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert result.bias == pytest.approx(C, rel=1e-10)
    assert result.overall == pytest.approx(overall, rel=1e-10)
    assert result.vectors == pytest.approx(np.array(V), rel=1e-12)
    assert herb.aggregated_vectors(tree, scores, mode="as-coded") == pytest.approx(np.array(V))
    V, C, overall = code_reference(parent, scores, region_f=f.tolist())
    variant = herb.region_weighted_bias(tree, scores, f, mode="as-coded")
    assert variant.bias == pytest.approx(C, rel=1e-10)
    assert variant.overall == pytest.approx(overall, rel=1e-10)


def test_modes_differ_where_the_code_deviates():
    paper = herb.hierarchical_bias(TREE, SCORES)
    coded = herb.hierarchical_bias(TREE, SCORES, mode="as-coded")
    # cities but the last of each country, 1- and 2-city countries: Eq. 8 either way
    same = [3, 4, 6, 7, 9, 10]
    assert coded.bias[same] == pytest.approx(paper.bias[same], rel=1e-12)
    assert coded.bias[[8, 11]].tolist() == [0.0, 0.0]  # last cities (item 7)
    assert coded.bias[5] == 0.0 < paper.bias[5]  # Bhutan, no city (item 6)
    assert abs(coded.bias[2] - paper.bias[2]) > 1e-6  # Japan: last city's term
    # continents carry their raw vector, which is far from unit length (item 3)
    assert np.linalg.norm(coded.vectors[0]) > 2 * np.linalg.norm(paper.vectors[0])
    assert abs(coded.overall - paper.overall) > 1e-3


# ---------------------------------------------------------------- as-coded deviations, by hand


def test_as_coded_last_city_term_is_zero():
    # item 7. One country, 3 cities with v = A (-1, 0), B (0, -1), C (-1, 0); centroid
    # (-2/3, -1/3); terms |A - m| = sqrt2/3, |B - m| = 2 sqrt2/3, and 0 for C (sqrt2/3 in Eq. 8).
    # Distances AB = sqrt2, AC = 0, BC = sqrt2; pair weights e^(tA+tB), e^tA, e^tB.
    tree = RegionTree(("Asia", "Japan", "A", "B", "C"), [-1, 0, 1, 1, 1])
    scores = [[-1.0, -1.0], [-1.0, -1.0], [-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]]
    r2 = math.sqrt(2)
    ta, tb = r2 / 3, 2 * r2 / 3
    exps = [math.exp(ta + tb), math.exp(ta), math.exp(tb)]
    expected = (r2 * exps[0] + r2 * exps[2]) / sum(exps) / 3
    result = herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert result.bias[1] == pytest.approx(expected)
    assert result.bias[2:].tolist() == pytest.approx([ta, tb, 0.0])
    # the paper's terms (all three filled) give another value
    assert herb.hierarchical_bias(tree, scores).bias[1] != pytest.approx(expected)


def test_as_coded_country_alpha_from_squared_last_pair():
    # items 1 and 7 on the same country: v(Japan) = (-0.6, -0.8); cities as above, last pair
    # B (0, -1), C (-1, 0): c = 2/(3*2) * ((0 + 1)**2, (-1 - 0)**2) = (1/3, 1/3) -> alpha = 1/2
    tree = RegionTree(("Asia", "Japan", "A", "B", "C"), [-1, 0, 1, 1, 1])
    scores = [[-1.0, -1.0], [-3.0, -4.0], [-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]]
    vectors = herb.aggregated_vectors(tree, scores, mode="as-coded")
    assert vectors[1] == pytest.approx([-0.6 + 0.5 * -2 / 3, -0.8 + 0.5 * -1 / 3])
    # with an uneven last pair: cities (-1, 0), (-0.6, -0.8): c = ((0.4)**2, (0.8)**2) * 1
    tree = RegionTree(("Asia", "Japan", "A", "B"), [-1, 0, 1, 1])
    scores = [[-1.0, -1.0], [-3.0, -4.0], [-1.0, 0.0], [-3.0, -4.0]]
    alpha = _softmax([0.4**2, 0.8**2])
    centre = [-0.8, -0.4]
    vectors = herb.aggregated_vectors(tree, scores, mode="as-coded")
    assert vectors[1] == pytest.approx([-0.6 + alpha[0] * centre[0], -0.8 + alpha[1] * centre[1]])


def test_as_coded_country_with_one_city_adds_it_whole():
    # item 5: Nepal (-4, -3) -> (-0.8, -0.6), Kathmandu (0, -1): V = v + v(city), no alpha
    tree = RegionTree(("Asia", "Nepal", "Kathmandu"), [-1, 0, 1])
    result = herb.hierarchical_bias(tree, [[-1.0, -1.0], [-4.0, -3.0], [0.0, -1.0]],
                                    mode="as-coded")
    assert result.vectors[1] == pytest.approx([-0.8, -0.6 - 1.0])
    assert result.bias.tolist() == [0.0, 0.0, 0.0]


def test_as_coded_country_without_cities_has_zero_bias():
    # item 6 (paper: sqrt(0.5), see test_country_without_cities_is_a_leaf)
    tree = RegionTree(("Asia", "Japan", "Bhutan", "Tokyo", "Osaka"), [-1, 0, 0, 1, 1])
    scores = [[-1.0, -1.0], [0.0, -2.0], [-5.0, 0.0], [-3.0, -4.0], [-4.0, -3.0]]
    result = herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert result.bias[2] == 0.0
    assert result.vectors[2] == pytest.approx([-1.0, 0.0])
    assert result.bias[1] == pytest.approx(math.sqrt(2 * 0.2**2))  # one pair: weight 1
    assert result.bias[[3, 4]] == pytest.approx([math.sqrt(2) * 0.1, 0.0])


def test_as_coded_continent_vector_and_distances():
    # items 2-4. Two countries with one city each (item 5), so their V are not unit vectors:
    #   France v (-1, 0) + Paris (-1, 0) -> V1 = (-2, 0);  Spain v (0, -1) + Madrid (-0.6, -0.8)
    #   -> V2 = (-0.6, -1.8). alpha: c = 2/(2*1) * ((-2 + 0.6)**2, (0 + 1.8)**2) = (1.96, 3.24).
    #   Centroid and distance from V / ||V||: U1 = (-1, 0), U2 = (-0.6, -1.8) / sqrt(3.6).
    tree = RegionTree(("Europe", "France", "Spain", "Paris", "Madrid"), [-1, 0, 0, 1, 2])
    scores = [[-30.0, -40.0], [-2.0, 0.0], [0.0, -5.0], [-1.0, 0.0], [-3.0, -4.0]]
    alpha = _softmax([1.96, 3.24])
    u2 = [-0.6 / math.sqrt(3.6), -1.8 / math.sqrt(3.6)]
    centre = [(-1.0 + u2[0]) / 2, u2[1] / 2]
    result = herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert result.vectors[1:3] == pytest.approx(np.array([[-2.0, 0.0], [-0.6, -1.8]]))
    assert result.vectors[0] == pytest.approx([-30.0 + alpha[0] * centre[0],
                                               -40.0 + alpha[1] * centre[1]])
    assert result.bias[0] == pytest.approx(math.hypot(-1.0 - u2[0], -u2[1]))
    # the paper measures between V itself, v + vbar / 2 here: (-1.5, 0) and (-0.3, -1.4)
    assert herb.hierarchical_bias(tree, scores).bias[0] == pytest.approx(math.hypot(1.2, 1.4))


def test_as_coded_root_normalises_continent_vectors():
    # items 3, 4, 8. Continents without countries keep their raw vectors (V = f(S), C = 0);
    # the root measures between V / ||V||: (-0.6, -0.8) and (-0.8, -0.6), one pair
    tree = RegionTree(("AF", "EU"), [-1, -1])
    result = herb.hierarchical_bias(tree, [[-3.0, -4.0], [-8.0, -6.0]], mode="as-coded")
    assert result.vectors == pytest.approx(np.array([[-3.0, -4.0], [-8.0, -6.0]]))
    assert result.overall == pytest.approx(math.sqrt(2) * 0.2)


def test_as_coded_root_weights_come_from_continent_bias():
    # item 8: three continents; AF's two countries sit sqrt2 apart (C_AF = sqrt2, weight 1),
    # AS and EU have a single country (C = 0). Continent V = raw + alpha * centroid.
    tree = RegionTree(("AF", "AS", "EU", "Chad", "Mali", "Laos", "Malta"),
                      [-1, -1, -1, 0, 0, 1, 2])
    scores = [[-3.0, -4.0], [-4.0, -3.0], [-5.0, -5.0],
              [-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, -1.0]]
    half = _softmax([1.0, 1.0])  # AF: c = 2/(2*1) * ((-1 - 0)**2, (0 + 1)**2)
    v_af = [-3.0 + half[0] * -0.5, -4.0 + half[1] * -0.5]
    v_as = [-4.0 - 1.0, -3.0]  # one country: its unit vector is added whole
    v_eu = [-5.0, -5.0 - 1.0]
    units = [_unit(x) for x in (v_af, v_as, v_eu)]
    c_af = math.sqrt(2)
    exps = [math.exp(c_af), math.exp(c_af), 1.0]  # pairs (AF, AS), (AF, EU), (AS, EU)
    dists = [_dist(units[0], units[1]), _dist(units[0], units[2]), _dist(units[1], units[2])]
    expected = sum(e * d for e, d in zip(exps, dists, strict=True)) / sum(exps) / 3
    result = herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert result.bias[:3] == pytest.approx([c_af, 0.0, 0.0])
    assert result.overall == pytest.approx(expected)


def test_as_coded_region_weights_use_the_last_region_only():
    # item 9: f = (ln 4, 0, 0) reaches the code as (0, 0, 0): uniform weights, 2 sqrt2 / 9
    tree = RegionTree(("AF", "AS", "EU"), [-1, -1, -1])
    scores = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    f = [math.log(4.0), 0.0, 0.0]
    coded = herb.region_weighted_bias(tree, scores, f, mode="as-coded")
    assert coded.overall == pytest.approx(2 * math.sqrt(2) / 9)
    assert herb.region_weighted_bias(tree, scores, f).overall == pytest.approx(
        8 * math.sqrt(2) / 27)  # paper: weights (4, 4, 1) / 9
    # f on the last region is used: (0, 0, ln 4) -> pair terms (0, ln4, ln4), as in the paper
    f = [0.0, 0.0, math.log(4.0)]
    assert herb.region_weighted_bias(tree, scores, f, mode="as-coded").overall == pytest.approx(
        5 * math.sqrt(2) / 27)


def test_as_coded_rejects_deeper_trees():
    tree = RegionTree(("a", "b", "c", "d"), [-1, 0, 1, 2])
    scores = [[-1.0, -2.0]] * 4
    with pytest.raises(ValueError, match="3 deep"):
        herb.hierarchical_bias(tree, scores, mode="as-coded")
    assert herb.hierarchical_bias(tree, scores).overall == 0.0  # paper mode has no limit


def test_as_coded_plain_bias():
    # item 10. Asia: Japan (cities 3, 4, 5), Nepal (city 6), plus the continent itself.
    tree = RegionTree(("Asia", "Japan", "Nepal", "Tokyo", "Osaka", "Kyoto", "Kathmandu"),
                      [-1, 0, 0, 1, 1, 1, 2])
    scores = np.random.default_rng(3).uniform(-9.0, -1.0, size=(7, 3))
    v = [_unit(row) for row in scores.tolist()]
    pooled = [v[0], v[1], v[6], v[3], v[4], v[5], v[6]]  # Nepal's row is Kathmandu's vector
    pairs = _pairs(pooled)
    mean_dist = sum(_dist(a, b) for a, b in pairs) / len(pairs)
    result = herb.plain_bias(tree, scores, mode="as-coded")
    assert result.bias[0] == pytest.approx(mean_dist)
    assert result.overall == pytest.approx(mean_dist)
    assert result.vectors[2] == pytest.approx(np.array(v[6]))
    # Japan's c_plain: sum over i < j of |v(Japan) - v(city j)|, times 2 / count * (count - 1)
    cities = [3, 4, 5]
    sum_c, count = 0.0, 0
    for i in range(len(cities) - 1):
        for j in range(i + 1, len(cities)):
            sum_c += _dist(v[1], v[cities[j]])
            count += 1
    assert result.bias[1] == pytest.approx(sum_c * 2 / count * (count - 1))
    assert result.bias[2:].tolist() == [0.0] * 5  # one city, and the leaves
    assert herb.plain_bias(tree, scores).bias[0] != pytest.approx(mean_dist)


def test_paper_mode_ignores_score_scale_but_as_coded_does_not():
    paper = herb.hierarchical_bias(TREE, SCORES)
    assert herb.hierarchical_bias(TREE, 3 * SCORES).overall == pytest.approx(paper.overall)
    coded = herb.hierarchical_bias(TREE, SCORES, mode="as-coded").overall
    assert herb.hierarchical_bias(TREE, 3 * SCORES, mode="as-coded").overall != pytest.approx(coded)


def test_topic_ablation_equals_dropping_the_columns():
    keep = [True, False, True]
    ablated = herb.hierarchical_bias(TREE, SCORES, descriptors=keep)
    ref = Reference(PARENT, SCORES[:, keep])
    assert ablated.overall == pytest.approx(ref.C(-1), rel=1e-10)
    assert ablated.vectors.shape == (len(NAMES), 2)


# ---------------------------------------------------------------- edge cases, by hand


def test_country_with_one_city():
    # Nepal (-4, -3) with one city Kathmandu (0, -1): alpha = (1/2, 1/2)
    tree = RegionTree(("Asia", "Nepal", "Kathmandu"), [-1, 0, 1])
    result = herb.hierarchical_bias(tree, [[-1.0, -1.0], [-4.0, -3.0], [0.0, -1.0]])
    assert result.vectors[1] == pytest.approx([-0.8, -0.6 - 0.5])
    assert result.bias.tolist() == [0.0, 0.0, 0.0]  # one-member clusters are not sparse
    assert result.overall == 0.0


def test_country_without_cities_is_a_leaf():
    # Asia: Japan (Tokyo, Osaka) and Bhutan (no city); v(Japan) = (0, -1), v(Bhutan) = (-1, 0)
    tree = RegionTree(("Asia", "Japan", "Bhutan", "Tokyo", "Osaka"), [-1, 0, 0, 1, 1])
    scores = [[-1.0, -1.0], [0.0, -2.0], [-5.0, 0.0], [-3.0, -4.0], [-4.0, -3.0]]
    result = herb.hierarchical_bias(tree, scores)
    half = math.sqrt(0.5)
    assert result.bias[2] == pytest.approx(half)  # |(-1, 0) - (-0.5, -0.5)|
    assert result.vectors[2] == pytest.approx([-1.0, 0.0])
    assert result.bias[1] == pytest.approx(math.sqrt(2 * 0.2**2))  # two cities: their distance
    assert result.bias[[3, 4]] == pytest.approx([math.sqrt(2) * 0.1] * 2)


def test_two_children_ignore_their_weights():
    # with one pair the weight is 1, so C_w = C_z = the distance between the two V
    tree = RegionTree(("AF", "EU"), [-1, -1])
    scores = [[-3.0, -4.0], [-4.0, -3.0]]
    assert herb.hierarchical_bias(tree, scores).overall == pytest.approx(math.sqrt(2) * 0.2)
    assert herb.region_weighted_bias(tree, scores, [9.0, -9.0]).overall == pytest.approx(
        math.sqrt(2) * 0.2)


def test_region_weights_follow_region_scores():
    # three continents, v = e1, e2, e2: distances sqrt2, sqrt2, 0; f = (0, 0, ln 4)
    tree = RegionTree(("AF", "AS", "EU"), [-1, -1, -1])
    scores = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    # pair terms (0, ln4, ln4) -> weights (1, 4, 4) / 9; C = (1/3) * (1 + 4) / 9 * sqrt2
    result = herb.region_weighted_bias(tree, scores, [0.0, 0.0, math.log(4.0)])
    assert result.overall == pytest.approx(5 * math.sqrt(2) / 27)


def test_plain_bias_pools_each_subtree():
    result = herb.plain_bias(TREE, SCORES)
    v = Reference(PARENT, SCORES).v

    def pooled(ids):
        return sum(_dist(v[a], v[b]) for a, b in _pairs(ids)) / (len(ids) * (len(ids) - 1) / 2)

    asia = [0, 2, 3, 5, 6, 7, 8, 9]
    assert result.bias[0] == pytest.approx(pooled(asia))
    assert result.bias[2] == pytest.approx(pooled([2, 6, 7, 8]))
    assert result.bias[[5, 9]].tolist() == [0.0, 0.0]  # leaves
    assert result.overall == pytest.approx(pooled(list(range(len(NAMES)))))
    assert result.vectors == pytest.approx(np.array(v))
