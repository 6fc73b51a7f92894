"""The ethnic-bias chapter on the `paper` profile's kind of model, offline.

The `paper` profile scores monolingual BERTs and multilingual BERT from the Hugging Face hub,
which this machine cannot reach. A tiny random-init BERT saved to a local folder (a model id may
be a folder) takes their place, so that the masked-LM path of notebooks 01-03 runs: whole-word
masking of the target, the prior with the attribute masked, monolingual and multilingual groups
and the JSD table. Its numbers mean nothing; the test checks that the notebooks run and record.
(The mitigation notebook has its own test.)
"""

import os

import pytest

from biasbook import paths, profiles, results

pytestmark = pytest.mark.slow

DATA = paths.project_data_dir() / "ethnic-bias"
NOTEBOOKS = ["01-templates-and-metric", "02-cb-across-languages", "03-distributions"]


LANGUAGES = ["en", "de", "ko"]


def spelling_tokenizer(tok, languages):
    """``tok`` with every character of the languages' word lists, the book's and the authors'
    (after its own normaliser: lower case, accents stripped, Hangul split into jamo) alone and as
    a ``##`` continuation, as a real multilingual BERT spells them: the scoring engine refuses
    ``[UNK]``."""
    from transformers import BertTokenizerFast

    from biasbook.chapters.ethnic_bias import authors

    normal = tok.backend_tokenizer.normalizer.normalize_str
    text = "".join(normal((DATA / f"{code}.yml").read_text(encoding="utf-8"))
                   + normal(" ".join([*authors.lines(f"templates/templates_{code}.txt"),
                                      *authors.lines(f"templates/occ_{code}.txt"),
                                      *authors.configuration()[code]["nationality"]]))
                   for code in languages)
    chars = sorted({c for c in text if not c.isspace()})
    vocab = sorted(tok.get_vocab(), key=tok.get_vocab().get)
    tokens = list(dict.fromkeys(vocab + chars + [f"##{c}" for c in chars]))
    return BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=True,
                             bos_token="[BOS]")


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    from transformers import BertConfig, BertForMaskedLM

    from biasbook.testing import tiny_tokenizer

    tok = spelling_tokenizer(tiny_tokenizer(spell=True), LANGUAGES)
    folder = tmp_path_factory.mktemp("tiny-bert")
    model = BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32,
                                       max_position_embeddings=256))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def test_ethnic_bias_notebooks_run_on_a_masked_lm(bert_folder, tmp_path, monkeypatch):
    import papermill

    spec = profiles.resolve("ethnic-bias", "paper", "02-cb-across-languages", monolingual=None,
                            mode=None)
    assert spec["monolingual"]["en"] == "bert-base-uncased" and spec["mode"] == "paper"
    monkeypatch.setenv("BIASBOOK_RUN_DIR", str(tmp_path))
    shared = dict(languages=LANGUAGES, monolingual={"en": bert_folder},
                  multilingual=[bert_folder], templates=[2, 7],
                  attributes=["Enemy", "Pirate", "Terrorist"])
    own = {"01-templates-and-metric": dict(example_model=bert_folder,
                                           example_attributes=["Enemy", "Pirate"]),
           "02-cb-across-languages": shared,
           "03-distributions": shared}
    source = profiles.NOTEBOOKS_DIR / "ethnic-bias"
    for name in NOTEBOOKS:
        papermill.execute_notebook(source / f"{name}.ipynb", tmp_path / f"{name}.ipynb",
                                   parameters={"profile": "paper", **own[name]},
                                   cwd=str(source), progress_bar=False)
    table = results.load(tmp_path)
    assert set(table["notebook"]) == set(NOTEBOOKS)
    cb = table.query("key == 'cb'")
    assert set(cb["language"]) == {"en", "de", "ko"}
    assert set(cb["group"]) == {"monolingual", "multilingual"}
    assert not table.query("key == 'jsd'").empty
    assert os.path.basename(bert_folder) in "".join(cb["model"])
