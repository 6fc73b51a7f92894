"""BIRM (Eq. 1-3 of the indirect stereotypes paper) against hand-worked values and brute force."""

import random
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from biasbook.mitigation.birm import FEMININE, MASCULINE, birm, modifiable_words, neutral_counts
from biasbook.text.word_context import word_context_matrix

# Example 1 of the paper as a corpus: "engineer" occurs with "he" twice as often as with "she"
# (8 sentences vs 4), and is described as "handsome" three times as often when it refers to a man
# (6 of 8) as when it refers to a woman (1 of 4).
EXAMPLE_1 = ([["he", "handsome", "engineer"]] * 6 + [["he", "nice", "engineer"]] * 2
             + [["she", "handsome", "engineer"]] * 1 + [["she", "nice", "engineer"]] * 3)


def matrix(sentences, window=5, weighting=False):
    return word_context_matrix(sentences, window=window, min_count=1, min_sentence_length=1,
                               distance_weighting=weighting, markers=(MASCULINE, FEMININE))


def test_example_1_six_sevenths():
    m = matrix(EXAMPLE_1)
    # every occurrence is near a marker (sentences are shorter than the window):
    # n = n_x + n_y = 6 + 1; c_x(engineer) = 2 pairs x 8 sentences, c_y(engineer) = 2 x 4
    assert m.value("handsome", "engineer") == 7
    assert (m.value("handsome", "engineer", "x"), m.value("handsome", "engineer", "y")) == (6, 1)
    # Eq. 2 with b = engineer made neutral: 1/2 (16 + 8) (6/16 + 1/8) = 6, i.e. 6/7 of 7
    # (Eq. 1: (1/2 * 3 + 1/2 * 1) / (2/3 * 3 + 1/3 * 1) = 2 / (7/3) = 6/7)
    out = birm(m, side="context").matrix
    assert out.value("handsome", "engineer") == pytest.approx(6.0, rel=1e-12)
    assert out.value("handsome", "engineer") / m.value("handsome", "engineer") == \
        pytest.approx(float(Fraction(1, 2) * 3 + Fraction(1, 2)) / float(Fraction(7, 3)))


def test_eq3_by_hand_and_unmarked_occurrences_scaled_alike():
    m = matrix(EXAMPLE_1)
    # a = handsome: r_x = 2 pairs x 6 sentences = 12, r_y = 2 x 1 = 2;
    # word side: 1/2 (12 + 2)(6/12 + 1/2) = 7; context side 6 (above); Eq. 3: (6 + 7)/2 - 0
    out = birm(m).matrix
    assert out.value("handsome", "engineer") == pytest.approx(6.5, rel=1e-12)
    assert out.value("engineer", "handsome") == pytest.approx(6.5, rel=1e-12)
    # one more occurrence far from any marker: n = 8, n_u = 7 -> 8 / 7 * 6.5
    far = matrix(EXAMPLE_1 + [["handsome", "engineer"]])
    assert birm(far).matrix.value("handsome", "engineer") == pytest.approx(8 / 7 * 6.5)


def test_neutral_counts_formula():
    # n_xy enters once, outside the averages; the factor n / n_u multiplies everything
    got = neutral_counts(10.0, 4.0, 3.0, 1.0, rx=8.0, ry=4.0, cx=5.0, cy=10.0)
    context = 0.5 * (5 + 10) * (4 / 5 + 3 / 10)
    word = 0.5 * (8 + 4) * (4 / 8 + 3 / 4)
    assert got == pytest.approx(10 / 6 * ((context + word) / 2 - 1))
    with pytest.raises(ValueError, match="side"):
        neutral_counts(1, 1, 1, 0, rx=1, ry=1, cx=1, cy=1, side="left")


def brute_force_eq3(sentences, window):
    """Eq. 3 in probabilities, from an explicit list of word–context pair occurrences."""
    occ = []  # (c, d, weight in X, in Y, in X∩Y), every occurrence weighing 1
    for s in sentences:
        def near(words, i, s=s):
            return any(s[k] in words for k in range(max(0, i - window),
                                                    min(len(s), i + window + 1)))
        for i in range(len(s)):
            for j in range(len(s)):
                if i != j and abs(i - j) <= window:
                    xi, xj = near(MASCULINE, i), near(MASCULINE, j)
                    yi, yj = near(FEMININE, i), near(FEMININE, j)
                    occ.append((s[i], s[j], Fraction(xi + xj, 2), Fraction(yi + yj, 2),
                                Fraction((xi and yi) + (xj and yj), 2)))
    n = len(occ)
    p = defaultdict(Fraction)
    for c, d, x, y, xy in occ:
        p["AB", c, d] += Fraction(1, n)
        for name, v in (("X", x), ("Y", y), ("XY", xy)):
            p["AB" + name, c, d] += v / n
            p["A" + name, c] += v / n  # P(A∩X) for a = c
            p["B" + name, d] += v / n  # P(B∩X) for b = d
    out = {}
    for _, a, b in [k for k in p if k[0] == "AB"]:
        pax, pay, pbx, pby = p["AX", a], p["AY", a], p["BX", b], p["BY", b]
        pabx, paby, pabxy = p["ABX", a, b], p["ABY", a, b], p["ABXY", a, b]
        if 0 in (pax, pay, pbx, pby) or pabx + paby - pabxy == 0:
            continue
        p_union_given_ab = (pabx + paby - pabxy) / p["AB", a, b]
        rhs = (Fraction(1, 4) * (pbx + pby) * (pabx / pbx + paby / pby)
               + Fraction(1, 4) * (pax + pay) * (pabx / pax + paby / pay) - pabxy)
        out[a, b] = rhs / p_union_given_ab * n  # back to counts
    return out


