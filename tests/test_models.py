import pytest
import torch

from biasbook import models, testing


@pytest.mark.parametrize("arch,kind", [("bert", "masked"), ("albert", "masked"),
                                       ("roberta", "masked"), ("distilbert", "masked"),
                                       ("bart", "encoder-decoder"), ("gpt2", "causal"),
                                       ("llama", "causal"), ("gemma3", "causal")])
def test_kind_is_inferred_from_the_config(tok, arch, kind):
    lm = models.from_model(testing.tiny_model(arch, len(tok)), tok, name=arch)
    assert lm.kind == kind
    assert lm.prefix_ids == ((tok.bos_token_id,) if kind == "causal" else ())


def test_encode_adds_special_tokens_only_for_non_causal_models(tok):
    words = tok.convert_tokens_to_ids(["the", "cat"])
    bert = models.from_model(testing.tiny_model("bert", len(tok)), tok, name="b")
    gpt = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="g")
    assert bert.encode("the cat") == [tok.cls_token_id, *words, tok.sep_token_id]
    assert gpt.encode("the cat") == words


def test_fingerprint_is_stable_and_sensitive_to_every_weight(tok):
    a = models.fingerprint(testing.tiny_model("gpt2", len(tok), seed=1))
    b_model = testing.tiny_model("gpt2", len(tok), seed=1)
    assert models.fingerprint(b_model) == a
    with torch.no_grad():
        next(iter(b_model.parameters())).view(-1)[0] += 1e-6
    assert models.fingerprint(b_model) != a
    assert models.fingerprint(testing.tiny_model("gpt2", len(tok), seed=2)) != a


def test_load_a_local_folder(tmp_path, tok):
    model = testing.tiny_model("gpt2", len(tok))
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    lm = models.load(str(tmp_path))
    assert lm.kind == "causal"
    assert lm.fingerprint == models.fingerprint(model)


@pytest.mark.bad_input(
    'An unknown model id while offline (`HF_HUB_OFFLINE=1`)',
    "`ModelError` at once (no retries), listing the registry's models")
def test_unknown_model_id_offline_says_the_hub_is_off_at_once(monkeypatch):
    import transformers

    def no_hub(*args, **kwargs):
        raise AssertionError("the hub must not be tried (and retried) when it is switched off")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", no_hub)
    with pytest.raises(models.ModelError, match="'no-such-org/no-such-model' is not in the "
                                                "registry nor a local folder.*HF_HUB_OFFLINE"):
        models.load("no-such-org/no-such-model")


@pytest.mark.bad_input(
    'A local model folder without tokenizer files',
    '`ModelError` naming the folder and the files it lacks')
def test_a_model_folder_without_tokenizer_files_fails_to_load(tmp_path, tok):
    from biasbook.testing import tiny_model

    tiny_model("gpt2", len(tok)).save_pretrained(tmp_path / "no-tokenizer")
    with pytest.raises(models.ModelError, match="has no tokenizer files"):
        models.load(str(tmp_path / "no-tokenizer"))


def test_bad_kind_is_refused(tok):
    with pytest.raises(models.ModelError, match="kind must be one of"):
        models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="x", kind="decoder")


@pytest.mark.slow
@pytest.mark.parametrize("name,params,bos", [("smollm2-135m", 134.5e6, "<|endoftext|>"),
                                              ("gemma-3-270m", 268.1e6, "<bos>")])
def test_offline_gguf_models(name, params, bos):
    lm = models.load(name)
    again = models.load(name)  # from the safetensors cache
    assert lm.kind == "causal"
    assert abs(lm.n_parameters - params) / params < 1e-3
    assert lm.tokenizer.convert_ids_to_tokens(list(lm.prefix_ids)) == [bos]
    assert lm.fingerprint == again.fingerprint == models.fingerprint(again.model)
    # Plain text is tokenised without chat markers or other special tokens.
    ids = lm.encode("People in Paris are kind.")
    assert not set(ids) & set(lm.tokenizer.all_special_ids)


def test_encoder_model_from_its_package():
    lm = models.load("all-minilm-l6-v2")
    assert lm.kind == "encoder"
    out = lm.model(**lm.tokenizer(["a sentence"], return_tensors="pt"))
    assert out.last_hidden_state.shape[-1] == 384


def test_fingerprint_follows_weight_updates(tok):
    lm = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="g")
    before = lm.fingerprint
    with torch.no_grad():
        next(iter(lm.model.parameters())).view(-1)[0] += 1.0
    assert lm.refresh_fingerprint() != before == models.fingerprint(
        testing.tiny_model("gpt2", len(tok)))


def _converted_folder(tmp_path, tok):
    from safetensors.torch import save_model

    from biasbook.testing import tiny_model

    model = tiny_model("gpt2", len(tok))
    folder = tmp_path / "converted"
    folder.mkdir()
    save_model(model, str(folder / "model.safetensors"))
    (folder / "FINGERPRINT").write_text(models.fingerprint(model) + "\n")
    return model, folder


@pytest.mark.bad_input(
    'A converted model whose cached weights changed or were damaged',
    '`ModelError` naming the folder to delete; the model is converted again on the '
    'next load')
def test_changed_cached_weights_are_caught_not_trusted(tmp_path, tok):
    import torch
    from safetensors.torch import save_model

    model, folder = _converted_folder(tmp_path, tok)
    # a cache from before the sha256 record: checked once against the fingerprint, then recorded
    assert models._verified_fingerprint(folder, model) == models.fingerprint(model)
    assert (folder / models.WEIGHTS_SHA256).exists()
    with torch.no_grad():
        model.lm_head.weight.mul_(0.5)  # the probe: halve one tensor in the cached file
    save_model(model, str(folder / "model.safetensors"))
    with pytest.raises(models.ModelError, match=f"changed after conversion: delete the folder "
                                                f"{folder}"):
        models._verified_fingerprint(folder, model)
    (folder / models.WEIGHTS_SHA256).unlink()  # no record: the fingerprint no longer matches
    with pytest.raises(models.ModelError, match="do not match their fingerprint"):
        models._verified_fingerprint(folder, model)


def test_staging_folders_of_interrupted_conversions_are_removed(tmp_path):
    import os
    import time

    target = tmp_path / "smollm2-135m-0.1.2"
    old, fresh = tmp_path / f".{target.name}-abc", tmp_path / f".{target.name}-def"
    old.mkdir()
    fresh.mkdir()
    past = time.time() - 2 * models.STALE_STAGING_S
    os.utime(old, (past, past))
    models._remove_stale_staging(target)
    assert not old.exists() and fresh.exists(), "a conversion still running keeps its folder"


def test_sampled_continuations_follow_the_seed():
    from biasbook.testing import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer()
    lm = models.from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    short, long = lm.encode("people in paris"), lm.encode("people in paris are kind .")

    def sample(encoded, seed):
        return models.sample_continuations(lm, encoded, max_new_tokens=6, seed=seed)

    assert sample([short, long], 1) == sample([short, long], 1)
    assert len(sample([short, long], 1)) == 2
    bert = models.from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    with pytest.raises(ValueError, match="generated text needs a causal LM"):
        models.sample_continuations(bert, [short], max_new_tokens=2)
