"""Shared fixtures. The hub is never contacted during tests."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture
def offline(monkeypatch):
    """No downloads: resolution must succeed from the mirror or cache, or fail clearly."""
    monkeypatch.setenv("BIASBOOK_OFFLINE", "1")


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models gain nothing from threads, and on a loaded machine OpenMP barriers stall."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A fresh BIASBOOK_CACHE, so score-cache tests never see each other's files."""
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def tok():
    """The tiny WordPiece tokenizer of biasbook.testing."""
    from biasbook import testing

    return testing.tiny_tokenizer()


@pytest.fixture(scope="module")
def spell_models():
    """Tiny BERT and GPT-2 (``"bert"``, ``"gpt2"``) on the spelling tokenizer, weights scaled by 8:
    peaked distributions, so that the attribute in a template changes the probabilities."""
    import torch

    from biasbook import models, testing

    spell = testing.tiny_tokenizer(spell=True)
    out = {}
    for arch in ("bert", "gpt2"):
        model = testing.tiny_model(arch, len(spell))
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(8)
        out[arch] = models.from_model(model, spell, name=f"tiny-{arch}")
    return out
