"""biasbook.store: one folder-name rule, checkpoints that survive a crash while saving, and
damaged cache files set aside and computed again."""

import re

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


def _damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one byte flipped in the middle
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:])


@pytest.mark.bad_input(
    'A truncated or corrupted file in the cache (a stored `.npz` of arrays such as the '
    'ethnic-bias CB scores, a stored JSON result, a training checkpoint)',
    'a warning naming the file, which is moved aside as `<name>.damaged`; the result is '
    'computed again (a training starts over)')
@pytest.mark.parametrize("how", ["truncated", "flipped"])
@pytest.mark.parametrize("reader", ["arrays", "json"])
def test_a_damaged_cached_result_is_named_moved_aside_and_computed_again(private_cache, reader,
                                                                          how):
    import numpy as np

    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(500.0)} if reader == "arrays" else {"x": list(range(500))}

    def read():
        if reader == "arrays":
            return store.cached_arrays("demo", "k1", compute)["x"].tolist()
        return store.cached_json("demo", "k1", compute)["x"]

    want = read()
    path = store.cache_path("demo", "k1", ".npz" if reader == "arrays" else ".json")
    if how == "flipped" and reader == "json":
        path.write_text(path.read_text()[:-3] + "}}")  # unparseable, as a bad edit would be
    else:
        _damage(path, how)
    named = rf"{re.escape(str(path))} is damaged.*moved aside to {re.escape(path.name)}\.damaged"
    with pytest.warns(store.DamagedCacheWarning, match=named):
        assert read() == want
    assert len(calls) == 2 and path.with_name(path.name + ".damaged").is_file()
    assert read() == want and len(calls) == 2  # stored again, read back


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_checkpoint_state_is_moved_aside_and_the_run_starts_over(tmp_path, how):
    checkpoint = store.Checkpoint(tmp_path / "run")
    checkpoint.save({"epoch": 1, "weights": torch.arange(100.0)})
    _damage(checkpoint.state_file, how)
    named = rf"{re.escape(str(checkpoint.state_file))} is damaged.*moved aside"
    with pytest.warns(store.DamagedCacheWarning, match=named):
        assert checkpoint.load() is None
    assert (checkpoint.folder / "state.pt.damaged").is_file()
    assert not checkpoint.state_file.exists()
