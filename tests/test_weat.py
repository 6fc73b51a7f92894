"""WEAT against a hand-worked 2-D example, a brute-force enumeration of partitions, invariances,
and the explicit reporting of OOV words and of tests that cannot be computed."""

import itertools
import math

import numpy as np
import pytest
from gensim.models import KeyedVectors

from biasbook.embeddings.wordsets import WeatTest
from biasbook.metrics import weat

# Hand-worked example. A = {a1 = (1, 0), a2 = (3, 4)}, B = {b = (0, 1)}; lengths differ on purpose,
# cosines only see directions.
#   x1 = (1, 0): cos(a1) = 1,  cos(a2) = .6, cos(b) = 0   -> s = (1 + .6)/2 - 0    =  .80
#   x2 = (8, 6): cos(a1) = .8, cos(a2) = .96, cos(b) = .6 -> s = (.8 + .96)/2 - .6 =  .28
#   y1 = (0, 2): cos(a1) = 0,  cos(a2) = .8, cos(b) = 1   -> s = (0 + .8)/2 - 1    = -.60
#   y2 = (3, 4): cos(a1) = .6, cos(a2) = 1,  cos(b) = .8  -> s = (.6 + 1)/2 - .8   =  .00
# statistic = (.80 + .28) - (-.60 + 0) = 1.68; mean difference = .54 - (-.30) = .84
# pooled mean .12, squared deviations .4624 + .0256 + .5184 + .0144 = 1.0208
#   ddof=1: std = sqrt(1.0208 / 3) -> effect size .84 / .583324 = 1.440024
#   ddof=0: std = sqrt(1.0208 / 4) -> effect size .84 / .505173 = 1.662796
# The 6 ways of choosing X_i from {.80, .28, -.60, .00} sum to 1.08, .20, .80, -.32, .28, -.60:
# only the observed 1.08 reaches 1.08, so p = 1/6.
HAND = {"x1": (1, 0), "x2": (8, 6), "y1": (0, 2), "y2": (3, 4), "a1": (1, 0), "a2": (3, 4),
        "b": (0, 1)}
HAND_D1 = 0.84 / math.sqrt(1.0208 / 3)


def _kv(vectors: dict) -> KeyedVectors:
    kv = KeyedVectors(len(next(iter(vectors.values()))))
    kv.add_vectors(list(vectors), np.array(list(vectors.values()), dtype=float))
    return kv


@pytest.fixture(scope="module")
def hand():
    return _kv(HAND)


def test_hand_worked_example(hand):
    r = weat.weat(hand, ["x1", "x2"], ["y1", "y2"], ["a1", "a2"], ["b"])
    assert r.computable and r.reason == ""
    assert r.statistic == pytest.approx(1.68)
    assert r.effect_size == pytest.approx(HAND_D1)
    assert r.effect_size == pytest.approx(1.440024, abs=1e-6)
    assert r.p_value == pytest.approx(1 / 6)
    assert (r.n_permutations, r.exact) == (6, True)
    assert r.kept == {"x": 2, "y": 2, "a": 2, "b": 1}
    assert r.oov == {"x": [], "y": [], "a": [], "b": []}
    np.testing.assert_allclose(
        weat.associations(np.array([HAND[w] for w in ("x1", "x2", "y1", "y2")]),
                          np.array([HAND["a1"], HAND["a2"]]), np.array([HAND["b"]])),
        [0.80, 0.28, -0.60, 0.00], atol=1e-12)


def test_hand_worked_ddof_zero(hand):
    r = weat.weat(hand, ["x1", "x2"], ["y1", "y2"], ["a1", "a2"], ["b"], ddof=0)
    assert r.effect_size == pytest.approx(0.84 / math.sqrt(1.0208 / 4))


def test_hand_worked_p_value_counts_ties_and_itself(hand):
    # X = {x1, y1} sums to .80 - .60 = .20; partitions reaching it: 1.08, .20 (itself), .80, .28.
    r = weat.weat(hand, ["x1", "y1"], ["x2", "y2"], ["a1", "a2"], ["b"])
    assert r.p_value == pytest.approx(4 / 6)


def _brute_force(vectors, nx, a, b):
    """p-value from the definitions: every partition, each statistic recomputed from cosines."""
    def cos(u, v):
        return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))

    def s(w):
        return (sum(cos(w, v) for v in a) / len(a)) - (sum(cos(w, v) for v in b) / len(b))

    def stat(xs, ys):
        return sum(s(vectors[i]) for i in xs) - sum(s(vectors[i]) for i in ys)

    everyone = range(len(vectors))
    observed = stat(range(nx), range(nx, len(vectors)))
    parts = list(itertools.combinations(everyone, nx))
    hits = sum(stat(xs, [i for i in everyone if i not in xs]) >= observed - 1e-9 for xs in parts)
    return observed, hits / len(parts), len(parts)


