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
    params = dict(
        models=[bert, bart], countries=["FR", "DE", "KE", "JP"], cities_per_country=2,
        robustness_models=[bert],
        downstream_models=[bert], downstream_max_length=32, downstream_hate_train=32,
        downstream_hate_test=16, downstream_imdb_train=32, downstream_imdb_test=8,
        downstream_countries=["FR", "KE", "JP"], downstream_extra_regions=[],
        downstream_herb_models=[bert],
        toxic_models=[bert], toxic_countries=["FR", "DE", "JP"], toxic_cities_per_country=0,
        toxic_top_k=1, toxic_corpus_size=16, toxic_epochs=1, toxic_batch_size=8)
    spec = profiles.resolve("herb", "paper")
    assert spec["downstream_method"] == "finetune" and spec["toxic_objective"] == "mask-region"
    run_dir = cli.run_chapter("herb", "paper", params, runs_dir=tmp_path)
    table = results.load(run_dir)
    assert set(table["notebook"]) == set(n.removesuffix(".ipynb")
                                         for n in profiles.chapter_spec("herb")["notebooks"])
    recorded = table.query("notebook == '02-hierarchical-bias'")
    assert {bert, bart} <= set(recorded["model"].dropna())
