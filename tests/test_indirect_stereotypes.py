"""The indirect-stereotypes chapter: Example 1, corpus, pipeline caching, table builders, data."""

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.indirect_stereotypes import corpus, example, pipeline, tables
from biasbook.embeddings import glove, wordsets
from biasbook.embeddings.vectors import from_arrays
from biasbook.metrics import weat
from biasbook.mitigation.birm import birm
from biasbook.mitigation.cds import swap_table


def test_example_1_by_hand():
    t = example.example_1()["value"]
    assert t.iloc[0] == 7  # n: 6 "he handsome engineer" + 1 "she handsome engineer"
    assert t["Eq. 2 factor (engineer made neutral)"] == pytest.approx(6 / 7)
    assert t["Eq. 3 factor (both, the paper's BIRM)"] == pytest.approx(6.5 / 7)
    assert example.eq1_factor(2 / 3, 3) == pytest.approx(6 / 7)
    assert example.eq1_factor(0.5, 3) == pytest.approx(1.0)  # a neutral word is left alone
    balanced = example.example_1(he_handsome=3, he_other=3, she_handsome=3, she_other=3)["value"]
    assert balanced["Eq. 3 factor (both, the paper's BIRM)"] == pytest.approx(1.0)


def test_sentences_and_corpus_errors(tmp_path):
    assert list(corpus.sentences([["a", "!", "b"], ["c"]])) == [["a", "!"], ["b"], ["c"]]
    with pytest.raises(ValueError, match="source"):
        corpus.documents({"source": "web"})
    with pytest.raises(FileNotFoundError, match="UMBC"):
        corpus.documents({"source": "umbc", "path": None})
    (tmp_path / "part.txt").write_text("He is an engineer .\n\nShe is too .\n")
    docs = corpus.documents({"source": "umbc", "path": str(tmp_path), "max_sentences": 1})
    assert docs == [["he", "is", "an", "engineer", "."]]


def test_cds_pairs_form_a_consistent_swap_table():
    pairs = corpus.cds_pairs()
    table = swap_table(pairs)
    assert table["king"] == "queen" and table["mary"] == "james"
    assert len({p for p in pairs}) == len(pairs)


def test_paper_results_cover_every_test_and_column():
    numbers = tables.paper()
    tests = tables.paper_tests()
    assert set(numbers["weat"]["effect_size"]) == set(tests)
    for key in ("effect_size", "p_value"):
        assert all(len(v) == 5 for v in numbers["weat"][key].values())
    assert all(len(v) == 3 for v in numbers["table1"]["rows"].values())
    assert all(len(v) == 5 for v in numbers["table5"]["rows"].values())
    assert numbers["weat"]["effect_size"]["math-arts-adjectives"][:3] == [1.293, 0.625, 1.245]


def test_pipeline_caches_and_birm_is_derived_from_original(private_cache, monkeypatch):
    rng = np.random.default_rng(0)
    words = ["he", "she", "his", "her", "king", "queen", "mary", "john", "doctor", "nurse",
             "kind", "strong", "the", "a", ".", "of", "and"]
    docs = [list(rng.choice(words, size=60)) for _ in range(40)]
    calls = []
    monkeypatch.setattr(pipeline, "documents", lambda spec: calls.append(spec) or docs)
    spec = {"source": "un+imdb", "un_speeches": 2, "imdb_reviews": 20, "seed": 0}
    params = {"window": 5, "min_count": 2, "max_vocab": 800, "min_sentence_length": 3,
              "distance_weighting": True}
    options = {"side": "both", "drop_unmodifiable": False}
    mats = pipeline.matrices(spec, params, options, progress=False)
    direct = birm(mats["original"], **options).matrix
    assert (abs(direct.total - mats["birm"].total) > 1e-9).nnz == 0
    assert mats["original"].near and not mats["cds"].near
    assert mats["birm"].params["birm_summary"]["words"] == len(mats["original"])
    again = pipeline.matrices(spec, params, options, progress=False)
    assert again["cds"].fingerprint() == mats["cds"].fingerprint()
    assert len(calls) == 1  # the corpus was read once, and not at all for the cached run
    assert mats["cds"].fingerprint() != mats["original"].fingerprint()
    options = {"dim": 4, "epochs": 2, "batch_size": 4096}
    fits = pipeline.vectors({"original": mats["original"], "birm": mats["birm"]}, options, [0, 1],
                            workers=2, spec=(spec, params, {"side": "both",
                                                             "drop_unmodifiable": False}),
                            progress=False)
    assert set(fits) == {("original", 0), ("original", 1), ("birm", 0), ("birm", 1)}
    # trained in two worker processes, read back here: the same as a run on this core
    alone = glove.train(mats["birm"], seed=1, cache=False, progress=False, **options)
    assert np.array_equal(fits[("birm", 1)].params["W"], alone.params["W"])
    assert fits[("birm", 1)].losses == alone.losses
    with pytest.raises(ValueError, match="spec"):
        pipeline.vectors({"original": mats["original"]}, options, [0, 1], workers=2)
    curves = pipeline.loss_curves(fits)
    j = alone.losses
    row = curves[(curves["method"] == "BIRM (proposed)") & (curves["seed"] == 1)].iloc[1]
    assert row["drop_pct"] == pytest.approx(100 * (j[0] - j[1]) / j[0])


