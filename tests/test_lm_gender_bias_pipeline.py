"""The Bordia & Bowman chapter's pipeline: corpora, bias glue, the cached lambda sweep, tables.

Expected values come from hand-worked examples, the paper's printed numbers, or the documented
recipe recomputed step by step with the library's building blocks (never from earlier runs).
"""

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
import torch

from biasbook import reporting, resources, results, stats
from biasbook.chapters.lm_gender_bias import (
    bias,
    corpora,
    corpus_tables,
    sweep,
    sweep_settings,
    sweep_tables,
    uncertainty,
    word_level,
)
from biasbook.chapters.lm_gender_bias.data import defining_pairs, paper_sweep, paper_word_bias
from biasbook.metrics.cooccurrence_bias import BiasScores, bias_regression, tukey_inliers
from biasbook.mitigation.subspace import BiasRegularizer
from biasbook.models import fingerprint
from biasbook.text.cooccurrence import Cooccurrence, count_cooccurrences
from biasbook.training.lstm import (
    LMConfig,
    LSTMLanguageModel,
    Vocab,
    generate,
    perplexity,
    train_lm,
)

LOG2 = math.log(2)
HE_SHE = (frozenset({"he"}), frozenset({"she"}))
DOC = ["he", "cat", "she", "cat", "he", "dog"]  # the hand-worked document below


def recorder(tmp_path):
    return results.Recorder("lm-gender-bias", "test", {}, run_dir=tmp_path)


def metrics(rec, key):
    skip = ("key", "value", "paper", *results.UNCERTAINTY)
    return {tuple(sorted((k, v) for k, v in m.items() if k not in skip)):
            (m["value"], m["paper"]) for m in rec.record["metrics"] if m["key"] == key}


# --- corpora: one reader, two readings -----------------------------------------------------

@pytest.fixture
def fake_files(tmp_path, monkeypatch):
    """PTB and WikiText-2 files written here, served in place of the mirror's."""
    files = {("ptb", "ptb.train.txt"): " he is a doctor \n she is a nurse \n",
             ("ptb", "ptb.test.txt"): " the cat sat \n",
             ("wikitext-2", "valid.txt"): " = Title = \n\n he sang \n",
             ("wikitext-2", "test.txt"): " she wrote \n"}
    for (name, file), text in files.items():
        (tmp_path / f"{name}-{file}").write_text(text)
    monkeypatch.setattr(resources, "path", lambda name, file: tmp_path / f"{name}-{file}")


def test_measured_and_lm_text_are_one_reading(fake_files):
    assert corpora.measured_documents("ptb") == [
        ["he", "is", "a", "doctor", "she", "is", "a", "nurse"]]
    train, held = corpora.lm_text("ptb")
    assert train == [["he", "is", "a", "doctor", "<eos>", "she", "is", "a", "nurse", "<eos>"]]
    assert held == ["the", "cat", "sat", "<eos>"]
    # WikiText-2: 01 measures valid + test (two documents), 02 trains on valid, evaluates on test
    assert corpora.measured_documents("wikitext-2") == [["=", "Title", "=", "he", "sang"],
                                                        ["she", "wrote"]]
    train, held = corpora.lm_text("wikitext-2", train_tokens=4, valid_tokens=1)
    assert train == [["=", "Title", "=", "<eos>"]] and held == ["she"]
    assert corpora.measured_documents("ptb", max_tokens=3) == [["he", "is", "a"]]


def test_corpus_errors_name_the_choices(fake_files):
    with pytest.raises(ValueError, match="parts train, test"):
        corpora.read("ptb", "valid")
    with pytest.raises(ValueError, match="only the part 'train'"):
        corpora.read("cnn-dailymail", "test")
    with pytest.raises(ValueError, match="no language-model text for 'cnn-dailymail'"):
        corpora.lm_text("cnn-dailymail")
    with pytest.raises(ValueError, match="corpora: ptb, wikitext-2"):
        corpora.gender("imdb")


def test_un_lm_text_holds_out_other_speeches():
    try:
        train, held = corpora.lm_text("un-general-debates", un_train_speeches=2,
                                      un_valid_speeches=1, un_seed=3)
    except resources.ResourceError as err:  # a checkout without the offline mirror
        pytest.skip(str(err))
    measured = corpora.measured_documents("un-general-debates", un_speeches=3, un_seed=3)
    no_eos = [[t for t in doc if t != "<eos>"] for doc in train]
    assert len(train) == 2 and all(doc[-1] == "<eos>" for doc in train)
    assert all(doc in measured for doc in no_eos)  # the training speeches are measured in 01
    held_doc = [t for t in held if t != "<eos>"]
    assert held_doc in measured and held_doc not in no_eos  # the third speech of the permutation


def test_un_text_uses_the_cnn_dailymail_defining_set():
    assert corpora.gender("un-general-debates") == corpora.gender("cnn-dailymail")
    male, female = corpora.gender("ptb")
    assert ("he", "she") in defining_pairs("ptb") and "he" in male and "she" in female


# --- bias glue -------------------------------------------------------------------------------

def test_score_paper_counting_by_hand():
    # window 10 covers the document: c(cat, m) = 4, c(dog, m) = 2, c(cat, f) = 2, c(dog, f) = 1,
    # c(m) = 2, c(f) = 1: P(w|f) / P(w|m) = (c(w,f) / 3) / (c(w,m) / 6) * (2 / 1) = 2 for both
    s, co = bias.score([DOC], HE_SHE, "paper", "fixed")
    assert dict(zip(s.words, s.scores, strict=True)) == pytest.approx({"cat": LOG2, "dog": LOG2})
    assert (co.n_male, co.n_female) == (2, 1)


def test_score_as_coded_counting_has_no_gender_frequency():
    # window 1: 3-grams from each gendered token; he@0 -> (he, cat, she), she@2 -> (she, cat, he),
    # he@4 has no complete 3-gram. Every word meets each gender once: log(1/3) - log(1/3) = 0
    # (the printed score would add log(c(m)/c(f)) = log 2).
    s, _ = bias.score([DOC], HE_SHE, "as-coded", "fixed", window=1)
    assert sorted(s.words) == ["cat", "he", "she"] and s.scores.tolist() == [0.0, 0.0, 0.0]
    none, co = bias.score([DOC], HE_SHE, "as-coded", "fixed")  # default window 10: too short
    assert none is None and co.n_male == 2
    undefined = bias.summary(none)
    assert undefined["words"] == 0 and all(math.isnan(undefined[k]) for k in ("mu", "sigma",
                                                                              "beta"))