def test_exact_p_matches_brute_force_enumeration():
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(12, 5))
    vecs[:6, 0] += 0.6  # a real but imperfect separation: p neither 1/924 nor 1/2
    a, b = rng.normal(size=(3, 5)) + [2, 0, 0, 0, 0], rng.normal(size=(4, 5))
    observed, p, count = _brute_force(vecs, 6, a, b)
    stat, _, ours, n_perm, exact = weat.weat_arrays(vecs[:6], vecs[6:], a, b)
    assert exact and n_perm == count == 924
    assert stat == pytest.approx(observed)
    assert ours == pytest.approx(p)
    assert 1 / 924 < p < 0.5


def test_sampled_p_is_close_to_exact():
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(16, 4))
    vecs[:8, 0] += 0.4
    a, b = rng.normal(size=(2, 4)) + [1.5, 0, 0, 0], rng.normal(size=(2, 4))
    *_, p_exact, n_exact, exact = weat.weat_arrays(vecs[:8], vecs[8:], a, b)
    *_, p_sampled, n_sampled, sampled_exact = weat.weat_arrays(
        vecs[:8], vecs[8:], a, b, max_exact=1000, n_samples=40_000, seed=1)
    assert (exact, n_exact) == (True, 12870)
    assert (sampled_exact, n_sampled) == (False, 40_000)
    se = math.sqrt(p_exact * (1 - p_exact) / n_sampled)
    assert abs(p_sampled - p_exact) < 4 * se + 1 / n_sampled
    # Same seed, same p-value.
    again = weat.weat_arrays(vecs[:8], vecs[8:], a, b, max_exact=1000, n_samples=40_000, seed=1)
    assert again[2] == p_sampled


def test_sampled_p_is_never_zero():
    assoc = np.r_[np.arange(30, 0, -1.0), -np.arange(1, 31.0)]  # X perfectly above Y
    p, n, exact = weat.permutation_p_value(assoc, 30, max_exact=10, n_samples=500)
    assert (p, n, exact) == (1 / 501, 500, False)


def test_swapping_targets_or_attributes_flips_the_sign():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(14)]
    kv = _kv(dict(zip(words, rng.normal(size=(14, 6)), strict=True)))
    x, y, a, b = words[:4], words[4:8], words[8:11], words[11:]
    base = weat.weat(kv, x, y, a, b)
    for swapped in (weat.weat(kv, y, x, a, b), weat.weat(kv, x, y, b, a)):
        assert swapped.statistic == pytest.approx(-base.statistic)
        assert swapped.effect_size == pytest.approx(-base.effect_size)
    both = weat.weat(kv, y, x, b, a)
    assert both.effect_size == pytest.approx(base.effect_size)
    assert both.p_value == pytest.approx(base.p_value)


def test_oov_words_are_dropped_and_reported(hand):
    r = weat.weat(hand, ["x1", "x2", "zzz"], ["y1", "y2"], ["a1", "a2", "qqq"], ["b"])
    assert r.computable
    assert r.oov == {"x": ["zzz"], "y": [], "a": ["qqq"], "b": []}
    assert r.kept == {"x": 2, "y": 2, "a": 2, "b": 1}
    assert r.effect_size == pytest.approx(HAND_D1)  # the same words remain


def test_low_coverage_is_not_computable(hand):
    r = weat.weat(hand, ["x1", "q1", "q2"], ["y1", "y2"], ["a1"], ["b"], min_coverage=0.5)
    assert not r.computable
    assert "set x keeps 1 of 3 words" in r.reason and "q1, q2" in r.reason
    assert math.isnan(r.effect_size) and math.isnan(r.p_value) and r.n_permutations == 0
    none_left = weat.weat(hand, ["x1"], ["y1"], ["nope"], ["b"])
    assert not none_left.computable and "set a keeps 0 of 1" in none_left.reason


def test_unequal_target_sizes_are_cut_or_refused(hand):
    # x loses one word to OOV, y keeps three: y's last word (y2) is cut so |X| = |Y| = 2.
    r = weat.weat(hand, ["x1", "x2", "gone"], ["y1", "y2", "a2"], ["a1"], ["b"])
    assert r.computable and r.dropped["y"] == ["a2"] and r.kept["y"] == 2
    same = weat.weat(hand, ["x1", "x2"], ["y1", "y2"], ["a1"], ["b"])
    assert r.effect_size == pytest.approx(same.effect_size)
    refused = weat.weat(hand, ["x1", "x2", "gone"], ["y1", "y2", "a2"], ["a1"], ["b"],
                        equalize=False)
    assert not refused.computable and "|X| = |Y|" in refused.reason


def test_zero_spread_is_not_computable():
    kv = _kv({"x": (1, 0), "y": (2, 0), "a": (1, 0), "b": (0, 1)})
    r = weat.weat(kv, ["x"], ["y"], ["a"], ["b"])
    assert not r.computable and "same association" in r.reason


def test_bad_input_is_rejected(hand):
    with pytest.raises(TypeError, match="bare string"):
        weat.weat(hand, "x1", ["y1"], ["a1"], ["b"])
    with pytest.raises(ValueError, match="empty"):
        weat.weat(hand, [], ["y1"], ["a1"], ["b"])
    with pytest.raises(ValueError, match="more than once"):
        weat.weat(hand, ["x1", "x1"], ["y1", "y2"], ["a1"], ["b"])