def toy_vectors(seed, drop=()):
    tests = tables.paper_tests()
    words = sorted({w for t in tests.values() for s in "xyab" for w in getattr(t, s)} - set(drop))
    return from_arrays(words, np.random.default_rng(seed).normal(size=(len(words), 6)))


def test_weat_runs_use_the_shared_vocabulary_and_table_takes_medians():
    kvs = {("original", 0): toy_vectors(0), ("original", 1): toy_vectors(1),
           ("birm", 0): toy_vectors(2, drop=["nurse"]), ("birm", 1): toy_vectors(3)}
    runs = tables.weat_runs(kvs, n_samples=200)
    prof = runs[runs["test"] == "professions-adjectives"]
    assert prof["oov"].str.contains("nurse").all()  # missing in one model: left out for all
    table = tables.weat_table(runs)
    row = table[(table["test"] == "professions-adjectives") & (table["method"] == "Original")]
    want = prof[prof["method"] == "original"]["effect_size"].median()
    assert row["effect_median"].item() == pytest.approx(want)
    assert row["paper_effect"].item() == 0.865 and row["runs"].item() == 2


def test_weat_reports_the_cut_words_the_uncut_effect_and_exact_p():
    kvs = {("original", 0): toy_vectors(0, drop=["nurse"]), ("original", 1): toy_vectors(1)}
    runs = tables.weat_runs(kvs, n_samples=200)
    prof = runs[(runs["test"] == "professions-adjectives") & (runs["seed"] == 0)].iloc[0]
    # 10 masculine professions, 9 feminine ones left: the last masculine one is cut ...
    assert prof["dropped"] == "x: paramedic" and (prof["n_x"], prof["n_y"]) == (9, 9)
    # ... and the effect size on all 10 + 9, computed here with plain cosines, is reported beside
    test = tables.paper_tests()["professions-adjectives"]
    kv = kvs[("original", 0)]

    def cos(u, v):
        return float(kv[u] @ kv[v] / np.linalg.norm(kv[u]) / np.linalg.norm(kv[v]))

    def s(w):
        return np.mean([cos(w, a) for a in test.a]) - np.mean([cos(w, b) for b in test.b])

    sx = [s(w) for w in test.x]
    sy = [s(w) for w in test.y if w != "nurse"]
    want = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
    assert prof["effect_size_full"] == pytest.approx(want, rel=1e-6)
    assert prof["effect_size_full"] != pytest.approx(prof["effect_size"])
    # 9 + 9 words: all C(18, 9) = 48,620 partitions enumerated; 25 + 25 flowers/insects: sampled
    assert prof["exact"] and prof["n_permutations"] == 48620
    flowers = runs[runs["test"] == "flowers-insects"].iloc[0]
    assert not flowers["exact"] and flowers["p_value"] >= 1 / 201
    uncut = runs[runs["test"] == "math-arts-gender"].iloc[0]
    assert uncut["dropped"] == "" and uncut["effect_size_full"] == uncut["effect_size"]
    table = tables.weat_table(runs).set_index("test")
    assert table.loc["professions-adjectives", "dropped"] == "x: paramedic"
    assert table.loc["professions-adjectives", "p_exact"]
    assert not table.loc["flowers-insects", "p_exact"]
    cut = tables.weat_table(runs.assign(computable=runs["test"] != "flowers-insects"))
    assert cut.set_index("test")["p_exact"].isna()["flowers-insects"].all()


