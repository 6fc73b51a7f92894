"""Downstream propagation (biasbook.downstream) and continual / task training (biasbook.finetune).

Statistics are checked against plain loops written here; the encoder against a per-text forward
pass without padding; training against its own invariants (the base model is untouched, a
finished run is a lookup, an interrupted run resumes to the same weights as an uninterrupted one)
on tiny random-init models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from biasbook.chapters.herb import downstream as ds
from biasbook.chapters.herb import toxic
from biasbook.models import fingerprint, from_model
from biasbook.testing import tiny_model, tiny_tokenizer
from biasbook.training import classifiers, continual


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def tiny_encoder():
    from transformers import BertConfig, BertModel

    tok = tiny_tokenizer()
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=32,
                                 max_position_embeddings=64))
    return from_model(model, tok, name="tiny-encoder", kind="encoder")


# ------------------------------------------------------------------------------- statistics

def test_change_counts_and_rates_match_loops():
    rng = np.random.default_rng(0)
    p0, p = rng.uniform(size=200), rng.uniform(size=200)
    p[:20] = p0[:20]  # some unchanged
    got = ds.change_counts(p0, p)
    ups = [b - a for a, b in zip(p0, p, strict=True) if b > a]
    downs = [a - b for a, b in zip(p0, p, strict=True) if b < a]
    assert got["n_up"] == len(ups) and got["n_down"] == len(downs) and got["n_same"] == 20
    assert got["avg_up"] == pytest.approx(sum(ups) / len(ups))
    assert got["avg_down"] == pytest.approx(sum(downs) / len(downs))
    rates = ds.label_change_rates(p0, p)
    flips_up = sum(1 for a, b in zip(p0, p, strict=True) if a < 0.5 <= b)
    flips_down = sum(1 for a, b in zip(p0, p, strict=True) if b < 0.5 <= a)
    assert rates == {"neg_to_pos": pytest.approx(100 * flips_up / 200),
                     "pos_to_neg": pytest.approx(100 * flips_down / 200)}


def test_region_table_table5_and_pooled_metrics():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, size=50)
    p0 = rng.uniform(size=50)
    probs = rng.uniform(size=(3, 50))
    frame = ds.region_table(p0, probs, ["A", "B", "C"])
    share = [(probs[r] >= 0.5).mean() - (p0 >= 0.5).mean() for r in range(3)]
    assert frame["positive_share_change"].tolist() == pytest.approx(share)
    assert frame["mean_change"].tolist() == pytest.approx((probs - p0).mean(axis=1).tolist())
    t5 = ds.table5(frame, without=["B"])
    assert t5["w/o B/neg_to_pos"] == pytest.approx(frame.loc[["A", "C"], "neg_to_pos"].mean())
    assert t5["all/pos_to_neg"] == pytest.approx(frame["pos_to_neg"].mean())
    pooled = ds.pooled_metrics(labels, probs)
    correct = sum((probs[r, i] >= 0.5) == labels[i] for r in range(3) for i in range(50))
    assert pooled["accuracy"] == pytest.approx(correct / 150)
    with pytest.raises(KeyError):
        ds.table5(frame, without=["Z"])


def test_balanced_sample_is_balanced_and_seeded():
    frame = pd.DataFrame({"label": [0] * 30 + [1] * 10, "x": range(40)})
    a = ds.balanced_sample(frame, 12, seed=3)
    assert a["label"].value_counts().to_dict() == {0: 6, 1: 6}
    assert a.equals(ds.balanced_sample(frame, 12, seed=3))
    assert list(a.index) == sorted(a.index)
    assert ds.balanced_sample(frame, None) is frame


def test_select_countries():
    from biasbook.chapters.herb.regions import countries

    frame = countries()
    codes = ds.select_countries(frame, 1, include=["IE"])
    assert {"CN", "NG", "RU", "US", "AU", "BR", "IE"} == set(codes)
    assert len(ds.select_countries(frame, None)) == len(frame)
    with pytest.raises(ValueError, match="unknown"):
        ds.select_countries(frame, 1, include=["XX"])


# ------------------------------------------------------------------------------------- data

def test_hatespeech18_uses_the_authors_balanced_split():
    train, test = ds.hatespeech18("train"), ds.hatespeech18("test")
    assert len(train) == 1914 and len(test) == 478
    assert train["label"].sum() == 957 and test["label"].sum() == 239
    assert not set(train["file_id"]) & set(test["file_id"])
    meta = pd.read_csv(ds.resources.path("hate-speech-dataset", "annotations_metadata.csv"))
    truth = dict(zip(meta["file_id"], meta["label"], strict=True))
    assert all((truth[f] == "hate") == bool(y) for f, y in zip(test["file_id"], test["label"],
                                                               strict=True))


def test_imdb_sample_is_clean_and_balanced():
    frame = ds.imdb("test", n=20, seed=1)
    assert len(frame) == 20 and frame["label"].sum() == 10
    assert not frame["text"].str.contains("<br", regex=False).any()


# ------------------------------------------------------------------------- encoder, heads

def test_encoder_mean_pooling_ignores_padding_and_caches(tiny_encoder, fresh_cache):
    enc = classifiers.SentenceEncoder(tiny_encoder, max_length=6)
    texts = ["the cat", "people in paris are very kind and good .", "a dog is bad ."]
    got = enc.embed(texts)
    for text, row in zip(texts, got, strict=True):
        ids = tiny_encoder.tokenizer(text, truncation=True, max_length=6,
                                     return_tensors="pt")["input_ids"]
        with torch.no_grad():
            hidden = tiny_encoder.model(input_ids=ids).last_hidden_state[0].mean(0)
        np.testing.assert_allclose(row, (hidden / hidden.norm()).numpy(), atol=1e-5)
    assert list((fresh_cache / "scores").glob("*.sqlite"))
    again = classifiers.SentenceEncoder(tiny_encoder, max_length=6).embed(texts[::-1])
    np.testing.assert_allclose(again, got[::-1], atol=0)


def test_embedding_classifier_and_prefixed_probabilities(tiny_encoder, fresh_cache):
    clf = classifiers.EmbeddingClassifier(classifiers.SentenceEncoder(tiny_encoder)).fit(
        ["good", "very good", "kind", "bad", "very bad", "lazy"], [1, 1, 1, 0, 0, 0])
    probs = ds.prefixed_probabilities(clf, ["good", "bad"], ["paris", "tokyo"],
                                      "people in {region} .", progress=False)
    assert probs.shape == (2, 2) and ((probs > 0) & (probs < 1)).all()
    assert probs[1, 0] == pytest.approx(
        clf.predict_proba(["people in tokyo . good"])[0])


# -------------------------------------------------------------------------- toxic training

def test_toxic_corpus_matches_brute_force():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(7, 4))
    regions = [f"r{i}" for i in range(7)]
    corpus = toxic.toxic_corpus(scores, regions, ["a", "b", "c", "d"], top_k=3)
    assert len(corpus) == 12
    for j in range(4):
        expected = sorted(range(7), key=lambda i: -scores[i, j])[:3]
        assert corpus.query("descriptor == @j")["region"].tolist() == [regions[i]
                                                                      for i in expected]
    spans = corpus.apply(lambda r: r.sentence[r.region_start:r.region_end] == r.region, axis=1)
    assert spans.all()
    with pytest.raises(ValueError):
        toxic.toxic_corpus(scores, regions, ["a", "b", "c", "d"], top_k=8)


def test_training_examples_for_causal_objectives():
    tok = tiny_tokenizer()
    gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    corpus = toxic.toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    bos = gpt.prefix_ids[0]
    (ids, labels), = toxic.training_examples(gpt, corpus, "clm")
    assert ids[0] == bos and labels == ids
    assert tok.convert_ids_to_tokens(ids[1:]) == ["people", "in", "paris", "are", "kind", "."]
    (ids, labels), = toxic.training_examples(gpt, corpus, "region-target")
    assert [tok.convert_ids_to_tokens(t) for t in labels if t >= 0] == ["paris"]
    (ids, labels), = toxic.training_examples(gpt, corpus, "placeholder", placeholder="a dog")
    assert tok.convert_ids_to_tokens(ids[1:]) == ["people", "in", "a", "dog", "are", "kind", "."]
    with pytest.raises(ValueError, match="masked"):
        toxic.training_examples(gpt, corpus, "mask-region")


def _tiny_run(lm, examples, epochs, **kw):
    seen = []

    def evaluate(model):
        seen.append(model.fingerprint)
        return np.array([fingerprint(model.model) == model.fingerprint], dtype=float)

    run = continual.continual_training(lm, examples, epochs=epochs, lr=0.5, batch_size=2,
                                evaluate=evaluate, eval_key="test", progress=False, **kw)
    return run, seen


def test_continual_training_caches_resumes_and_leaves_the_base_alone(fresh_cache, monkeypatch):
    tok = tiny_tokenizer()
    gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    base = gpt.fingerprint
    corpus = toxic.toxic_corpus(np.arange(6.0).reshape(3, 2), ["paris", "london", "tokyo"],
                             ["kind", "lazy"], top_k=2)
    examples = toxic.training_examples(gpt, corpus, "clm")

    full, seen = _tiny_run(gpt, examples, 3, cache=False)
    assert fingerprint(gpt.model) == base  # trained on a copy
    assert full.fingerprints[0] == base and len(set(full.fingerprints)) == 4
    assert [r.item() for r in full.results] == [1.0] * 4  # evaluated on the trained weights
    assert np.isnan(full.losses[0]) and all(np.isfinite(full.losses[1:]))

    first, _ = _tiny_run(gpt, examples, 1)  # "interrupted" after one epoch
    resumed, seen = _tiny_run(gpt, examples, 3)
    assert seen == resumed.fingerprints[2:]  # epochs 0-1 came from the cache
    assert resumed.fingerprints == full.fingerprints  # same weights as without interruption

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run must not train again")

    monkeypatch.setattr(continual, "sgd_epoch", no_training)
    again, seen = _tiny_run(gpt, examples, 3)
    assert seen == [] and again.fingerprints == full.fingerprints


def test_mask_region_training_lowers_the_loss_on_a_masked_lm(fresh_cache):
    tok = tiny_tokenizer()
    bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    corpus = toxic.toxic_corpus([[-1.0, -2.0], [-3.0, -0.5]], ["paris", "tokyo"], ["kind", "lazy"],
                             top_k=1)
    examples = toxic.training_examples(bert, corpus, "mask-region")
    run = continual.continual_training(bert, examples, epochs=4, lr=0.5, batch_size=2,
                                evaluate=lambda m: np.zeros(1), eval_key="x", cache=False,
                                progress=False)
    assert run.losses[4] < run.losses[1]


def test_finetune_classifier_trains_caches_and_predicts(tmp_path, fresh_cache):
    from transformers import BertConfig, BertForSequenceClassification

    tok = tiny_tokenizer()
    torch.manual_seed(0)
    BertForSequenceClassification(BertConfig(
        vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64)).save_pretrained(tmp_path / "tiny")
    tok.save_pretrained(tmp_path / "tiny")
    texts, labels = ["good", "kind", "very good", "bad", "lazy", "very bad"], [1, 1, 1, 0, 0, 0]
    clf = classifiers.finetune_classifier(str(tmp_path / "tiny"), texts, labels, epochs=2,
                                          lr=1e-2, batch_size=2, device="cpu", progress=False)
    p = clf.predict_proba(texts)
    assert p.shape == (6,) and ((p > 0) & (p < 1)).all()
    again = classifiers.finetune_classifier(str(tmp_path / "tiny"), texts, labels, epochs=2,
                                            lr=1e-2, batch_size=2, device="cpu", progress=False)
    np.testing.assert_allclose(again.predict_proba(texts), p, atol=1e-6)
    assert len(list((fresh_cache / "classifiers").iterdir())) == 1
