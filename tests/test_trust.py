"""The trust page's library (biasbook.chapters.trust): record summaries with known answers,
Kendall's tau against hand-worked examples, the log-probability probe against brute force."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from biasbook import results
from biasbook.chapters.trust import agreement, measure, model_metrics, probe, variants
from biasbook.chapters.trust import records as R
from biasbook.models import from_model
from biasbook.testing import tiny_model, tiny_tokenizer
from biasbook.text.corpora import tokenize

CI = {"ci_level": 0.95, "ci_method": "percentile"}


def ci(low, high, unit, n):
    return {**CI, "ci_low": low, "ci_high": high, "ci_unit": unit, "ci_units": n}


@pytest.fixture
def runs(tmp_path):
    """A book build's records (runs/default) and one smoke record that must be left out."""
    herb = results.Recorder("herb", "02-hierarchical-bias", {"profile": "book"},
                            run_dir=tmp_path / "default")
    herb.metric("overall_C_w", 2.0, model="a", ci=ci(1.8, 2.2, "descriptors", 112))  # 0.2
    herb.metric("overall_C_w", 1.0, model="b", ci=ci(0.6, 1.0, "descriptors", 112))  # 0.4
    herb.metric("overall_C_w", 4.0, model="c", ci=ci(3.0, 6.4, "descriptors", 112))  # 0.85
    herb.metric("overall_C_w_difference", 1.0, model="a", versus="b",
                ci=ci(0.5, 1.5, "descriptors", 112))
    herb.metric("overall_C_w_difference_p_holm", 0.01, model="a", versus="b")  # holds
    herb.metric("overall_C_w_difference", -2.0, model="a", versus="c",
                ci=ci(-4.0, 0.5, "descriptors", 112))
    herb.metric("overall_C_w_difference_p_holm", 0.02, model="a", versus="c")  # 0 inside
    herb.metric("overall_C_w_difference_p_holm", 0.30, model="b", versus="c")  # p too big
    herb.metric("table6_C_w", 2.0, model="a", condition="full", region="overall")
    herb.metric("table6_C_w", 3.0, model="a", condition="replace occupation", region="overall")
    herb.metric("table6_C_w", 1.0, model="b", condition="full", region="overall")
    herb.metric("table6_C_w", 0.5, model="b", condition="replace occupation", region="overall")
    eb = results.Recorder("ethnic-bias", "02-cb-across-languages", {"profile": "book"},
                          run_dir=tmp_path / "default")
    eb.metric("cb", 0.5, model="a", language="en", group="monolingual",
              ci=ci(0.25, 0.75, "cells", 30))  # 1.0
    eb.metric("cb", 0.0, model="b", language="en", group="multilingual",
              ci=ci(-0.1, 0.1, "cells", 30))  # value 0: no relative width
    eb.metric("cb_difference_p_holm", 0.001, model="a", versus="b", language="en")
    eb.metric("cb_difference_holds", 0.0, model="a", versus="b", language="en")  # overrules p
    smoke = results.Recorder("lm-gender-bias", "01-corpus-bias", {"profile": "smoke"},
                             run_dir=tmp_path / "default")
    smoke.metric("mu", 1.0, corpus="ptb", ci=ci(0.0, 2.0, "words", 40))
    return tmp_path


def test_book_records_read_the_profile_and_name_the_missing_chapters(runs):
    rec = R.book_records("default", "book", runs_dir=runs)
    assert set(rec["chapter"]) == {"herb", "ethnic-bias"}
    assert R.missing_chapters(rec, ["herb", "ethnic-bias", "lm-gender-bias"]) == \
        ["lm-gender-bias"]
    assert R.book_records("nothing-here", runs_dir=runs).empty


