"""HERB metric (biasbook.metrics.herb) against values derived independently of it.

The reference below is written straight from Eq. 2-10 of Li et al. (2022) with plain Python
loops over pairs, top-down recursion and the ``math`` module; the implementation is vectorised
and bottom-up. Edge cases are checked against hand-worked numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from biasbook.metrics import herb
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

    def __init__(self, parent, scores, mode="paper", region_f=None):
        self.parent, self.mode, self.region_f = list(parent), mode, region_f
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
        pairs = _pairs(ids)[-1:] if self.mode == "as-coded" else _pairs(ids)
        c = [2.0 / (n * (n - 1)) * sum(abs(self.v[a][i] - self.v[b][i]) for a, b in pairs)
             for i in range(self.n_desc)]
        return _softmax(c)

    def V(self, j):  # Eq. 4-5
        ids = self.kids(j)
        if not ids:
            return self.v[j]
        own = self.raw[j] if self.mode == "as-coded" and self.parent[j] == -1 else self.v[j]
        return [o + a * c for o, a, c in zip(own, self.alpha(ids), self.centroid(ids),
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
            if self.mode == "as-coded" and j != -1 and all(not self.kids(k) for k in ids):
                term[ids[-1]] = 0.0
        pairs = _pairs(ids)
        w = _softmax([term[a] + term[b] for a, b in pairs])
        d = [_dist(self.V(a), self.V(b)) for a, b in pairs]
        return 2.0 / (n * (n - 1)) * sum(wi * di for wi, di in zip(w, d, strict=True))


# ---------------------------------------------------------------- building blocks


def test_descriptive_vectors_normalise_after_masking():
    assert herb.descriptive_vectors([[-3.0, -4.0]])[0] == pytest.approx([-0.6, -0.8])
    masked = herb.descriptive_vectors([[-3.0, -4.0, -12.0]], descriptors=[True, True, False])
    assert masked[0] == pytest.approx([-0.6, -0.8])


def test_template_axis_is_averaged_before_normalising():
    per_template = np.stack([SCORES, SCORES - 2.0])
    assert herb.descriptive_vectors(per_template) == pytest.approx(
        herb.descriptive_vectors(SCORES - 1.0))


@pytest.mark.parametrize("bad", [[[np.nan, 1.0]], [[0.0, 0.0]], [1.0, 2.0]])
def test_descriptive_vectors_reject_bad_scores(bad):
    with pytest.raises(ValueError):
        herb.descriptive_vectors(bad)


def test_cluster_sparseness_blocks_match_brute_force():
    x = np.random.default_rng(0).normal(size=(23, 4))
    rows = x.tolist()
    expected = sum(_dist(a, b) for a, b in _pairs(rows)) / (23 * 22 / 2)
    assert herb.cluster_sparseness(x, block=5) == pytest.approx(expected, rel=1e-12)
    assert herb.cluster_sparseness(x[:1]) == 0.0


def test_descriptor_sparseness_both_modes():
    x = np.random.default_rng(1).normal(size=(5, 3))
    for i in range(3):
        col = x[:, i].tolist()
        paper = sum(abs(a - b) for a, b in _pairs(col)) / 10
        as_coded = abs(col[3] - col[4]) / 10  # only the last pair (3, 4); 2/(n(n-1)) = 1/10
        assert herb.descriptor_sparseness(x)[i] == pytest.approx(paper)
        assert herb.descriptor_sparseness(x, mode="as-coded")[i] == pytest.approx(as_coded)


def test_descriptor_weights_are_a_softmax():
    # column sparseness: (1 + 3 + 2) / 3 = 2 and 0 -> alpha = (e^2, 1) / (e^2 + 1)
    alpha = herb.descriptor_weights([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    assert alpha == pytest.approx([math.e**2 / (math.e**2 + 1), 1 / (math.e**2 + 1)])


def test_pair_weights_survive_large_terms():
    assert herb.pair_weights([1e4, 1e4, 1e4]) == pytest.approx([1 / 3] * 3)


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


@pytest.mark.parametrize("mode", ["paper", "as-coded"])
def test_hierarchical_bias_matches_reference(mode):
    ref = Reference(PARENT, SCORES, mode)
    result = herb.hierarchical_bias(TREE, SCORES, mode=mode)
    assert result.bias == pytest.approx([ref.C(j) for j in range(len(NAMES))], rel=1e-10)
    assert result.overall == pytest.approx(ref.C(-1), rel=1e-10)
    assert result.vectors == pytest.approx(np.array([ref.V(j) for j in range(len(NAMES))]))


@pytest.mark.parametrize("mode", ["paper", "as-coded"])
def test_region_weighted_bias_matches_reference(mode):
    ref = Reference(PARENT, SCORES, mode, region_f=REGION_SCORES.tolist())
    result = herb.region_weighted_bias(TREE, SCORES, REGION_SCORES, mode=mode)
    assert result.bias == pytest.approx([ref.C(j) for j in range(len(NAMES))], rel=1e-10)
    assert result.overall == pytest.approx(ref.C(-1), rel=1e-10)


def test_modes_differ_where_the_code_deviates():
    paper = herb.hierarchical_bias(TREE, SCORES)
    coded = herb.hierarchical_bias(TREE, SCORES, mode="as-coded")
    same = [3, 4, 5, 6, 7, 8, 9, 10, 11]  # cities, leaves, 1- and 2-city countries
    assert coded.bias[same] == pytest.approx(paper.bias[same], rel=1e-12)
    # Japan (3 cities): last-pair alpha and the last city's zero weight term
    assert abs(coded.bias[2] - paper.bias[2]) > 1e-6
    # continents carry their raw vector, which is far from unit length
    assert np.linalg.norm(coded.vectors[0]) > 2 * np.linalg.norm(paper.vectors[0])
    assert abs(coded.overall - paper.overall) > 1e-3


def test_each_as_coded_deviation_alone():
    ref = Reference(PARENT, SCORES, "as-coded")
    japan = [6, 7, 8]
    # deviation 4: weights from (C_Tokyo, C_Osaka, 0), vectors as in the paper for a country
    terms = [ref.C(6), ref.C(7), 0.0]
    w = _softmax([terms[0] + terms[1], terms[0] + terms[2], terms[1] + terms[2]])
    d = [_dist(ref.v[a], ref.v[b]) for a, b in _pairs(japan)]
    expected = sum(wi * di for wi, di in zip(w, d, strict=True)) / 3
    assert herb.hierarchical_bias(TREE, SCORES, mode="as-coded").bias[2] == pytest.approx(expected)
    # deviations 2 and 3: Asia's V = raw scores + alpha from its last pair (Nepal, Bhutan)
    coded_v = herb.aggregated_vectors(TREE, SCORES, mode="as-coded")
    alpha = _softmax([abs(ref.v[3][i] - ref.v[5][i]) / 3 for i in range(3)])
    centre = ref.centroid([2, 3, 5])
    assert coded_v[0] == pytest.approx([SCORES[0, i] + alpha[i] * centre[i] for i in range(3)])
    # deviation 1: Japan's V adds its normalised vector v, as Eq. 4 (alpha from Osaka, Kyoto)
    alpha = _softmax([abs(ref.v[7][i] - ref.v[8][i]) / 3 for i in range(3)])
    centre = ref.centroid(japan)
    assert coded_v[2] == pytest.approx([ref.v[2][i] + alpha[i] * centre[i] for i in range(3)])


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
