"""RIPA against its closed form on hand-built vectors, and its OOV reporting."""

import math

import numpy as np
import pytest
from gensim.models import KeyedVectors

from biasbook.embeddings import wordsets
from biasbook.metrics import ripa

# Pairs (first, second) and their differences:
#   (f1, m1): (3, 0, 0) - (1, 0, 0) = (2, 0, 0), length 2 -> unit (1, 0, 0)
#   (f2, m2): (1, 2, 0) - (0, 1, 0) = (1, 1, 0), length sqrt 2 -> unit (1, 1, 0) / sqrt 2
# w = (2, 5, 1):
#   pair-mean: (w . (1, 0, 0) + w . (1, 1, 0) / sqrt 2) / 2 = (2 + 7 / sqrt 2) / 2
#   pca: D = [[2, 0], [1, 1]] (third column zero), D'D = [[5, 1], [1, 1]], top eigenvalue
#        3 + sqrt 5 with eigenvector (1, sqrt 5 - 2); b = (1, sqrt 5 - 2, 0) / norm,
#        RIPA = (2 + 5 (sqrt 5 - 2)) / sqrt(1 + (sqrt 5 - 2)^2)
VECS = {"f1": (3, 0, 0), "m1": (1, 0, 0), "f2": (1, 2, 0), "m2": (0, 1, 0), "w": (2, 5, 1)}
PAIRS = [("f1", "m1"), ("f2", "m2")]


@pytest.fixture(scope="module")
def kv():
    kv = KeyedVectors(3)
    kv.add_vectors(list(VECS), np.array(list(VECS.values()), dtype=float))
    return kv


def test_single_pair_is_the_projection_on_the_normalised_difference(kv):
    frame = ripa.ripa(kv, ["w"], [("f1", "m1")])
    assert frame.loc[0, "ripa"] == pytest.approx(2.0)
    flipped = ripa.ripa(kv, ["w"], [("m1", "f1")])
    assert flipped.loc[0, "ripa"] == pytest.approx(-2.0)


def test_pair_mean_closed_form(kv):
    frame = ripa.ripa(kv, ["w"], PAIRS)
    assert frame.loc[0, "ripa"] == pytest.approx((2 + 7 / math.sqrt(2)) / 2)
    assert frame.loc[0, "n_pairs"] == 2 and frame.attrs["method"] == "pair-mean"


def test_pca_closed_form(kv):
    r5 = math.sqrt(5)
    expected = (2 + 5 * (r5 - 2)) / math.sqrt(1 + (r5 - 2) ** 2)
    frame = ripa.ripa(kv, ["w"], PAIRS, method="pca")
    assert frame.loc[0, "ripa"] == pytest.approx(expected)
    b = ripa.relation_vector(np.array([[2.0, 0, 0], [1, 1, 0]]))
    np.testing.assert_allclose(b, np.array([1, r5 - 2, 0]) / math.hypot(1, r5 - 2))


def test_relation_vector_points_along_the_pairs():
    # All differences point to -x: the sign must follow them, whatever the SVD returns.
    b = ripa.relation_vector(np.array([[-1.0, 0.1], [-2.0, -0.1]]))
    assert b[0] < 0 and np.linalg.norm(b) == pytest.approx(1.0)


def test_oov_words_and_pairs_are_reported(kv):
    frame = ripa.ripa(kv, ["w", "ghost"], [*PAIRS, ("f1", "nobody")])
    assert frame["word"].tolist() == ["w", "ghost"]
    assert frame["oov"].tolist() == [False, True]
    assert frame.loc[1, "reason"] == "not in the vocabulary" and np.isnan(frame.loc[1, "ripa"])
    assert frame.attrs["pairs_oov"] == [("f1", "nobody")]
    assert frame.loc[0, "ripa"] == pytest.approx((2 + 7 / math.sqrt(2)) / 2)  # 2 pairs used


def test_bad_input_is_rejected(kv):
    with pytest.raises(TypeError, match="bare string"):
        ripa.ripa(kv, "w", PAIRS)
    with pytest.raises(ValueError, match="no pair"):
        ripa.ripa(kv, ["w"], [("x", "y")])
    with pytest.raises(ValueError, match="two words"):
        ripa.ripa(kv, ["w"], [("f1", "m1", "f2")])
    with pytest.raises(ValueError, match="method"):
        ripa.ripa(kv, ["w"], PAIRS, method="mean")
    with pytest.raises(ValueError, match="identical"):
        ripa.ripa_arrays(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)))


def test_paper_pairs_come_from_the_direct_tests():
    tests = wordsets.load("indirect-stereotypes")
    pairs = wordsets.gendered_pairs(tests)
    # Test 7 gives 8 term pairs; test 8 repeats five of them (sister-brother, daughter-son,
    # she-he, hers-his, her-him) and adds mother-father, aunt-uncle, grandmother-grandfather;
    # the names test pairs its 8 female and 8 male names by position.
    assert ("female", "male") in pairs and ("she", "he") in pairs and ("amy", "john") in pairs
    assert pairs.count(("she", "he")) == 1
    assert len(pairs) == 8 + 3 + 8


@pytest.mark.bad_input(
    'NaN or infinite word vectors in RIPA (a scored word or a word of a pair), with either '
    '`method`',
    'a scored word gets an OOV-style row (`oov=True`, NaN, `reason` says its vector is not '
    'finite); a pair with such a word is a `ValueError` naming the word')
def test_non_finite_vectors_are_named(kv):
    broken = KeyedVectors(3)
    broken.add_vectors(list(VECS), np.array(list(VECS.values()), dtype=float))
    broken.add_vectors(["nan", "inf"], np.array([[np.nan, 0, 0], [np.inf, 1, 0]]))
    for method in ripa.METHODS:
        frame = ripa.ripa(broken, ["w", "nan", "inf"], PAIRS, method=method)
        assert frame["oov"].tolist() == [False, True, True]
        assert frame.loc[0, "ripa"] == ripa.ripa(kv, ["w"], PAIRS, method=method).loc[0, "ripa"]
        assert frame["ripa"].isna().tolist() == [False, True, True]
        assert (frame["reason"][1:] == "its vector has NaN or infinite values").all()
        assert frame["n_pairs"].tolist() == [2, 0, 0]
        with pytest.raises(ValueError, match=r"pair words \['nan'\].*NaN or infinite"):
            ripa.ripa(broken, ["w"], [*PAIRS, ("nan", "m1")], method=method)
        with pytest.raises(ValueError, match=r"rows \[1\] of first"):
            ripa.ripa_arrays(np.ones((1, 3)), np.array([[1, 0, 0], [np.nan, 0, 0]]),
                             np.zeros((2, 3)), method=method)