def test_interval_summary_has_the_units_and_widths_of_hand_built_records(runs):
    table = R.interval_summary(R.book_records(runs_dir=runs)).set_index("metric")
    assert list(table.index) == ["cb", "overall_C_w"]  # differences are not metrics here
    herb = table.loc["overall_C_w"]
    assert (herb["unit"], herb["units"], herb["numbers"]) == ("descriptors", "112", 3)
    assert herb["median relative width"] == pytest.approx(0.4)
    assert (herb["smallest"], herb["largest"]) == (pytest.approx(0.2), pytest.approx(0.85))
    cb = table.loc["cb"]
    assert cb["numbers"] == 2 and cb["median relative width"] == pytest.approx(1.0)


def test_differences_hold_only_where_the_test_and_the_interval_agree(runs):
    diffs = R.differences(R.book_records(runs_dir=runs))
    herb = diffs[diffs["chapter"] == "herb"].set_index("pair")
    assert herb["holds"].to_dict() == {"a vs b": True, "a vs c": False, "b vs c": False}
    assert "interval includes 0" in herb.loc["a vs c", "why"]
    assert herb.loc["a vs b", "difference"] == 1.0 and herb.loc["a vs b", "ci_low"] == 0.5
    cb = diffs[diffs["chapter"] == "ethnic-bias"].iloc[0]
    assert (cb["pair"], cb["setting"], cb["holds"]) == ("a vs b", "language=en", False)
    assert cb["why"] == "the chapter's recorded verdict"
    summary = R.difference_summary(diffs).set_index("chapter")
    assert summary.loc["herb", ["tested", "held"]].tolist() == [3, 1]
    assert summary.loc["herb", "which held"] == "a vs b: +1 [0.5, 1.5], Holm p 0.01"
    assert summary.loc["herb", "which did not"].startswith("a vs c: -2 [-4, 0.5], Holm p 0.02")
    assert summary.loc["ethnic-bias", "which held"] == "none"


def test_the_lambda_tests_of_lm_gender_bias_are_read_as_pairs(tmp_path):
    # issue 24: notebook 02 records each λ test as the pair (λ, λ = 0) of one corpus, with the
    # difference and its interval, so that the page reads it like every other recorded test
    from biasbook.chapters.lm_gender_bias import uncertainty

    changes = {0.0: [0.0, 0.0, 0.0], 0.01: [-0.10, -0.11, -0.12], 1.0: [0.1, -0.1, 0.05]}
    per_seed = pd.DataFrame([{"corpus": "ptb", "lam": lam, "seed": s, "delta mu": d}
                             for lam, values in changes.items() for s, d in enumerate(values)])
    effects = uncertainty.lambda_effects(per_seed)
    rec = results.Recorder("lm-gender-bias", "02-lambda-sweep", {"profile": "book"},
                           run_dir=tmp_path / "default")
    pair = uncertainty.EFFECT_LABELS  # as the notebook records them
    rec.metrics("lambda_effect", effects, value="value", labels=pair, ci=True)
    rec.metrics("lambda_effect_p_holm", effects, value="p_holm", labels=pair)
    diffs = R.differences(R.book_records(runs_dir=tmp_path)).set_index("pair")
    assert list(diffs.index) == ["lam=0.01 vs lam=0", "lam=1 vs lam=0"]
    assert set(diffs["test"]) == {"lambda_effect"} and set(diffs["setting"]) == {"corpus=ptb"}
    ours = diffs[["difference", "ci_low", "ci_high", "p_holm"]].to_numpy(dtype=float)
    theirs = effects[["value", "ci_low", "ci_high", "p_holm"]].to_numpy(dtype=float)
    np.testing.assert_allclose(ours, theirs)
    assert diffs["holds"].tolist() == effects["holds"].tolist() == [True, False]


