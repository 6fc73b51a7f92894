"""BIRM: neutral co-occurrence probabilities before GloVe (indirect stereotypes paper, sec. 4).

For a random word–context pair (c, d), let A: c = a, B: d = b, X: the pair is near a word of
the masculine set, Y: near a word of the feminine set. By inclusion–exclusion,

    P(A∩B) = [P(B∩X) P(A|B∩X) + P(B∩Y) P(A|B∩Y) - P(A∩B∩X∩Y)] / P(X∪Y | A∩B).

Replacing b by a hypothetical neutral b' (P(X∩B') = P(Y∩B') = the mean of P(X∩B), P(Y∩B)) gives
Eq. 2; averaging it with the same step for a gives Eq. 3, which BIRM uses for every pair where a
or b is a word to neutralise:

    P(A'∩B') ≈ [¼ (P(B∩X) + P(B∩Y)) (P(A|B∩X) + P(A|B∩Y))
               + ¼ (P(A∩X) + P(A∩Y)) (P(B|A∩X) + P(B|A∩Y)) - P(A∩B∩X∩Y)] / P(X∪Y | A∩B).

In counts (the total N cancels), with n = X_ab, n_x, n_y, n_xy its parts near X, Y and X∩Y,
n_u = n_x + n_y - n_xy, and the marginals r_x(a) = sum_b n_x(a, b) (P(A∩X) N) and
c_x(b) = sum_a n_x(a, b) (P(B∩X) N):

    n' = n / n_u * [¼ (c_x + c_y)(n_x / c_x + n_y / c_y) + ¼ (r_x + r_y)(n_x / r_x + n_y / r_y)
                    - n_xy].

So the occurrences near a marker are replaced by their neutral estimate and the occurrences near
none are scaled by the same factor (the paper adjusts those too). Implementation choices where the
paper is silent, each explicit here:

- a pair is modified only when all four of A∩X, A∩Y, B∩X, B∩Y occur (r_x, r_y, c_x, c_y > 0,
  the paper's condition) and n_u > 0 (a pair never seen near a marker has no estimate and keeps
  its count);
- the words to neutralise default to every word except the markers themselves;
- missing words are named, never skipped silently: marker words and words to neutralise absent
  from the vocabulary are listed in :attr:`BirmResult.missing` (absent words to neutralise with a
  warning), and a call that could modify nothing (a marker set absent, no word to neutralise
  seen near both X and Y) is an error rather than a copy of the input;
- ``side="context"`` / ``"word"`` use Eq. 2 (only b, or only a, made neutral) instead of Eq. 3.

The statistics come from :func:`biasbook.text.word_context.word_context_matrix` built with
``markers=(MASCULINE, FEMININE)``, the paper's X and Y
(``data/word-sets/indirect-stereotypes-birm.yml``).

>>> float(neutral_counts(7, 6, 1, 0, rx=7, ry=7, cx=16, cy=8, side="context") / 7)  # 6/7
0.8571428571428571
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from biasbook import datafiles
from biasbook.text.word_context import WordContextMatrix
from biasbook.validate import choice, word_list

MASCULINE, FEMININE = (
    tuple(datafiles.load("word-sets", "indirect-stereotypes-birm")["sets"][side]["words"])
    for side in ("masculine", "feminine"))
SIDES = ("both", "context", "word")


def neutral_counts(n, nx, ny, nxy, *, rx, ry, cx, cy, side: str = "both"):
    """The right-hand side of Eq. 3 (``side="both"``) or Eq. 2, as a count (see module doc).

    All arguments broadcast; ``n_u = nx + ny - nxy`` must be positive, as must the marginals the
    chosen side uses.
    """
    choice("side", side, SIDES)
    nu = nx + ny - nxy
    context = 0.5 * (cx + cy) * (nx / cx + ny / cy)  # b made neutral (Eq. 2)
    word = 0.5 * (rx + ry) * (nx / rx + ny / ry)  # a made neutral
    neutral = {"both": 0.5 * (context + word), "context": context, "word": word}[side]
    return n / nu * (neutral - nxy)


@dataclass(frozen=True)
class BirmResult:
    """The modified matrix and what BIRM could and could not touch.

    ``modifiable`` (over the input vocabulary): words seen in a pair near X and in one near Y.
    ``dropped``: words removed with ``drop_unmodifiable``. ``summary``: counts for the chapter.
    ``missing``: the words absent from the vocabulary, per marker set (``"x"``, ``"y"``) and
    among the words to neutralise (``"neutralize"``, empty by default).
    """

    matrix: WordContextMatrix
    modifiable: np.ndarray
    dropped: list[str]
    summary: dict
    missing: dict[str, list[str]] = field(default_factory=dict)


def marginals(m: WordContextMatrix) -> dict[str, np.ndarray]:
    """Row sums r_x, r_y and column sums c_x, c_y of the X and Y channels."""
    _check_channels(m)
    x, y = m.near["x"], m.near["y"]
    return {"rx": np.asarray(x.sum(axis=1)).ravel(), "ry": np.asarray(y.sum(axis=1)).ravel(),
            "cx": np.asarray(x.sum(axis=0)).ravel(), "cy": np.asarray(y.sum(axis=0)).ravel()}


def modifiable_words(m: WordContextMatrix) -> np.ndarray:
    """Boolean mask: the word occurs in a pair near X and in a pair near Y (rows and columns).

    >>> from biasbook.text.word_context import word_context_matrix
    >>> m = word_context_matrix([["he", "ran"], ["she", "ran"], ["he", "sat"]], window=2,
    ...                         min_count=1, min_sentence_length=1, markers=(["he"], ["she"]))
    >>> dict(zip(m.vocab.tolist(), modifiable_words(m).tolist(), strict=True))
    {'he': False, 'ran': True, 'sat': False, 'she': False}
    """
    s = marginals(m)
    return (s["rx"] > 0) & (s["ry"] > 0) & (s["cx"] > 0) & (s["cy"] > 0)


def birm(
    m: WordContextMatrix,
    *,
    neutralize: Iterable[str] | None = None,
    side: str = "both",
    drop_unmodifiable: bool = False,
) -> BirmResult:
    """Replace every eligible count of ``m.total`` by Eq. 3 (see the module docstring).

    ``neutralize``: the words to neutralise (default: every word that is not a marker). With
    ``drop_unmodifiable``, words to neutralise that BIRM cannot modify are removed from the
    vocabulary (the paper's option for a stronger mitigation). The result's matrix has no
    ``near`` channels: they described the counts before the change.
    """
    choice("side", side, SIDES)
    _check_channels(m)
    neutral, missing = _neutral_words(m, neutralize)
    s = marginals(m)
    ok_word = (s["rx"] > 0) & (s["ry"] > 0) & (s["cx"] > 0) & (s["cy"] > 0)
    total = m.total.tocsr(copy=True)
    total.sort_indices()
    rows = np.repeat(np.arange(len(m), dtype=np.int64), np.diff(total.indptr))
    cols = total.indices.astype(np.int64)
    nx, ny, nxy = (_aligned(total, m.near[k]) for k in ("x", "y", "xy"))
    nu = nx + ny - nxy
    eligible = (ok_word[rows] & ok_word[cols] & (neutral[rows] | neutral[cols]) & (nu > 0))
    if not eligible.any():
        why = (f"the words to neutralise {m.vocab[neutral][:10].tolist()} have no pair whose two "
               "words each occur near both X and Y" if ok_word.any()
               else "no word occurs near both X and Y")
        raise ValueError(f"nothing to modify: {why}, so BIRM would return the matrix unchanged")
    r, c = rows[eligible], cols[eligible]
    before = total.data[eligible]
    after = neutral_counts(before, nx[eligible], ny[eligible], nxy[eligible], rx=s["rx"][r],
                           ry=s["ry"][r], cx=s["cx"][c], cy=s["cy"][c], side=side)
    total.data[eligible] = after
    params = {"side": side, "drop_unmodifiable": drop_unmodifiable,
              "neutralize": ("all but markers" if neutralize is None
                             else sorted(m.vocab[neutral].tolist()))}
    out = WordContextMatrix(m.vocab, m.counts, total, {}, {**m.params, "birm": params})
    dropped: list[str] = []
    if drop_unmodifiable:
        keep = ok_word | ~neutral
        dropped = m.vocab[~keep].tolist()
        out = out.restrict(keep)
    summary = {
        "words": len(m), "modifiable_words": int(ok_word.sum()),
        "neutralised_words": int(neutral.sum()),
        "token_share_of_modifiable_words": float(m.counts[ok_word].sum() / m.counts.sum()),
        "pairs": int(total.nnz), "pairs_modified": int(eligible.sum()),
        "mass_modified_before": float(before.sum()), "mass_modified_after": float(after.sum()),
        "dropped_words": len(dropped),
    }
    return BirmResult(out, ok_word, dropped, summary, missing)


def _neutral_words(m: WordContextMatrix, neutralize: Iterable[str] | None
                   ) -> tuple[np.ndarray, dict[str, list[str]]]:
    """:func:`birm`'s words to neutralise (a mask over ``m.vocab``) and the words of X, Y and
    ``neutralize`` that the vocabulary lacks (an error where a whole set is missing)."""
    xs, ys = m.params["markers"]
    known = set(m.vocab.tolist())
    missing = {"x": [w for w in xs if w not in known], "y": [w for w in ys if w not in known],
               "neutralize": []}
    for name, words in (("X", xs), ("Y", ys)):
        if not known.intersection(words):
            raise ValueError(f"no word of {name} {list(words)} is in the vocabulary: BIRM needs "
                             "both marker sets in the corpus")
    if neutralize is None:
        neutral = ~np.isin(m.vocab, [*xs, *ys])
    else:
        wanted = word_list("neutralize", neutralize)
        missing["neutralize"] = [w for w in wanted if w not in known]
        if len(missing["neutralize"]) == len(wanted):
            raise ValueError(f"none of {wanted[:10]} is in the vocabulary: nothing to neutralise")
        if missing["neutralize"]:
            warnings.warn(f"words to neutralise {missing['neutralize'][:10]} "
                          f"({len(missing['neutralize'])} of {len(wanted)}) are not in the "
                          "vocabulary", stacklevel=3)
        neutral = np.isin(m.vocab, wanted)
    return neutral, missing


def _aligned(pattern: sparse.csr_matrix, part: sparse.csr_matrix) -> np.ndarray:
    """``part``'s values at the positions of ``pattern``'s stored entries (0 where absent)."""
    n = pattern.shape[0]
    keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr)) * n + pattern.indices
    part = part.tocsr()
    part.sort_indices()
    part_keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(part.indptr)) * n + part.indices
    pos = np.searchsorted(keys, part_keys)
    if len(pos) and (pos.max() >= len(keys) or not np.array_equal(keys[pos], part_keys)):
        raise ValueError("a near-marker count has no total count: the matrices do not match")
    out = np.zeros(len(keys))
    out[pos] = part.data
    return out


def _check_channels(m: WordContextMatrix) -> None:
    if set(m.near) != {"x", "y", "xy"} or "markers" not in m.params:
        raise ValueError("BIRM needs the near-marker statistics: build the matrix with "
                         "word_context_matrix(..., markers=(MASCULINE, FEMININE))")
