"""word2vec / fastText training: same seed, same vectors (also across processes with different
hash salts); content-keyed cache; subword vectors for OOV words; clear errors."""

import os
import subprocess
import sys

import numpy as np
import pytest

from biasbook.embeddings import train

# Two clusters of words that share their contexts: pets with pet words, vehicles with road words.
_RNG = np.random.default_rng(0)
CORPUS = [["my", str(_RNG.choice(["cat", "dog", "kitten"])), "likes", "to", "purr", "and", "nap"]
          for _ in range(150)]
CORPUS += [["the", str(_RNG.choice(["car", "truck", "bus"])), "drives", "on", "the", "road",
            "fast"] for _ in range(150)]
PARAMS = {"vector_size": 16, "min_count": 1, "epochs": 20, "window": 3}


def _cos(kv, a, b):
    u, v = kv[a], kv[b]
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


@pytest.mark.parametrize("trainer", [train.word2vec, train.fasttext])
def test_same_seed_same_vectors_other_seed_other_vectors(trainer):
    a = trainer(CORPUS, seed=1, cache=False, **PARAMS)
    b = trainer(CORPUS, seed=1, cache=False, **PARAMS)
    c = trainer(CORPUS, seed=2, cache=False, **PARAMS)
    assert a.index_to_key == b.index_to_key
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert not np.allclose(a.vectors, c.vectors)


def test_same_vectors_in_another_process_with_another_hash_salt():
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            "from test_embedding_training import CORPUS, PARAMS; "
            "from biasbook.embeddings import train; "
            "kv = train.word2vec(CORPUS, seed=1, cache=False, **PARAMS); "
            "sys.stdout.write(kv['cat'].tobytes().hex())")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    here = train.word2vec(CORPUS, seed=1, cache=False, **PARAMS)["cat"]
    assert out == here.tobytes().hex()


@pytest.mark.parametrize("trainer", [train.word2vec, train.fasttext])
def test_vectors_learn_shared_contexts(trainer):
    kv = trainer(CORPUS, seed=0, cache=False, **PARAMS)
    assert _cos(kv, "cat", "dog") > _cos(kv, "cat", "truck")
    assert _cos(kv, "car", "bus") > _cos(kv, "car", "kitten")


def test_the_cache_returns_the_stored_vectors_without_training(private_cache, monkeypatch):
    first = train.word2vec(CORPUS, seed=3, **PARAMS)

    def no_training(*args, **kwargs):
        raise AssertionError("trained again despite a cached result")

    monkeypatch.setattr(train.Word2Vec, "train", no_training)
    again = train.word2vec(CORPUS, seed=3, **PARAMS)
    np.testing.assert_array_equal(first.vectors, again.vectors)
    with pytest.raises(AssertionError, match="trained again"):  # another seed is another key
        train.word2vec(CORPUS, seed=4, **PARAMS)
    with pytest.raises(AssertionError, match="trained again"):  # another corpus too
        train.word2vec(CORPUS[:-1], seed=3, **PARAMS)
    with pytest.raises(AssertionError, match="trained again"):  # and a gensim default changed
        train.word2vec(CORPUS, seed=3, **PARAMS, negative=6)


def test_subword_vectors_answer_oov_words_and_say_so():
    kv = train.fasttext(CORPUS, seed=0, cache=False, **PARAMS)
    assert "kittens" not in kv.key_to_index
    sub, synthesised = train.subword_vectors(kv, ["cat", "kittens", "cat", "roads", "kitten"])
    assert sub.index_to_key == ["cat", "kittens", "roads", "kitten"]
    assert synthesised == ["kittens", "roads"]
    np.testing.assert_allclose(sub["kittens"], kv["kittens"], rtol=1e-6)
    assert _cos(sub, "kittens", "kitten") > _cos(sub, "kittens", "roads")  # shared n-grams
    with pytest.raises(TypeError, match="fastText"):
        train.subword_vectors(train.word2vec(CORPUS, cache=False, **PARAMS), ["cat"])


@pytest.mark.parametrize("sentences, params, error, match", [
    ("the cat sat", {}, TypeError, "bare string"),
    (["the cat", "sat"], {}, TypeError, "tokenize it first"),
    ([[], []], {}, ValueError, "empty"),
    ([["a", "b"]], {"min_count": 5}, ValueError, "min_count=5"),
    ([["a", "b"]], {"workers": 4}, ValueError, "single-worker"),
])
def test_bad_input(sentences, params, error, match):
    with pytest.raises(error, match=match):
        train.word2vec(sentences, cache=False, **params)


def test_corpus_key_sees_order_and_boundaries():
    assert train.corpus_key([["a", "b"], ["c"]]) != train.corpus_key([["c"], ["a", "b"]])
    assert train.corpus_key([["ab"]]) != train.corpus_key([["a", "b"]])


def test_a_damaged_cached_model_is_set_aside_and_trained_again(private_cache):
    from biasbook import store

    first = train.word2vec(CORPUS, seed=5, **PARAMS)
    (kv_file,) = (store.cache_path("word2vec", "x").parent).rglob("vectors.kv")
    kv_file.write_bytes(kv_file.read_bytes()[:100])  # truncated, as by a full disk
    with pytest.warns(store.DamagedCacheWarning, match="moved aside"):
        again = train.word2vec(CORPUS, seed=5, **PARAMS)
    np.testing.assert_array_equal(first.vectors, again.vectors)
    assert list(kv_file.parent.parent.glob("*.damaged"))