def test_summary_beta_is_the_slope_on_shared_words():
    train = BiasScores(("a", "b", "c", "d"), np.array([-1.0, 0.0, 1.0, 2.0]))
    generated = BiasScores(("a", "b", "c", "e"), np.array([-2.0, 0.0, 2.0, 5.0]))
    out = bias.summary(generated, train)
    assert out["beta"] == pytest.approx(2.0) and out["words"] == 4
    assert out["mu"] == pytest.approx(9 / 4) and out["sigma"] == pytest.approx(np.std(
        [-2.0, 0.0, 2.0, 5.0], ddof=1))
    lone = BiasScores(("a",), np.array([1.0]))
    assert math.isnan(bias.summary(lone, train)["beta"])  # one shared word: no slope


def test_training_sample_stretches():
    docs = [["a", "b", "c"], ["d", "e"]]
    stream = "abcde"
    sample = bias.training_sample(docs, n=50, length=2, seed=1)
    assert len(sample) == 50 and all("".join(s) in stream for s in sample)
    assert {"".join(s) for s in sample} == {"ab", "bc", "cd", "de"}  # windows cross documents
    assert bias.training_sample(docs, n=1, length=9) == [list(stream)]


# --- notebook 01 tables ------------------------------------------------------------------------

def test_train_rows_and_statistics_by_hand(tmp_path):
    rec = recorder(tmp_path)
    docs = {"ptb": [DOC]}
    scored = corpus_tables.score_corpora(docs, {"ptb": HE_SHE}, progress=False)
    rows = corpus_tables.train_rows(scored, n_resamples=99)
    rec.metrics("train_mu", rows, value="mu", paper="paper mu",  # as notebook 01
                labels=["corpus", "counting", "context"], ci="mu ")
    long = rows.set_index(["counting", "context"])
    # infinite context, weights 0.95^d over the whole (short) document
    q = 0.95
    cm = {"cat": 2 * (q + q**3), "dog": q**5 + q}
    cf = {"cat": 2 * q, "dog": q**3}
    sm, sf = sum(cm.values()), sum(cf.values())
    infinite = [math.log(cf[w] / sf) - math.log(cm[w] / sm) + LOG2 for w in ("cat", "dog")]
    assert long.loc[("paper", "fixed"), "mu"] == pytest.approx(LOG2)
    assert long.loc[("paper", "fixed"), "sigma"] == pytest.approx(0.0)
    assert long.loc[("paper", "infinite"), "mu"] == pytest.approx(np.mean(np.abs(infinite)))
    assert long.loc[("as-coded", "fixed"), "scored words"] == 0  # too short for 21-grams
    recorded = metrics(rec, "train_mu")
    key = (("context", "infinite"), ("corpus", "ptb"), ("counting", "paper"))
    assert recorded[key] == (pytest.approx(np.mean(np.abs(infinite))), 3.81)  # Table 1
    assert len(recorded) == 2  # the as-coded scores are undefined: not recorded, but listed
    # both paper-counting rows score two words: an interval over 2 words, recorded with the value;
    # fixed: both words score log 2, so every resample does: zero width
    fixed = next(m for m in rec.record["metrics"] if m["context"] == "fixed")
    assert (fixed["ci_low"], fixed["ci_high"], fixed["ci_units"], fixed["ci_unit"]) == (
        pytest.approx(LOG2), pytest.approx(LOG2), 2, "words")
    assert long.loc[("paper", "fixed"), "mu vs paper"] == (
        "not comparable: printed counting; the paper's numbers are the authors' counting")
    assert [(s["counting"], s["context"]) for s in rec.record["skipped"]] == [
        ("as-coded", "fixed"), ("as-coded", "infinite")]
    assert math.isnan(long.loc[("as-coded", "fixed"), "mu"])
    stats = corpus_tables.corpus_statistics(docs, scored).iloc[0]
    assert (stats["corpus"], stats["measured"]) == ("ptb", "PTB train")
    assert (stats["tokens"], stats["c(m)/c(f)"]) == (6, 2.0)
    assert stats["log c(m)/c(f)"] == pytest.approx(LOG2)
    table = corpus_tables.train_table(long.reset_index())
    row = table.loc[("PTB train", "paper", "fixed")]
    assert (row["μ [95% CI over words]"], row["paper μ"]) == ("0.69 [0.69, 0.69]", "0.83")
    assert row["paper in our interval?"].startswith("not comparable: printed counting")


def test_window_sweep_by_hand():
    # paper counting, windows 1 and 2: "dog" never meets "she" (3 tokens away): < 2 words, no
    # row; the whole document scores both. as-coded window 1: the 3-grams above, weighted
    # 1, 0.95, 0.95^2 from the gendered token: c(he, m) = 1, c(he, f) = 0.95^2 and the reverse
    # for "she", "cat" 0.95 each: scores -2 log 0.95, 0, +2 log 0.95. Window 2: only she@2 has a
    # complete 5-gram, so no word meets "he".
    rows = corpus_tables.window_sweep({"ptb": [DOC]}, {"ptb": HE_SHE}, [1, 2], progress=False)
    assert list(zip(rows.counting, rows.window, rows["scored words"], strict=True)) == [
        ("paper", math.inf, 2), ("as-coded", 1, 3)]
    assert rows["mu"].iloc[1] == pytest.approx(2 / 3 * abs(2 * math.log(0.95)))
    assert rows["cut-off"].tolist() == ["whole document", 1]  # the window as it is recorded


