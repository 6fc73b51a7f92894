"""The indirect-stereotypes chapter: Example 1, corpus, pipeline caching, table builders, data."""

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.indirect_stereotypes import corpus, example, pipeline, tables
from biasbook.embeddings import wordsets
from biasbook.embeddings.vectors import from_arrays
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
    fits = pipeline.vectors({"original": mats["original"]},
                            {"dim": 4, "epochs": 1, "batch_size": 4096}, [0, 1], progress=False)
    assert set(fits) == {("original", 0), ("original", 1)}


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
    t1 = tables.table1(runs).set_index("benchmark")
    assert t1.loc["SemEval2012_2", "BIRM (paper, %)"] == -8.93
    assert t1.loc[tables.SEMEVAL_AS_BEFORE, "n_items"] == 10014


def test_table1_relative_change_of_medians():
    runs = pd.DataFrame({"benchmark": ["MEN"] * 6, "task": ["similarity"] * 6,
                         "metric": ["spearman"] * 6, "n_items": [3000] * 6, "n_oov": [12] * 6,
                         "method": ["original"] * 3 + ["birm"] * 3,
                         "score": [0.4, 0.5, 0.9, 0.45, 0.55, 0.6]})
    t = tables.table1(runs)
    assert t["BIRM (proposed) (ours, %)"].item() == pytest.approx(10.0)  # medians 0.5 -> 0.55
    assert t["BIRM (paper, %)"].item() == 0.48
    zero = tables.table1(runs.assign(score=[0, 0, 0, 1, 1, 1]))
    assert np.isnan(zero["BIRM (proposed) (ours, %)"].item())


def test_ripa_and_table5():
    kvs = {("original", 0): toy_vectors(0), ("cds", 0): toy_vectors(1)}
    runs = tables.ripa_runs(kvs)
    direct = {n: t for n, t in tables.paper_tests().items() if t.group == "direct"}
    assert runs.attrs["pairs"] == wordsets.gendered_pairs(direct)
    assert "einstein" not in set(runs["word"]) and "career" in set(runs["word"])
    t5 = tables.table5(runs)
    row = t5[t5["word"] == "career"]
    assert row["Original (paper)"].item() == -1.92 and row["CDS (paper)"].item() == -2.59
    assert row["CDS (ours)"].item() == pytest.approx(
        runs[(runs["word"] == "career") & (runs["method"] == "cds")]["ripa"].item())
    assert tables.mean_abs_change(pd.DataFrame({"a": [1.0, -2.0], "b": [0.5, 1.0]}), "a", "b") \
        == pytest.approx(-0.75)
