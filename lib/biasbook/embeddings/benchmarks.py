"""Semantic benchmarks of word vectors (the indirect-stereotypes paper's Table 1, after the
``word-embeddings-benchmarks`` package of Jastrzebski et al. 2017), from the offline mirror.

Four tasks, each on any gensim ``KeyedVectors``:

- **similarity** (MEN, WS353, WS353R, WS353S, SimLex999, RW, RG65, MTurk; files of
  ``eval-word-vectors``): Spearman rho between the human scores and the cosine similarities.
- **categorisation** (AP, BLESS, Battig, ESSLI_2c; ``vecto-word-benchmarks``): purity of a
  clustering of the unit-normalised word vectors into as many clusters as there are categories.
  As in the package the paper used (``web.evaluate.evaluate_categorization``, method ``"all"``),
  the score is the best purity of six clusterings: agglomerative (Ward; average and complete
  linkage with cosine and Euclidean distances) and k-means (10 starts, seeded). Taking the best
  of six is optimistic; ``cluster="kmeans"`` or ``"ward"`` scores one clustering instead. ESSLI
  2008's tasks 1a and 2b are not in the mirror (only 2c, 45 verbs in 9 classes).
- **analogy** (Google, MSR; ``vecto-word-benchmarks`` quadruples a:b :: c:d): 3CosAdd accuracy,
  d-hat = argmax_v cos(v, b - a + c) over unit vectors, the three question words excluded.
  Computed as blocks of matrix products.
- **SemEval-2012 task 2** (relational similarity, 79 subcategories; the same mirror), scored as
  ``web.evaluate.evaluate_on_semeval_2012_2`` does (:func:`semeval_spearman`, the default): each
  pair c:d of a subcategory scores (mean of the prototype pairs' a - b) . (c - d), and the score is
  the Spearman rho between these and the human ratings, averaged over the subcategories. The
  mirror has the pairs of every subcategory but not their ratings; it lists them in the order of
  the ratings, best first (the deliberately reversed pairs sit at the bottom), so the position
  stands in for the rating. Ties between ratings are lost that way. ``semeval="3cosadd"`` scores
  the mirror's quadruples by 3CosAdd accuracy instead (the book's earlier choice; not the paper's).

Out-of-vocabulary words are counted, never hidden. ``oov="mean"`` (default) stands a missing word
in by the mean of the unit word vectors, not re-normalised, and scores by dot products, exactly as
``web`` (the package the paper used) does with normalised embeddings: a similarity pair with a
missing word gets a dot product smaller than a cosine, and an analogy whose answer is missing
counts as wrong. ``oov="drop"`` scores only the items whose words all have vectors. Both report
``n_oov``. Pass ``vocabulary`` (e.g. the words every compared model has) to score several models
on the same words. ``lowercase=True`` (default in :func:`evaluate`) lower-cases the benchmark
words, for uncased vectors. The words are looked up as every embedding metric looks them up,
through :func:`biasbook.embeddings.vectors.oov_report` (``case="lower"`` or ``"exact"``).

>>> import numpy as np
>>> from biasbook.embeddings.vectors import from_arrays
>>> kv = from_arrays(["a", "b", "c", "d"], np.array([[1., 0], [1, .1], [0, 1], [.1, 1]]))
>>> pairs = [("a", "b"), ("a", "c"), ("b", "d"), ("a", "x")]
>>> spearman_similarity(kv, pairs, [9., 1., 5., 3.], oov="drop")
(1.0, 3, 1)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
import pandas as pd

from biasbook import resources, validate
from biasbook.embeddings.vectors import oov_report

OOV_MODES = ("mean", "drop")
SEMEVAL_METRICS = ("spearman", "3cosadd")
CLUSTERINGS = ("all", "kmeans", "ward")
_ANALOGY_BLOCK = 512  # queries per matrix product: 512 x 50k float32 scores = 100 MB


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its task and where the mirror keeps it."""

    name: str
    task: str
    resource: str
    filename: str


