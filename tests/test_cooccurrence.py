"""Co-occurrence counts and bias scores against hand-worked values and plain brute force."""

import math
import random

import numpy as np
import pytest

from biasbook.chapters.lm_gender_bias.data import defining_pairs
from biasbook.metrics.cooccurrence_bias import (
    BiasScores,
    bias_regression,
    bias_scores,
    mean_abs_bias,
    p_word_given_gender,
    std_bias,
    tukey_inliers,
)
from biasbook.text.cooccurrence import (
    context_weights,
    count_cooccurrences,
    english_stop_words,
    gendered_words,
    infinite_window,
)

MALE, FEMALE = {"he", "his"}, {"she", "her"}


def brute_force_paper(docs, male, female, window, weight):
    """c(w, g): every (w token, gendered token) pair within `window`, in plain Python."""
    counts = {}
    for doc in docs:
        for i, w in enumerate(doc):
            for j, g in enumerate(doc):
                d = abs(i - j)
                if d == 0 or d > window:
                    continue
                entry = counts.setdefault(w, {"m": 0.0, "f": 0.0})
                if g in male:
                    entry["m"] += weight(d)
                if g in female:
                    entry["f"] += weight(d)
    return counts


def brute_force_as_coded(docs, male, female, n, weight):
    """The authors' n-gram loop: tokens of an n-gram whose near-centre token is gendered."""
    counts = {}
    centre = int((n + 1) / 2) - 2
    for doc in docs:
        for start in range(len(doc) - n + 1):
            gram = doc[start : start + n]
            for j, t in enumerate(gram):
                entry = counts.setdefault(t, {"m": 0.0, "f": 0.0})
                if gram[centre] in male:
                    entry["m"] += weight(abs(j - centre))
                if gram[centre] in female:
                    entry["f"] += weight(abs(j - centre))
    return counts


def random_docs(seed, n_docs=3, length=60):
    rng = random.Random(seed)
    vocab = ["he", "his", "she", "her", "doctor", "nurse", "the", "ran", "cat", "<unk>", ","]
    return [[rng.choice(vocab) for _ in range(rng.randint(1, length))] for _ in range(n_docs)]


def as_dict(co):
    return {w: {"m": m, "f": f} for w, m, f in zip(co.words, co.male, co.female, strict=True)}


def assert_counts_equal(co, expected, words):
    got = as_dict(co)
    for w in words:
        exp = expected.get(w, {"m": 0.0, "f": 0.0})
        assert got[w]["m"] == pytest.approx(exp["m"], rel=1e-12, abs=1e-300), w
        assert got[w]["f"] == pytest.approx(exp["f"], rel=1e-12, abs=1e-300), w


def test_fixed_window_hand_counts():
    # positions: he0 x1 y2 she3 x4 z5 ; k=2 -> he reaches x,y ; she reaches x,y,x,z
    co = count_cooccurrences(
        [["he", "x", "y", "she", "x", "z"]], MALE, FEMALE, window=2, stop_words=()
    )
    assert as_dict(co) == {"x": {"m": 1, "f": 2}, "y": {"m": 1, "f": 1}, "z": {"m": 0, "f": 1}}
    assert (co.n_male, co.n_female) == (1, 1)
    assert co.counts.tolist() == [2, 1, 1]


def test_infinite_window_hand_counts():
    # x at distance 1 and 3 from "he": 0.5 + 0.125 ; truncated at 2: only 0.5
    docs = [["x", "he", "y", "z", "x"]]
    exact = count_cooccurrences(
        docs, MALE, FEMALE, context="infinite", beta=0.5, window=math.inf, stop_words=()
    )
    assert as_dict(exact)["x"]["m"] == pytest.approx(0.625)
    truncated = count_cooccurrences(
        docs, MALE, FEMALE, context="infinite", beta=0.5, window=2, stop_words=()
    )
    assert as_dict(truncated)["x"]["m"] == pytest.approx(0.5)
    assert (as_dict(truncated)["y"]["m"], as_dict(truncated)["z"]["m"]) == (0.5, 0.25)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("window", [1, 3, 10])
