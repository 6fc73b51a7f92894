"""The GloVe trainer (both backends) against the objective and AdaGrad computed by hand, mittens,
and each other."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from biasbook.embeddings import glove

# a tiny symmetric co-occurrence matrix: 4 words, 10 non-zeros, one count above x_max
X = np.array([[0.0, 3.0, 0.0, 150.0],
              [3.0, 2.0, 1.0, 0.0],
              [0.0, 1.0, 0.0, 7.5],
              [150.0, 0.0, 7.5, 4.0]])
VOCAB = ["a", "b", "c", "d"]
BACKENDS = pytest.mark.parametrize("backend", ["numba", "torch"])


def start(dim=3, seed=0):
    rng = np.random.default_rng(seed)
    return {"W": rng.normal(size=(4, dim)) * 0.1, "C": rng.normal(size=(4, dim)) * 0.1,
            "bw": rng.normal(size=4) * 0.1, "bc": rng.normal(size=4) * 0.1}


def loops_objective(p, x_max=100.0, alpha=0.75):
    """J written out entry by entry."""
    total = 0.0
    for i in range(4):
        for j in range(4):
            if X[i, j] > 0:
                f = min(1.0, (X[i, j] / x_max) ** alpha)
                pred = sum(p["W"][i, k] * p["C"][j, k] for k in range(p["W"].shape[1]))
                total += f * (pred + p["bw"][i] + p["bc"][j] - np.log(X[i, j])) ** 2
    return total


def test_objective_matches_loops():
    p = start()
    assert glove.objective(sp.csr_matrix(X), **p) == pytest.approx(loops_objective(p), rel=1e-12)
    assert glove.objective(X, **p, x_max=10, alpha=0.5) == \
        pytest.approx(loops_objective(p, 10, 0.5), rel=1e-12)


@BACKENDS
def test_one_adagrad_step_by_hand(backend):
    p, lr, a0 = start(), 0.05, 0.1
    fit = glove.train(sp.csr_matrix(X), VOCAB, dim=3, epochs=1, lr=lr, initial_accumulator=a0,
                      batch_size=64, init=p, cache=False, progress=False, backend=backend)
    # one full batch: the gradient of J/2 summed over all entries, then AdaGrad
    g = {k: np.zeros_like(v) for k, v in p.items()}
    for i in range(4):
        for j in range(4):
            if X[i, j] > 0:
                f = min(1.0, (X[i, j] / 100) ** 0.75)
                diff = p["W"][i] @ p["C"][j] + p["bw"][i] + p["bc"][j] - np.log(X[i, j])
                g["W"][i] += f * diff * p["C"][j]
                g["C"][j] += f * diff * p["W"][i]
                g["bw"][i] += f * diff
                g["bc"][j] += f * diff
    for k in p:
        want = p[k] - lr * g[k] / np.sqrt(a0 + g[k] ** 2)
        np.testing.assert_allclose(fit.params[k], want, rtol=1e-5, atol=1e-7, err_msg=k)
    # the epoch's loss is J at the parameters before the (single) update
    assert fit.losses[0] == pytest.approx(loops_objective(p), rel=1e-5)
    np.testing.assert_allclose(fit.kv["b"], fit.params["W"][1] + fit.params["C"][1], rtol=1e-6)


@BACKENDS
def test_full_batch_epochs_match_mittens(backend):
    from mittens import GloVe

    p = start(dim=3, seed=1)
    ref = GloVe(n=3, max_iter=4, learning_rate=0.05, test_mode=True, display_progress=0)
    ref.fit(X, fixed_initialization={"W": p["W"].copy(), "C": p["C"].copy(),
                                     "bw": p["bw"][:, None].copy(), "bc": p["bc"][:, None].copy()})
    fit = glove.train(X, VOCAB, dim=3, epochs=4, batch_size=64, init=p, cache=False,
                      progress=False, backend=backend)
    np.testing.assert_allclose(fit.params["W"], ref.W, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(fit.params["bc"], ref.bc.ravel(), rtol=1e-4, atol=1e-6)
    # mittens reports J/2 per iteration, before each update
    np.testing.assert_allclose(np.array(fit.losses) / 2, ref.errors, rtol=1e-5)


def small_matrix():
    m = sp.random(60, 60, density=0.3, random_state=0, format="csr") * 50
    return m + m.T, [f"w{i}" for i in range(60)]


def test_backends_agree_on_mini_batches():
    """Many batches, each touching a row several times: the CPU loop (which updates a row of W as
    soon as its run in the batch ends) and the tensor step (which updates all rows at once) must
    give the same parameters."""
    m, vocab = small_matrix()
    kwargs = dict(dim=8, epochs=3, batch_size=200, seed=2, cache=False, progress=False)
    a = glove.train(m, vocab, backend="numba", **kwargs)
    b = glove.train(m, vocab, backend="torch", **kwargs)
    for k in ("W", "C", "bw", "bc"):
        np.testing.assert_allclose(a.params[k], b.params[k], rtol=1e-4, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(a.losses, b.losses, rtol=1e-5)


def test_deterministic_per_seed_and_mini_batches_shuffle():
    m, vocab = small_matrix()
    kwargs = dict(dim=8, epochs=3, batch_size=16, cache=False, progress=False)
    a = glove.train(m, vocab, seed=3, **kwargs)
    b = glove.train(m, vocab, seed=3, **kwargs)
    c = glove.train(m, vocab, seed=4, **kwargs)
    np.testing.assert_array_equal(a.kv.vectors, b.kv.vectors)
    assert a.losses == b.losses
    assert not np.allclose(a.kv.vectors, c.kv.vectors)
    assert a.losses[-1] < a.losses[0]


def test_cached_and_resumed_after_interruption(private_cache, monkeypatch):
    monkeypatch.setattr(glove, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint after every epoch
    m = sp.random(30, 30, density=0.4, random_state=1, format="csr") * 20 + sp.eye(30)
    vocab = [f"w{i}" for i in range(30)]
    kwargs = dict(dim=4, epochs=3, batch_size=32, progress=False)
    clean = glove.train(m, vocab, cache=False, **kwargs)
    calls = []
    real = glove._Trainer.epoch

    def flaky(self):
        calls.append(len(self.losses))
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(glove._Trainer, "epoch", flaky)
    with pytest.raises(KeyboardInterrupt):
        glove.train(m, vocab, **kwargs)
    resumed = glove.train(m, vocab, **kwargs)  # picks up after the first epoch
    assert calls == [0, 1, 1, 2]
    np.testing.assert_array_equal(resumed.kv.vectors, clean.kv.vectors)
    monkeypatch.setattr(glove._Trainer, "epoch", real)
    again = glove.train(m, vocab, **kwargs)  # from the cache, no epoch trained
    assert again.seconds == [] and again.losses == clean.losses


def test_bad_inputs():
    with pytest.raises(ValueError, match="square"):
        glove.train(np.ones((2, 3)), ["a", "b"], cache=False)
    with pytest.raises(ValueError, match="vocab"):
        glove.train(X, ["a"], cache=False)
    with pytest.raises(ValueError, match="non-negative"):
        glove.train(-X, VOCAB, cache=False)
    with pytest.raises(ValueError, match="no non-zero"):
        glove.train(np.zeros((2, 2)), ["a", "b"], cache=False)
    with pytest.raises(ValueError, match="cache=False"):
        glove.train(X, VOCAB, init=start())
    with pytest.raises(ValueError, match="backend must be"):
        glove.train(X, VOCAB, backend="jax", cache=False)


@pytest.mark.bad_input(
    'GloVe with a NaN, infinite or non-positive learning rate, `x_max` <= 0, a NaN `alpha`, or '
    'a vocabulary that repeats a word',
    '`ValueError` naming the setting and its value, or the repeated words, before any training')
@pytest.mark.parametrize("setting, match", [
    ({"lr": float("nan")}, "lr must be"), ({"lr": float("inf")}, "lr must be"),
    ({"lr": 0.0}, "lr must be"), ({"x_max": 0.0}, "x_max must be"),
    ({"x_max": -5.0}, "x_max must be"), ({"alpha": float("nan")}, "alpha must be"),
    ({"initial_accumulator": float("nan")}, "initial_accumulator must be"),
])
def test_impossible_settings_and_repeated_words_are_refused(setting, match):
    with pytest.raises(ValueError, match=match):
        glove.train(X, VOCAB, cache=False, progress=False, epochs=1, **setting)
    with pytest.raises(ValueError, match=r"vocab repeats \['a', 'c'\]"):
        glove.train(X, ["a", "c", "a", "c"], cache=False, progress=False, epochs=1)


@pytest.mark.bad_input(
    'A GloVe vocabulary word that never co-occurs with any word (an empty row or column)',
    'a warning giving their number and naming them; listed in `GloveFit.untrained`')
def test_words_that_never_cooccur_are_reported(private_cache):
    lonely = np.zeros((5, 5))
    lonely[:4, :4] = X
    with pytest.warns(UserWarning, match=r"1 word\(s\) never co-occur.*\['e'\].*random init"):
        fit = glove.train(lonely, [*VOCAB, "e"], dim=2, epochs=1, progress=False)
    assert fit.untrained == ["e"]
    with pytest.warns(UserWarning, match=r"\['e'\]"):  # from the cache too
        assert glove.train(lonely, [*VOCAB, "e"], dim=2, epochs=1).untrained == ["e"]
    assert glove.train(X, VOCAB, dim=2, epochs=1, cache=False, progress=False).untrained == []


@pytest.mark.bad_input(
    'A truncated GloVe checkpoint or trained-vectors file in the cache',
    'a warning naming the file, which is moved aside (`.damaged`); training starts over and '
    'gives the same vectors')
def test_a_damaged_checkpoint_or_result_is_set_aside_and_trained_again(private_cache,
                                                                       monkeypatch):
    from biasbook import store

    monkeypatch.setattr(glove, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint after every epoch
    m = sp.random(30, 30, density=0.4, random_state=1, format="csr") * 20 + sp.eye(30)
    vocab = [f"w{i}" for i in range(30)]
    kwargs = dict(dim=4, epochs=3, batch_size=32, progress=False)
    clean = glove.train(m, vocab, cache=False, **kwargs)
    real = glove._Trainer.epoch

    def interrupted(self):
        if len(self.losses) == 2:
            raise KeyboardInterrupt
        real(self)

    def truncate_every_file():
        files = [p for p in store.cache_path(glove.KIND, "x").parent.rglob("*")
                 if p.is_file() and ".damaged" not in p.as_posix()]
        for p in files:
            p.write_bytes(p.read_bytes()[:100])
        return files

    monkeypatch.setattr(glove._Trainer, "epoch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        glove.train(m, vocab, **kwargs)
    monkeypatch.setattr(glove._Trainer, "epoch", real)
    damaged, = truncate_every_file()  # the checkpoint after two epochs
    with pytest.warns(store.DamagedCacheWarning, match=rf"{re.escape(str(damaged))} is damaged"):
        restarted = glove.train(m, vocab, **kwargs)
    assert len(restarted.seconds) == 3  # all epochs again
    np.testing.assert_array_equal(restarted.kv.vectors, clean.kv.vectors)
    damaged, = truncate_every_file()  # the trained vectors
    with pytest.warns(store.DamagedCacheWarning, match=rf"{damaged.parent.name} is damaged"):
        again = glove.train(m, vocab, **kwargs)
    assert len(again.seconds) == 3 and again.losses == clean.losses
    np.testing.assert_array_equal(again.kv.vectors, clean.kv.vectors)


def test_checkpoints_are_written_at_most_every_checkpoint_seconds(private_cache, monkeypatch):
    m = sp.random(30, 30, density=0.4, random_state=1, format="csr") * 20 + sp.eye(30)
    saves = []
    real = glove.store.Checkpoint.save
    monkeypatch.setattr(glove.store.Checkpoint, "save",
                        lambda self, state: (saves.append(len(state["losses"])),
                                             real(self, state)))
    kwargs = dict(dim=4, epochs=4, batch_size=32, progress=False)
    glove.train(m, [f"w{i}" for i in range(30)], **kwargs)  # epochs far shorter than 30 s
    assert saves == []
    monkeypatch.setattr(glove, "CHECKPOINT_SECONDS", 0.0)
    glove.train(m, [f"w{i}" for i in range(30)], **{**kwargs, "seed": 1})
    assert saves == [1, 2, 3]  # after every epoch but the last, which is the result itself
