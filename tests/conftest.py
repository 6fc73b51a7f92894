"""Shared fixtures. The hub is never contacted during tests."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture
def offline(monkeypatch):
    """No downloads: resolution must succeed from the mirror or cache, or fail clearly."""
    monkeypatch.setenv("BIASBOOK_OFFLINE", "1")
