"""Per-word WEAT associations of the words WEAT uses, per method and training seed.

Every interval and test of this chapter resamples *words*; they need each word's association
``s(w, A, B)`` (:func:`biasbook.metrics.weat.word_associations`), not only WEAT's effect size.
:func:`weat_scores` takes the words WEAT itself uses on the vectors
(:func:`biasbook.metrics.weat.used_words`), collects their associations in every (method, seed)
as :class:`WordScores`, and checks that the effect size recomputed from them
(:func:`biasbook.metrics.weat.effect_sizes`) is WEAT's own (:func:`check_against`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from biasbook.metrics import weat


@dataclass(frozen=True)
class WordScores:
    """One WEAT test's per-word associations: ``scores[method]`` is (seeds, |X| + |Y|).

    Used in: indirect-stereotypes/03, indirect-stereotypes/04.
    """

    test: str
    words: dict[str, list[str]]
    seeds: list
    scores: dict[str, np.ndarray]

    @property
    def n_x(self) -> int:
        return len(self.words["x"])


def weat_scores(kvs: Mapping[tuple[str, int], object], tests: Mapping[str, object],
                runs: pd.DataFrame | None = None, *, ddof: int = 1) -> dict[str, WordScores]:
    """Per computable test, the associations of its words in every (method, seed) of ``kvs``
    (vectors already cut to the shared vocabulary, e.g. by :func:`.tables.shared_vectors`).

    Used in: indirect-stereotypes/03.

    With ``runs`` (:func:`.tables.weat_runs`), each effect size recomputed from the associations
    must equal WEAT's own: a change of WEAT's word rule cannot slip by unnoticed."""
    methods = list(dict.fromkeys(m for m, _ in kvs))
    seeds = sorted({s for _, s in kvs})
    if missing := [(m, s) for m in methods for s in seeds if (m, s) not in kvs]:
        raise ValueError(f"every method needs the same seeds; missing {missing}")
    first = kvs[(methods[0], seeds[0])]
    computable = None if runs is None else set(runs.loc[runs["computable"], "test"])
    out = {}
    for name, test in tests.items():
        words = weat.used_words(first.key_to_index, test.sets())
        if words is None or (computable is not None and name not in computable):
            continue
        scores = {m: np.vstack([weat.word_associations(kvs[(m, s)], words) for s in seeds])
                  for m in methods}
        out[name] = WordScores(name, words, seeds, scores)
        if runs is not None:
            check_against(runs, out[name], ddof)
    return out


def check_against(runs: pd.DataFrame, ts: WordScores, ddof: int) -> None:
    """Refuse word scores whose effect size per (method, seed) is not WEAT's own in ``runs``:
    the intervals resample these scores, so they must reproduce the recorded numbers.

    Used in: indirect-stereotypes/03, indirect-stereotypes/04.
    """
    for method, s in ts.scores.items():
        for k, seed in enumerate(ts.seeds):
            row = runs[(runs["test"] == ts.test) & (runs["method"] == method)
                       & (runs["seed"] == seed)]
            want = row["effect_size"].item() if len(row) == 1 else math.nan
            got = float(weat.effect_sizes(s[k], ts.n_x, ddof))
            if not math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9):
                raise ValueError(f"{ts.test} ({method}, seed {seed}): effect size {got:.6f} "
                                 f"from the words {ts.words}, WEAT reports {want}: the word "
                                 "rules differ")