def test_top_words_lists_frequent_content_words():
    words = ("cat", "dog", "the")
    scores = BiasScores(words, np.array([0.5, -0.25, 1.0]))
    co = Cooccurrence(np.array(words), np.ones(3), np.ones(3), np.array([30, 25, 40]), 1, 1)
    paper_co = Cooccurrence(np.array(["cat", "dog"]), np.ones(2), np.ones(2), np.array([30, 25]),
                            1, 1)  # "the" is a stop word: not a content word
    scored = corpus_tables.CorpusScores(
        {("ptb", "as-coded", "fixed"): scores, ("ptb", "paper", "fixed"): None},
        {("ptb", "as-coded", "fixed"): co, ("ptb", "paper", "fixed"): paper_co})
    top = corpus_tables.top_words(scored, n=2, min_count=20)["PTB train"]
    assert top.tolist() == ["cat (+0.50)", "", "dog (-0.25)", ""]
    assert corpus_tables.top_words(scored, n=1, min_count=26)["PTB train"].tolist() == [
        "cat (+0.50)", ""]


def test_table_words_against_the_paper():
    # three of the paper's Table 5 (male-leaning) WikiText-2 words; "Edward" leans the other way
    words = ("Arts", "Boston", "Edward")
    ours = np.array([-0.5, -1.0, 0.3])
    scores = BiasScores(words, ours)
    co = Cooccurrence(np.array(words), np.ones(3), np.ones(3), np.array([4, 5, 6]), 1, 1)
    scored = corpus_tables.CorpusScores({("wikitext-2", "as-coded", "fixed"): scores},
                                        {("wikitext-2", "as-coded", "fixed"): co})
    table, summary = corpus_tables.table_words(scored)
    paper = paper_word_bias("wikitext-2")
    assert len(table) == len(paper["male"]) + len(paper["female"])
    boston = table.set_index("word").loc["Boston"]
    assert (boston["paper (train)"], boston["ours"], boston["count in our text"]) == (
        -0.95, -1.0, 5)
    row = summary.iloc[0]
    paper_train = [paper["male"][w][0] for w in words]
    assert (row["found in our text"], row["same sign as the paper"]) == (3, pytest.approx(2 / 3))
    assert row["Pearson r"] == pytest.approx(np.corrcoef(ours, paper_train)[0, 1])
    assert (row["corpus"], row["measured"]) == ("wikitext-2", "WikiText-2 valid+test")


# --- the lambda sweep ----------------------------------------------------------------------

LSTM = {"layers": 1, "hidden": 8, "emb": 8, "dropout": 0.1, "bptt": 5, "batch": 4, "lr": 0.01,
        "optimizer": "adam", "seed": 0}
SETTINGS = sweep_settings.Settings(
    lambdas=[0.0, 0.5], train_tokens=None, valid_tokens=None, un_train_speeches=None,
    un_valid_speeches=None, un_seed=0, vocab_size=30, warmup_tokens=200, sweep_tokens=200,
    lstm=LSTM, reg_mode="as-coded", generation={"n_seeds": 3, "length": 6}, seeds=[0],
    tying=None)