def test_fixed_matches_brute_force(seed, window):
    docs = random_docs(seed)
    co = count_cooccurrences(docs, MALE, FEMALE, window=window, stop_words=())
    assert_counts_equal(co, brute_force_paper(docs, MALE, FEMALE, window, lambda d: 1.0), co.words)


@pytest.mark.parametrize("seed", range(5))
def test_infinite_matches_brute_force(seed):
    docs = random_docs(seed, length=80)
    beta = 0.9
    truncated = count_cooccurrences(
        docs, MALE, FEMALE, context="infinite", beta=beta, window=7, stop_words=()
    )
    expected = brute_force_paper(docs, MALE, FEMALE, 7, lambda d: beta**d)
    assert_counts_equal(truncated, expected, truncated.words)
    exact = count_cooccurrences(
        docs, MALE, FEMALE, context="infinite", beta=beta, window=math.inf, stop_words=()
    )
    expected = brute_force_paper(docs, MALE, FEMALE, 10**6, lambda d: beta**d)
    assert_counts_equal(exact, expected, exact.words)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("context", ["fixed", "infinite"])
def test_as_coded_matches_authors_loop(seed, context):
    docs = random_docs(seed)
    window = 3
    weight = (lambda d: 1.0) if context == "fixed" else (lambda d: 0.95**d)
    co = count_cooccurrences(docs, MALE, FEMALE, context=context, window=window, mode="as-coded")
    expected = brute_force_as_coded(docs, MALE, FEMALE, 2 * window + 1, weight)
    assert co.excluded == {}
    assert_counts_equal(co, expected, co.words)


def test_as_coded_hand_counts():
    # n = 5, near-centre index 1: only n-grams starting at 0 and 1 exist in 6 tokens
    docs = [["a", "he", "b", "c", "d", "e"]]
    co = count_cooccurrences(docs, MALE, FEMALE, window=2, mode="as-coded")
    assert as_dict(co)["he"]["m"] == 1  # the gendered word counts itself
    assert [as_dict(co)[w]["m"] for w in "abcde"] == [1, 1, 1, 1, 0]
    edge = count_cooccurrences(
        [["he", "b", "c", "d", "e"]], MALE, FEMALE, window=2, mode="as-coded"
    )
    assert edge.male.sum() == 0  # "he" at index 0 is never the near-centre token


def test_as_coded_edge_rule_is_9_before_and_11_after():
    # The chapter's statement of the edge rule (k = 10): a gendered token counts only if at least
    # 9 tokens precede it and 11 follow it in its document. Checked at every position of a
    # 30-token document, one "he" at a time.
    length = 30
    counted = []
    for p in range(length):
        doc = ["x"] * length
        doc[p] = "he"
        co = count_cooccurrences([doc], MALE, FEMALE, mode="as-coded")
        counted.append(bool(co.male.sum()))
    assert counted == [p >= 9 and p + 11 <= length - 1 for p in range(length)]
    assert counted.index(True) == 9 and length - 1 - counted[::-1].index(True) == length - 12


def test_windows_do_not_cross_documents():
    co = count_cooccurrences([["x", "he"], ["y", "she"]], MALE, FEMALE, window=5, stop_words=())
    assert as_dict(co) == {"x": {"m": 1, "f": 0}, "y": {"m": 0, "f": 1}}


def test_targets_exclude_stop_gendered_and_non_words():
    docs = [["The", "he", "doctor", ",", "<unk>", "she", "@-@", "nurse"]]
    co = count_cooccurrences(docs, MALE, FEMALE, window=3)
    assert co.words.tolist() == ["doctor", "nurse"]
    assert co.excluded == {
        "The": "stop word",
        "he": "gendered word",
        "she": "gendered word",
        ",": "not a word",
        "<unk>": "not a word",
        "@-@": "not a word",
    }


def test_stop_words_are_sklearn_list():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert english_stop_words() == ENGLISH_STOP_WORDS


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="both male and female"):
        count_cooccurrences([["a"]], {"x"}, {"x"})
    with pytest.raises(ValueError, match="is empty"):
        count_cooccurrences([["a"]], set(), {"x"})
    with pytest.raises(TypeError):
        count_cooccurrences(["a", "b"], MALE, FEMALE)
    with pytest.raises(ValueError, match="no tokens"):
        count_cooccurrences([[]], MALE, FEMALE)
    with pytest.raises(ValueError, match="context"):
        count_cooccurrences([["a"]], MALE, FEMALE, context="finite")
    with pytest.raises(ValueError, match="math.inf"):
        count_cooccurrences([["a"]], MALE, FEMALE, window=math.inf)
    with pytest.raises(ValueError, match="whole number"):
        context_weights("fixed", 0)


