"""Train static word vectors with gensim: word2vec and fastText, deterministic and cached.

- :func:`word2vec` (Mikolov et al. 2013) and :func:`fasttext` (Bojanowski et al. 2017) train on
  token lists and return the trained ``KeyedVectors`` (for fastText, ``FastTextKeyedVectors``,
  which also answer words outside the vocabulary from their character n-grams).
- Training is **single-worker and seeded**: gensim's multi-threaded training interleaves the
  workers' updates in an order that varies from run to run, so ``workers`` is always 1 and the
  same corpus, parameters and seed give the same vectors bit for bit (gensim initialises vectors
  from a seeded numpy generator, not from Python's salted ``hash``).
- Results are cached under ``cache_dir()/<word2vec|fasttext>/<key>/vectors.kv``, keyed by the
  corpus's content (:func:`corpus_key`), every parameter after defaults, the seed, gensim's version
  and :data:`TRAINER_VERSION`; an interrupted run leaves nothing behind.
- :func:`subword_vectors`: plain ``KeyedVectors`` for a list of words from fastText vectors, with
  the words that only n-grams could answer listed (for tests that accept such words, like the
  region-aware WEAT of Borah et al. 2024, whose reason to choose fastText is exactly this).

Parameters not given take gensim's defaults (``vector_size=100, window=5, min_count=5, sg=0,
epochs=5``, for fastText also ``min_n=3, max_n=6``).

>>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 20
>>> kv = word2vec(corpus, vector_size=8, min_count=1, epochs=2, cache=False)
>>> sorted(kv.key_to_index), kv.vector_size
(['cat', 'dog', 'sat', 'the'], 8)
>>> bool((kv["cat"] == word2vec(corpus, vector_size=8, min_count=1, epochs=2, cache=False)["cat"]
...       ).all())
True
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterable, Sequence

import gensim
import numpy as np
from gensim.models import FastText, KeyedVectors, Word2Vec

from biasbook import store, validate
from biasbook.embeddings.vectors import from_arrays, oov_report, read_keyed_vectors

#: Bump when the training code changes what it produces: it keys the cache.
TRAINER_VERSION = 1
_MODELS = {"word2vec": Word2Vec, "fasttext": FastText}
_RESERVED = ("workers", "sentences", "corpus_file", "corpus_iterable", "seed", "callbacks")
_UNKEYED = {"self", "trim_rule", "hashfxn", *_RESERVED}  # functions, or fixed by this module


def _check_corpus(sentences: Iterable[Sequence[str]]) -> list[list[str]]:
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of token lists, not a bare string")
    corpus = []
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(f"sentences must be token lists; sentence {i} is the string "
                            f"{sentence[:40]!r} (tokenize it first)")
        tokens = list(sentence)
        if any(not isinstance(t, str) for t in tokens):
            raise TypeError(f"sentence {i} holds a token that is not a string")
        corpus.append(tokens)
    if not any(corpus):
        raise ValueError("the corpus is empty: no sentence has a token")
    return corpus


def corpus_key(sentences: Iterable[Sequence[str]]) -> str:
    """A short sha256 of token lists: equal exactly when the sentences and their order are.

    >>> corpus_key([["a", "b"], ["c"]]) == corpus_key([["a", "b"], ["c"]])
    True
    >>> corpus_key([["a", "b"], ["c"]]) == corpus_key([["a"], ["b", "c"]])
    False
    """
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update("\x1f".join(sentence).encode())
        digest.update(b"\x1e")  # sentence boundaries matter: they bound the context window
    return digest.hexdigest()[:store.KEY_LENGTH]


def _train(kind: str, sentences, seed: int, cache: bool, params: dict) -> KeyedVectors:
    reserved = sorted(set(params) & set(_RESERVED))
    if reserved:
        raise ValueError(f"{reserved} cannot be set: training is single-worker and seeded "
                         "(pass seed=...) and the corpus is the first argument")
    corpus = _check_corpus(sentences)
    model_class = _MODELS[kind]
    model = model_class(seed=seed, workers=1, **params)  # no corpus yet: nothing is trained
    # The key holds every setting after gensim's defaults, so a changed default is a new key.
    settable = set(inspect.signature(model_class.__init__).parameters) - _UNKEYED
    effective = {name: getattr(model, name) for name in settable if hasattr(model, name)}
    key = store.content_key(kind, corpus_key(corpus), {**effective, **params}, seed,
                            gensim.__version__, TRAINER_VERSION)
    target = store.cache_path(kind, key)
    if cache and (kv := store.read_or_set_aside(target, read_keyed_vectors)) is not None:
        return kv
    model.build_vocab(corpus)
    if not model.wv.index_to_key:
        raise ValueError(f"no word occurs min_count={model.min_count} times in the "
                         f"{len(corpus)} sentences: lower min_count or give more text")
    model.train(corpus, total_examples=model.corpus_count, epochs=model.epochs)
    if cache:
        with store.atomic_dir(target) as staging:
            model.wv.save(str(staging / "vectors.kv"))
    return model.wv


def word2vec(sentences: Iterable[Sequence[str]], *, seed: int = 0, cache: bool = True,
             **params) -> KeyedVectors:
    """word2vec vectors of ``sentences`` (token lists); ``params`` go to gensim's ``Word2Vec``."""
    return _train("word2vec", sentences, seed, cache, params)


def fasttext(sentences: Iterable[Sequence[str]], *, seed: int = 0, cache: bool = True,
             **params) -> KeyedVectors:
    """fastText vectors of ``sentences``; ``params`` go to gensim's ``FastText``. The result
    answers any word, in the vocabulary or not, from its character n-grams."""
    return _train("fasttext", sentences, seed, cache, params)


def subword_vectors(kv, words: Sequence[str]) -> tuple[KeyedVectors, list[str]]:
    """``(vectors, synthesised)``: plain ``KeyedVectors`` for the distinct ``words`` as
    :func:`~biasbook.embeddings.vectors.oov_report` looks them up with ``subword=True``, and the
    words outside ``kv``'s vocabulary whose vectors fastText built from character n-grams.

    A word that has no n-gram of the model's lengths (or whose n-grams give the zero vector) is
    left out: a test given these vectors then reports it as OOV instead of using a zero vector.
    """
    words = list(dict.fromkeys(validate.word_list("words", words)))
    report = oov_report(kv, {"words": words}, subword=True)
    keys = report.keys["words"]
    if not keys:
        return KeyedVectors(kv.vector_size), []
    return from_arrays(keys, np.asarray(kv[keys], dtype=np.float64)), report.synthesised["words"]