@pytest.fixture
def tiny_ptb(tmp_path, monkeypatch, private_cache, one_torch_thread):
    """A 300-token PTB-like training file (so that a 200 + 200-token sweep wraps round)."""
    rng = np.random.default_rng(0)
    words = ["he", "she", "man", "woman", "his", "her", "doctor", "nurse", "the", "a", "runs"]
    lines = [" ".join(rng.choice(words, 9)) for _ in range(30)]  # 30 x (9 + <eos>) = 300
    (tmp_path / "ptb.train.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "ptb.test.txt").write_text("\n".join(lines[:8]) + "\n")
    monkeypatch.setattr(resources, "path", lambda name, file: tmp_path / file)
    return sweep.prepare("ptb", SETTINGS)


def test_prepare_encodes_the_lm_text(tiny_ptb):
    d = tiny_ptb
    assert len(d.ids) == 300 and d.vocab.itos[:2] == ["<unk>", "<eos>"]
    assert ("he", "she") in d.pairs and all(a in d.vocab and b in d.vocab for a, b in d.pairs)
    assert [t for doc in d.bias_docs for t in doc] == [
        t for t in d.vocab.decode(d.ids) if t != "<eos>"]
    other = sweep.LMCorpus(d.name, d.vocab, d.ids, d.held_ids, d.pairs[:1], d.gender,
                           d.bias_docs)
    assert other.key != d.key  # the defining pairs change the model, so they key it


def test_sweep_is_the_documented_recipe(tiny_ptb):
    d, config = tiny_ptb, LMConfig(**LSTM, epochs=1)
    result = sweep.run({"ptb": d}, SETTINGS, progress=False)
    # by hand: warm up on tokens 0-199, then continue on 200-299 and 0-99 (wrapping round)
    model = LSTMLanguageModel(len(d.vocab), config)
    train_lm(model, d.ids[:200], config, progress=False)
    assert result.warmups[0]["ptb"].fingerprint == fingerprint(model)
    reg = BiasRegularizer.from_vocab(d.vocab, d.pairs, lam=0.5, mode="as-coded")
    history = train_lm(model, torch.cat([d.ids[200:], d.ids[:100]]), config, regularizer=reg,
                       progress=False)
    run = result.runs["ptb", 0.5]
    assert run.lm.fingerprint == fingerprint(model) and run.lm.history == history
    assert run.ppl == perplexity(model, d.held_ids, bptt=config.bptt)
    assert run.texts == generate(model, d.vocab, n_seeds=3, length=6, seed=0)
    # mean cos^2 of the neutral words with the first singular direction, in numpy
    w = model.encoder.weight.detach().double().numpy()
    w = w / np.linalg.norm(w, axis=1, keepdims=True)
    ids = np.array([[d.vocab.stoi[a], d.vocab.stoi[b]] for a, b in d.pairs])
    direction = np.linalg.svd((w[ids[:, 0]] - w[ids[:, 1]]) / 2)[2][0]
    neutral = [i for i in range(len(d.vocab)) if i not in set(ids.ravel())]
    assert run.cos2 == pytest.approx(np.mean((w[neutral] @ direction) ** 2), rel=1e-5)
    assert result.runs["ptb", 0.0].lm.history[0]["bias_loss"] == 0.0  # no regulariser at 0
    assert result.lambdas == {"ptb": [0.0, 0.5]}
    assert [m.name for m in result.models()] == [
        "lstm/ptb/seed=0/warm-up", "lstm/ptb/seed=0/lambda=0", "lstm/ptb/seed=0/lambda=0.5"]


def test_each_training_seed_has_its_own_warm_up_and_texts(tiny_ptb):
    settings = sweep_settings.Settings(**{**SETTINGS.__dict__, "seeds": [0, 4]})
    result = sweep.run({"ptb": tiny_ptb}, settings, progress=False)
    config = LMConfig(**{**LSTM, "seed": 4}, epochs=1)
    model = LSTMLanguageModel(len(tiny_ptb.vocab), config)  # seed 4: init and dropout
    train_lm(model, tiny_ptb.ids[:200], config, progress=False)
    assert result.warmups[4]["ptb"].fingerprint == fingerprint(model)
    assert result.warmups[0]["ptb"].fingerprint != fingerprint(model)
    assert list(result.by_seed) == [0, 4] and result.runs == result.by_seed[0]
    run = result.by_seed[4]["ptb", 0.5]
    assert run.seed == 4 and run.texts == generate(run.lm.model, tiny_ptb.vocab, n_seeds=3,
                                                   length=6, seed=4)
    with pytest.raises(ValueError, match="seeds"):
        sweep_settings.Settings(**{**SETTINGS.__dict__, "seeds": [1, 1]})
    per_corpus = sweep_settings.Settings(**{**SETTINGS.__dict__, "seeds": {"ptb": [4]}})
    assert list(sweep.run({"ptb": tiny_ptb}, per_corpus, progress=False).runs.values())[0].seed == 4


def test_tying_runs_untie_the_warm_up_and_debias_the_chosen_side(tiny_ptb):
    d = tiny_ptb
    settings = sweep_settings.Settings(**{**SETTINGS.__dict__,
                                          "tying": {"corpus": "ptb", "lam": 0.5}})
    result = sweep.run({"ptb": d}, settings, progress=False)
    runs = sweep.tying_runs({"ptb": d}, settings, result, progress=False)
    assert list(runs) == [("tied", 0.0), ("tied", 0.5), ("untied", 0.0),
                          ("untied, input", 0.5), ("untied, output", 0.5), ("untied, both", 0.5)]
    assert runs["tied", 0.5] is result.runs["ptb", 0.5]  # the sweep's own model, not retrained
    # by hand: the tied warm-up copied into two matrices, then only the output one regularised
    config = LMConfig(**LSTM, epochs=1, tied=False, debias="output")
    model = LSTMLanguageModel(len(d.vocab), config)
    model.load_state_dict(result.warmups[0]["ptb"].model.state_dict())
    reg = BiasRegularizer.from_vocab(d.vocab, d.pairs, lam=0.5, mode="as-coded")
    train_lm(model, torch.cat([d.ids[200:], d.ids[:100]]), config, regularizer=reg,
             progress=False)
    out = runs["untied, output", 0.5]
    assert out.lm.fingerprint == fingerprint(model) and not out.lm.model.tied
    assert out.cos2_out < out.cos2  # the output side is the regularised one
    assert runs["tied", 0.5].cos2_out == runs["tied", 0.5].cos2  # one matrix
    assert sweep.tying_runs({"ptb": d}, SETTINGS, result) == {}


def test_worker_processes_train_the_same_models_as_this_one(tiny_ptb, tmp_path, monkeypatch):
    settings = sweep_settings.Settings(**{**SETTINGS.__dict__, "seeds": [0, 1],
                                 "tying": {"corpus": "ptb", "lam": 0.5}})
    here = sweep.run({"ptb": tiny_ptb}, settings, progress=False)
    tied_here = sweep.tying_runs({"ptb": tiny_ptb}, settings, here, progress=False)
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "second cache"))
    calls = []
    monkeypatch.setattr(sweep, "train_lm", lambda *a, **k: calls.append(a) or None)
    there = sweep.run({"ptb": tiny_ptb}, settings, workers=2, progress=False)
    tied_there = sweep.tying_runs({"ptb": tiny_ptb}, settings, there, progress=False)
    assert calls == []  # the workers trained every model, the tying runs' included
    assert [m.fingerprint for m in there.models()] == [m.fingerprint for m in here.models()]
    assert [r.texts for r in there.runs.values()] == [r.texts for r in here.runs.values()]
    assert {k: (r.lm.fingerprint, r.ppl) for k, r in tied_there.items()} == {
        k: (r.lm.fingerprint, r.ppl) for k, r in tied_here.items()}


class Interrupted(Exception):
    pass


def test_an_interrupted_sweep_resumes_at_the_unfinished_lambda(tiny_ptb, monkeypatch):
    settings = sweep_settings.Settings(**{**SETTINGS.__dict__, "lambdas": [0.0, 0.5, 1.0]})
    trained, real = [], sweep.train_lm

    def train(model, ids, config, *, regularizer=None, fail_at=None, **kwargs):
        lam = regularizer.lam if regularizer else 0.0
        if lam == fail_at:
            raise Interrupted
        trained.append(lam)
        return real(model, ids, config, regularizer=regularizer, **kwargs)

    monkeypatch.setattr(sweep, "train_lm", lambda *a, **k: train(*a, fail_at=1.0, **k))
    with pytest.raises(Interrupted):
        sweep.run({"ptb": tiny_ptb}, settings, progress=False)
    assert trained == [0.0, 0.0, 0.5]  # warm-up, lambda = 0, lambda = 0.5
    trained.clear()
    monkeypatch.setattr(sweep, "train_lm", lambda *a, **k: train(*a, **k))
    first = sweep.run({"ptb": tiny_ptb}, settings, progress=False)
    assert trained == [1.0]
    trained.clear()
    again = sweep.run({"ptb": tiny_ptb}, settings, progress=False)
    assert trained == []  # everything from the store, bit for bit
    assert [r.lm.fingerprint for r in again.runs.values()] == [
        r.lm.fingerprint for r in first.runs.values()]
    assert [r.texts for r in again.runs.values()] == [r.texts for r in first.runs.values()]


