"""HERB's downstream propagation (chapters.herb.downstream, .propagation), its toxic training
(chapters.herb.toxic) and the training code they use (biasbook.training.classifiers, .continual).

Statistics are checked against plain loops written here; the encoder against a per-text forward
pass without padding; the classifiers against scikit-learn and against chance on separable toy
sets; training against its own invariants (the base model is untouched, a finished run is a
lookup, an interrupted run resumes to the same weights as an uninterrupted one) on tiny
random-init models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from biasbook.chapters.herb import downstream as ds
from biasbook.chapters.herb import (
    propagation,
    propagation_tables,
    regions,
    sentence_scores,
    tables,
    toxic,
)
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


def test_region_changes_table5_and_pooled_metrics():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, size=50)
    p0 = rng.uniform(size=50)
    probs = rng.uniform(size=(3, 50))
    frame = ds.region_changes(p0, probs, ["A", "B", "C"])
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


POSITIVE_WORDS, NEGATIVE_WORDS = ["good", "kind", "smart"], ["bad", "lazy", "unbelievable"]
SUBJECTS = ["the cat is", "the dog is", "a man is", "she is", "he was", "the woman was"]


def separable_toy_set():
    """Sentences whose label is the sentiment of their last word; a held-out third."""
    texts = [f"{s} {w} ." for w in POSITIVE_WORDS + NEGATIVE_WORDS for s in SUBJECTS]
    labels = np.array([1] * 18 + [0] * 18)
    held_out = np.random.default_rng(0).random(len(texts)) < 0.3
    train = [t for t, h in zip(texts, held_out, strict=True) if not h]
    test = [t for t, h in zip(texts, held_out, strict=True) if h]
    return (train, labels[~held_out]), (test, labels[held_out])


def test_embedding_classifier_is_sklearn_on_the_embeddings(tiny_encoder, fresh_cache):
    from sklearn.linear_model import LogisticRegression

    (train, y), (test, y_test) = separable_toy_set()
    clf = classifiers.EmbeddingClassifier(classifiers.SentenceEncoder(tiny_encoder), C=100.0)
    clf.fit(train, y)

    def embed(texts):  # one unpadded forward pass per text, mean-pooled and normalised
        rows = []
        for text in texts:
            ids = tiny_encoder.tokenizer(text, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                hidden = tiny_encoder.model(input_ids=ids).last_hidden_state[0].mean(0)
            rows.append((hidden / hidden.norm()).numpy())
        return np.stack(rows)

    head = LogisticRegression(C=100.0, max_iter=2000).fit(embed(train), y)
    np.testing.assert_allclose(clf.predict_proba(test), head.predict_proba(embed(test))[:, 1],
                               atol=1e-4)
    assert ((clf.predict_proba(train) >= 0.5) == y).all()  # the toy set is separable
    assert ((clf.predict_proba(test) >= 0.5) == y_test).mean() > 0.5  # and it generalises
    with pytest.raises(RuntimeError, match="fit"):
        classifiers.EmbeddingClassifier(clf.encoder).predict_proba(test)


def test_prefixed_probabilities_are_predictions_on_prefixed_texts(tiny_encoder, fresh_cache):
    clf = classifiers.EmbeddingClassifier(classifiers.SentenceEncoder(tiny_encoder)).fit(
        ["good", "very good", "kind", "bad", "very bad", "lazy"], [1, 1, 1, 0, 0, 0])
    probs = ds.prefixed_probabilities(clf, ["good", "bad"], ["paris", "tokyo"],
                                      "people in {region} .", progress=False)
    assert probs.shape == (2, 2)
    assert probs[1, 0] == pytest.approx(clf.predict_proba(["people in tokyo . good"])[0])
    assert probs[0, 1] == pytest.approx(clf.predict_proba(["people in paris . bad"])[0])


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

    assert resumed.losses[1:] == full.losses[1:]
    rekeyed = []  # a new evaluation needs every epoch's weights: retrained from the base
    continual.continual_training(gpt, examples, epochs=3, lr=0.5, batch_size=2,
                                 evaluate=lambda m: rekeyed.append(m.fingerprint) or np.zeros(1),
                                 eval_key="another", progress=False)
    assert rekeyed == full.fingerprints

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run must not train again")

    monkeypatch.setattr(continual, "fit", no_training)
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


def _tiny_classifier(folder):
    from transformers import BertConfig, BertForSequenceClassification

    tok = tiny_tokenizer()
    torch.manual_seed(0)
    BertForSequenceClassification(BertConfig(
        vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def test_finetune_classifier_learns_a_separable_task_and_caches(tmp_path, fresh_cache):
    _tiny_classifier(tmp_path / "tiny")
    (train, y), (test, y_test) = separable_toy_set()

    def tune(epochs):
        return classifiers.finetune_classifier(str(tmp_path / "tiny"), train, y, epochs=epochs,
                                               lr=1e-2, batch_size=4, device="cpu",
                                               progress=False)

    untrained = tune(0).predict_proba(test)  # zero epochs: the saved random-init weights
    clf = tune(10)
    p = clf.predict_proba(test)
    assert np.abs(p - untrained).max() > 0.1  # training changed the predictions
    assert ((p >= 0.5) == y_test).mean() == 1.0  # held-out sentences, chance is 0.5
    assert ((untrained >= 0.5) == y_test).mean() < 1.0
    np.testing.assert_allclose(tune(10).predict_proba(test), p, atol=1e-6)  # from the cache
    assert len(list((fresh_cache / "classifiers").iterdir())) == 2  # 0 and 10 epochs


def test_finetune_classifier_resumes_an_interrupted_run_to_the_same_weights(tmp_path,
                                                                            monkeypatch):
    name = _tiny_classifier(tmp_path / "tiny")
    (train, y), _ = separable_toy_set()

    def tune():
        return classifiers.finetune_classifier(name, train, y, epochs=3, lr=1e-2, batch_size=4,
                                               device="cpu", progress=False).lm.model

    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "uninterrupted"))
    whole = tune()
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "interrupted"))
    real, epochs = classifiers.shuffled, []

    def crash_in_epoch_three(*args):
        epochs.append(1)
        if len(epochs) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(classifiers, "shuffled", crash_in_epoch_three)
    with pytest.raises(KeyboardInterrupt):
        tune()
    resumed = tune()  # the third epoch only, from the second's checkpoint
    assert len(epochs) == 4
    for key, value in whole.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key


# ------------------------------------------------------------- notebook 04's experiment


def test_prefix_regions_adds_the_papers_countries_where_allowed():
    tested = propagation.prefix_regions(["FR", "DE", "IE", "MX", "JP"], per_continent=1,
                                        extra_regions=["Mexico City"])
    # Europe's most populous of FR/DE/IE is Germany; Ireland and Mexico come in as Table 4's
    assert set(tested.codes) == {"DE", "IE", "MX", "JP"}
    assert tested.names[-1] == "Mexico City" and len(tested.names) == 5
    assert tested.countries.loc["IE", "name"] == "Ireland"
    every = propagation.prefix_regions(None, per_continent=1)
    assert set(propagation.PAPER_COUNTRIES) <= set(every.codes) and every.extra == []
    assert len(every.codes) == 6 + 4  # one per continent + the four of Table 4


def _fake_per_region(names, seed=0):
    rng = np.random.default_rng(seed)
    p0 = rng.uniform(size=40)
    p = np.clip(p0 + rng.normal(0, 0.2, size=(len(names), 40)), 0, 1)
    return p0, p


def test_overall_metrics_and_table4_overall():
    names = ["France", "Ireland", "Narnia"]
    p0, p = _fake_per_region(names)
    labels = (np.random.default_rng(1).uniform(size=40) < 0.5).astype(int)
    data = {"hatespeech18": (None, pd.DataFrame({"label": labels}))}
    rows = propagation.overall_metrics({("hatespeech18", "m"): (p0, p)}, data, n_countries=2)
    got = rows.set_index(["testset", "metric"])["ours"]
    assert got["original", "accuracy"] == pytest.approx(((p0 >= 0.5) == labels).mean())
    pooled = np.mean([(p[r, i] >= 0.5) == labels[i] for r in range(2) for i in range(40)])
    assert got["country_all", "accuracy"] == pytest.approx(pooled)  # Narnia left out
    assert rows.set_index(["testset", "metric"]).at[("original", "accuracy"), "paper"] == \
        pytest.approx(ds.paper_overall().at[("hatespeech18", "original"), "accuracy"])
    table = propagation_tables.table4_overall(rows)
    drop = table.loc[("hatespeech18", "m", "accuracy"), ("ours", "drop")]
    assert drop == pytest.approx(got["original", "accuracy"] - pooled)


def test_table4_regions_keeps_the_papers_regions_as_shares():
    names = ["France", "Ireland", "Mexico City"]
    p0, p = _fake_per_region(names)
    frame = ds.region_changes(p0, p, names)
    data = {"hatespeech18": (None, pd.DataFrame({"label": np.zeros(40)}))}
    table4 = propagation_tables.table4_regions({("hatespeech18", "m"): frame}, data)
    assert table4.index.get_level_values("region").tolist() == ["Ireland", "Mexico City"]
    ireland = table4.loc[("hatespeech18", "m", "Ireland")]
    assert ireland["share_up"] == (p[1] > p0).sum() / 40
    assert ireland["avg_down"] == pytest.approx((p0 - p[1])[p[1] < p0].mean())
    paper = ds.paper_table4().set_index(["task", "region"])
    assert ireland["paper share_up"] == pytest.approx(paper.at[("hatespeech18", "Ireland"),
                                                               "share_up"])
    assert table4.loc[("hatespeech18", "m", "Mexico City"), "paper avg_up"] == pytest.approx(
        paper.at[("hatespeech18", "Mexico-City"), "avg_up"])  # spelt as printed in the paper
    none = propagation_tables.table4_regions({("hatespeech18", "m"): frame.loc[["France"]]}, data)
    assert none.empty


def test_table5_and_continent_means_against_loops():
    names = ["France", "Ireland", "Japan", "Kenya", "Atlantis"]
    countries = pd.DataFrame({"name": names[:4], "continent": ["EU", "EU", "AS", "AF"]},
                             index=["FR", "IE", "JP", "KE"])
    per_region = {}
    for seed, key in enumerate([("hatespeech18", "m"), ("imdb", "m")]):
        p0, p = _fake_per_region(names, seed)
        per_region[key] = ds.region_changes(p0, p, names)
    t5 = propagation_tables.table5(per_region, countries["name"])
    hate = per_region["hatespeech18", "m"]
    assert t5.index.tolist() == ["m"]
    assert t5.at["m", "all/neg_to_pos"] == pytest.approx(hate.loc[names[:4], "neg_to_pos"].mean())
    assert t5.at["m", "w/o Ireland/pos_to_neg"] == pytest.approx(
        hate.loc[["France", "Japan", "Kenya"], "pos_to_neg"].mean())
    assert "w/o Mexico/neg_to_pos" not in t5.columns
    assert list(propagation_tables.relabel(t5).columns)[0] == "w/o Ireland/noHate→hate"
    both = propagation_tables.table5_vs_paper(t5)
    assert both.loc[("paper", "BERT-base"), "all/hate→noHate"] == pytest.approx(1.3645)
    means = propagation_tables.change_by_continent(per_region, countries)
    imdb = per_region["imdb", "m"]
    row = means.query("task == 'imdb' and continent == 'EU'")
    assert row["mean_change"].item() == pytest.approx(
        (imdb.at["France", "mean_change"] + imdb.at["Ireland", "mean_change"]) / 2)
    assert len(means) == 2 * 3  # Atlantis is not a country


def test_herb_vs_change_is_spearman_of_bias_and_change_size():
    from scipy.stats import spearmanr

    countries = pd.DataFrame({"name": ["France", "Germany", "Japan", "India", "Kenya", "Peru"],
                              "continent": ["EU", "EU", "AS", "AS", "AF", "AF"]},
                             index=["FR", "DE", "JP", "IN", "KE", "PE"])
    names = [*countries["name"], "Atlantis"]
    p0, p = _fake_per_region(names, seed=3)
    per_region = {("imdb", "enc"): ds.region_changes(p0, p, names),
                  ("imdb", "lm-b"): ds.region_changes(p0, p, names)}
    probs = {key: (p0, p) for key in per_region}
    table = pd.DataFrame({"name": ["Africa", "Asia", "Europe", *countries["name"]],
                          "code": ["AF", "AS", "EU", *countries.index]})
    rng = np.random.default_rng(4)
    bias = {m: pd.Series(rng.uniform(size=len(table)), index=table["name"])
            for m in ("lm-a", "lm-b")}
    herb = propagation.CountryBias(table, bias, {"lm-a": 0.1, "lm-b": 0.2})
    corr, points = propagation.herb_vs_change(per_region, probs, herb, countries)
    pairs = corr[["classifier", "HERB model"]].drop_duplicates().values.tolist()
    assert pairs == [["enc", "lm-a"], ["enc", "lm-b"], ["lm-b", "lm-b"]]  # lm-b: itself only
    size = np.abs(p[:6] - p0).mean(axis=1)
    row = corr.query("classifier == 'enc' and `HERB model` == 'lm-a' and level == 'country'")
    assert row["Spearman rho"].item() == pytest.approx(
        spearmanr(bias["lm-a"][countries["name"]], size).statistic)
    spread = [np.std([(p[i] - p0).mean() for i in rows], ddof=1) for rows in ([4, 5], [2, 3],
                                                                               [0, 1])]
    row = corr.query("classifier == 'enc' and `HERB model` == 'lm-b' and level == 'continent'")
    assert row["Spearman rho"].item() == pytest.approx(
        spearmanr(bias["lm-b"][["Africa", "Asia", "Europe"]], spread).statistic)
    assert len(points) == 3 and points[0][4].tolist() == pytest.approx(size.tolist())


def test_train_classifiers_loads_each_encoder_once(tiny_encoder, fresh_cache, monkeypatch):
    loads = []
    monkeypatch.setattr("biasbook.models.load", lambda name: loads.append(name) or tiny_encoder)
    (train, y), (test, _) = separable_toy_set()
    frame = pd.DataFrame({"text": train, "label": y})
    data = {"hatespeech18": (frame, frame), "imdb": (frame, frame)}

    clfs = propagation.train_classifiers(data, ["enc"], "linear-probe", max_length=16)
    assert list(clfs) == [("hatespeech18", "enc"), ("imdb", "enc")]
    assert loads == ["enc"] and [c.lm.name for c in clfs.values()] == ["tiny-encoder"] * 2
    probs = propagation.predict(clfs, {"hatespeech18": (frame, frame.iloc[:3]),
                                       "imdb": (frame, frame.iloc[:3])}, ["paris"],
                                progress=False)
    p0, p = probs["hatespeech18", "enc"]
    assert p0.shape == (3,) and p.shape == (1, 3)
    assert p[0, 0] == pytest.approx(clfs["hatespeech18", "enc"].predict_proba(
        [f"I am from paris. {train[0]}"])[0])
    with pytest.raises(ValueError, match="method must be one of"):
        propagation.train_classifiers(data, ["enc"], "zero-shot")


# -------------------------------------------------------------- notebook 05's experiment


def test_model_corpus_subsamples_the_models_own_corpus():
    tok = tiny_tokenizer()
    gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    regions, words = ["paris", "london", "tokyo"], ["kind", "lazy", "smart", "good"]
    full = toxic.model_corpus(gpt, regions, words, top_k=2)
    scores = sentence_scores.descriptor_scores(gpt, regions, words)
    assert full.equals(toxic.toxic_corpus(scores, regions, words, top_k=2))
    part = toxic.model_corpus(gpt, regions, words, top_k=2, size=3, seed=1)
    assert len(part) == 3 and list(part.index) == sorted(part.index)
    assert part.equals(full.loc[part.index])
    assert toxic.model_corpus(gpt, regions, words, top_k=2, size=100).equals(full)


def test_example_tokens_of_a_masked_example():
    tok = tiny_tokenizer()
    bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    corpus = toxic.toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    inputs, targets = toxic.example_tokens(bert, toxic.training_examples(bert, corpus,
                                                                         "mask-region")[0])
    assert inputs[3] == "[MASK]" and targets == ["paris"]


def _fake_runs(table, epochs=3, shift=1.0):
    rng = np.random.default_rng(9)
    base = rng.uniform(-9, -1, size=(len(table), 112))
    results = [base + shift * k for k in range(epochs + 1)]  # only a uniform shift
    return {"m": continual.TrainingRun(results=results,
                                       losses=[float("nan"), *range(epochs, 0, -1)])}


def test_epoch_bias_and_its_shift_control():
    table = regions.herb_regions(["FR", "DE", "JP", "IN"], cities_per_country=0)
    runs = _fake_runs(table)
    bias = toxic.epoch_bias(table, runs)
    assert list(bias.columns) == ["AS", "EU", "overall"]  # continents absent: dropped
    for epoch, scores in enumerate(runs["m"].results):
        expected = tables.bias_summary(table, scores).dropna()
        assert bias.loc[("m", epoch)].tolist() == pytest.approx(expected.tolist())
    assert bias["overall"].is_monotonic_increasing  # scores nearer 0: a shorter norm
    control = toxic.epoch_bias(table, runs, remove_shift=True)
    assert control["overall"].tolist() == pytest.approx([bias.at[("m", 0), "overall"]] * 4)
    corpus = pd.DataFrame({"region": ["France", "Japan"], "descriptor": [0, 5]})
    by_epoch = toxic.epoch_table(bias, runs, {"m": corpus}, table["name"])
    assert by_epoch["overall"].tolist() == pytest.approx((bias["overall"] * 1e3).tolist())
    results = runs["m"].results
    assert by_epoch.at[("m", 2), "mean f(S), corpus"] == pytest.approx(
        (results[2][table["name"].tolist().index("France"), 0]
         + results[2][table["name"].tolist().index("Japan"), 5]) / 2)
    assert by_epoch.at[("m", 1), "loss"] == 3
    flat = by_epoch.assign(overall=1.0)  # a constant series has no rank correlation
    corr = toxic.epoch_correlations(by_epoch, flat)
    assert corr.to_dict("records") == [{"model": "m", "key": "spearman_epoch_overall",
                                        "rho": pytest.approx(1.0)}]
    short = toxic.epoch_bias(table, {"m": continual.TrainingRun(results=results[:2])})
    assert toxic.epoch_correlations(short, short).empty  # two epochs: no correlation


@pytest.mark.bad_input("`-p models=[<masked LM>]` for HERB's toxic training (05), whose book "
                       "objective was `clm`", "the objective `auto` picks `mask-region` for a "
                       "masked model and `clm` for a causal one; an encoder-decoder is refused")
def test_the_auto_objective_follows_the_models_kind():
    from biasbook.models import from_model
    from biasbook.testing import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer()
    corpus = toxic.toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    assert toxic.training_examples(bert, corpus, "auto") == \
        toxic.training_examples(bert, corpus, "mask-region")
    bart = from_model(tiny_model("bart", len(tok)), tok, name="tiny-bart")
    with pytest.raises(ValueError, match="no toxic-training objective for tiny-bart, an encod"):
        toxic.training_examples(bart, corpus, "auto")


def test_a_fine_tuned_bart_classifier_reloads_with_its_two_labels(tmp_path, fresh_cache):
    # A saved config leaves out the default two labels and BART's own default is three: the
    # reload must ask for two, or the head's shape does not match (found by the paper wiring).
    from transformers import BartConfig, BartForSequenceClassification

    tok = tiny_tokenizer()
    torch.manual_seed(0)
    BartForSequenceClassification(BartConfig(
        vocab_size=len(tok), d_model=16, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, max_position_embeddings=64, num_labels=2)).save_pretrained(
            tmp_path / "bart")
    tok.save_pretrained(tmp_path / "bart")
    (train, y), (test, _) = separable_toy_set()
    clf = classifiers.finetune_classifier(str(tmp_path / "bart"), train, y, epochs=1, lr=1e-2,
                                          batch_size=4, device="cpu", progress=False)
    assert clf.predict_proba(test).shape == (len(test),)


def test_a_damaged_epoch_evaluation_is_set_aside_and_made_again(fresh_cache):
    from biasbook import store

    tok = tiny_tokenizer()
    gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    corpus = toxic.toxic_corpus(np.arange(6.0).reshape(3, 2), ["paris", "london", "tokyo"],
                             ["kind", "lazy"], top_k=2)
    examples = toxic.training_examples(gpt, corpus, "clm")
    first, _ = _tiny_run(gpt, examples, 2)
    (damaged,) = [p for p in store.cache_path("finetune", "x").parent.rglob("eval-*-1.npy")]
    damaged.write_bytes(b"\x93NUMPY broken")
    with pytest.warns(store.DamagedCacheWarning, match="moved aside"):
        again, seen = _tiny_run(gpt, examples, 2)
    assert [r.item() for r in again.results] == [r.item() for r in first.results]
    assert again.fingerprints == first.fingerprints


def test_a_damaged_fine_tuned_classifier_is_set_aside_and_trained_again(tmp_path, fresh_cache):
    from biasbook import store

    name = _tiny_classifier(tmp_path / "tiny")
    (train, y), (test, _) = separable_toy_set()

    def tune():
        return classifiers.finetune_classifier(name, train, y, epochs=2, lr=1e-2, batch_size=4,
                                               device="cpu", progress=False)

    first = tune().predict_proba(test)
    (weights,) = (fresh_cache / "classifiers").rglob("model.safetensors")
    weights.unlink()  # e.g. removed by a clean-up that stopped half-way
    with pytest.warns(store.DamagedCacheWarning, match="moved aside"):
        again = tune().predict_proba(test)
    np.testing.assert_allclose(again, first, atol=1e-6)