def test_sensitivity_reports_the_relative_change_and_the_models_order(runs):
    rec = R.book_records(runs_dir=runs)
    assert R.variations(rec) == [R.Variation("herb", "table6_C_w", "condition", "full")]
    table = R.sensitivity_table(rec, R.variations(rec)[0]).set_index("model")
    assert table["relative change"].to_dict() == {"a": 0.5, "b": -0.5}
    assert R.order_kept(rec, R.variations(rec)[0]) == (1, 1)  # a > b under both lists
    summary = R.sensitivity_summary(rec).iloc[0]
    assert summary["median |relative change|"] == 0.5 and summary["order kept"] == "1 of 1"
    flipped = rec.copy()
    flipped.loc[(flipped["key"] == "table6_C_w") & (flipped["model"] == "b")
                & (flipped["condition"] != "full"), "value"] = 5.0
    assert R.order_kept(flipped, R.variations(flipped)[0]) == (0, 1)


def test_sensitivity_ignores_labels_that_only_restate_the_model():
    rec = pd.DataFrame({"chapter": "c", "notebook": "n", "key": "cb",
                        "model": ["a", "a", "b", "b"], "group": ["mono", "mono", "multi", "multi"],
                        "condition": ["base", "+5", "base", "+5"], "value": [1.0, 2.0, 3.0, 1.5]})
    assert R.order_kept(rec, R.variations(rec)[0]) == (0, 1)


# ---- Kendall's tau ---------------------------------------------------------------------------

def test_kendall_tau_matches_hand_counted_pairs():
    # (1,2,3,4) vs (1,3,2,4): of 6 pairs 5 concordant, 1 discordant
    assert agreement.kendall([1, 2, 3, 4], [1, 3, 2, 4])[0] == pytest.approx(4 / 6)
    assert agreement.kendall([1, 2, 3, 4], [4, 3, 2, 1])[0] == pytest.approx(-1.0)
    # tau-b with one tie in x: 5 concordant, 0 discordant, 6 pairs of which 1 tied in x
    assert agreement.kendall([1, 2, 2, 3], [1, 2, 3, 4])[0] == pytest.approx(5 / math.sqrt(30))
    assert agreement.tau_step(4) == pytest.approx(1 / 3)


def test_kendall_interval_over_models():
    x = np.arange(7.0)
    same = agreement.kendall_interval(x, x * 2, n_resamples=499)
    assert (same.value, same.low, same.high) == pytest.approx((1.0, 1.0, 1.0))
    assert (same.unit, same.n_units) == ("models", 7)
    y = np.array([0.0, 2, 1, 3, 5, 4, 6])
    ci = agreement.kendall_interval(x, y, n_resamples=499)
    assert ci.value == pytest.approx(agreement.kendall(x, y)[0])
    assert -1 <= ci.low <= ci.value <= ci.high <= 1 and ci.low < ci.high


def test_agreement_table_pairs_every_metric():
    values = pd.DataFrame({"m1": [1.0, 2, 3, 4, 5], "m2": [2.0, 4, 6, 8, 10],
                           "m3": [5.0, 4, 3, 2, np.nan]}, index=list("abcde"))
    table = agreement.agreement(values, n_resamples=199).set_index(["a", "b"])
    assert table.loc[("m1", "m2"), "tau"] == pytest.approx(1.0)
    assert table.loc[("m1", "m3"), ["tau", "models"]].tolist() == pytest.approx([-1.0, 4])
    reps = {"m1": np.tile(values["m1"].to_numpy(), (5, 1)),
            "m2": np.tile(values["m2"].to_numpy()[::-1], (5, 1)),
            "m3": np.tile(values["m3"].to_numpy(), (5, 1))}
    with_items = agreement.agreement(values, reps, n_resamples=199).set_index(
        ["a", "b"])
    assert with_items.loc[("m1", "m2"), ["items_low", "items_high"]].tolist() == \
        pytest.approx([-1.0, -1.0])


# ---- the log-probability probe ---------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_gpt():
    tok = tiny_tokenizer()
    return from_model(tiny_model("gpt2", len(tok), seed=3), tok, name="tiny-gpt2")