_VECTO = "vecto-word-benchmarks"
_EWV = "eval-word-vectors"
BENCHMARKS = {b.name: b for b in [
    Benchmark("MEN", "similarity", _EWV, "EN-MEN-TR-3k.txt"),
    Benchmark("WS353", "similarity", _EWV, "EN-WS-353-ALL.txt"),
    Benchmark("WS353R", "similarity", _EWV, "EN-WS-353-REL.txt"),
    Benchmark("WS353S", "similarity", _EWV, "EN-WS-353-SIM.txt"),
    Benchmark("SimLex999", "similarity", _EWV, "EN-SIMLEX-999.txt"),
    Benchmark("RW", "similarity", _EWV, "EN-RW-STANFORD.txt"),
    Benchmark("RG65", "similarity", _EWV, "EN-RG-65.txt"),
    Benchmark("MTurk", "similarity", _EWV, "EN-MTurk-287.txt"),
    Benchmark("AP", "categorisation", _VECTO, "word-categorization/monolingual/en/ap.csv"),
    Benchmark("BLESS", "categorisation", _VECTO, "word-categorization/monolingual/en/bless.csv"),
    Benchmark("Battig", "categorisation", _VECTO,
              "word-categorization/monolingual/en/battig.csv"),
    Benchmark("ESSLI_2c", "categorisation", _VECTO,
              "word-categorization/monolingual/en/essli-2008.csv"),
    Benchmark("Google", "analogy", _VECTO, "word-analogy/monolingual/en/google-analogies.csv"),
    Benchmark("MSR", "analogy", _VECTO, "word-analogy/monolingual/en/msr.csv"),
    Benchmark("SemEval2012_2", "analogy", _VECTO, "word-analogy/monolingual/en/semeval.csv"),
]}
_METRIC = {"similarity": "spearman", "categorisation": "purity", "analogy": "accuracy"}


@cache
def items(name: str) -> tuple:
    """Benchmark ``name``'s items as the mirror gives them: ``(pairs, scores)`` for similarity,
    ``(words, labels)`` for categorisation, ``(questions,)`` of (a, b, c, d) for analogy."""
    b = BENCHMARKS[name]
    path = resources.path(b.resource, b.filename)
    if b.task == "similarity":
        rows = [line.split("\t") for line in path.read_text().splitlines() if line.strip()]
        return (tuple((r[0].strip(), r[1].strip()) for r in rows),
                tuple(float(r[2]) for r in rows))
    frame = pd.read_csv(path, index_col=0, dtype=str, keep_default_na=False)
    frame = frame.apply(lambda col: col.str.strip())
    if b.task == "categorisation":
        frame = frame[frame["word"] != ""]  # AP and BLESS end each category with an empty row
        return tuple(frame["word"]), tuple(frame["category"])
    return (tuple(map(tuple, frame[["word1", "word2", "word3", "target"]].to_numpy())),)


@cache
def semeval_subcategories() -> dict[str, tuple[tuple, tuple]]:
    """SemEval-2012 task 2 as the mirror gives it: ``{subcategory: (prototypes, pairs)}``, the
    prototype pairs shown to the raters and the rated pairs in the mirror's order (best first).

    >>> sub = semeval_subcategories()
    >>> len(sub), sum(len(pairs) for _, pairs in sub.values()), sub["2c"][0]
    (79, 3218, (('water', 'drop'), ('mile', 'yard'), ('time', 'moment')))
    """
    b = BENCHMARKS["SemEval2012_2"]
    frame = pd.read_csv(resources.path(b.resource, b.filename), index_col=0, dtype=str,
                        keep_default_na=False).apply(lambda col: col.str.strip())
    out = {}
    for name, rows in frame.groupby("type", sort=False):
        prototypes = tuple(dict.fromkeys(zip(rows["word1"], rows["word2"], strict=True)))
        pairs = tuple(dict.fromkeys(zip(rows["word3"], rows["target"], strict=True)))
        out[name] = (prototypes, pairs)
    return out


class _Lookup:
    """The benchmark's words through :func:`~biasbook.embeddings.vectors.oov_report` (the one
    lookup step and case rule); unit vectors of known words, and with ``oov="mean"`` the mean
    unit vector for the rest."""

    def __init__(self, kv, words: Iterable[str], vocabulary: Collection[str] | None, oov: str,
                 lowercase: bool):
        self.kv, self.oov = kv, validate.choice("oov", oov, OOV_MODES)
        self.case = "lower" if lowercase else "exact"
        self.vocabulary = None if vocabulary is None else set(vocabulary)
        words = list(dict.fromkeys(words))
        self.report = oov_report(kv, {"benchmark": words}, case=self.case) if words else None

    def norm(self, word: str) -> str:
        """The key of ``word`` (as written, if the vectors lack it)."""
        return self.report.key.get(word, word) if self.report else word

    def known(self, key: str) -> bool:
        return key in self.kv.key_to_index and (self.vocabulary is None or
                                                key in self.vocabulary)

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """One row per word: its unit vector, or the (shorter) mean unit vector if unknown."""
        rows = np.zeros((len(words), self.kv.vector_size), dtype=np.float64)
        known = np.array([self.known(w) for w in words], dtype=bool)
        if known.any():
            index = self.kv.key_to_index
            rows[known] = _unit(self.kv.vectors[[index[w] for w, k in zip(words, known,
                                                                          strict=True) if k]])
        if not known.all():
            rows[~known] = self.mean
        return rows

    @cached_property
    def mean(self) -> np.ndarray:
        """The mean unit vector, the stand-in of an unknown word."""
        return _unit(self.kv.vectors).mean(axis=0)


