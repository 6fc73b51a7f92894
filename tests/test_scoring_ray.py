"""Scoring sharded over Ray workers (biasbook.scoring.distributed): the same scores as the
in-process engine, the same cache, and a run that resumes after a failed or killed worker.

The Ray tests need the optional extra (``pip install 'biasbook[ray]'``) and are skipped without
it; they start a local Ray once for the module (tens of seconds on a busy machine) and are slow.
"""

import importlib.util
import math
import re
import tomllib

import numpy as np
import pytest

from biasbook import models, testing
from biasbook.paths import PROJECT_ROOT
from biasbook.scoring import ScoreCache, distributed, score_sentences, slot_probabilities
from biasbook.scoring.distributed import ModelRecipe, Workers
from biasbook.scoring.sentences import method_key

HAS_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(
    not HAS_RAY, reason="Ray is not installed: pip install 'biasbook[ray]' (optional extra)")

REGIONS = ["paris", "london", "tokyo", "kenya", "peru", "chile"]
WORDS = ["kind", "lazy", "smart", "quick", "bad", "good", "unbelievable"]
SENTENCES = [f"people in {r} are {w} ." for r in REGIONS for w in WORDS]  # 42
RTOL = 1e-6


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Tiny random-init models saved to folders: a worker rebuilds them by path."""
    tok = testing.tiny_tokenizer(spell=True)
    out = {}
    for arch in ("gpt2", "bert"):
        folder = tmp_path_factory.mktemp(arch)
        testing.tiny_model(arch, len(tok), positions=128).save_pretrained(folder)
        tok.save_pretrained(folder)
        out[arch] = folder
    return out


@pytest.fixture(scope="module")
def gpt(folders):
    return models.load(str(folders["gpt2"]), device="cpu")


@pytest.fixture(scope="module")
def bert(folders):
    return models.load(str(folders["bert"]), device="cpu")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module's runs; shut down afterwards."""
    import ray

    yield
    ray.shutdown()


def assert_same(local, remote):
    assert local.sentences == remote.sentences
    for a, b in zip(local.token_logprobs, remote.token_logprobs, strict=True):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=0)
    np.testing.assert_allclose(remote.mean, local.mean, rtol=RTOL, atol=0)


# ------------------------------------------------------------------------ without Ray


def test_workers_spec_is_validated():
    assert Workers.of(3) == Workers(n=3)
    assert Workers.of("ray://head:10001").address == "ray://head:10001"
    for bad in (0, -1, True, 2.5, None, Workers(threads=0), Workers(failure="crash")):
        with pytest.raises(ValueError, match="workers"):
            Workers.of(bad)
    assert distributed.shard_size(42, 2) == distributed.SHARD_MIN
    assert distributed.shard_size(10**7, 2) == distributed.SHARD_MAX


def test_a_model_built_in_memory_is_refused_before_any_worker_starts(tok):
    lm = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    with pytest.raises(ValueError, match="save_pretrained"):
        score_sentences(lm, SENTENCES[:2], cache=False, workers=2)


def test_a_worker_refuses_weights_other_than_the_drivers(folders):
    lm = models.load(str(folders["gpt2"]), device="cpu")
    recipe = ModelRecipe.of(lm)
    assert recipe.load("cpu").fingerprint == lm.fingerprint  # what a worker does
    lm.model.get_input_embeddings().weight.data.mul_(2)  # changed in place, not saved
    with pytest.warns(UserWarning, match="fingerprint recomputed"):
        changed = ModelRecipe.of(lm)
    with pytest.raises(RuntimeError, match="another fingerprint"):
        changed.load("cpu")


def test_plain_engines_cannot_run_on_workers(gpt):
    from biasbook.scoring.runner import cached_run

    def engine(todo, budget):
        yield list(range(len(todo))), [np.zeros(1)] * len(todo)

    with pytest.raises(ValueError, match="cannot run on workers"):
        cached_run(gpt, "k", dict.fromkeys(["a"]), engine, batch_tokens=None, cache=False,
                   progress=False, desc="x", workers=2)