def _test(name, x, y, a, b, **extra):
    return WeatTest(name=name, title=name, x=tuple(x), y=tuple(y), a=tuple(a), b=tuple(b),
                    x_name="X", y_name="Y", a_name="A", b_name="B", source="hand", **extra)


def test_run_tests_gives_one_row_per_test(hand):
    table = weat.run_tests(hand, {
        "hand": _test("hand", ["x1", "x2"], ["y1", "y2"], ["a1", "a2", "nope"], ["b"],
                      paper={"effect_size": 1.5}),
        "lost": _test("lost", ["x1"], ["y1"], ["gone"], ["b"])})
    assert list(table["test"]) == ["hand", "lost"]
    row = table.set_index("test").loc["hand"]
    assert row["effect_size"] == pytest.approx(HAND_D1)
    assert (row["n_oov"], row["oov"], row["paper_effect_size"]) == (1, "a: nope", 1.5)
    assert (row["x_name"], row["computable"]) == ("X", True)
    assert not table.set_index("test").loc["lost", "computable"]
    result = weat.weat(hand, ["x1", "x2"], ["y1", "y2"], ["a1", "a2", "nope"], ["b"])
    assert result.row() == {k: v for k, v in row.items()
                            if not k.endswith("_name") and not k.startswith("paper_")}


def test_run_tests_takes_weat_tests_only(hand):
    for bare in ((["x1"], ["y1"], ["a1"], ["b"]), {"x": ["x1"], "y": ["y1"], "a": ["a1"],
                                                     "b": ["b"]}):
        with pytest.raises(TypeError, match="takes biasbook.embeddings.wordsets.WeatTest"):
            weat.run_tests(hand, {"bare": bare})


def test_case_is_an_option_of_the_one_lookup(hand):
    cased = (["X1", "X2"], ["y1", "y2"], ["a1", "a2"], ["b"])
    assert weat.weat(hand, *cased).oov["x"] == ["X1", "X2"]
    for case in ("lower", "fallback"):
        assert weat.weat(hand, *cased, case=case).effect_size == pytest.approx(HAND_D1)


def test_as_coded_p_is_the_normal_tail_of_the_permutation_null():
    from scipy.stats import norm

    assoc = np.array([0.9, 0.4, 0.35, -0.2, 0.1, -0.5])
    # The 20 sums of 3 of the 6 associations, by hand-free brute force, and their normal fit.
    sums = np.array([sum(c) for c in itertools.combinations(assoc, 3)])
    expected = norm.sf(assoc[:3].sum(), loc=sums.mean(), scale=sums.std(ddof=1))
    p, n, exact = weat.permutation_p_value(assoc, 3, mode="as-coded")
    assert (n, exact) == (20, True) and p == pytest.approx(expected)
    with pytest.raises(ValueError, match="mode"):
        weat.permutation_p_value(assoc, 3, mode="caliskan")


@pytest.mark.bad_input(
    'NaN or infinite word vectors in WEAT, or such a matrix given to '
    '`embeddings.vectors.from_arrays`',
    '`computable=False` with a reason naming the words and their sets (`weat_arrays`: a '
    '`ValueError` naming the rows); `from_arrays` refuses the matrix naming the words')
def test_non_finite_vectors_are_named():
    broken = _kv({**HAND, "x2": (np.nan, 6), "b": (0, np.inf)})
    r = weat.weat(broken, ["x1", "x2"], ["y1", "y2"], ["a1", "a2"], ["b"])
    assert not r.computable and math.isnan(r.effect_size)
    assert "NaN or infinite" in r.reason and "x: x2" in r.reason and "b: b" in r.reason
    vecs = [np.array([[1.0, 0]]), np.array([[0.0, 1]]), np.array([[1.0, 0], [np.nan, 1]]),
            np.array([[0.0, 1]])]
    with pytest.raises(ValueError, match=r"rows \[1\] of a"):
        weat.weat_arrays(*vecs)
    from biasbook.embeddings import vectors

    with pytest.raises(ValueError, match=r"\['y'\].*NaN or infinite"):
        vectors.from_arrays(["x", "y"], np.array([[1.0, 0], [np.inf, 1]]))


@pytest.mark.bad_input(
    'A word in both target sets X and Y of a WEAT, or `ddof` below 0',
    '`computable=False` with a reason naming the shared words; `ValueError` for `ddof`')
def test_impossible_settings_are_refused(hand):
    r = weat.weat(hand, ["x1", "x2"], ["x2", "y1"], ["a1", "a2"], ["b"])
    assert not r.computable and "x2" in r.reason and "both" in r.reason
    for call in (lambda: weat.weat(hand, ["x1", "x2"], ["y1", "y2"], ["a1"], ["b"], ddof=-1),
                 lambda: weat.weat_arrays(*(np.eye(2),) * 4, ddof=-1)):
        with pytest.raises(ValueError, match="ddof must be 0 or more, got -1"):
            call()