def _unit(vectors) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)  # a zero vector stays zero


def spearman_similarity(kv, pairs: Sequence[tuple[str, str]], scores: Sequence[float], *,
                        oov: str = "mean", vocabulary: Collection[str] | None = None,
                        lowercase: bool = False) -> tuple[float, int, int]:
    """``(rho, n_pairs_used, n_pairs_with_oov)``: Spearman rho of the human scores against the
    cosines (against web's dot products with the mean vector, for a missing word)."""
    from scipy.stats import spearmanr

    look = _Lookup(kv, (w for p in pairs for w in p), vocabulary, oov, lowercase)
    pairs = [(look.norm(a), look.norm(b)) for a, b in pairs]
    has_oov = np.array([not (look.known(a) and look.known(b)) for a, b in pairs], dtype=bool)
    use = ~has_oov if oov == "drop" else np.ones(len(pairs), dtype=bool)
    kept = [p for p, u in zip(pairs, use, strict=True) if u]
    if len(kept) < 3:
        return float("nan"), len(kept), int(has_oov.sum())
    sim = np.einsum("ij,ij->i", look.rows([a for a, _ in kept]), look.rows([b for _, b in kept]))
    rho = spearmanr(np.asarray(scores, dtype=np.float64)[use], sim).statistic
    return float(rho), len(kept), int(has_oov.sum())


def purity(labels: Sequence, clusters: Sequence) -> float:
    """Share of items whose cluster's most common true label is their own.

    >>> purity(["a", "a", "b", "b"], [0, 0, 0, 1])
    0.75
    """
    table = pd.crosstab(np.asarray(clusters), np.asarray(labels))
    return float(table.to_numpy().max(axis=1).sum() / len(labels))


def categorisation_purity(kv, words: Sequence[str], labels: Sequence[str], *,
                          oov: str = "mean", vocabulary: Collection[str] | None = None,
                          lowercase: bool = False, cluster: str = "all",
                          seed: int = 0) -> tuple[float, int, int]:
    """``(purity, n_words_used, n_oov)`` of clustering ``words`` into their ``labels``' number."""
    from sklearn.cluster import AgglomerativeClustering, KMeans
    from threadpoolctl import threadpool_limits

    validate.choice("cluster", cluster, CLUSTERINGS)
    look = _Lookup(kv, words, vocabulary, oov, lowercase)
    words = [look.norm(w) for w in words]
    known = np.array([look.known(w) for w in words], dtype=bool)
    use = known if oov == "drop" else np.ones(len(words), dtype=bool)
    kept = [w for w, u in zip(words, use, strict=True) if u]
    y = np.asarray(labels)[use]
    k = len(set(y))
    if len(kept) <= k or k < 2:
        return float("nan"), len(kept), int((~known).sum())
    x = look.rows(kept)
    models = []
    if cluster in ("all", "ward"):
        models.append(AgglomerativeClustering(n_clusters=k, linkage="ward"))
    if cluster == "all":
        models += [AgglomerativeClustering(n_clusters=k, metric=metric, linkage=linkage)
                   for metric in ("cosine", "euclidean") for linkage in ("average", "complete")]
    if cluster in ("all", "kmeans"):
        models.append(KMeans(n_clusters=k, n_init=10, random_state=seed))
    # A few thousand points: threads gain nothing, and on a shared machine OpenMP barriers stall.
    with threadpool_limits(1):
        best = max(purity(y, model.fit_predict(x)) for model in models)
    return best, len(kept), int((~known).sum())