def test_cds_matrix_key_follows_the_cds_version(monkeypatch):
    args = ({"source": "un+imdb"}, {"window": 5}, "cds", {})
    before = pipeline.matrix_key(*args), pipeline.matrix_key(*args[:2], "original", {})
    monkeypatch.setattr(pipeline, "CDS_VERSION", pipeline.CDS_VERSION + 1)
    assert pipeline.matrix_key(*args) != before[0]
    assert pipeline.matrix_key(*args[:2], "original", {}) == before[1]


def test_benchmark_runs_add_the_earlier_semeval_score_beside_the_papers():
    kvs = {("original", 0): toy_vectors(0), ("birm", 0): toy_vectors(1)}
    runs = tables.benchmark_runs(kvs, ["SemEval2012_2"])
    assert list(runs["benchmark"]) == ["SemEval2012_2", tables.SEMEVAL_AS_BEFORE] * 2
    assert list(runs["metric"]) == ["spearman", "accuracy"] * 2
    assert set(tables.benchmark_runs(kvs, ["RG65"])["benchmark"]) == {"RG65"}
    assert runs.loc[runs["benchmark"] == tables.SEMEVAL_AS_BEFORE, "n_items"].iloc[0] == 10014


def test_ripa_runs_score_the_direct_tests_targets():
    kvs = {("original", 0): toy_vectors(0), ("cds", 0): toy_vectors(1)}
    runs = tables.ripa_runs(kvs)
    direct = {n: t for n, t in tables.paper_tests().items() if t.group == "direct"}
    assert runs.attrs["pairs"] == wordsets.gendered_pairs(direct)
    assert "einstein" not in set(runs["word"]) and "career" in set(runs["word"])
    assert set(runs["method"]) == {"original", "cds"}


# --- intervals over words and seeds, paired method tests (issue 24) ---------------------------

from itertools import product  # noqa: E402

from biasbook import reporting, stats  # noqa: E402
from biasbook.chapters.indirect_stereotypes import (  # noqa: E402
    differences,
    interval_tables,
    intervals,
    word_scores,
)

T_975_DF2 = 4.302652729911275  # Student's t, 97.5% quantile, 2 degrees of freedom (tables)


def test_effect_size_by_hand_on_tiny_vectors():
    # unit vectors at known angles: cos with a = (1, 0) is the x coordinate, with b = (0, 1) the y
    kv = from_arrays(["x1", "x2", "y1", "y2", "a", "b"],
                     np.array([[1.0, 0], [0.6, 0.8], [0.8, 0.6], [0, 1], [1, 0], [0, 1]]))
    words = weat.used_words(kv.key_to_index, {"x": ["x1", "x2", "zzz"], "y": ["y1", "y2"],
                                              "a": ["a"], "b": ["b"]})
    assert words["x"] == ["x1", "x2"] and words["y"] == ["y1", "y2"]  # zzz missing, 2 of 3 kept
    s = weat.word_associations(kv, words)
    assert s == pytest.approx([1.0, -0.2, 0.2, -1.0])  # cos(w, a) - cos(w, b)
    # (mean(1, -0.2) - mean(0.2, -1)) / sd(1, -0.2, 0.2, -1; ddof 1) = 0.8 / 0.8406
    sd = np.sqrt((1.0**2 + 0.2**2 + 0.2**2 + 1.0**2) / 3)
    assert weat.effect_sizes(s, 2)[()] == pytest.approx(0.8 / sd)
    assert weat.used_words(kv.key_to_index, {"x": ["x1", "q", "r"], "y": ["y1"], "a": ["a"],
                                             "b": ["b"]}) is None  # 1 of 3: too few


