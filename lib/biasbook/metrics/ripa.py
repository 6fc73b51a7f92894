"""Relational Inner Product Association (RIPA; Ethayarajh, Duvenaud & Hirst 2019).

For a relation vector b of unit length, RIPA(w) = w . b, with w the word's vector as it is (not
normalised). For one word pair (f, m), b = (f - m) / ||f - m||: a positive score leans towards the
first word of the pair.

Two ways to use several pairs, selected with ``method``:

- ``"pair-mean"`` (default): the indirect-stereotypes paper's Appendix C "average[s] the RIPA score
  for all pairs of feminine and masculine words tested by WEAT": the mean over pairs (f_i, m_i) of
  w . (f_i - m_i) / ||f_i - m_i||. Pass pairs as (feminine, masculine) and, as in the paper's
  Table 5, positive means a feminine association.
- ``"pca"``: Ethayarajh et al.'s relation vector for a set of pairs, the first principal direction
  of the differences {f_i - m_i}, normalised. It is taken without centring the differences (the
  first right singular vector of the difference matrix): centring would subtract the very
  direction the pairs share. Its sign is chosen to agree with the mean difference.

Words or pairs missing from the vectors (:func:`~biasbook.embeddings.vectors.oov_report`) are
reported, never scored silently as NaN: every requested word has a row, OOV rows say so in
``oov``/``reason``, and the pairs left out for OOV words are listed in ``frame.attrs["pairs_oov"]``.
A word whose vector holds NaN or inf is left out the same way, with that reason; a pair with such
a word is an error (it would spoil every score).

>>> from gensim.models import KeyedVectors
>>> kv = KeyedVectors(2)
>>> kv.add_vectors(["she", "he", "nurse"], np.array([[1., 1.], [-1., 1.], [3., 2.]]))
>>> ripa(kv, ["nurse", "pilot"], [("she", "he")])[["word", "ripa", "oov"]]
    word  ripa    oov
0  nurse   3.0  False
1  pilot   NaN   True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from biasbook import validate
from biasbook.embeddings.vectors import oov_report

METHODS = ("pair-mean", "pca")


def relation_vector(differences: np.ndarray) -> np.ndarray:
    """Unit first principal direction (uncentred) of the rows of ``differences``, signed along
    their mean.

    >>> relation_vector(np.array([[2., 0.], [3., 0.]]))
    array([1., 0.])
    """
    differences = np.asarray(differences, dtype=np.float64)
    _, _, vt = np.linalg.svd(differences, full_matrices=False)
    b = vt[0]
    return -b if differences.mean(axis=0) @ b < 0 else b


def ripa_arrays(words: np.ndarray, first: np.ndarray, second: np.ndarray, *,
                method: str = "pair-mean") -> np.ndarray:
    """RIPA of each row of ``words`` for the pairs (``first[i]``, ``second[i]``)."""
    validate.choice("method", method, METHODS)
    words, first, second = (np.asarray(a, dtype=np.float64) for a in (words, first, second))
    for name, a in (("words", words), ("first", first), ("second", second)):
        bad = np.flatnonzero(~np.isfinite(a).all(axis=-1))
        if bad.size:
            raise ValueError(f"rows {bad[:10].tolist()} of {name} have NaN or infinite values")
    diffs = first - second
    norms = np.linalg.norm(diffs, axis=1)
    if np.any(norms == 0):
        raise ValueError("a pair has two identical vectors: it defines no direction")
    if method == "pca":
        return words @ relation_vector(diffs)
    return (words @ (diffs / norms[:, None]).T).mean(axis=1)


def ripa(kv, words: Sequence[str], pairs: Sequence[tuple[str, str]], *,
         method: str = "pair-mean", case: str = "exact", subword: bool = False) -> pd.DataFrame:
    """RIPA of ``words`` on ``kv`` for word ``pairs`` (first, second): one row per word.

    Columns: ``word``, ``ripa``, ``n_pairs`` (pairs used), ``oov`` (left out: missing, or its
    vector is not finite), ``reason``. ``case``, ``subword``: the lookup's (``oov_report``).
    """
    words = validate.word_list("words", words)
    if isinstance(pairs, str) or not pairs:
        raise ValueError("pairs must be a non-empty list of (first, second) word pairs")
    pairs = [tuple(p) for p in pairs]
    if any(len(p) != 2 or not all(isinstance(w, str) for w in p) for p in pairs):
        raise ValueError(f"every pair must be two words; got {pairs!r}")
    key = oov_report(kv, {"words": words, "pairs": [w for p in pairs for w in p]}, case=case,
                     subword=subword).key  # word -> its key in kv, for every word found
    usable = [p for p in pairs if p[0] in key and p[1] in key]
    pairs_oov = [p for p in pairs if p not in usable]
    if not usable:
        raise ValueError(f"no pair has both words in the vocabulary: {pairs_oov}")
    finite = {w: bool(np.isfinite(kv[key[w]]).all())
              for w in {*words, *(w for p in usable for w in p)} if w in key}
    broken = sorted({w for p in usable for w in p if not finite[w]})
    if broken:
        raise ValueError(f"the vectors of pair words {broken} have NaN or infinite values")
    found = [w for w in words if w in key and finite[w]]
    scores = {}
    if found:
        first, second = (np.asarray(kv[[key[p[i]] for p in usable]]) for i in (0, 1))
        values = ripa_arrays(np.asarray(kv[[key[w] for w in found]]), first, second,
                             method=method)
        scores = dict(zip(found, values.tolist(), strict=True))
    frame = pd.DataFrame({
        "word": words,
        "ripa": [scores.get(w, np.nan) for w in words],
        "n_pairs": [len(usable) if w in scores else 0 for w in words],
        "oov": [w not in scores for w in words],
        "reason": ["" if w in scores else "not in the vocabulary" if w not in key
                   else "its vector has NaN or infinite values" for w in words]})
    frame.attrs["pairs_oov"] = pairs_oov
    frame.attrs["method"] = method
    return frame
