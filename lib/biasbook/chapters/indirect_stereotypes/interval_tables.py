"""The evaluation notebooks' tables with intervals, tests and the paper's numbers beside them.

Tables 1-5 of :mod:`.tables` with, per number, its interval (:mod:`.intervals`), the method
comparisons with Holm's correction (:mod:`.differences`), the paper's number and whether it lies
inside our interval (:func:`biasbook.reporting.paper_verdicts`; :func:`comparability` says when
the quantities differ), and the external check of Caliskan's tests with intervals over the
target words (:func:`external_intervals`). Numbers print as ``value [low, high]``
(:func:`biasbook.reporting.with_interval_text`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from biasbook import reporting, results
from biasbook.embeddings import wordsets
from biasbook.metrics import weat

from .differences import NOT_SUPPORTED_SEEDS, holm_family
from .intervals import ripa_word_table, seed_mean_effect, table1_intervals, word_interval
from .pipeline import LABELS
from .tables import PAPER_METHOD, paper
from .word_scores import WordScores, check_against


def comparability(corpus: Mapping, glove: Mapping) -> str:
    """Why our numbers do not measure what the paper's do, or ``""`` when they do (the paper's
    corpus, UMBC WebBase, and its 300-dimensional GloVe: the ``paper`` profile).

    Used in: indirect-stereotypes/03.
    """
    if corpus.get("source") == "umbc" and glove.get("dim") == 300:
        return ""
    source = {"un+imdb": "UN debates + IMDB"}.get(corpus.get("source"), corpus.get("source"))
    return f"not comparable ({source}, {glove.get('dim')}d; paper: UMBC WebBase, 300d)"


def weat_table(table: pd.DataFrame, intervals: pd.DataFrame, reason: str) -> pd.DataFrame:
    """Tables 2-4 (:func:`.tables.weat_table`) with, per test and method, the mean effect size
    over seeds and its interval (record schema columns), the seeds' range, and whether the
    paper's effect size lies inside (``paper_check``).

    Used in: indirect-stereotypes/03.
    """
    ci = intervals.assign(method=intervals["method"].map(LABELS))
    out = table.merge(ci, on=["test", "method"], how="left")
    out["paper_check"] = reporting.paper_verdicts(out, "paper_effect", reason)
    return reporting.with_interval_text(out)


def differences_table(weat_diffs: pd.DataFrame, ripa_diffs: pd.DataFrame, reason: str, *,
                      alpha: float = 0.05, numbers: Mapping | None = None) -> pd.DataFrame:
    """The chapter's family of method comparisons (every WEAT test and the mean |RIPA|, each
    method against Original) with Holm's correction (:func:`holm_family`), the paper's difference
    (partial corpus) and whether our verdict goes its way (``agreement``).

    Used in: indirect-stereotypes/03.
    """
    numbers = paper() if numbers is None else numbers
    tests = wordsets.load("indirect-stereotypes")
    frame = holm_family(pd.concat([weat_diffs, ripa_diffs], ignore_index=True), alpha=alpha)
    frame["title"] = frame["test"].map({n: t.title for n, t in tests.items()}).fillna(
        "RIPA: mean |RIPA| of the direct tests' words")
    frame["group"] = frame["test"].map({n: t.group for n, t in tests.items()}).fillna("RIPA")
    frame["paper"] = [_paper_difference(numbers, t, m, v) for t, m, v in
                      zip(frame["test"], frame["method"], frame["versus"], strict=True)]
    frame["paper_check"] = reporting.paper_verdicts(frame, "paper", reason)
    frame["agreement"] = [
        "no paper value" if pd.isna(p) else "not supported here" if not h
        else "same direction as the paper" if np.sign(v) == np.sign(p) else "opposite direction"
        for v, p, h in zip(frame["value"], frame["paper"], frame["holds"], strict=True)]
    frame["method"] = frame["method"].map(LABELS)
    frame["versus"] = frame["versus"].map(LABELS)
    return reporting.with_interval_text(frame)


def _paper_difference(numbers: Mapping, test: str, method: str, versus: str) -> float:
    if test == "ripa-mean-abs":
        rows = numbers["table5"]["rows"]
        cols = numbers["table5"]["columns"]
        i, j = cols.index(PAPER_METHOD[method]), cols.index(PAPER_METHOD[versus])
        both = [(r[i], r[j]) for r in rows.values() if r and r[i] is not None and r[j] is not None]
        return float(np.mean([abs(a) for a, _ in both]) - np.mean([abs(b) for _, b in both]))
    cols = numbers["weat"]["columns"]
    row = numbers["weat"]["effect_size"].get(test)
    if row is None:
        return math.nan
    a, b = row[cols.index(PAPER_METHOD[method])], row[cols.index(PAPER_METHOD[versus])]
    return math.nan if a is None or b is None else float(a - b)


def table5_table(runs: pd.DataFrame, reason: str, *, level: float = 0.95,
                 numbers: Mapping | None = None) -> pd.DataFrame:
    """Table 5: per word, each method's mean RIPA over seeds with its t-interval over the seeds
    (:func:`ripa_word_table`), the paper's value and whether it lies inside it; one column
    ``paper_check`` holding ``reason`` instead when the numbers are not comparable.

    Used in: indirect-stereotypes/03.
    """
    numbers = paper()["table5"] if numbers is None else numbers
    cols = numbers["columns"]
    long = ripa_word_table(runs, level)
    out = pd.DataFrame({"word": list(dict.fromkeys(long["word"]))})
    for m in LABELS:
        part = long[long["method"] == m].set_index("word").reindex(out["word"]).reset_index()
        if part["value"].isna().all():
            continue
        part["paper"] = [(numbers["rows"].get(w) or [None] * len(cols))[
            cols.index(PAPER_METHOD[m])] for w in part["word"]]
        part["paper"] = pd.to_numeric(part["paper"], errors="coerce")
        out[f"{LABELS[m]} (ours)"] = reporting.with_interval_text(part)["ours"].to_numpy()
        out[f"{LABELS[m]} (paper)"] = part["paper"].to_numpy()
        if not reason:
            out[f"{LABELS[m]}: paper inside?"] = reporting.paper_verdicts(part, "paper", reason)
    if reason:  # one reason for every method: one column
        out["paper_check"] = reason
    return out


def table1_table(bench: pd.DataFrame, reason: str, *, alpha: float = 0.05,
                 numbers: Mapping | None = None) -> pd.DataFrame:
    """Table 1: per benchmark and method, the mean relative change (%) against Original over the
    seeds with its t-interval (seeds only), Holm's correction over Table 1's comparisons (its own
    family: the cost in semantics, not the bias), the paper's change and whether it lies inside.

    Used in: indirect-stereotypes/03.
    """
    numbers = paper()["table1"] if numbers is None else numbers
    frame = holm_family(table1_intervals(bench), alpha=alpha, not_supported=NOT_SUPPORTED_SEEDS)
    cols = numbers["columns"]
    frame["paper"] = [(numbers["rows"].get(b) or [None] * len(cols))[cols.index(PAPER_METHOD[m])]
                      for b, m in zip(frame["benchmark"], frame["method"], strict=True)]
    frame["paper"] = pd.to_numeric(frame["paper"], errors="coerce")
    frame["paper_check"] = reporting.paper_verdicts(frame, "paper", reason)
    original = bench[bench["method"] == "original"].groupby("benchmark", sort=False)["score"]
    frame["original_score"] = frame["benchmark"].map(original.mean())
    frame["method"] = frame["method"].map(LABELS)
    return reporting.with_interval_text(frame)


def external_intervals(kvs: Mapping[str, object], check: pd.DataFrame,
                       lowercase: Mapping[str, bool] | None = None, *, level: float = 0.95,
                       n_resamples: int = 9999, seed: int = 0, ddof: int = 1) -> pd.DataFrame:
    """Notebook 04: ``check`` (:func:`.tables.external_check`) with each computable effect size's
    interval over the target words (pretrained vectors: no seeds) and ``paper_check``: Caliskan
    et al.'s numbers come from GloVe 840B, which none of the offline vectors is.

    Used in: indirect-stereotypes/04.
    """
    lowercase = lowercase or {}
    rows = []
    for name, kv in kvs.items():
        tests = wordsets.load("caliskan", lowercase=lowercase.get(name, False))
        for test, t in tests.items():
            words = weat.used_words(kv.key_to_index, t.sets())
            row = check[(check["vectors"] == name) & (check["test"] == test)]
            if words is None or not row["computable"].item():
                continue
            s = weat.word_associations(kv, words)[None, :]
            n_x = len(words["x"])
            check_against(row.assign(method="-", seed=0),
                           WordScores(test, words, [0], {"-": s}), ddof)
            ci = word_interval(seed_mean_effect(s, n_x, ddof), n_x, len(words["y"]),
                               level=level, n_resamples=n_resamples, seed=seed)
            rows.append({"vectors": name, "test": test, **ci.row()})
    ci = pd.DataFrame(rows, columns=["vectors", "test", "value", *results.UNCERTAINTY])
    out = check.merge(ci.drop(columns="value"), on=["vectors", "test"], how="left")
    out["value"] = out["effect_size"].where(out["computable"])
    out["paper_check"] = reporting.paper_verdicts(
        out, "paper_effect_size",
        "not comparable: Caliskan et al. used GloVe 840B (300d, cased), not these vectors")
    return reporting.with_interval_text(out)