def test_biasbook_workers_asks_for_workers_only_where_they_can_help(folders, tok, monkeypatch):
    lm = models.load(str(folders["gpt2"]), device="cpu")
    enough = distributed.ENVIRONMENT_MIN_QUERIES
    monkeypatch.delenv("BIASBOOK_WORKERS", raising=False)
    assert distributed.from_environment(lm, enough) is None  # unset: in process
    monkeypatch.setenv("BIASBOOK_WORKERS", "3")
    assert distributed.from_environment(lm, enough) == 3
    assert distributed.from_environment(lm, enough - 1) is None  # too small to pay Ray's start
    monkeypatch.setenv("BIASBOOK_WORKERS", "auto")
    assert distributed.from_environment(lm, enough) == "auto"
    built = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="built-in-memory")
    with pytest.warns(UserWarning, match="cannot be rebuilt on a worker"):
        assert distributed.from_environment(built, enough) is None
    scores = score_sentences(built, SENTENCES[:3], cache=False)  # small: never asks Ray
    assert len(scores) == 3


def test_the_extra_is_pinned_alike_in_pyproject_and_environment_yml():
    extra = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["ray"]
    assert extra == [f"ray[data]=={distributed.RAY_VERSION}"]
    mirrored = re.findall(r"^#\s+-\s+(ray\[data\]==\S+)", (PROJECT_ROOT / "environment.yml")
                          .read_text(), flags=re.M)
    assert mirrored == extra


# --------------------------------------------------------------------------- with Ray


@pytest.mark.usefixtures("one_torch_thread", "local_ray")
@pytest.mark.slow
@needs_ray
def test_two_workers_score_as_the_in_process_engine(gpt, bert):
    workers = Workers(n=2, shard=8)
    for lm, method in ((gpt, "clm"), (bert, "pll")):
        local = score_sentences(lm, SENTENCES, method, cache=False)
        remote = score_sentences(lm, SENTENCES, method, cache=False, workers=workers)
        assert_same(local, remote)
        assert distributed.last_run["workers"] == 2
        assert distributed.last_run["shards"] == math.ceil(len(SENTENCES) / 8)
    templates = ["people in {} are kind .", "{} is [MASK] ."]
    local = slot_probabilities(bert, templates, REGIONS, log=True, cache=False)
    remote = slot_probabilities(bert, templates, REGIONS, log=True, cache=False, workers=workers)
    np.testing.assert_allclose(remote, local, rtol=RTOL, atol=0)


@pytest.mark.usefixtures("one_torch_thread", "local_ray", "private_cache")
@pytest.mark.slow
@needs_ray
def test_a_failed_run_resumes_on_another_number_of_workers_with_nothing_lost(bert):
    store = ScoreCache.for_model(bert)
    with pytest.raises(Exception, match="stops after 2 shard"):
        score_sentences(bert, SENTENCES, "pll", workers=Workers(n=2, shard=4, fail_after=2))
    stored = distributed.last_run["queries"]  # what came back, and was written, before the error
    cached = store.get(method_key(bert, "pll", "paper"), SENTENCES)
    assert 0 < len(cached) == stored < len(SENTENCES)
    missing = [s for s in SENTENCES if s not in cached]

    resumed = score_sentences(bert, SENTENCES, "pll", workers=Workers(n=1, shard=4))
    assert distributed.last_run["queries"] == len(missing)  # only the rest was computed
    forwards = distributed.last_run["forwards"]
    fresh = score_sentences(bert, missing, "pll", cache=False, workers=Workers(n=1, shard=4))
    assert distributed.last_run["forwards"] == forwards  # the same passes as for the rest alone
    assert_same(score_sentences(bert, SENTENCES, "pll", cache=False), resumed)
    np.testing.assert_array_equal(fresh.mean, resumed.mean[[SENTENCES.index(s)
                                                             for s in missing]])

    distributed.last_run.clear()
    again = score_sentences(bert, SENTENCES, "pll", workers=2)  # all cached: no worker starts
    assert distributed.last_run == {}
    np.testing.assert_array_equal(again.mean, resumed.mean)
    store.close()


@pytest.mark.usefixtures("one_torch_thread", "local_ray", "private_cache")
@pytest.mark.slow
@needs_ray
def test_a_killed_worker_is_restarted_and_nothing_is_lost(gpt):
    killed = Workers(n=2, shard=4, fail_after=1, failure="exit")  # each actor's process exits
    remote = score_sentences(gpt, SENTENCES, workers=killed)
    assert distributed.last_run["queries"] == len(SENTENCES)
    assert_same(score_sentences(gpt, SENTENCES, cache=False), remote)