def test_word_interval_matches_the_brute_force_bootstrap_distribution():
    # 3 X and 3 Y words, two seeds: resampling X and Y apart gives 27 x 27 equally likely sets
    scores = np.array([[0.9, 0.1, 0.5, -0.3, 0.2, -0.8], [0.7, 0.3, 0.4, -0.1, 0.0, -0.6]])
    statistic = intervals.seed_mean_effect(scores, 3, 1)
    exact = np.array([np.mean([weat.effect_sizes(s[list(ix) + [3 + j for j in iy]], 3)
                               for s in scores])
                      for ix in product(range(3), repeat=3) for iy in product(range(3), repeat=3)])
    ci = intervals.word_interval(statistic, 3, 3, method="percentile", n_resamples=50_000)
    assert ci.value == pytest.approx(np.mean(weat.effect_sizes(scores, 3)))
    for bound, q in ((ci.low, 0.025), (ci.high, 0.975)):
        below, at_most = np.mean(exact < bound - 1e-12), np.mean(exact <= bound + 1e-12)
        assert below - 0.01 <= q <= at_most + 0.01, (bound, q, below, at_most)
    # a bootstrap that tied the i-th X word to the i-th Y word would see 27 sets, not 729:
    # and a different distribution (here a much lower 2.5% point): the check above would fail
    tied = np.array([np.mean([weat.effect_sizes(s[list(ix) + [3 + j for j in ix]], 3)
                              for s in scores]) for ix in product(range(3), repeat=3)])
    assert abs(np.quantile(tied, 0.025) - np.quantile(exact, 0.025)) > 0.2
    assert ci.n_units == 6 and ci.unit == "target words"


def test_with_seeds_adds_the_closed_form_t_half_width_in_quadrature():
    per_seed = [1.2, 1.5, 0.9]
    mean, sd = 1.2, 0.3  # sample sd of 1.2, 1.5, 0.9
    half = T_975_DF2 * sd / np.sqrt(3)
    point = stats.Interval(mean, mean, mean, 0.95, "BCa", 16, "target words")
    only_seeds = intervals.with_seeds(point, per_seed)
    assert (only_seeds.low, only_seeds.high) == pytest.approx((mean - half, mean + half))
    words = stats.Interval(mean, mean - 0.3, mean + 0.4, 0.95, "BCa", 16, "target words")
    both = intervals.with_seeds(words, per_seed)
    assert both.low == pytest.approx(mean - np.sqrt(0.3**2 + half**2))
    assert both.high == pytest.approx(mean + np.sqrt(0.4**2 + half**2))
    assert both.unit == "target words and 3 seeds" and both.method == "BCa (words) + t (seeds)"
    assert intervals.with_seeds(words, [1.2]) is words  # one seed: the words alone
    with pytest.raises(ValueError, match="same number"):
        intervals.with_seeds(words, [0.0, 1.0, 2.0])


def test_weat_difference_p_is_the_brute_force_swap_test():
    # 2 + 2 words, two seeds: 2**4 = 16 ways to swap words between the methods, all enumerated
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 4)) + [1, 1, -1, -1], rng.normal(size=(2, 4))
    ts = word_scores.WordScores("t", {"x": ["x1", "x2"], "y": ["y1", "y2"]}, [0, 1],
                                {"original": b, "birm": a})
    row = differences.weat_differences({"t": ts}, n_resamples=999).iloc[0]

    def d(s):
        return np.mean(weat.effect_sizes(s, 2))

    observed = d(a) - d(b)
    null = []
    for swap in product([False, True], repeat=4):
        s1, s2 = a.copy(), b.copy()
        s1[:, list(swap)], s2[:, list(swap)] = b[:, list(swap)], a[:, list(swap)]
        null.append(d(s1) - d(s2))
    want = np.mean(np.abs(null) >= abs(observed) - 1e-12)
    assert row["value"] == pytest.approx(observed)
    assert row["exact"] and row["p_value"] == pytest.approx(want)
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert row["ci_unit"] == "target words and 2 seeds"


def toy_scores():
    kvs = {(m, s): toy_vectors(10 * i + s) for i, m in enumerate(("original", "birm"))
           for s in (0, 1, 2)}
    runs = tables.weat_runs(kvs, n_samples=200)
    return tables.shared_vectors(kvs), runs