def brute_sentence_logprob(lm, sentence: str) -> float:
    """log P(sentence) by one forward pass: every token given the BOS prefix and those before."""
    ids = [*lm.prefix_ids, *lm.tokenizer(sentence, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logits = lm.model(torch.tensor([ids])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    return float(sum(logp[t - 1, ids[t]] for t in range(len(lm.prefix_ids), len(ids))))


def test_probe_matches_brute_force_on_a_tiny_model(tiny_gpt, one_torch_thread):
    template = "the {} is very {attribute} ."
    targets, attributes = ["man", "woman", "cat", "dog"], ["good", "kind", "bad", "lazy"]
    logp = probe.association_matrix(tiny_gpt, template, targets, attributes, cache=False)
    brute = np.array([[brute_sentence_logprob(tiny_gpt, f"the {t} is very {a} .")
                       for t in targets] for a in attributes])
    brute -= np.logaddexp.reduce(brute, axis=1, keepdims=True)  # normalised over the targets
    np.testing.assert_allclose(logp, brute, atol=1e-5)
    s = probe.associations(logp, n_a=2)
    by_hand = brute[:2].mean(axis=0) - brute[2:].mean(axis=0)
    np.testing.assert_allclose(s, by_hand, atol=1e-5)
    d = (by_hand[:2].mean() - by_hand[2:].mean()) / np.std(by_hand, ddof=1)
    assert probe.effect_size(s, n_x=2) == pytest.approx(d, rel=1e-3)


def test_probe_effect_interval_and_refusals():
    s = np.array([1.0, 0.8, 1.3, 0.9, -0.2, 0.1, -0.4, 0.0])
    ci = probe.effect_interval(s, n_x=4, n_resamples=499)
    assert ci.value == pytest.approx(probe.effect_size(s, 4))
    assert ci.low < ci.value < ci.high and (ci.unit, ci.n_units) == ("target words", 8)
    with pytest.raises(ValueError, match="0/0"):
        probe.effect_size(np.ones(4), n_x=2)
    with pytest.raises(ValueError, match="one {}"):
        probe.fill_attribute("{} is {}", "kind")


# ---- the metrics of one model ----------------------------------------------------------------

def test_cb_cells_are_the_chapter_s_cb(one_torch_thread):
    from biasbook.chapters.ethnic_bias.pipeline import cb_scores

    tok = tiny_tokenizer(spell=True)
    lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    r = cb_scores(lm, "en", targets=["Iraq", "Japan", "Cuba"], attributes=["Enemy", "Pirate"],
                  templates=[1, 5], cache=False)
    cells = model_metrics.cb_cells({"cb_target": r.log_p_target, "cb_prior": r.log_p_prior})
    np.testing.assert_allclose(cells, r.variances["variance"])
    assert cells.mean() == pytest.approx(r.cb)


def test_text_bias_matches_hand_counted_cooccurrences():
    # "runs" (twice) and "walks" sit within 10 words of both "he"s and the "she":
    # c(runs, m) = 4, c(runs, f) = 2, c(walks, m) = 2, c(walks, f) = 1; c(m) = 2, c(f) = 1.
    # bias(w) = log[(c(w,f) / 3) / (1 / W)] - log[(c(w,m) / 6) / (2 / W)] = log 2 for both.
    spec = measure.Spec(herb_countries=("FR",))
    ours = model_metrics.text_bias([tokenize("He runs, she walks; he runs.")], spec)
    np.testing.assert_allclose(ours, [math.log(2), math.log(2)])
    assert model_metrics.text_bias([tokenize("no gendered word here")], spec).size == 0


def test_generated_text_mu_resamples_situations():
    spec = measure.Spec(herb_countries=("FR",))
    texts = ["he runs home", "she walks home", "he sings loudly", "she sings softly",
             "he reads", "she reads books"]
    groups = model_metrics.situation_docs({"texts": np.asarray(texts)}, spec)
    assert [len(g) for g in groups] == [2, 2, 2] and groups[1][0] == ["he", "sings", "loudly"]
    mu = model_metrics.mu_of(groups, spec)
    everything = np.abs(model_metrics.text_bias([tokenize(t) for t in texts], spec)).mean()
    assert mu(np.arange(3)) == pytest.approx(everything)
    # situation 0 twice: its texts counted twice, which leaves its word ratios unchanged
    assert mu(np.array([0, 0])) == pytest.approx(mu(np.array([0])))
    with pytest.raises(ValueError, match="do not split"):
        model_metrics.situation_docs({"texts": np.asarray(texts[:5])}, spec)


# ---- measuring the models: every epoch of a toxic run, cached ------------------------------

def test_toxic_runs_measure_every_epoch_once(private_cache, one_torch_thread, monkeypatch):
    from biasbook import store
    from biasbook.chapters.herb import data as herb_data
    from biasbook.chapters.herb import regions, toxic
    from biasbook.training import continual

    tok = tiny_tokenizer(spell=True)
    lm = from_model(tiny_model("gpt2", len(tok), positions=64), tok, name="tiny-gpt2")
    spec = measure.Spec(herb_countries=("FR", "JP"), cb_attributes=("Enemy", "Pirate"),
                        prompts=("The doctor", "At the party,"), max_new_tokens=6)
    recipe = {"countries": ["FR", "JP"], "cities_per_country": 0, "top_k": 1,
              "corpus_size": 4, "epochs": 2, "lr": 0.05, "batch_size": 2,
              "max_grad_norm": 1.0, "seed": 0, "objective": "auto"}
    base = measure.measured(lm, spec, progress=False)
    assert base["herb"].shape == (4, 112) and base["cb_target"].shape == (1, 2, 30)
    assert base["probe"].shape == (16, 16) and base["texts"].shape == (2,)
    trained = []
    real = continual.fit

    def counting(*args, **kwargs):
        trained.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(continual, "fit", counting)
    epochs = variants.toxic_runs(lm, recipe, spec, progress=False)
    assert len(epochs) == 2 and len(trained) == 1
    # the run is HERB notebook 05's, with its evaluation: the notebook's own call trains nothing
    names = regions.herb_regions(countries=["FR", "JP"], cities_per_country=0)["name"].tolist()
    words = herb_data.descriptors()["word"].tolist()
    corpus = toxic.model_corpus(lm, names, words, top_k=1, size=4, seed=0)
    run = toxic.train(lm, toxic.training_examples(lm, corpus, "auto"), names, words, epochs=2,
                      lr=0.05, batch_size=2, seed=0, progress=False)
    assert len(trained) == 1 and len(run.results) == 3 and run.results[2].shape == (4, 112)
    assert not np.allclose(epochs[0]["herb"], base["herb"])  # training moved the scores
    again = variants.toxic_runs(lm, recipe, spec, progress=False)  # a lookup: nothing trained
    assert len(trained) == 1
    np.testing.assert_array_equal(again[1]["probe"], epochs[1]["probe"])
    for path in store.cache_path("trust", "x").parent.glob("*.npz"):  # measurements lost
        path.unlink()
    variants.toxic_runs(lm, recipe, spec, progress=False)
    assert len(trained) == 2
    monkeypatch.setattr(variants, "stored", lambda *args: None)  # a cache that keeps nothing
    with pytest.raises(RuntimeError, match=r"tiny-gpt2: .*toxic epoch\(s\) \[1, 2\]"):
        variants.toxic_runs(lm, recipe, spec, progress=False)
    values = model_metrics.model_table([variants.Measured("base", "tiny", "base", base),
                                        variants.Measured("+1", "tiny", "epoch 1", epochs[0])],
                                       spec, n_resamples=99)
    assert set(values["metric"]) == set(model_metrics.METRICS) and len(values) == 8
    herb_value = values.query("model == 'base' and metric == 'HERB C_w'")["value"].item()
    tree, scores = model_metrics.herb_items(base, spec)
    from biasbook.metrics.herb import hierarchical_bias
    assert herb_value == pytest.approx(1000 * hierarchical_bias(tree, scores).overall)
