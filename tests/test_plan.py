"""``biasbook plan``: counts against hand-derived ones, estimates, downloads, caps."""

import math
from pathlib import Path

import pytest

from biasbook import cli, flops, plan, profiles


def resolved(chapter: str, profile: str, **params) -> dict[str, dict]:
    return cli.prepare(chapter, profile, params, loadable=False)[0]


def rows(works, notebook=None, unit=None):
    return [w for w in works if (notebook is None or w.notebook == notebook)
            and (unit is None or w.unit == unit)]


# ------------------------------------------------------------------------------- counting

def test_herb_counts_regions_times_descriptors_once_per_model():
    from biasbook.chapters.herb import data as herb_data
    from biasbook.chapters.herb import plan as herb
    from biasbook.chapters.herb.regions import herb_regions
    from biasbook.chapters.herb.sentence_scores import fill_template

    P = resolved("herb", "book", countries=["FR", "JP"], cities_per_country=1,
                 models=["bert-base-cased", "smollm2-135m"], robustness_models=["smollm2-135m"],
                 interval_resamples=10, top_k=2, epochs=3, batch_size=8,
                 **{"05.countries": ["FR"], "05.cities_per_country": 0})
    assert P["05-toxic-training"]["corpus_size"] is None
    works = herb.work(P)
    # continents EU, AS; countries FR, JP; one city each: 6 regions, 112 descriptors
    first = rows(works, "01")
    assert [w.count for w in first] == [6 * 112, 6, 6 * 112, 6]
    sentences = fill_template(herb_regions(["FR", "JP"], 1)["name"],
                              herb_data.descriptors()["word"])
    assert first[0].tokens == sum(plan.estimate_tokens(s) + 2 for s in sentences)
    assert first[0].engine == "masked" and first[2].engine == "causal"
    # 02 scores only the substitutes anew (01 cached the rest); 10 resamples x (2 models +
    # 2 x 1 pair) evaluations of C_w
    substitutes, boot = rows(works, "02")
    assert (substitutes.model, substitutes.count) == ("smollm2-135m", 6 * 112)
    assert boot.count == 10 * (2 + 2) and boot.engine is None
    # 05: EU and FR, 112 x 2 = 224 toxic sentences, 3 epochs of 224 / 8 steps, each epoch's
    # model scoring 2 x 112 sentences
    steps = rows(works, "05", "training steps")
    assert [w.count for w in steps] == [3 * 28, 3 * 28]
    evaluations = [w for w in rows(works, "05") if "after each" in w.what]
    assert [w.count for w in evaluations] == [3 * 2 * 112] * 2


def test_herb_classifiers_train_and_classify_every_prefix():
    from biasbook.chapters.herb import plan as herb
    from biasbook.chapters.herb import propagation

    P = resolved("herb", "paper", hate_train=32, hate_test=16, imdb_train=40, imdb_test=8,
                 **{"04.countries": ["FR", "KE", "JP"], "per_continent": 1,
                    "extra_regions": ["Puebla, Mexico"], "encoders": ["bert-base-cased"]})
    works = herb.work({"04-downstream-propagation": P["04-downstream-propagation"]})
    names = propagation.prefix_regions(["FR", "KE", "JP"], 1, ["Puebla, Mexico"]).names
    assert len(names) == 4
    # three epochs of batch 16: 3 x 2 and 3 x 3 steps; each test text bare and behind 4 prefixes
    assert [w.count for w in rows(works, unit="training steps")] == [6, 9]
    classify = [w for w in works if "classify" in w.what]
    assert [w.count for w in classify] == [16 * 5, 8 * 5]


def test_ethnic_bias_counts_match_the_profile_file():
    from biasbook.chapters.ethnic_bias import plan as ethnic

    # data/profiles/ethnic-bias.yml: smoke = 1 template x 3 attributes x 35 targets x
    # (2 languages of Gemma + English SmolLM2) = 315 sentences (causal models: no prior)
    P = resolved("ethnic-bias", "smoke")
    works = rows(ethnic.work({"02-cb-across-languages": P["02-cb-across-languages"]}))
    main = [w for w in works if "lists" not in w.what]
    assert sum(w.count for w in main) == 315 and {w.unit for w in main} == {"sentences"}
    assert sum(w.count for w in works) == 2 * 315  # 02 scores the other word lists too