def test_weat_scores_agree_with_weat_and_refuse_a_different_word_rule():
    shared, runs = toy_scores()
    scores = word_scores.weat_scores(shared, tables.paper_tests(), runs)
    assert set(scores) == set(runs.loc[runs["computable"], "test"])
    iv = intervals.weat_intervals(scores, n_resamples=999)
    row = iv[(iv["test"] == "professions-adjectives") & (iv["method"] == "birm")].iloc[0]
    per_seed = runs[(runs["test"] == "professions-adjectives") & (runs["method"] == "birm")]
    assert row["value"] == pytest.approx(per_seed["effect_size"].mean())
    assert row["seed_min"] == pytest.approx(per_seed["effect_size"].min())
    assert row["ci_low"] < row["value"] < row["ci_high"] and row["seeds"] == 3
    wrong = runs.assign(effect_size=runs["effect_size"] + 0.01)
    with pytest.raises(ValueError, match="word rules differ"):
        word_scores.weat_scores(shared, tables.paper_tests(), wrong)


def test_holm_family_by_hand():
    frame = pd.DataFrame({"value": [0.5, -0.4, 0.3, 0.2], "p_value": [0.01, 0.04, 0.03, 0.005],
                          "ci_low": [0.1, -0.8, -0.1, -0.1], "ci_high": [0.9, -0.1, 0.6, 0.5]})
    out = differences.holm_family(frame)
    assert out["p_holm"].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # only the first holds: the last passes Holm, but its interval (with the seeds) includes 0
    assert out["holds"].tolist() == [True, False, False, False]
    assert out["verdict"][0] == "higher"
    assert out["verdict"][1] == differences.NOT_SUPPORTED
    assert "includes 0" in out["verdict"][3]


def test_ripa_summary_by_hand():
    rows = []
    for m, base in (("original", 2.0), ("cds", 1.0)):
        for seed, shift in ((0, 0.0), (1, 0.5)):
            for w, sign in (("w1", 1), ("w2", -1), ("w3", 1)):
                rows.append({"word": w, "method": m, "seed": seed, "oov": False,
                             "ripa": sign * (base + shift + (w == "w3"))})
    rows.append({"word": "w4", "method": "cds", "seed": 0, "oov": True, "ripa": np.nan})
    means, diffs = differences.ripa_summary(pd.DataFrame(rows), n_resamples=999)
    # Original |RIPA|: seed 0 (2, 2, 3), seed 1 (2.5, 2.5, 3.5): mean 15.5 / 6
    assert means.set_index("method").loc["original", "value"] == pytest.approx(15.5 / 6)
    d = diffs.iloc[0]
    assert d["value"] == pytest.approx(-1.0) and d["seeds_same_sign"]
    assert d["ci_unit"] == "words and 2 seeds"
    assert d["ci_method"] == "percentile (words) + t (seeds)"  # all words moved alike: no BCa
    table = intervals.ripa_word_table(pd.DataFrame(rows))
    w1 = table[(table["word"] == "w1") & (table["method"] == "cds")].iloc[0]
    assert w1["value"] == pytest.approx(1.25)


