"""The HERB chapter on the `paper` profile's kinds of model, offline.

The `paper` profile loads BERT, ALBERT, RoBERTa and BART from the Hugging Face hub, which this
machine cannot reach. Tiny random-init models of the same architectures, saved to local folders
(a model id may be a folder), take their place, so that every masked-LM and encoder-decoder path
of the five notebooks runs: AUL and BART's infill scoring, masked-model hidden states, fine-tuned
classifiers, and toxic training with the region masked. Their numbers mean nothing; the test
checks that the chapter runs and records them.
"""

import pytest

from biasbook import cli, profiles, results
from biasbook.testing import tiny_model, tiny_tokenizer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tok = tiny_tokenizer(spell=True)
    out = {}
    for arch in ("bert", "bart"):
        folder = tmp_path_factory.mktemp(f"tiny-{arch}")
        tiny_model(arch, len(tok)).save_pretrained(folder)
        tok.save_pretrained(folder)
        out[arch] = str(folder)
    return out


def test_herb_chapter_runs_on_masked_and_encoder_decoder_models(folders, tmp_path):
    bert, bart = folders["bert"], folders["bart"]
    params = {
        "models": [bert, bart], "countries": ["FR", "DE", "KE", "JP"], "cities_per_country": 2,
        "robustness_models": [bert],
        "encoders": [bert], "max_length": 32, "hate_train": 32, "hate_test": 16,
        "imdb_train": 32, "imdb_test": 8, "04.countries": ["FR", "KE", "JP"],
        "extra_regions": ["Puebla, Mexico"], "04.models": [bert],
        "05.models": [bert], "05.countries": ["FR", "DE", "JP"], "05.cities_per_country": 0,
        "top_k": 1, "corpus_size": 16, "epochs": 1, "batch_size": 8}
    assert profiles.resolve("herb", "paper", "04-downstream-propagation", method=None)[
        "method"] == "finetune"
    assert profiles.resolve("herb", "paper", "05-toxic-training", objective=None)[
        "objective"] == "mask-region"
    run_dir = cli.run_chapter("herb", "paper", params, runs_dir=tmp_path)
    table = results.load(run_dir)
    assert set(table["notebook"]) == set(n.removesuffix(".ipynb")
                                         for n in profiles.chapter_spec("herb")["notebooks"])
    recorded = table.query("notebook == '02-hierarchical-bias'")
    assert {bert, bart} <= set(recorded["model"].dropna())
    # the chapter-level `models`, narrowed per notebook with "04." and "05.", reach 04 and 05
    herb = table.query("notebook == '04-downstream-propagation' and key == 'herb_overall_C_w'")
    assert herb["model"].tolist() == [bert]
    assert set(table.query("notebook == '05-toxic-training'")["model"].dropna()) == {bert}
