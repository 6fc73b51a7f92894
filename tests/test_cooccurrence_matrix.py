"""Word–context matrices (GloVe's input, BIRM's statistics) against hand counts and brute force."""

import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from biasbook.text.word_context import WordContextMatrix, word_context_matrix

X, Y = ["he", "him"], ["she", "her"]


def brute_force(sentences, window, min_count, min_len, weighting, xs, ys):
    """Every pair of every sentence in plain Python, with the paper's 'near' rule spelled out."""
    sents = [[t.lower() for t in s] for s in sentences if len(s) >= min_len]
    freq = Counter(t for s in sents for t in s)
    sents = [[t for t in s if freq[t] >= min_count] for s in sents]
    out = {k: defaultdict(float) for k in ("total", "x", "y", "xy")}
    for s in sents:
        def close(words, i, s=s):
            return any(s[k] in words for k in range(max(0, i - window),
                                                    min(len(s), i + window + 1)))
        for i in range(len(s)):
            for j in range(i + 1, min(len(s), i + window + 1)):
                w = 1 / (j - i) if weighting else 1.0
                xi, xj, yi, yj = close(xs, i), close(xs, j), close(ys, i), close(ys, j)
                share = {"x": (xi + xj) / 2, "y": (yi + yj) / 2,
                         "xy": ((xi and yi) + (xj and yj)) / 2}
                for a, b in ((s[i], s[j]), (s[j], s[i])):
                    out["total"][a, b] += w
                    for k, v in share.items():
                        out[k][a, b] += w * v
    return out, freq


def random_sentences(seed, n=40):
    rng = random.Random(seed)
    words = ["he", "him", "she", "her", "The", "the", "nurse", "engineer", "a", "kind", "rare",
             "x1", "x2"]
    weights = [4, 1, 4, 2, 2, 6, 3, 3, 5, 2, 1, 1, 1]
    return [rng.choices(words, weights, k=rng.randint(1, 25)) for _ in range(n)]


def assert_matches(m, expected, freq, min_count):
    vocab = m.vocab.tolist()
    assert sorted(vocab) == sorted(w for w, c in freq.items() if c >= min_count)
    idx = m.index()
    for name, table in expected.items():
        mat = m.total if name == "total" else m.near[name]
        dense = mat.toarray()
        want = np.zeros_like(dense)
        for (a, b), v in table.items():
            want[idx[a], idx[b]] = v
        np.testing.assert_allclose(dense, want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighting", [True, False])
def test_matches_brute_force(seed, weighting):
    sents = random_sentences(seed)
    window, min_count, min_len = 4, 3, 3
    # a 3-word dense block and 7-token chunks exercise both summation paths and chunk seams
    m = word_context_matrix(sents, window=window, min_count=min_count, min_sentence_length=min_len,
                            distance_weighting=weighting, markers=(X, Y),
                            dense_words=3, chunk_tokens=7)
    expected, freq = brute_force(sents, window, min_count, min_len, weighting, X, Y)
    assert_matches(m, expected, freq, min_count)
    assert m.params["n_tokens"] == sum(c for c in freq.values() if c >= min_count)


def test_hand_counts_and_frequency_order():
    # window 2, unweighted: "a b a c" gives (a,b) x2 [0-1, 1-2], (a,a) at distance 2, (b,c) at 2,
    # (a,c) at 1; the sentence of two words is skipped (min length 3)
    m = word_context_matrix([["a", "b", "a", "c"], ["c", "c"]], window=2, min_count=1,
                            min_sentence_length=3, distance_weighting=False)
    assert m.vocab.tolist() == ["a", "b", "c"]
    assert m.counts.tolist() == [2, 1, 1]
    assert m.total.toarray().tolist() == [[2, 2, 1], [2, 0, 1], [1, 1, 0]]
    weighted = word_context_matrix([["a", "b", "a", "c"]], window=2, min_count=1,
                                   min_sentence_length=1)
    assert weighted.value("a", "a") == 2 * 0.5 and weighted.value("b", "c") == 0.5


def test_rare_words_are_skipped_before_windows_are_laid():
    # "z" occurs once: removed, so "a" and "b" become neighbours (GloVe's cooccur does the same)
    m = word_context_matrix([["a", "z", "b"], ["a", "b", "q"]], window=1, min_count=2,
                            min_sentence_length=1)
    assert m.vocab.tolist() == ["a", "b"] and m.value("a", "b") == 2.0


def test_windows_stop_at_sentence_ends_and_case_folds():
    m = word_context_matrix([["He", "runs"], ["she", "Runs"]], window=5, min_count=1,
                            min_sentence_length=1, markers=(["he"], ["she"]))
    assert m.value("he", "she") == 0.0
    assert m.value("runs", "he", "x") == 1.0 and m.value("runs", "she", "y") == 1.0
    assert m.value("runs", "he", "y") == 0.0


def test_symmetric_and_round_trip(tmp_path):
    m = word_context_matrix(random_sentences(7), window=3, min_count=2, min_sentence_length=1,
                            markers=(X, Y))
    for mat in (m.total, *m.near.values()):
        assert (mat != mat.T).nnz == 0
    back = WordContextMatrix.from_arrays(m.to_arrays())
    assert back.fingerprint() == m.fingerprint()
    assert (back.total != m.total).nnz == 0 and back.params == m.params
    keep = np.isin(m.vocab, ["he", "she", "nurse"])
    small = m.restrict(keep)
    assert small.vocab.tolist() == m.vocab[keep].tolist()
    assert small.value("he", "nurse") == m.value("he", "nurse")


def test_missing_markers_are_reported():
    m = word_context_matrix([["he", "a", "b"]], window=2, min_count=1, min_sentence_length=1,
                            markers=(["he", "himself"], ["she"]))
    assert m.params["markers_missing"] == ["himself", "she"]


def test_bad_inputs():
    with pytest.raises(TypeError, match="token lists"):
        word_context_matrix(["a sentence as a string"])
    with pytest.raises(ValueError, match="min_count"):
        word_context_matrix([["a", "b"]], min_count=5, min_sentence_length=1)
    with pytest.raises(ValueError, match="both marker sets"):
        word_context_matrix([["a"]], markers=(["he"], ["he"]), min_sentence_length=1)
    with pytest.raises(TypeError, match="bare string"):
        word_context_matrix([["a"]], markers=("he", ["she"]), min_sentence_length=1)
    with pytest.raises(ValueError, match="window"):
        word_context_matrix([["a"]], window=0)
    with pytest.raises(ValueError, match="min_sentence_length=5"):
        word_context_matrix([["a"]], min_sentence_length=5)