def test_settings_per_corpus_values():
    settings = sweep_settings.Settings(**{**SETTINGS.__dict__, "sweep_tokens": {"ptb": 10},
                                 "lambdas": {"ptb": [0.0], "wikitext-2": [1.0]}})
    assert settings.value("lambdas", "wikitext-2") == [1.0]
    assert settings.value("lstm", "ptb") == LSTM  # a mapping, but not a per-corpus one
    with pytest.raises(KeyError, match="wikitext-2"):
        settings.value("sweep_tokens", "wikitext-2")
    assert settings.config() == LMConfig(**LSTM, epochs=1)
    assert (settings.n_seeds, settings.gen_length) == (3, 6)
    with pytest.raises(ValueError, match="n_seeds and length"):
        sweep_settings.Settings(**{**SETTINGS.__dict__, "generation": {"n_seeds": 3}})
    assert sweep.stream_slice(torch.arange(4), 3, 6).tolist() == [3, 0, 1, 2, 3, 0]


# --- notebook 02 tables --------------------------------------------------------------------

def fake_run(ppl, texts=(), loss=1.0, cos2=0.01):
    return SimpleNamespace(ppl=ppl, cos2=cos2, texts=list(texts),
                           lm=SimpleNamespace(history=[{"train_loss": loss}]))


def test_perplexity_table_holds_the_papers_perplexity(tmp_path):
    rec = recorder(tmp_path)
    runs = {("ptb", 0.0): fake_run(300.0), ("ptb", 0.01): fake_run(290.0),
            ("un-general-debates", 0.0): fake_run(80.0)}
    table = sweep_tables.perplexity_table(runs)
    assert table["paper perplexity"].tolist()[:2] == [62.56, 62.83]  # Table 1
    rec.metrics("perplexity", table, value="perplexity", paper="paper perplexity",
                labels=sweep_tables.LABELS)  # as notebook 02 records it
    recorded = metrics(rec, "perplexity")
    assert recorded[(("corpus", "ptb"), ("lam", 0.01))] == (290.0, 62.83)
    assert recorded[(("corpus", "un-general-debates"), ("lam", 0.0))] == (80.0, None)


def test_score_texts_rows_and_the_papers_numbers():
    rng = np.random.default_rng(1)
    words = ["he", "she", "cat", "dog", "runs", "sleeps", "the"]
    train = [list(rng.choice(words, 60)) for _ in range(4)]
    vocab = Vocab.build([t for doc in train for t in doc])
    d = sweep.LMCorpus("ptb", vocab, vocab.encode(train[0]), vocab.encode(train[1]),
                       [("he", "she")], HE_SHE, train)
    texts = [list(rng.choice(words, 40)) + ["<eos>"] for _ in range(5)]
    runs = {("ptb", 0.0): fake_run(10.0, texts), ("ptb", 1.0): fake_run(11.0, texts[::-1])}
    scores = sweep_tables.score_texts({"ptb": d}, runs, n_seeds=5, gen_length=40,
                                      n_resamples=99, progress=False)
    long = scores.long
    assert len(long) == 4 * 4  # (train, sample, 0, 1) x (2 countings x 2 contexts)
    assert "mu_se" not in long  # the hand-rolled bootstrap over texts is gone
    # every row: mu's and sigma's intervals over its words; beta's over the shared words
    for row in long.to_dict("records"):
        assert row["mu ci_low"] <= row["mu"] <= row["mu ci_high"]
        assert (row["mu ci_units"], row["mu ci_unit"]) == (row["words"], "words")
        if row["lam"] == "train":  # no reference to regress on
            assert math.isnan(row["beta ci_low"])
    for (_, lam, counting, context), s in scores.generated.items():
        ci = uncertainty.beta_interval(scores.reference["ptb", counting, context], s,
                                       n_resamples=99)
        row = long.set_index(["lam", "counting", "context"]).loc[(lam, counting, context)]
        assert row["beta ci_low"] == pytest.approx(ci.low if ci else np.nan, nan_ok=True)
    # <eos> is removed: the generated text scores exactly like the same words without it
    s, _ = bias.score([t[:-1] for t in texts], HE_SHE, "paper", "fixed")
    got = scores.generated["ptb", 0.0, "paper", "fixed"]
    assert got.words == s.words and np.array_equal(got.scores, s.scores)
    # the paper's numbers in the row's context (Table 1): train and lambda = 1, none for "sample"
    paper = long.set_index(["lam", "context"])[["paper mu", "paper sigma", "paper beta"]]
    assert paper.loc[("train", "fixed")].iloc[0].tolist()[:2] == [0.83, 1.00]
    assert paper.loc[(1.0, "infinite"), "paper beta"].iloc[0] == -0.3
    assert paper.loc["sample"].isna().all(axis=None)


def test_table_1_to_3_prints_intervals_and_checks_the_paper():
    def row(lam, ctx, mu, low, high):
        return {"corpus": "ptb", "lam": lam, "counting": "as-coded", "context": ctx, "mu": mu,
                "mu ci_low": low, "mu ci_high": high, "sigma": 1.0, "sigma ci_low": 0.98,
                "sigma ci_high": 1.02, "beta": np.nan, "beta ci_low": np.nan,
                "beta ci_high": np.nan, "words": 7}
    long = pd.DataFrame([row("train", "fixed", 0.84, 0.80, 0.86),
                         row("train", "infinite", 0.9, 0.8, 1.0),
                         row("sample", "fixed", 0.8, 0.7, 0.9),
                         row(0.0, "fixed", 0.7, 0.6, 0.8), row(0.0, "infinite", 0.7, 0.6, 0.8)])
    table = sweep_tables.table_1_to_3(long, {("ptb", 0.0): fake_run(300.0)}, "ptb")
    assert list(table.index[:4]) == [("train", "ours"), ("train", "paper"), ("sample", "ours"),
                                     (0.0, "ours")]
    assert table.loc[("train", "ours"), "fixed μ"] == "0.84 [0.80, 0.86]"
    assert table.loc[(0.0, "ours"), "ppl"] == "300.0"
    assert table.loc[(0.0, "paper"), "fixed μ"] == "0.74"  # Table 1, lambda = 0
    # the full PTB: the paper's 0.83 lies in [0.80, 0.86], its sigma 1.00 in [0.98, 1.02]
    assert table.loc[("train", "paper"), "paper in our interval?"] == (
        "fixed: μ inside, σ inside; "
        "infinite: not comparable (the paper's infinite-context window is unknown)")
    assert table.loc[(0.0, "paper"), "paper in our interval?"] == (
        "not comparable: " + uncertainty.NOT_THE_PAPERS_MODEL)
    cut = sweep_tables.table_1_to_3(long, {}, "ptb", prefix_tokens=20000)
    assert "fixed: not comparable (a 20,000-token prefix" in cut.loc[
        ("train", "paper"), "paper in our interval?"]
    outside = sweep_tables.table_1_to_3(long.assign(**{"mu ci_high": 0.82}), {}, "ptb")
    assert outside.loc[("train", "paper"), "paper in our interval?"].startswith(
        "fixed: μ outside, σ inside")


