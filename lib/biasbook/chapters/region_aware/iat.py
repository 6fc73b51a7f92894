"""A small Implicit Association Test (IAT) on one topic pair, for a reader to take (Sec. 4.3).

The paper validates its topic pairs with an IAT-style test (Greenwald et al. 1998): six annotators
per region (three women, three men) see male/female faces and the names of the two topics of a
pair. In the **un-reversed** task one key answers "female face or F topic" and another "male face
or M topic" (response times :math:`r_1`, :math:`r_2`); in the **reversed** task the keys pair the M
topic with female faces and the F topic with male faces (:math:`r_3`, :math:`r_4`). The paper
averages :math:`r_1, r_2` and :math:`r_3, r_4`; a reversed task slower than the un-reversed one
means the pair's gender association is the easier one for the annotator. The order of the tasks
varied between annotators.

This module builds a text version for one person at a keyboard: gender words (or names) stand in
for faces, the topics' words for their names.

- :func:`trials`: the two blocks, stimuli shuffled with a seed, the expected key of each trial.
- :func:`run_in_terminal`: shows each stimulus, reads the key with ``input()`` and times it (run it
  in a terminal or a live notebook; the book build cannot take a test).
- :func:`score`: the paper's measure (mean reversed minus mean un-reversed latency, correct trials
  only) and Greenwald et al. (2003)'s D score (that difference over the standard deviation of all
  correct latencies of both blocks).
- :func:`simulate`: synthetic latencies with a chosen effect, to show what :func:`score` returns;
  never a result about people.

>>> t = trials(["nurse", "cook"], ["pilot", "miner"], female=["she"], male=["he"],
...            repeats=1, seed=0)
>>> t.groupby("block").size().to_dict()
{'reversed': 6, 'unreversed': 6}
>>> t[(t.block == "unreversed") & (t.stimulus == "nurse")]["key"].item()
'e'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from biasbook import validate

BLOCKS = ("unreversed", "reversed")


def trials(female_topic: Sequence[str], male_topic: Sequence[str], *, female: Sequence[str],
           male: Sequence[str], repeats: int = 2, seed: int = 0,
           reversed_first: bool = False) -> pd.DataFrame:
    """The trials of both tasks: ``block``, ``order`` (within the block), ``stimulus``,
    ``category`` (``female``, ``male``, ``F topic``, ``M topic``) and the correct ``key``.

    Used in: region-aware/05.

    Un-reversed: ``e`` for female words and the F topic, ``i`` for male words and the M topic.
    Reversed: ``e`` for female words and the M topic, ``i`` for male words and the F topic.
    Every stimulus appears ``repeats`` times per block.
    """
    sets = {"female": validate.word_list("female", female),
            "male": validate.word_list("male", male),
            "F topic": validate.word_list("female_topic", female_topic),
            "M topic": validate.word_list("male_topic", male_topic)}
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    keys = {"unreversed": {"female": "e", "F topic": "e", "male": "i", "M topic": "i"},
            "reversed": {"female": "e", "M topic": "e", "male": "i", "F topic": "i"}}
    rng = np.random.default_rng(seed)
    frames = []
    for block in (BLOCKS[::-1] if reversed_first else BLOCKS):
        rows = [(cat, word) for cat, words in sets.items() for word in words] * repeats
        order = rng.permutation(len(rows))
        frames.append(pd.DataFrame({
            "block": block, "order": range(len(rows)),
            "stimulus": [rows[i][1] for i in order], "category": [rows[i][0] for i in order],
            "key": [keys[block][rows[i][0]] for i in order]}))
    return pd.concat(frames, ignore_index=True)


def run_in_terminal(plan: pd.DataFrame, *, ask: Callable[[str], str] = input,
                    clock: Callable[[], float] = time.perf_counter) -> pd.DataFrame:
    """Take the test: each stimulus is shown, the answer (``e`` or ``i`` then Enter) read and
    timed. Returns ``plan`` with ``answer``, ``correct`` and ``rt_ms``.

    Used in: region-aware/05.
    """
    answers, times = [], []
    for block, rows in plan.groupby("block", sort=False):
        ask(f"\nBlock '{block}': press e for {_legend(rows, 'e')}, i for {_legend(rows, 'i')}. "
            "Enter to start. ")
        for stimulus in rows["stimulus"]:
            start = clock()
            answers.append(ask(f"{stimulus:>20}   ").strip().lower()[:1])
            times.append((clock() - start) * 1000)
    out = plan.assign(answer=answers, rt_ms=times)
    return out.assign(correct=out["answer"] == out["key"])


def _legend(rows: pd.DataFrame, key: str) -> str:
    return " or ".join(sorted(set(rows.loc[rows["key"] == key, "category"])))


def simulate(plan: pd.DataFrame, *, effect_ms: float = 150.0, base_ms: float = 700.0,
             noise_ms: float = 120.0, error_rate: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """Synthetic responses: log-normal-ish latencies around ``base_ms``, the reversed block
    slower by ``effect_ms`` on average, a share ``error_rate`` of wrong keys. For demonstration
    and tests only.

    Used in: region-aware/05.
    """
    rng = np.random.default_rng(seed)
    slower = np.where(plan["block"] == "reversed", effect_ms, 0.0)
    rt = np.clip(base_ms + slower + rng.normal(0, noise_ms, len(plan)), 200, None)
    wrong = rng.random(len(plan)) < error_rate
    answers = np.where(wrong, np.where(plan["key"] == "e", "i", "e"), plan["key"])
    return plan.assign(answer=answers, rt_ms=rt, correct=answers == plan["key"])


def score(responses: pd.DataFrame) -> dict:
    """The paper's un-reversed and reversed means (correct trials, ms) and their difference,
    the D score, and the number of errors.

    Used in: region-aware/05.

    >>> r = pd.DataFrame({"block": ["unreversed"] * 2 + ["reversed"] * 2,
    ...                   "rt_ms": [500., 700., 800., 1000.], "correct": [True] * 4})
    >>> s = score(r)
    >>> s["unreversed_ms"], s["reversed_ms"], s["difference_ms"], round(s["d_score"], 4)
    (600.0, 900.0, 300.0, 1.4412)
    """
    ok = responses[responses["correct"]]
    means = ok.groupby("block")["rt_ms"].mean()
    missing = [b for b in BLOCKS if b not in means]
    if missing:
        raise ValueError(f"no correct response in block(s) {missing}: the test cannot be scored")
    spread = float(ok["rt_ms"].std(ddof=1))
    if not spread > 0:
        raise ValueError("every correct latency is the same: the D score is undefined")
    difference = float(means["reversed"] - means["unreversed"])
    return {"unreversed_ms": float(means["unreversed"]), "reversed_ms": float(means["reversed"]),
            "difference_ms": difference,
            "d_score": difference / spread,
            "errors": int((~responses["correct"]).sum()), "trials": len(responses)}