@pytest.mark.parametrize("seed", range(3))
def test_eq3_matches_brute_force_probabilities(seed):
    rng = random.Random(seed)
    words = ["he", "she", "his", "her", "man", "woman", "doctor", "nurse", "kind", "strong",
             "the", "a", "rare"]
    sentences = [rng.choices(words, k=rng.randint(2, 12)) for _ in range(40)]
    window = 3
    m = matrix(sentences, window=window)
    out = birm(m).matrix
    expected = brute_force_eq3(sentences, window)
    markers = set(MASCULINE) | set(FEMININE)
    checked = 0
    for (a, b), value in expected.items():
        if a in markers and b in markers:  # neither word is to be neutralised
            assert out.value(a, b) == m.value(a, b)
            continue
        assert out.value(a, b) == pytest.approx(float(value), rel=1e-10), (a, b)
        checked += 1
    assert checked > 20


def test_unmodifiable_words_keep_counts_and_can_be_dropped():
    # "lonely" is only ever near "he": A∩Y never occurs, so none of its pairs may change
    sents = EXAMPLE_1 + [["he", "lonely", "engineer"]] * 2
    m = matrix(sents)
    mask = dict(zip(m.vocab.tolist(), modifiable_words(m).tolist(), strict=True))
    assert mask["lonely"] is False and mask["engineer"] is True
    result = birm(m)
    assert result.matrix.value("lonely", "engineer") == m.value("lonely", "engineer")
    assert result.summary["modifiable_words"] == sum(mask.values())
    dropped = birm(m, drop_unmodifiable=True)
    assert "lonely" in dropped.dropped and "lonely" not in dropped.matrix.vocab.tolist()
    assert {"he", "she"} <= set(dropped.matrix.vocab.tolist())  # markers are kept
    total = dropped.matrix.total
    assert (total != total.T).nnz == 0


def test_unbiased_word_is_left_alone():
    # each sentence appears once with "he" and once with "she": no bias to remove
    base = [["handsome", "engineer"], ["nice", "engineer"], ["kind", "nurse"]]
    sents = [[g, *s] for s in base for g in ("he", "she")]
    m = matrix(sents)
    out = birm(m).matrix
    np.testing.assert_allclose(out.total.toarray(), m.total.toarray(), rtol=1e-12)


def test_needs_marker_statistics():
    plain = word_context_matrix([["a", "b"]], min_count=1, min_sentence_length=1)
    with pytest.raises(ValueError, match="markers="):
        birm(plain)
    with pytest.raises(TypeError, match="bare string"):
        birm(matrix(EXAMPLE_1), neutralize="engineer")


@pytest.mark.bad_input(
    'BIRM on a matrix whose corpus lacks the marker words (X or Y) or the words to neutralise, '
    'or where no word to neutralise occurs near both X and Y',
    'missing words named: listed in `BirmResult.missing`, a warning for absent words to '
    'neutralise, and a `ValueError` naming them when nothing can be modified (no silent no-op)')
def test_missing_words_are_named_and_a_no_op_is_refused():
    with pytest.warns(UserWarning, match=r"\['enginer'\] .*not in the vocabulary"):
        result = birm(matrix(EXAMPLE_1), neutralize=["engineer", "enginer"])
    assert result.summary["pairs_modified"] > 0
    assert result.missing == {"x": [w for w in MASCULINE if w != "he"],
                              "y": [w for w in FEMININE if w != "she"], "neutralize": ["enginer"]}
    assert birm(matrix(EXAMPLE_1)).missing["neutralize"] == []
    no_women = matrix([["he", "handsome", "engineer"]] * 3)
    with pytest.raises(ValueError, match=r"no word of Y .*\['she', 'her', .*'girls'\]"):
        birm(no_women)
    with pytest.raises(ValueError, match=r"none of \['enginer', 'nurse'\] is in the vocabulary"):
        birm(matrix(EXAMPLE_1), neutralize=["enginer", "nurse"])
    apart = matrix([["he", "handsome", "engineer"]] * 3 + [["she", "kind", "nurse"]] * 3)
    with pytest.raises(ValueError, match="nothing to modify: no word occurs near both X and Y"):
        birm(apart)
    lonely = matrix(EXAMPLE_1 + [["he", "lonely", "boss"]] * 2, window=1)
    with pytest.raises(ValueError, match=r"nothing to modify: .*\['lonely'\].*near both X and Y"):
        birm(lonely, neutralize=["lonely"])