def analogy_accuracy(kv, questions: Sequence[tuple[str, str, str, str]], *, oov: str = "mean",
                     vocabulary: Collection[str] | None = None, lowercase: bool = False,
                     restrict_vocab: int | None = None) -> tuple[float, int, int]:
    """``(accuracy, n_questions_used, n_with_oov)`` of 3CosAdd on questions a:b :: c:d.

    Candidates are the known words (the first ``restrict_vocab`` of ``kv``'s order if given) but
    a, b and c themselves.
    """
    look = _Lookup(kv, (w for q in questions for w in q), vocabulary, oov, lowercase)
    questions = [tuple(look.norm(w) for w in q) for q in questions]
    candidates = [w for w in kv.index_to_key[:restrict_vocab or None] if look.known(w)]
    position = {w: i for i, w in enumerate(candidates)}
    has_oov = np.array([not all(w in position for w in q) for q in questions], dtype=bool)
    use = ~has_oov if oov == "drop" else np.ones(len(questions), dtype=bool)
    kept = [q for q, u in zip(questions, use, strict=True) if u]
    if not kept:
        return float("nan"), 0, int(has_oov.sum())
    matrix = look.rows(candidates).astype(np.float32)
    correct = 0
    for start in range(0, len(kept), _ANALOGY_BLOCK):
        block = kept[start:start + _ANALOGY_BLOCK]
        a, b, c = (look.rows([q[i] for q in block]) for i in range(3))
        scores = (b - a + c).astype(np.float32) @ matrix.T
        rows = np.arange(len(block))
        for i in range(3):  # the question words are never the answer
            cols = np.array([position.get(q[i], -1) for q in block])
            scores[rows[cols >= 0], cols[cols >= 0]] = -np.inf
        answers = np.array([position.get(q[3], -1) for q in block])
        correct += int(np.count_nonzero(scores.argmax(axis=1) == answers))
    return correct / len(kept), len(kept), int(has_oov.sum())


def semeval_spearman(kv, subcategories: Mapping[str, tuple[Sequence, Sequence]], *,
                     ratings: Mapping[str, Sequence[float]] | None = None, oov: str = "mean",
                     vocabulary: Collection[str] | None = None,
                     lowercase: bool = False) -> tuple[float, int, int]:
    """``(mean_rho, n_pairs_used, n_pairs_with_oov)`` on SemEval-2012 task 2, as ``web`` scores it.

    ``subcategories`` maps a name to ``(prototypes, pairs)`` (see :func:`semeval_subcategories`).
    A pair (c, d) scores p . (c - d) with p the mean of a - b over the prototypes (a, b); rho is
    Spearman's between these scores and ``ratings[name]`` (default: the pairs' order, best first),
    0 where it is undefined (all scores equal), as in ``web``; the result is the mean over the
    subcategories. With ``oov="drop"`` pairs and prototypes with a missing word are left out, and
    a subcategory with no prototype or fewer than 3 pairs left is not scored.

    >>> import numpy as np
    >>> from biasbook.embeddings.vectors import from_arrays
    >>> kv = from_arrays(["a", "b", "c", "d", "e"], np.eye(5))
    >>> semeval_spearman(kv, {"r": ([("a", "b")], [("a", "b"), ("c", "d"), ("b", "a")])})
    (1.0, 3, 0)
    """
    from scipy.stats import spearmanr

    look = _Lookup(kv, (w for prototypes, pairs in subcategories.values()
                        for pair in (*prototypes, *pairs) for w in pair),
                   vocabulary, oov, lowercase)
    rhos, used, n_oov = [], 0, 0
    for name, (prototypes, pairs) in subcategories.items():
        prototypes = [(look.norm(a), look.norm(b)) for a, b in prototypes]
        pairs = [(look.norm(c), look.norm(d)) for c, d in pairs]
        rating = np.asarray(ratings[name] if ratings is not None else -np.arange(len(pairs)),
                            dtype=np.float64)
        if len(rating) != len(pairs):
            raise ValueError(f"subcategory {name!r}: {len(rating)} ratings for {len(pairs)} pairs")
        has_oov = np.array([not (look.known(c) and look.known(d)) for c, d in pairs], dtype=bool)
        n_oov += int(has_oov.sum())
        if oov == "drop":
            prototypes = [(a, b) for a, b in prototypes if look.known(a) and look.known(b)]
            pairs = [p for p, missing in zip(pairs, has_oov, strict=True) if not missing]
            rating = rating[~has_oov]
            if not prototypes or len(pairs) < 3:
                continue
        relation = (look.rows([a for a, _ in prototypes])
                    - look.rows([b for _, b in prototypes])).mean(axis=0)
        scores = (look.rows([c for c, _ in pairs]) - look.rows([d for _, d in pairs])) @ relation
        rho = spearmanr(scores, rating).statistic if np.ptp(scores) > 0 else 0.0
        rhos.append(float(rho))
        used += len(pairs)
    return (float(np.mean(rhos)) if rhos else float("nan")), used, n_oov