def test_infinite_window_closed_form():
    k = infinite_window(0.95, 1e-4)
    assert 0.95**k <= 1e-4 < 0.95 ** (k - 1)


def test_defining_pairs():
    sizes = {c: len(defining_pairs(c)) for c in ("ptb", "wikitext-2", "cnn-dailymail")}
    assert sizes == {"ptb": 15, "wikitext-2": 46, "cnn-dailymail": 28}
    for corpus in sizes:
        male, female = gendered_words(defining_pairs(corpus))
        assert "husband" in male and "wife" in female and not male & female
        printed_male, _ = gendered_words(defining_pairs(corpus, as_printed=True))
        assert "wife" in printed_male
    with pytest.raises(FileNotFoundError, match="has: cnn-dailymail"):
        defining_pairs("imdb")


def test_p_word_given_gender_by_hand():
    # c(w,g) = [1, 3], sum 4; c(g) = 2, sum_i c(w_i) = 10 -> (1/4) / (2/10) = 1.25
    assert p_word_given_gender([1, 3], 2, [4, 6]).tolist() == pytest.approx([1.25, 3.75])
    with pytest.raises(ValueError, match="n_gender"):
        p_word_given_gender([1, 3], 0, [4, 6])
    with pytest.raises(ValueError, match="sum"):
        p_word_given_gender([0, 0], 1, [4, 6])


def test_bias_scores_closed_form_and_drops():
    words, male, female = ["a", "b", "c", "d"], [1, 2, 0, 0], [3, 1, 5, 0]
    s = bias_scores(words, male, female, n_male=4, n_female=2)
    # log( (f_w/9 / (2/N)) / (m_w/3 / (4/N)) ) = log(f_w/m_w * 3/9 * 4/2)
    assert s.words == ("a", "b")
    assert s.scores.tolist() == pytest.approx([math.log(3 * 2 / 3), math.log(0.5 * 2 / 3)])
    assert s.dropped == {"c": "zero male count", "d": "zero male and female counts"}
    shifted = bias_scores(words, male, female, 4, 2, gender_frequency=False)
    assert (s.scores - shifted.scores).tolist() == pytest.approx([math.log(4 / 2)] * 2)
    ratio = bias_scores(words, male, female, 4, 2, mode="as-coded")
    assert ratio.scores.tolist() == pytest.approx([1 / 4, 2 / 3])


def test_bias_scores_match_p_word_given_gender():
    male, female, counts = np.array([3.0, 1, 2]), np.array([1.0, 4, 2]), np.array([7, 9, 5])
    s = bias_scores(["a", "b", "c"], male, female, n_male=5, n_female=3)
    expected = np.log(p_word_given_gender(female, 3, counts) / p_word_given_gender(male, 5, counts))
    assert s.scores == pytest.approx(expected)


def test_bias_scores_bad_input():
    with pytest.raises(ValueError, match="empty"):
        bias_scores([], [], [], 1, 1)
    with pytest.raises(ValueError, match="lengths"):
        bias_scores(["a"], [1, 2], [1], 1, 1)
    with pytest.raises(ValueError, match="non-negative"):
        bias_scores(["a"], [-1], [1], 1, 1)
    with pytest.raises(ValueError, match="both a male and a female"):
        bias_scores(["a", "b"], [0, 1], [1, 0], 1, 1)
    with pytest.raises(ValueError, match="unique"):
        bias_scores(["a", "a"], [1, 1], [1, 1], 1, 1)
    with pytest.raises(ValueError, match="n_male"):
        bias_scores(["a"], [1], [1], 0, 1)
    with pytest.raises(ValueError, match="no bias scores"):
        mean_abs_bias([])
    with pytest.raises(ValueError, match="finite"):
        std_bias([1.0, float("inf")])