def test_masked_models_share_a_forward_per_target_length():
    from biasbook.chapters.ethnic_bias import data
    from biasbook.chapters.ethnic_bias import plan as ethnic

    targets = data.target_keys(extra=True)
    target, prior = ethnic.cb_work("02", "bert-base-uncased", "en", word_lists="authors",
                                   templates=[2], attributes=["Enemy", "Pirate"],
                                   targets=targets)
    terms = data.target_terms(data.language("en"), 2, targets)
    lengths = len({plan.estimate_tokens(t) for t in terms})
    assert target.unit == prior.unit == "masked forwards"
    assert target.count == prior.count == 2 * lengths
    assert target.note == f"{2 * 35} sentences"


def test_mitigation_rows_train_the_head_on_the_recipe():
    from biasbook.chapters.ethnic_bias import plan as ethnic

    p = resolved("ethnic-bias", "book")["04-mitigation"]
    p.update(x_to_en=["de"], en_to_x=[],
             variants={"x_to_en": ["base", "ft"], "en_to_x": [], "multilingual": []},
             recipe={**p["recipe"], "epochs": 2, "batch_size": 16, "train_sentences": 40})
    works = ethnic.work({"04-mitigation": p})
    # Gemma stands in for German: rows base and ft; ft trains 2 epochs x ceil(40 / 16) steps
    assert [w.count for w in rows(works, unit="training steps")] == [2 * 3]
    assert len([w for w in works if "perplexity" in w.what]) == 2  # base and ft


def test_lm_gender_bias_counts_steps_per_lambda_and_seed():
    from biasbook.chapters.lm_gender_bias import plan as lm

    lstm = {"layers": 1, "hidden": 8, "emb": 8, "dropout": 0.0, "bptt": 35, "batch": 20,
            "lr": 0.01, "optimizer": "adam", "seed": 0}
    P = resolved("lm-gender-bias", "smoke", **{
        "02.corpora": ["ptb"], "lambdas": [0.0, 0.5, 1.0], "seeds": [0, 1],
        "warmup_tokens": 1400, "sweep_tokens": 2100, "lstm": lstm,
        "generation": {"n_seeds": 3, "length": 10}, "tying": {"corpus": "ptb", "lam": 1.0}})
    works = lm.work({"02-lambda-sweep": P["02-lambda-sweep"]})
    steps = [w.count for w in rows(works, unit="training steps")]
    # 700 tokens a step; per seed a 2-step warm-up and 3 lambdas of 3 steps; 4 untied models
    assert steps == [2, 3, 3, 3] * 2 + [3] * 4
    generated = rows(works, unit="generated tokens")
    assert len(generated) == 3 * 2 + 4 and {w.count for w in generated} == {30}
    per_token = flops.lstm_flops_per_token(1, 8, 8, 2000)
    assert generated[0].flops == 30 * per_token and steps and works[0].flops == (
        plan.TRAINING_FACTOR * 1400 * per_token)


def test_indirect_stereotypes_counts_glove_updates_per_method_and_seed():
    from biasbook.chapters.indirect_stereotypes import plan as indirect

    corpus = {"source": "un+imdb", "un_speeches": 10, "imdb_reviews": 100, "seed": 0}
    glove = {"dim": 20, "epochs": 3, "lr": 0.25, "batch_size": 16384}
    P = resolved("indirect-stereotypes", "smoke", corpus=corpus, seeds=[0, 1, 2], glove=glove)
    P["02-training"].pop("lr_sweep", None)
    works = indirect.work(P)
    tokens = 10 * 3300 + 100 * 280
    assert [w.count for w in rows(works, unit="tokens counted")] == [tokens, tokens]
    nonzeros = round(0.064 * 2 * 15 * tokens)
    updates = rows(works, unit="GloVe updates")
    assert len(updates) == 3 * 3 and {w.count for w in updates} == {nonzeros * 3}


def test_region_aware_counts_documents_topics_and_personas():
    from biasbook.chapters.region_aware import plan as region

    P = resolved("region-aware", "book")
    works = region.work(P)
    (w2v,) = [w for w in works if w.what.startswith("word2vec on un-debates")]
    assert w2v.count == 5 * 30000  # five regions x docs_per_region
    labels = [w for w in works if "labels" in w.what]
    assert [w.count for w in labels] == [5 * 2 * 5 * 16]  # regions x genders x top 5 x tokens
    personas = [w for w in works if w.what.startswith("personas")]
    # 2 runs x 50 topics (Table 3's 25 pairs) x 32 tokens, per model
    assert [w.count for w in personas] == [2 * 50 * 32] * 2