def evaluate(kv, names: Sequence[str] | None = None, *, oov: str = "mean",
             vocabulary: Collection[str] | None = None, lowercase: bool = True,
             cluster: str = "all", restrict_vocab: int | None = None,
             semeval: str = "spearman", seed: int = 0) -> pd.DataFrame:
    """One row per benchmark: ``task``, ``metric``, ``score``, ``n_items``, ``n_used``, ``n_oov``,
    ``reason`` (why a score is missing, if it is). ``names`` defaults to all of
    :data:`BENCHMARKS`, in Table 1's order. ``semeval`` scores SemEval2012_2 as the paper's
    package does (``"spearman"``, :func:`semeval_spearman`; ``n_items`` counts its 3,218 rated
    pairs) or by 3CosAdd accuracy on the mirror's 10,014 quadruples (``"3cosadd"``).

    Cost: on 50k words x 50 dimensions the whole suite took about 20 s on the project's shared
    2-core machine, mostly the analogies (one score per question and vocabulary word) and
    Battig's six clusterings of 3.5k words; ``restrict_vocab`` bounds the analogy search and
    ``cluster="kmeans"`` runs one clustering.
    """
    names = list(BENCHMARKS) if names is None else validate.word_list("names", names)
    validate.choice("semeval", semeval, SEMEVAL_METRICS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise KeyError(f"unknown benchmarks {unknown}; available: {', '.join(BENCHMARKS)} "
                       "(ESSLI_1a and ESSLI_2b are not in the offline mirror)")
    common = {"oov": oov, "vocabulary": vocabulary, "lowercase": lowercase}
    rows = []
    for name in names:
        b = BENCHMARKS[name]
        data, metric = items(name), _METRIC[b.task]
        if name == "SemEval2012_2" and semeval == "spearman":
            sub = semeval_subcategories()
            data, metric = ([p for _, pairs in sub.values() for p in pairs],), "spearman"
            score, used, n_oov = semeval_spearman(kv, sub, **common)
        elif b.task == "similarity":
            score, used, n_oov = spearman_similarity(kv, *data, **common)
        elif b.task == "categorisation":
            score, used, n_oov = categorisation_purity(kv, *data, cluster=cluster, seed=seed,
                                                       **common)
        else:
            score, used, n_oov = analogy_accuracy(kv, *data, restrict_vocab=restrict_vocab,
                                                  **common)
        reason = "" if np.isfinite(score) else f"too few items with vectors ({used})"
        rows.append({"benchmark": name, "task": b.task, "metric": metric,
                     "score": score, "n_items": len(data[0]), "n_used": used, "n_oov": n_oov,
                     "reason": reason})
    return pd.DataFrame(rows)


def relative_change(df_original: pd.DataFrame, df_other: pd.DataFrame) -> pd.DataFrame:
    """Table 1's form: ``100 * (other - original) / |original|`` per benchmark, in percent.

    A change that cannot be computed (a score missing on either side, or an original score of 0)
    is NaN with the reason in ``reason``.

    >>> a = pd.DataFrame({"benchmark": ["MEN"], "task": ["similarity"], "score": [0.5]})
    >>> relative_change(a, a.assign(score=[0.55]))[["benchmark", "relative_change_pct"]]
      benchmark  relative_change_pct
    0       MEN                 10.0
    """
    merged = df_original[["benchmark", "task", "score"]].merge(
        df_other[["benchmark", "score"]], on="benchmark", how="outer",
        suffixes=("_original", "_other"), sort=False)
    original, other = merged["score_original"], merged["score_other"]
    defined = original.notna() & other.notna() & (original != 0)
    merged["relative_change_pct"] = (100 * (other - original) / original.abs()).where(defined)
    merged["reason"] = np.select(
        [original.isna(), other.isna(), original == 0],
        ["no original score", "no score to compare", "original score is 0"], default="")
    return merged
