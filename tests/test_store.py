"""biasbook.store: one folder-name rule, and checkpoints that survive a crash while saving."""

import pytest
import torch

from biasbook import store


def test_every_name_becomes_one_safe_visible_folder_name():
    assert store.slug("google/mt5-small") == "google_mt5-small"
    assert store.slug("/home/me/models/bert base") == "home_me_models_bert_base"
    assert store.slug("..hidden") == "hidden"
    assert store.slug("tiny-bert+head") == "tiny-bert+head"


def test_cache_path_puts_the_readable_name_before_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASBOOK_CACHE", str(tmp_path))
    assert store.cache_path("finetune", "abc", name="org/model") == tmp_path / "finetune" / \
        "org_model-abc"
    assert store.cache_path("vectors", "abc", ".npz") == tmp_path / "vectors" / "abc.npz"


def test_a_crash_while_saving_leaves_the_previous_state_readable(tmp_path, monkeypatch):
    checkpoint = store.Checkpoint(tmp_path / "run")
    checkpoint.save({"epoch": 1, "weights": torch.arange(3.0)})
    real_save = torch.save

    def crash_halfway(obj, path):
        real_save(obj, path)
        with open(path, "r+b") as fh:
            fh.truncate(10)  # a half-written file
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", crash_halfway)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save({"epoch": 2, "weights": torch.zeros(3)})
    state = checkpoint.load()
    assert state["epoch"] == 1 and torch.equal(state["weights"], torch.arange(3.0))
    assert [p.name for p in checkpoint.folder.iterdir()] == ["state.pt"]  # no staging file left


def test_finish_publishes_the_result_and_drops_the_state(tmp_path):
    checkpoint = store.Checkpoint(tmp_path / "run")
    checkpoint.save({"epoch": 3})
    with pytest.raises(RuntimeError), checkpoint.finish() as out:
        (out / "weights.bin").write_bytes(b"half")
        raise RuntimeError("disk full")
    assert not checkpoint.finished and checkpoint.load() == {"epoch": 3}  # can finish again
    assert [p.name for p in checkpoint.folder.iterdir()] == ["state.pt"]
    with checkpoint.finish() as out:
        (out / "weights.bin").write_bytes(b"done")
    assert checkpoint.finished and checkpoint.load() is None
    assert (checkpoint.result / "weights.bin").read_bytes() == b"done"