# ------------------------------------------------------------------------------ estimates

def test_times_divide_flops_by_the_rates_and_the_gpu_only_takes_gpu_work():
    works = [plan.Work("01", "a", 10, "sentences", "m", 100, 4e9, "masked"),
             plan.Work("02", "b", 5, "documents", None, 50, 2e9, "word2vec"),
             plan.Work("02", "c", 7, "C_w evaluations")]
    p = plan.Plan("x", "book", works, {}, {"masked": 2e9, "word2vec": 1e9}, gpu_flops=1e12)
    assert [p.cpu_seconds(w) for w in works] == [2.0, 2.0, None]
    assert [p.gpu_seconds(w) for w in works] == [4e-3, 2.0, None]
    assert p.totals() == {"sentences": 10, "documents": 5, "C_w evaluations": 7}
    line = p.summary()
    assert line.startswith("plan x/book: 10 sentences, 5 documents, 7 C_w evaluations; 150 ")
    assert "estimated 4 s here" in line and "(+1 rows not estimated)" in line
    assert "at an assumed 1 TFLOP/s" in line and "no downloads" in line


def test_this_machine_is_measured_in_flops_per_second():
    rate = flops.measure("causal")
    assert math.isfinite(rate) and rate > 1e7
    assert flops.measure("masked") == rate  # one transformer probe serves every kind


def test_hub_models_are_downloads_and_folders_are_not(tmp_path):
    from biasbook.testing import stand_in

    folder = str(stand_in("bert-base-cased", tmp_path / "bert"))
    found = plan.downloads(["bert-base-cased", "smollm2-135m", folder, "someone/unknown"])
    assert found == {"bert-base-cased": 436_000_000, "someone/unknown": None}


def test_a_folder_is_sized_from_its_config(tmp_path):
    from biasbook.models import load
    from biasbook.testing import stand_in

    folder = str(stand_in("facebook/bart-base", tmp_path / "bart"))
    size = plan.model_size(folder)
    lm = load(folder, device="cpu")
    assert size.kind == "encoder-decoder" == lm.kind
    assert size.params == sum(p.numel() for p in lm.model.parameters())
    assert size.disk_bytes == (Path(folder) / "model.safetensors").stat().st_size


def test_the_token_estimate():
    assert plan.estimate_tokens("Hello, world!") == round(1.3 * 2) + 2
    assert plan.estimate_tokens("在北京 2024") == 3 + 1


# ------------------------------------------------------------------------------------ caps

@pytest.mark.parametrize("chapter", profiles.chapters())
def test_a_cap_shrinks_the_paper_plan_keeps_its_models_and_is_idempotent(chapter):
    paper = resolved(chapter, "paper")
    capped = plan.capped(chapter, paper, 2)
    assert plan.capped(chapter, capped, 2) == capped
    module = plan.chapter_module(chapter)
    before, after = module.work(paper), module.work(capped)
    assert {w.model for w in after} == {w.model for w in before}
    assert sum(w.count for w in after) < sum(w.count for w in before) or chapter == "demo"
    for stem, p in capped.items():  # what the cap sets passes the runner's checks
        changed = {k: v for k, v in p.items() if k != "profile" and v != paper[stem][k]}
        cli.check_types(chapter, stem, changed, loadable=False)


def test_the_herb_cap_spreads_countries_over_continents():
    P = plan.capped("herb", resolved("herb", "paper"), 4)
    countries = P["01-descriptive-vectors"]["countries"]
    from biasbook.chapters.herb import regions

    continent = regions.countries().set_index("code")["continent"]
    assert len(countries) == 4 and continent[countries].nunique() == 4
    assert P["05-toxic-training"]["epochs"] == 4 and P["05-toxic-training"]["top_k"] == 4


def test_a_chapter_without_a_plan_is_named(monkeypatch):
    with pytest.raises(NotImplementedError, match="chapters/no_such/plan.py"):
        plan.chapter_module("no-such")