def test_tradeoff_frame_takes_our_means_over_seeds_and_the_papers_ratios():
    per_seed = pd.DataFrame({"corpus": "ptb", "lam": [0.0, 0.0, 0.5, 0.5], "seed": [0, 1, 0, 1],
                             "mu": [0.8, 0.6, 0.6, 0.4], "delta mu": [0, 0, -0.2, -0.2],
                             "beta": 0.1, "ppl": [200.0, 210.0, 220.0, 210.0], "cos2": 0.01,
                             "mu ratio": [1, 1, 0.75, 2 / 3], "ppl ratio": [1, 1, 1.1, 1.0]})
    frame = sweep_tables.tradeoff_frame(sweep_tables.seed_summary(per_seed), ["ptb"])
    ours = frame[frame.source == "ours"].set_index(["stat", "λ"])
    assert ours.loc[("μ", 0.5), "value"] == pytest.approx(0.5)
    half = sps.t.ppf(0.975, 1) * np.std([0.75, 2 / 3], ddof=1) / np.sqrt(2)  # closed form
    assert ours.loc[("μ / μ(λ=0)", 0.5), ["low", "high"]].tolist() == pytest.approx(
        [(0.75 + 2 / 3) / 2 - half, (0.75 + 2 / 3) / 2 + half])
    assert ours.loc[("ppl / ppl(λ=0)", 0.0), "value"] == 1.0  # the anchor, no interval
    paper = frame[frame.source == "paper"].set_index(["stat", "λ"])
    table1 = paper_sweep("ptb")
    assert paper.loc[("ppl / ppl(λ=0)", 1.0), "value"] == pytest.approx(
        table1[1.0]["ppl"] / table1[0.0]["ppl"])
    assert paper.loc[("μ", 1.0), "value"] == 0.84 and paper["low"].isna().all()


def test_excerpt_helpers():
    assert word_level.escape("<unk>") == "&lt;unk&gt;" and word_level.escape("a*b") == "a\\*b"
    text = ["she", "is", "a", "doctor", "<eos>"]
    assert word_level.excerpt(text, 3, HE_SHE, width=3) == "*she* is a **doctor** /"
    assert word_level.first_occurrence([["a"], text, text], "doctor") == (text, 3)
    assert word_level.first_occurrence([["a"]], "doctor") == (None, None)


def test_word_table_rows_and_paper_columns():
    train = BiasScores(("Boston", "actress"), np.array([-1.0, 2.0]))
    generated = {0.0: BiasScores(("Boston",), np.array([-0.5])), 1.0: None}
    table = word_level.word_table(["Boston", "nowhere"], [1.0, 0.0], train, generated,
                                    "wikitext-2")
    assert list(table.columns) == ["train", "λ=0", "λ=1"]
    assert table.loc[("Boston", "ours")].tolist()[:2] == [-1.0, -0.5]
    assert math.isnan(table.loc[("Boston", "ours"), "λ=1"])
    assert table.loc[("Boston", "paper")].tolist() == [-0.95, -1.06, -0.94]  # Table 5
    assert table.loc[("nowhere", "paper")].isna().all()
    caption, shown = word_level.word_table_caption("wikitext-2", table)
    assert shown == ["Boston"] and "of 2 words, 1 are scored" in caption
    share = word_level.scored_share({"wikitext-2": table})  # 1 of 2 words x 2 lambdas
    assert share.to_dict("records") == [{"corpus": "wikitext-2", "scored share": 0.25}]


def test_regression_points():
    train = BiasScores(("a", "b", "c"), np.array([-1.0, 0.0, 1.0]))
    points, fit = word_level.regression_points(
        train, BiasScores(("b", "c", "d"), np.array([0.5, 1.5, 9.0])))
    assert points.to_dict("list") == {"train": [0.0, 1.0], "generated": [0.5, 1.5]}
    assert fit.beta == pytest.approx(1.0) and fit.intercept == pytest.approx(0.5)
    assert word_level.regression_points(train, None)[1] is None


