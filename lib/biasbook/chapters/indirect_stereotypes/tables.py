"""Tables 1-5 of the paper for Original / BIRM / CDS, medians and spread over seeds, beside the
paper's numbers; and the external check of Caliskan's tests on pretrained vectors.

Every method is evaluated on the same words: WEAT sets and RIPA words are cut to the vocabulary
all compared vectors share (the cut words are listed), and the semantic benchmarks treat a word
outside that shared vocabulary as missing for every method (the paper's package stands in the
mean vector for it), so that a difference between methods is never a difference in vocabulary.

WEAT p-values are exact (every partition of X u Y enumerated) up to :data:`EXACT_PARTITIONS`
partitions, i.e. up to 11 words a side; beyond that they are sampled and never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from biasbook import datafiles
from biasbook.embeddings import benchmarks, vectors, wordsets
from biasbook.metrics import ripa, weat

from .pipeline import LABELS

CHAPTER = "indirect-stereotypes"
PAPER_METHOD = {"original": "partial_original", "birm": "partial_proposed", "cds": "partial_cds"}
# C(22, 11) = 705,432 partitions take about a second; C(24, 12) = 2.7 million would hold
# 250 MB of indices, so larger tests (flowers/insects, instruments/weapons: 25 a side) are sampled.
EXACT_PARTITIONS = 1_000_000
SEMEVAL_AS_BEFORE = "SemEval2012_2 (3CosAdd, OOV dropped)"


def paper() -> dict:
    """``data/indirect-stereotypes/paper_results.yml``.

    Used in: indirect-stereotypes/01, indirect-stereotypes/03.
    """
    return datafiles.paper_results(CHAPTER)


def common_vocabulary(kvs: Iterable) -> set[str]:
    """Words every ``KeyedVectors`` in ``kvs`` has.

    Used in: indirect-stereotypes/03.
    """
    return set.intersection(*(set(kv.key_to_index) for kv in kvs))


def paper_tests() -> dict[str, wordsets.WeatTest]:
    """The paper's nine WEAT tests (Tables 2-4), lowercased.

    Used in: indirect-stereotypes/03.
    """
    return wordsets.load("indirect-stereotypes")


def shared_vectors(kvs: Mapping) -> dict:
    """Each ``KeyedVectors`` of ``kvs`` cut to the words all of them have (same keys).

    Used in: indirect-stereotypes/03.
    """
    vocab = common_vocabulary(kvs.values())
    words = {key: [w for w in kv.index_to_key if w in vocab] for key, kv in kvs.items()}
    return {key: vectors.from_arrays(words[key], kv[words[key]]) for key, kv in kvs.items()}


def full_set_effect(kv, test, *, ddof: int = 1) -> float:
    """WEAT's effect size on every X and Y word ``kv`` has, the longer set *not* cut to the
    shorter one's size (the effect size, unlike the permutation test, is defined for unequal
    sets); NaN if a set has no word.

    Used in: indirect-stereotypes/03.

    >>> from types import SimpleNamespace
    >>> from biasbook.embeddings.vectors import from_arrays
    >>> kv = from_arrays(["x1", "x2", "y1", "a", "b"],
    ...                  np.array([[1., 0], [1, 1], [0, 1], [1, 0], [0, 1]]))
    >>> test = SimpleNamespace(x=["x1", "x2"], y=["y1"], a=["a"], b=["b"])
    >>> round(full_set_effect(kv, test), 4)  # s(w) = 1, 0, -1: (0.5 - (-1)) / std 1
    1.5
    """
    have = {side: [w for w in getattr(test, side) if w in kv.key_to_index] for side in weat.SETS}
    if not all(have.values()):
        return float("nan")
    assoc = weat.associations(kv[have["x"] + have["y"]], kv[have["a"]], kv[have["b"]])
    return float(weat.effect_sizes(assoc, len(have["x"]), ddof))


def weat_runs(kvs: Mapping[tuple[str, int], object], tests: Mapping[str, object] | None = None,
              **options) -> pd.DataFrame:
    """One row per (method, seed, test): WEAT on the words all ``kvs`` share (a word another
    method lacks counts as out of vocabulary for every method). p-values are exact up to
    ``max_exact`` (default :data:`EXACT_PARTITIONS`) partitions. When WEAT cuts the longer target
    set (column ``dropped``), ``effect_size_full`` gives the effect size on the uncut sets.

    Used in: indirect-stereotypes/03.
    """
    tests = paper_tests() if tests is None else tests
    options.setdefault("max_exact", EXACT_PARTITIONS)
    frames = []
    for (method, seed), kv in shared_vectors(kvs).items():
        frame = weat.run_tests(kv, tests, **options).assign(method=method, seed=seed)
        frame["effect_size_full"] = [
            full_set_effect(kv, tests[t], ddof=options.get("ddof", 1)) if ok and cut else effect
            for t, ok, cut, effect in zip(frame["test"], frame["computable"], frame["dropped"],
                                          frame["effect_size"], strict=True)]
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["group"] = out["test"].map({n: t.group for n, t in tests.items()})
    out["title"] = out["test"].map({n: t.title for n, t in tests.items()})
    return out


def weat_table(runs: pd.DataFrame, numbers: dict | None = None) -> pd.DataFrame:
    """Tables 2-4: per test and method the median effect size and p-value over seeds, their
    range, and the paper's values (partial corpus) beside them; whether every p was exact; the
    target words WEAT cut to equalise |X| and |Y| (``dropped``) and the median effect size on
    the uncut sets (``effect_full_median``).

    Used in: indirect-stereotypes/03.
    """
    numbers = paper()["weat"] if numbers is None else numbers
    col = {m: numbers["columns"].index(PAPER_METHOD[m]) for m in PAPER_METHOD}
    runs = runs.copy()
    runs.loc[~runs["computable"], ["effect_size", "p_value", "effect_size_full"]] = np.nan
    runs["order"] = runs["test"].map({t: i for i, t in enumerate(dict.fromkeys(runs["test"]))})
    runs["method_order"] = runs["method"].map({m: i for i, m in enumerate(LABELS)})
    runs = runs.sort_values(["order", "method_order", "seed"], kind="stable")
    g = runs.groupby(["group", "test", "title", "method"], sort=False)
    table = g.agg(effect_median=("effect_size", "median"), effect_min=("effect_size", "min"),
                  effect_max=("effect_size", "max"), p_median=("p_value", "median"),
                  p_exact=("exact", "all"), runs=("effect_size", "count"),
                  effect_full_median=("effect_size_full", "median"),
                  dropped=("dropped", "first")).reset_index()
    table["p_exact"] = table["p_exact"].where(table["runs"] > 0)  # no p, nothing to call exact
    keys = list(zip(table["test"], table["method"], strict=True))
    table["paper_effect"] = [numbers["effect_size"][t][col[m]] for t, m in keys]
    table["paper_p"] = [numbers["p_value"][t][col[m]] for t, m in keys]
    table["method"] = table["method"].map(LABELS)
    return table


def benchmark_runs(kvs: Mapping[tuple[str, int], object], names: list[str] | None = None, *,
                   semeval_as_before: bool = True, **options) -> pd.DataFrame:
    """One row per (method, seed, benchmark), a word outside the vocabulary all ``kvs`` share
    counting as missing for all (``options`` go to :func:`biasbook.embeddings.benchmarks.evaluate`:
    by default the paper's metrics and mean-vector stand-ins). With ``semeval_as_before``, when
    SemEval2012_2 is scored, a row :data:`SEMEVAL_AS_BEFORE` adds the book's earlier score of it
    (3CosAdd accuracy on the quadruples whose words all have vectors), for comparison.

    Used in: indirect-stereotypes/03.
    """
    vocab = common_vocabulary(kvs.values())
    before = semeval_as_before and (names is None or "SemEval2012_2" in names)
    frames = []
    for (method, seed), kv in kvs.items():
        frames.append(benchmarks.evaluate(kv, names, vocabulary=vocab, **options)
                      .assign(method=method, seed=seed))
        if before:
            as_coded = {**options, "oov": "drop", "semeval": "3cosadd"}
            frames.append(benchmarks.evaluate(kv, ["SemEval2012_2"], vocabulary=vocab, **as_coded)
                          .assign(method=method, seed=seed, benchmark=SEMEVAL_AS_BEFORE))
    return pd.concat(frames, ignore_index=True)


def ripa_runs(kvs: Mapping[tuple[str, int], object], tests: Mapping | None = None
              ) -> pd.DataFrame:
    """RIPA of the direct tests' target words (Appendix C, without Einstein and Shakespeare)
    with the (feminine, masculine) pairs of those tests, on the shared vocabulary.

    Used in: indirect-stereotypes/03.
    """
    tests = paper_tests() if tests is None else tests
    direct = {n: t for n, t in tests.items() if t.group == "direct"}
    shared = shared_vectors(kvs)
    vocab = common_vocabulary(shared.values())
    pairs = [p for p in wordsets.gendered_pairs(direct) if p[0] in vocab and p[1] in vocab]
    words = []
    for t in direct.values():
        targets = ("a", "b") if t.gendered.get("masculine") in ("x", "y") else ("x", "y")
        words += [w for side in targets for w in getattr(t, side)
                  if w not in words and w not in ("einstein", "shakespeare")]
    out = pd.concat([ripa.ripa(kv, words, pairs).assign(method=method, seed=seed)
                     for (method, seed), kv in shared.items()], ignore_index=True)
    out.attrs["pairs"] = pairs
    return out


def external_check(kvs: Mapping[str, object], lowercase: Mapping[str, bool] | None = None,
                   **options) -> pd.DataFrame:
    """Caliskan et al.'s ten WEAT tests on pretrained vectors (lowercased for the names in
    ``lowercase`` that map to true), with their published effect sizes (GloVe 840B) beside.

    Used in: indirect-stereotypes/04.
    """
    lowercase = lowercase or {}
    frames = []
    for name, kv in kvs.items():
        tests = wordsets.load("caliskan", lowercase=lowercase.get(name, False))
        df = weat.run_tests(kv, tests, **options)
        df["title"] = df["test"].map({n: t.title for n, t in tests.items()})
        frames.append(df.assign(vectors=name))
    return pd.concat(frames, ignore_index=True)


def pair_table(original, modified, pairs: Iterable[tuple[str, str]]) -> pd.DataFrame:
    """Counts of word pairs before and after BIRM, with the parts near X, Y and X∩Y.

    Used in: indirect-stereotypes/01.
    """
    idx = original.index()
    rows = []
    for a, b in pairs:
        if a not in idx or b not in idx:
            rows.append({"pair": f"{a}–{b}", "note": "not in the vocabulary"})
            continue
        before = original.value(a, b)
        after = modified.value(a, b) if a in modified.index() and b in modified.index() \
            else float("nan")
        rows.append({"pair": f"{a}–{b}", "count": before, "near X": original.value(a, b, "x"),
                     "near Y": original.value(a, b, "y"),
                     "near X∩Y": original.value(a, b, "xy"), "after BIRM": after,
                     "factor": after / before if before else float("nan"), "note": ""})
    return pd.DataFrame(rows)


def matrix_summary(mats: Mapping) -> pd.DataFrame:
    """Vocabulary, non-zeros, tokens and total mass of each method's matrix.

    Used in: indirect-stereotypes/01, indirect-stereotypes/02.
    """
    return pd.DataFrame([{"method": LABELS[m], "words": len(x), "non-zeros": x.nnz,
                          "tokens counted": x.params["n_tokens"],
                          "total pair weight": float(x.total.sum())} for m, x in mats.items()])
