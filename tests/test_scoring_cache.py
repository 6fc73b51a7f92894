"""The persistent score cache: hits, resuming an interrupted run, damaged files and rows."""

import sqlite3

import numpy as np
import pytest

from biasbook import models, testing
from biasbook.scoring import ScoreCache, score_sentences, sentences

pytestmark = pytest.mark.usefixtures("one_torch_thread", "private_cache")

TEXTS = ["people in paris are kind .", "people in london are kind .", "the cat is good",
         "a dog", "people in tokyo are very lazy .", "the man was unbelievable ."]


@pytest.fixture(scope="module")
def lm():
    tok = testing.tiny_tokenizer()
    return models.from_model(testing.tiny_model("llama", len(tok)), tok, name="tiny-llama")


@pytest.fixture
def computed(monkeypatch):
    """Record the sequences each engine run is asked to score; optionally stop after N batches."""
    calls, stop_after = [], {"batches": None}
    engine = sentences.clm_logprobs

    def recording(lm, seqs, budget, **kwargs):
        calls.append(len(seqs))
        for n, batch in enumerate(engine(lm, seqs, budget, **kwargs)):
            if stop_after["batches"] is not None and n == stop_after["batches"]:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(sentences, "clm_logprobs", recording)
    return calls, stop_after


def cache_file(lm):
    return ScoreCache.for_model(lm).path


def test_a_rerun_computes_only_new_sentences(lm, computed):
    calls, _ = computed
    first = score_sentences(lm, TEXTS[:4])
    again = score_sentences(lm, TEXTS)
    assert calls == [4, 2]
    np.testing.assert_array_equal(again.mean[:4], first.mean)
    score_sentences(lm, TEXTS[::-1])
    assert calls == [4, 2]  # all hits
    fresh = score_sentences(lm, TEXTS, cache=False)
    np.testing.assert_array_equal(again.mean, fresh.mean)  # cold and warm are identical


def test_an_interrupted_run_resumes_without_recomputing_finished_batches(lm, computed):
    calls, stop_after = computed
    stop_after["batches"] = 2
    with pytest.raises(KeyboardInterrupt):
        score_sentences(lm, TEXTS, batch_tokens=8)  # one or two sentences per batch
    stored = ScoreCache.for_model(lm).get(sentences.method_key(lm, "clm", "paper"),
                                                      TEXTS)
    assert 2 <= len(stored) < len(TEXTS)  # the two finished batches, nothing half-written
    stop_after["batches"] = None
    resumed = score_sentences(lm, TEXTS, batch_tokens=8)
    assert calls == [len(TEXTS), len(TEXTS) - len(stored)]
    fresh = score_sentences(lm, TEXTS, cache=False)
    np.testing.assert_allclose(resumed.mean, fresh.mean, atol=1e-6)


def test_methods_and_modes_are_cached_apart(tmp_path):
    tok = testing.tiny_tokenizer()
    bert = models.from_model(testing.tiny_model("bert", len(tok)), tok, name="tiny-bert")
    aul, pll = (score_sentences(bert, TEXTS, m) for m in ("aul", "pll"))
    assert not np.allclose(aul.mean, pll.mean)
    np.testing.assert_array_equal(score_sentences(bert, TEXTS, "pll").mean, pll.mean)
    np.testing.assert_allclose(score_sentences(bert, TEXTS, "pll", cache=False).mean, pll.mean,
                               atol=1e-6)


def test_a_damaged_cache_file_is_moved_aside_with_a_warning(lm, computed):
    calls, _ = computed
    want = score_sentences(lm, TEXTS).mean
    path = cache_file(lm)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    path.write_bytes(b"this is not an sqlite file" * 100)
    with pytest.warns(UserWarning, match="damaged"):
        got = score_sentences(lm, TEXTS)
    np.testing.assert_allclose(got.mean, want, atol=1e-6)
    assert calls == [len(TEXTS), len(TEXTS)]
    assert list(path.parent.glob(f"{path.name}.damaged-*"))
    score_sentences(lm, TEXTS)  # the fresh file works
    assert calls == [len(TEXTS), len(TEXTS)]