def test_seed_scores_take_the_change_from_lambda_zero_within_each_seed():
    gender = (frozenset({"he"}), frozenset({"she"}))
    data = {"ptb": SimpleNamespace(bias_docs=[["he", "a", "she", "a", "b", "he", "b"]] * 40,
                                   gender=gender)}
    texts = {  # mu (as-coded, fixed) of each text, by hand: a = log((f/F) / (m/M)) etc.
        "even": [["he", "a", "she", "a"] * 30],
        "lean": [["he", "a", "he", "b", "she", "a", "she", "b", "he", "a"] * 30],
    }
    by_seed = {s: {("ptb", 0.0): fake_run(100.0 + s, texts["even"]),
                   ("ptb", 1.0): fake_run(110.0 + s, texts[t])}
               for s, t in ((0, "lean"), (1, "even"))}
    for runs in by_seed.values():
        for (name, lam), run in runs.items():
            run.corpus, run.lam = name, lam
    per_seed = sweep_tables.seed_scores(data, by_seed, progress=False)
    mu = {k: bias.summary(bias.score(v, gender, "as-coded", "fixed")[0])["mu"]
          for k, v in texts.items()}
    assert mu["lean"] != pytest.approx(mu["even"])
    assert per_seed["delta mu"].tolist() == pytest.approx(
        [0.0, mu["lean"] - mu["even"], 0.0, 0.0])
    assert mu["even"] == 0 and per_seed["mu ratio"].isna().all()  # mu(0) = 0: no ratio, not inf
    assert per_seed["ppl ratio"].tolist() == pytest.approx([1.0, 110 / 100, 1.0, 111 / 101])
    summary = sweep_tables.seed_summary(per_seed).set_index(["stat", "λ"])
    assert summary.loc[("perplexity", 1.0), "mean"] == 110.5
    assert summary.loc[("perplexity", 1.0), "seeds"] == 2
    dmu = [mu["lean"] - mu["even"], 0.0]
    assert summary.loc[("delta_mu", 1.0), "sd"] == pytest.approx(abs(dmu[0]) / np.sqrt(2))
    half = sps.t.ppf(0.975, 1) * np.std(dmu, ddof=1) / np.sqrt(2)  # closed-form t-interval
    assert summary.loc[("delta_mu", 1.0), ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [np.mean(dmu) - half, np.mean(dmu) + half])
    assert summary.loc[("delta_mu", 1.0), ["ci_unit", "ci_method"]].tolist() == ["seeds", "t"]
    assert ("delta_mu", 0.0) not in summary.index  # relative to lambda = 0: none at 0
    assert summary.loc[("mu", 0.0), "paper"] == 0.74  # the paper's Table 1, PTB, lambda = 0
    assert summary.loc[("mu", 0.0), "vs paper"].startswith("not comparable: another model")
    assert set(summary.index.get_level_values("stat")) == set(sweep_tables.SEED_STATS)
    table = sweep_tables.seed_table(summary.reset_index())
    assert table.loc[("PTB", 1.0), "Δμ mean [95% CI]"] == reporting.interval_text(
        np.mean(dmu), np.mean(dmu) - half, np.mean(dmu) + half, digits=3)
    assert list(table.columns[:3]) == ["seeds", "μ mean [95% CI]", "μ sd"]
    assert table.columns[-1] == "vs paper"
    empty = pd.DataFrame(columns=["corpus", "lam", "counting", "context", "beta"])
    numbers = sweep_tables.prose_numbers(per_seed, empty, pd.DataFrame())
    assert numbers["ptb_lam_low"] == numbers["ptb_lam_high"] == 1.0
    assert numbers["ptb_dmu_high_mean"] == pytest.approx((mu["lean"] - mu["even"]) / 2)
    assert numbers["ptb_ppl_high_rel"] == pytest.approx(110.5 / 100.5)
    assert math.isnan(numbers["wikitext_2_mu0_mean"]) and math.isnan(numbers["tying_lam"])
    assert all(type(v) is float for v in numbers.values())  # glue's text must parse as a number


def test_corpus_prose_numbers_find_the_first_cut_off_reaching_the_paper():
    by_window = pd.DataFrame({"corpus": "ptb", "counting": "paper",
                              "window": [10, 100, 500, 1000, math.inf],
                              "mu": [1.0, 2.0, 3.0, 3.9, 9.0], "sigma": [1.0, 3.0, 5.0, 7.0, 9.0]})
    long = pd.DataFrame({"corpus": "ptb", "counting": ["as-coded", "paper"], "context": "fixed",
                         "mu": [0.8, 2.0], "sigma": [1.0, 1.0], "scored words": [10, 8],
                         "mu ci_low": [0.7, 1.9], "mu ci_high": [0.9, 2.1]})
    words = pd.DataFrame(columns=["corpus", "words listed", "found in our text",
                                  "same sign as the paper", "Pearson r"])
    co = count_cooccurrences([["he", "a", "he", "b", "she", "a"]], {"he"}, {"she"})
    scored = corpus_tables.CorpusScores({}, {("ptb", "paper", "fixed"): co})
    n = corpus_tables.prose_numbers(scored, long, by_window, words)
    # paper: infinite sigma 4.65 first reached at 500 (mu 3.0), mu 3.81 at 1000 (sigma 7.0)
    assert (n["ptb_inf_sigma_window"], n["ptb_inf_mu_at_sigma"]) == (500.0, 3.0)
    assert (n["ptb_inf_mu_window"], n["ptb_inf_sigma_at_mu"]) == (1000.0, 7.0)
    assert (n["ptb_mu"], n["ptb_mu_printed"], n["ptb_ratio"]) == (0.8, 2.0, 2.0)
    assert (n["ptb_mu_low"], n["ptb_mu_high"]) == (0.7, 0.9)  # the as-coded row's interval
    assert math.isnan(n["ptb_sigma_low"])  # no sigma interval in this frame
    assert n["ptb_log_ratio"] == pytest.approx(math.log(2))
    assert math.isnan(n["wikitext_2_mu"]) and math.isnan(n["wikitext_2_table_found"])


# --- uncertainty: intervals over words and seeds, the lambda test ------------------------------

def exact_bootstrap(values, statistic):
    """All n**n equally likely resamples of ``values``: the exact bootstrap distribution."""
    values = np.asarray(values, dtype=float)
    idx = np.array(list(itertools.product(range(len(values)), repeat=len(values))))
    return np.array([statistic(values[i]) for i in idx])


@pytest.mark.parametrize(("stat", "by_hand"), [
    ("mu", lambda x: np.mean(np.abs(x))), ("sigma", lambda x: np.std(x, ddof=1))])
def test_interval_over_words_is_the_percentile_of_the_bootstrap_distribution(stat, by_hand):
    # six words: 46,656 equally likely resamples, enumerated. A Monte Carlo percentile of 9,999
    # resamples lands where the exact distribution crosses 2.5% (97.5%), give or take four
    # standard errors of a share (0.0063)
    values = [-1.3, 0.4, 0.15, -0.7, 2.9, 0.05]
    dist = exact_bootstrap(values, by_hand)
    ci = uncertainty.over_words(values, stat, n_resamples=9999)
    assert ci.value == pytest.approx(by_hand(np.array(values)))
    tol = 4 * np.sqrt(0.025 * 0.975 / 9999)
    for bound, q in ((ci.low, 0.025), (ci.high, 0.975)):
        assert np.mean(dist < bound - 1e-12) <= q + tol
        assert np.mean(dist <= bound + 1e-12) >= q - tol
    assert (ci.level, ci.method, ci.n_units, ci.unit) == (0.95, "percentile", 6, "words")
    assert uncertainty.over_words([0.3], stat, n_resamples=99) is None  # one word: no interval