def test_table1_intervals_are_the_seeds_closed_form_t_interval():
    score = {"original": [0.4, 0.5, 0.6], "birm": [0.36, 0.5, 0.57]}
    bench = pd.DataFrame([{"benchmark": "MEN", "task": "similarity", "metric": "spearman",
                           "n_items": 3000, "n_oov": 0, "method": m, "seed": s,
                           "score": score[m][s]} for m in score for s in range(3)])
    row = intervals.table1_intervals(bench).iloc[0]
    change = np.array([-10.0, 0.0, -5.0])  # per seed, % of Original's score in the same seed
    half = T_975_DF2 * change.std(ddof=1) / np.sqrt(3)
    assert row["value"] == pytest.approx(-5.0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((-5.0 - half, -5.0 + half))
    t = -5.0 / (change.std(ddof=1) / np.sqrt(3))  # t = -1.732, 2 df: p = 2 P(T < t)
    assert row["p_value"] == pytest.approx(0.2254033307585166, rel=1e-6) and t < 0
    table = interval_tables.table1_table(bench, "not comparable: test")
    assert table["paper"].item() == 0.48 and table["paper_check"].item() == "not comparable: test"
    assert table["ours"].item().startswith("-5.00 [")


def test_comparability_reasons_reach_the_paper_check():
    assert interval_tables.comparability({"source": "umbc"}, {"dim": 300}) == ""
    reason = interval_tables.comparability({"source": "un+imdb"}, {"dim": 50})
    assert reason.startswith("not comparable") and "50d" in reason
    frame = pd.DataFrame({"paper": [1.0, 3.0, None], "ci_low": [0.5, 0.5, 0.5],
                          "ci_high": [1.5, 1.5, 1.5]})
    assert reporting.paper_verdicts(frame, "paper", "") == ["inside", "outside", "no paper value"]
    assert reporting.paper_verdicts(frame, "paper", reason)[:2] == [reason, reason]


def test_differences_table_carries_the_papers_difference_and_the_verdict():
    shared, runs = toy_scores()
    scores = word_scores.weat_scores(shared, tables.paper_tests(), runs)
    diffs = differences.weat_differences(scores, n_resamples=999)
    table = interval_tables.differences_table(diffs, diffs.iloc[:0], "")
    row = table.set_index("test").loc["math-arts-adjectives"]
    assert row["paper"] == pytest.approx(0.625 - 1.293)  # Proposed - Original, partial corpus
    assert row["method"] == "BIRM (proposed)" and row["versus"] == "Original"
    assert (table["p_holm"] >= table["p_value"]).all()
    assert set(table["paper_check"]) <= {"inside", "outside"}


def test_table5_gives_each_words_seed_interval_and_one_reason():
    rows = [{"word": "career", "method": m, "seed": s, "oov": False, "ripa": v}
            for m, values in (("original", [1.0, 2.0, 3.0]), ("birm", [0.5, 0.5, 0.5]))
            for s, v in enumerate(values)]
    t5 = interval_tables.table5_table(pd.DataFrame(rows), "not comparable (test)")
    half = T_975_DF2 * 1.0 / np.sqrt(3)  # sd of 1, 2, 3 is 1
    assert t5["Original (ours)"].item() == f"2.00 [{2 - half:.2f}, {2 + half:.2f}]"
    assert t5["BIRM (proposed) (ours)"].item() == "0.50 [0.50, 0.50]"
    assert t5["Original (paper)"].item() == -1.92 and t5["paper_check"].item().endswith("(test)")
    comparable = interval_tables.table5_table(pd.DataFrame(rows), "")
    assert comparable["Original: paper inside?"].item() == "outside"
    assert "paper_check" not in comparable


def test_external_intervals_cover_the_words_only():
    tests = wordsets.load("caliskan", lowercase=True)
    words = sorted({w for t in tests.values() for s in "xyab" for w in getattr(t, s)})
    kv = from_arrays(words, np.random.default_rng(5).normal(size=(len(words), 8)))
    check = tables.external_check({"toy": kv}, {"toy": True}, n_samples=100)
    out = interval_tables.external_intervals({"toy": kv}, check, {"toy": True}, n_resamples=999)
    row = out.set_index("test").loc["math-arts-gender"]
    assert row["value"] == row["effect_size"] and row["ci_low"] < row["value"] < row["ci_high"]
    assert row["ci_unit"] == "target words" and row["ci_units"] == 16
    assert row["paper_check"].startswith("not comparable")


def test_no_computable_weat_test_gives_tables_with_no_values_rather_than_an_error():
    """A corpus too small for every test's words (the paper profile on a stand-in corpus):
    the interval and difference frames keep their columns, and the tables say why."""
    kvs = {(m, s): from_arrays(["the", "a"], np.eye(2)) for m in ("original", "birm")
           for s in (0, 1)}
    runs = tables.weat_runs(kvs, n_samples=200)
    assert not runs["computable"].any()
    scores = word_scores.weat_scores(tables.shared_vectors(kvs), tables.paper_tests(), runs)
    iv = intervals.weat_intervals(scores, n_resamples=999)
    table = interval_tables.weat_table(tables.weat_table(runs), iv, "")
    assert len(table) == len(tables.weat_table(runs)) and table["value"].isna().all()
    diffs = differences.weat_differences(scores, n_resamples=999)
    assert diffs.empty and {"value", "ci_low", "p_value"} <= set(diffs.columns)