def test_tiny_infinite_counts_give_finite_scores():
    s = bias_scores(["a", "b"], [1e-320, 1.0], [1.0, 1.0], 1, 1)
    assert np.isfinite(s.scores).all() and s.scores[0] > 700


def test_mu_sigma_closed_form():
    values = [-2.0, 1.0, 4.0]
    assert mean_abs_bias(values) == pytest.approx(7 / 3)
    assert std_bias(values) == pytest.approx(3.0)  # deviations -3, 0, 3; sum 18 / (3 - 1)
    assert std_bias(values, ddof=0) == pytest.approx(math.sqrt(6))


def test_regression_recovers_slope_and_removes_outlier():
    x = np.arange(10, dtype=float)
    y = 0.4 * x - 1.0
    y[9] = 100.0  # an outlier in the generated text
    words = tuple(f"w{i}" for i in range(10))
    train = BiasScores(words + ("only_train",), np.append(x, 0.0))
    generated = BiasScores(words, y)
    fit = bias_regression(train, generated)
    assert (fit.beta, fit.intercept) == pytest.approx((0.4, -1.0))
    assert fit.outliers == ("w9",) and fit.n_words == 9 and fit.unmatched == 1
    raw = bias_regression(train, generated, outlier_iqr=None)
    assert raw.beta > 1 and raw.outliers == ()


def test_regression_needs_two_distinct_points():
    a = BiasScores(("x", "y"), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="at least 2"):
        bias_regression(a, a)


def test_tukey_fences_by_hand():
    # 1..8 plus x: 9 values, Q1 = 3 and Q3 = 7 exactly, IQR 4, upper fence 7 + 1.5 * 4 = 13
    assert tukey_inliers([1, 2, 3, 4, 5, 6, 7, 8, 13]).all()
    assert tukey_inliers([1, 2, 3, 4, 5, 6, 7, 8, 13.01]).tolist() == [True] * 8 + [False]


@pytest.mark.bad_input(
    "A bare string, a multi-word phrase, or words absent from the corpus (misspelt, capitalised) "
    "as gendered words of `count_cooccurrences`",
    "`TypeError` for the string; `ValueError` naming multi-word entries; absent words listed in "
    "`Cooccurrence.absent`, and a class with no word in the corpus stopped by `bias_scores`")
def test_gendered_words_are_checked_against_the_corpus():
    docs = [["the", "he", "said", "she", "ran"]]
    with pytest.raises(TypeError, match="bare string 'he'"):
        count_cooccurrences(docs, "he", ["she"])
    with pytest.raises(ValueError, match="single tokens.*'new york'"):
        count_cooccurrences(docs, ["he", "new york"], ["she"])
    co = count_cooccurrences(docs, ["he", "him"], ["she", "her"], window=2, stop_words=())
    assert co.absent == ("her", "him")
    assert (co.n_male, co.n_female) == (1, 1)
    cased = count_cooccurrences(docs, ["He"], ["she"], window=2, stop_words=())
    assert cased.absent == ("He",) and cased.n_male == 0
    with pytest.raises(ValueError, match="absent"):
        bias_scores(cased.words, cased.male, cased.female, n_male=cased.n_male,
                    n_female=cased.n_female)


@pytest.mark.bad_input(
    'Infinite or negative gender token counts with `mode="as-coded"`, `ddof` below 0 for sigma, '
    'or NaN values (or a NaN `k`) for the Tukey outlier fences',
    '`ValueError` naming the argument (and the positions of the NaN values)')
def test_impossible_counts_ddof_and_nan_fences_are_refused():
    for n_male, n_female in ((-math.inf, 1), (1, math.nan), (-1, 1)):
        with pytest.raises(ValueError, match="n_male and n_female must be finite and > 0"):
            bias_scores(["a"], [1], [1], n_male, n_female, mode="as-coded")
    with pytest.raises(ValueError, match="ddof must be 0 or more, got -1"):
        std_bias([1.0, 2.0], ddof=-1)
    with pytest.raises(ValueError, match=r"values at positions \[1, 3\] are NaN or infinite"):
        tukey_inliers([1.0, math.nan, 3.0, math.inf])
    with pytest.raises(ValueError, match="k must be finite and >= 0, got nan"):
        tukey_inliers([1.0, 2.0], k=math.nan)
