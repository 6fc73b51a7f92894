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