def test_beta_statistic_is_bias_regression_on_every_resample():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=12), rng.normal(size=12)
    x[0], y[5] = 9.0, -7.0  # one outlier on each side
    words = tuple(f"w{i}" for i in range(12))
    beta = uncertainty.beta_statistic()
    fit = bias_regression(BiasScores(words, x), BiasScores(words, y))
    keep = tukey_inliers(x) & tukey_inliers(y)
    assert not keep[0] and not keep[5] and fit.n_words == keep.sum()
    assert float(beta(x, y)) == pytest.approx(fit.beta)
    assert fit.beta == pytest.approx(np.polyfit(x[keep], y[keep], 1)[0])
    picks = np.array([rng.integers(0, 12, 12) for _ in range(4)])  # fixed resamples of words
    batch = beta(x[picks], y[picks])  # all at once, as the bootstrap evaluates them
    for row, got in zip(picks, batch, strict=True):
        keep = tukey_inliers(x[row]) & tukey_inliers(y[row])  # fences of this resample
        assert got == pytest.approx(np.polyfit(x[row][keep], y[row][keep], 1)[0])
    many = tuple(f"v{i}" for i in range(40))
    train = BiasScores(many, rng.normal(size=40))
    generated = BiasScores(many[:30], 0.5 * train.scores[:30] + rng.normal(0, 0.1, size=30))
    ci = uncertainty.beta_interval(train, generated, n_resamples=199)
    assert (ci.unit, ci.n_units) == ("shared words", 30) and ci.low <= ci.value <= ci.high
    assert ci.value == pytest.approx(bias_regression(train, generated).beta)
    ties = BiasScores(words[:4], np.ones(4))  # no slope: no interval
    assert uncertainty.beta_interval(ties, BiasScores(words[:4], y[:4]), n_resamples=99) is None


def test_pair_statistics_on_fixed_resamples():
    x, y = np.array([0.5, -1.0, 0.2, 1.5, -0.3]), np.array([0.4, -0.8, -0.1, 1.0, 0.2])
    picks = np.array([[0, 1, 2, 3, 4], [1, 1, 3, 0, 2], [4, 3, 3, 1, 0]])
    for row, r, same in zip(picks, stats.pearson(x[picks], y[picks]),
                            stats.same_sign(x[picks], y[picks]), strict=True):
        assert r == pytest.approx(np.corrcoef(x[row], y[row])[0, 1])
        assert same == pytest.approx(np.mean([(a > 0) == (b > 0) for a, b in zip(
            x[row], y[row], strict=True)]))
    ci = uncertainty.over_word_pairs(x, y, "same sign", n_resamples=199)
    assert ci.value == pytest.approx(0.6) and 0 <= ci.low <= ci.high <= 1
    assert uncertainty.over_word_pairs(x[:2], y[:2], "pearson r", n_resamples=99) is None


def per_seed_changes(changes):
    """A per-seed frame with the given delta mu per lambda (and zeros at lambda = 0)."""
    rows = [{"corpus": "ptb", "lam": 0.0, "seed": s, "delta mu": 0.0} for s in range(3)]
    rows += [{"corpus": "ptb", "lam": lam, "seed": s, "delta mu": d}
             for lam, values in changes.items() for s, d in enumerate(values)]
    return pd.DataFrame(rows)


def test_lambda_effects_t_test_with_holm_over_a_corpus_lambdas():
    changes = {0.01: [-0.10, -0.11, -0.12], 0.1: [0.05, 0.07, 0.09], 1.0: [0.1, -0.1, 0.05]}
    effects = uncertainty.lambda_effects(per_seed_changes(changes)).set_index("λ")
    raw = {}
    for lam, d in changes.items():  # closed form: t = mean / (sd / sqrt(n)), df = n - 1
        t = np.mean(d) / (np.std(d, ddof=1) / np.sqrt(3))
        raw[lam] = 2 * sps.t.sf(abs(t), 2)
        half = sps.t.ppf(0.975, 2) * np.std(d, ddof=1) / np.sqrt(3)
        assert effects.loc[lam, ["value", "ci_low", "ci_high"]].tolist() == pytest.approx(
            [np.mean(d), np.mean(d) - half, np.mean(d) + half])
    assert effects["p_value"].to_dict() == pytest.approx(raw)
    # Holm by hand: the smallest p times 3, the next times 2 (never below the one before), ...
    order = sorted(raw, key=raw.get)
    holm = {order[0]: 3 * raw[order[0]]}
    holm[order[1]] = max(holm[order[0]], 2 * raw[order[1]])
    holm[order[2]] = min(1.0, max(holm[order[1]], raw[order[2]]))
    assert effects["p_holm"].to_dict() == pytest.approx(holm)
    # lambda = 0.1 passes unadjusted (p ~ 0.03) but not after the correction
    assert raw[0.1] < 0.05 < holm[0.1]
    assert effects["holds"].to_dict() == {0.01: True, 0.1: False, 1.0: False}
    assert (effects["versus"] == 0.0).all()  # each test is the pair (λ, λ = 0)
    assert effects.loc[0.01, "verdict"].startswith("real: λ lowers μ")
    assert effects.loc[0.1, "verdict"].startswith("not supported")
    text = uncertainty.effect_sentences(effects.reset_index(), {"ptb": "PTB"})
    assert text.startswith("**λ effects on μ that the corrected test supports:** PTB at λ = 0.01.")


def test_lambda_effects_need_two_seeds_and_a_spread():
    one = per_seed_changes({1.0: [0.2]}).query("seed == 0")
    assert uncertainty.lambda_effects(one)["verdict"].tolist() == [
        "not testable: one training seed"]
    flat = uncertainty.lambda_effects(per_seed_changes({1.0: [0.2, 0.2, 0.2]}))
    assert flat["verdict"].tolist() == ["not testable: no spread over seeds"]
    assert not flat["holds"].any() and "none." in uncertainty.effect_sentences(flat)


def test_reasons_a_paper_number_is_not_comparable():
    assert uncertainty.train_reason("wikitext-2", "as-coded", "fixed").startswith("validation")
    assert uncertainty.train_reason("un-general-debates", "as-coded", "fixed") is None
    assert uncertainty.train_reason("ptb", "as-coded", "infinite").endswith("unknown")