def test_a_damaged_row_is_detected_and_recomputed(lm, computed):
    calls, _ = computed
    want = score_sentences(lm, TEXTS).mean
    with sqlite3.connect(cache_file(lm)) as db:
        value, = db.execute("SELECT value FROM scores WHERE query = ?", (TEXTS[2],)).fetchone()
        flipped = bytes([value[0] ^ 0xFF]) + value[1:]
        db.execute("UPDATE scores SET value = ? WHERE query = ?", (flipped, TEXTS[2]))
    with pytest.warns(UserWarning, match="damaged row"):
        got = score_sentences(lm, TEXTS)
    np.testing.assert_allclose(got.mean, want, atol=1e-6)
    assert calls == [len(TEXTS), 1]


def test_an_unwritable_cache_is_skipped_with_a_warning(lm, tmp_path):
    store = ScoreCache(tmp_path / "no-such-dir" / "blocked" / "x.sqlite")
    (tmp_path / "no-such-dir").write_text("a file where a folder should be")
    with pytest.warns(UserWarning):
        got = score_sentences(lm, TEXTS, cache=store)
    np.testing.assert_allclose(got.mean, score_sentences(lm, TEXTS, cache=False).mean, atol=1e-6)


def test_progress_bar_can_be_shown_or_disabled(lm, capsys):
    score_sentences(lm, TEXTS, cache=False, progress=True)
    assert "tiny-llama clm" in capsys.readouterr().err
    score_sentences(lm, TEXTS, cache=False, progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.bad_input(
    "The same weights under the same name, scored through another tokenizer",
    "Scored afresh: the score cache is keyed on the tokenizer as well as the weights")
def test_the_cache_is_keyed_on_the_tokenizer_too():
    plain, spelling = testing.tiny_tokenizer(), testing.tiny_tokenizer(spell=True)
    weights = testing.tiny_model("gpt2", len(spelling))
    text = ["people in kenya are kind ."]  # [UNK] for `plain`, spelled k ##e ... by `spelling`
    with pytest.warns(UserWarning, match="unknown"):
        before = score_sentences(models.from_model(weights, plain, name="tiny"), text,
                                 unknown="report")
    spelled = models.from_model(weights, spelling, name="tiny")
    assert spelled.fingerprint == models.fingerprint(weights)  # the same weights, the same name
    cached = score_sentences(spelled, text)
    fresh = score_sentences(spelled, text, cache=False)
    np.testing.assert_array_equal(cached.mean, fresh.mean)
    assert cached.mean[0] != before.mean[0]


@pytest.mark.bad_input(
    'Weights changed in place (a training step, an edit of whole tensors) without '
    '`lm.refresh_fingerprint()`, then scored with the cache',
    'caught by a probe of 64 elements of every weight tensor (milliseconds): a warning, the '
    'fingerprint is recomputed and the new weights scored, not the old weights\' cached scores '
    '(an edit of a few elements can escape the probe: call `refresh_fingerprint()`)')
def test_weights_changed_in_place_are_scored_afresh(lm):
    import copy

    import torch

    lm = copy.copy(lm)
    lm.model = copy.deepcopy(lm.model)
    before = score_sentences(lm, TEXTS)
    ids = torch.tensor([lm.encode(TEXTS[0])])
    optimiser = torch.optim.SGD(lm.model.parameters(), lr=0.5)
    lm.model(input_ids=ids, labels=ids).loss.backward()  # one training step, in place
    optimiser.step()
    with pytest.warns(UserWarning, match="weights of tiny-llama changed.*refresh_fingerprint"):
        after = score_sentences(lm, TEXTS)
    assert lm.fingerprint == models.fingerprint(lm.model)
    np.testing.assert_allclose(after.mean, score_sentences(lm, TEXTS, cache=False).mean,
                               atol=1e-6)
    assert not np.allclose(after.mean, before.mean, atol=1e-4)


def test_a_sentence_cached_without_scored_tokens_is_refused_too():
    # Caches written before such sentences were refused hold an empty array for them.
    tok = testing.tiny_tokenizer()
    bert = models.from_model(testing.tiny_model("bert", len(tok)), tok, name="tiny-bert")
    store = ScoreCache.for_model(bert)
    store.put(sentences.method_key(bert, "aul", "paper"), {"[MASK]": np.zeros(0, np.float32)})
    store.close()
    with pytest.raises(ValueError, match=r"have no token to score.*\['\[MASK\]'\].*special"):
        score_sentences(bert, ["[MASK]", TEXTS[0]])
