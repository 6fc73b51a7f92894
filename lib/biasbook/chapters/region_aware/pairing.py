"""F-M topic pairs of each region (Borah et al. 2024, Sec. 4.2), from the topics of :mod:`.topics`.

**Topic pairs (Sec. 4.2).** A topic's embedding is the mean embedding of its top 10 words (each
word embedded alone; the paper used stsb-bert-large, we use the same all-MiniLM-L6-v2). An F topic
:math:`F` and an M topic :math:`M` form a pair if
:math:`|\\cos(E_F, E_{she}) - \\cos(E_M, E_{he})| < 0.01` "and/or"
:math:`|\\cos(E_F, E_{he}) - \\cos(E_M, E_{she})| < 0.01` (:func:`pair_distances`;
``condition="or"`` reads "and/or" as an inclusive or, the default; ``"and"`` needs both). The
candidates are the 10 most coherent topics of each gender and the top five pairs by mean
coherence are kept (Table 3); ``nearest=True`` fills a region that has fewer passing pairs with
its nearest failing ones, flagged ``passes=False`` and ``pairs="filled"`` (passing pairs:
``pairs="passing"``), a mark that the region-aware WEAT and the personas carry on.

>>> d_same, d_cross = pair_distances([[1.0, 0.0]], [[0.0, 1.0]], she=[1.0, 0.0], he=[0.0, 1.0])
>>> float(d_same[0, 0]), float(d_cross[0, 0])
(0.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from biasbook import validate
from biasbook.chapters.region_aware import topics
from biasbook.chapters.region_aware.topics import RegionTopics

CONDITIONS = ("or", "and")
PAIR_COLUMNS = ["region", "rank", "female_topic", "male_topic", "female_words", "male_words",
                "distance", "passes", "pairs", "d_same", "d_cross", "coherence", "female_id",
                "male_id"]
#: The ``pairs`` mark: a pair below the threshold, or a failing one filled in by ``nearest``.
PAIR_MARKS = ("passing", "filled")


def pair_distances(female: np.ndarray, male: np.ndarray, *, she: np.ndarray, he: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``d_same[i, j] = |cos(F_i, she) - cos(M_j, he)|`` and
    ``d_cross[i, j] = |cos(F_i, he) - cos(M_j, she)|`` for topic embeddings ``female`` (rows)
    and ``male`` (rows).

    Used in: region-aware/04, region-aware/05, region-aware/06.
    """
    female, male = np.atleast_2d(np.asarray(female, float)), np.atleast_2d(np.asarray(male, float))
    she, he = np.asarray(she, float), np.asarray(he, float)

    def cos(rows: np.ndarray, v: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(v)
        if np.any(norms == 0):
            raise ValueError("a zero vector has no cosine similarity")
        return rows @ v / norms

    d_same = np.abs(cos(female, she)[:, None] - cos(male, he)[None, :])
    d_cross = np.abs(cos(female, he)[:, None] - cos(male, she)[None, :])
    return d_same, d_cross


def topic_vectors(words: Sequence[Sequence[str]], *, max_length: int = 128) -> np.ndarray:
    """One row per topic: the mean all-MiniLM-L6-v2 embedding of its words (each embedded alone).

    Used in: region-aware/04, region-aware/05, region-aware/06.
    """
    lists = [validate.word_list("topic words", w) for w in words]
    flat = sorted({w for ws in lists for w in ws})
    table = dict(zip(flat, topics.encoder(max_length).embed(flat, progress=False), strict=True))
    return np.stack([np.mean([table[w] for w in ws], axis=0) for ws in lists])


def select_pairs(female: pd.DataFrame, male: pd.DataFrame, female_vectors: np.ndarray,
                 male_vectors: np.ndarray, *, she: np.ndarray, he: np.ndarray, region: str = "",
                 n_pairs: int = 5, threshold: float = 0.01, condition: str = "or",
                 nearest: bool = False) -> pd.DataFrame:
    """The top ``n_pairs`` pairs of F topics ``female`` and M topics ``male`` (tables with
    ``topic``, ``name``, ``words``, ``coherence``; one embedding row each), in the columns of
    :func:`topic_pairs`.

    Used in: region-aware/04, region-aware/05, region-aware/06.
    """
    validate.choice("condition", condition, CONDITIONS)
    if not len(female) or not len(male):
        return pd.DataFrame(columns=PAIR_COLUMNS)
    d_same, d_cross = pair_distances(female_vectors, male_vectors, she=she, he=he)
    distance = np.minimum(d_same, d_cross) if condition == "or" else np.maximum(d_same, d_cross)
    i, j = np.meshgrid(np.arange(len(female)), np.arange(len(male)), indexing="ij")
    f, m = female.iloc[i.ravel()], male.iloc[j.ravel()]
    pairs = pd.DataFrame({
        "region": region, "female_topic": f["name"].values, "male_topic": m["name"].values,
        "female_words": f["words"].values, "male_words": m["words"].values,
        "distance": distance.ravel(), "passes": distance.ravel() < threshold,
        "d_same": d_same.ravel(), "d_cross": d_cross.ravel(),
        "coherence": (f["coherence"].values + m["coherence"].values) / 2,
        "female_id": f["topic"].values, "male_id": m["topic"].values})
    chosen = (pairs[pairs["passes"]]
              .sort_values(["coherence", "distance"], ascending=[False, True], kind="stable")
              .head(n_pairs))
    if nearest and len(chosen) < n_pairs:
        failing = pairs[~pairs["passes"]].sort_values("distance", kind="stable")
        chosen = pd.concat([chosen, failing.head(n_pairs - len(chosen))])
    return chosen.assign(rank=range(1, len(chosen) + 1),
                         pairs=np.where(chosen["passes"], *PAIR_MARKS).astype(object)
                         )[PAIR_COLUMNS].reset_index(drop=True)


def topic_pairs(fits: Mapping[str, RegionTopics], *, candidates: int = 10, n_pairs: int = 5,
                threshold: float = 0.01, condition: str = "or", nearest: bool = False
                ) -> pd.DataFrame:
    """Table 3: the top ``n_pairs`` F-M topic pairs of each region (Sec. 4.2).

    Used in: region-aware/04, region-aware/05, region-aware/06.

    Columns: ``region``, ``rank``, ``female_topic``, ``male_topic`` (names), ``female_words``,
    ``male_words`` (top-word lists), ``distance`` (``min`` of ``d_same`` and ``d_cross`` for
    ``condition="or"``, ``max`` for ``"and"``; the pair condition is ``distance < threshold``),
    ``passes``, ``pairs`` (``"passing"``, or ``"filled"`` for a failing pair filled in),
    ``d_same``, ``d_cross``, ``coherence`` (mean u_mass of the two topics, the ranking),
    ``female_id``, ``male_id``. The candidates are the ``candidates`` most coherent topics of
    each gender. Passing pairs come first, by coherence; with ``nearest`` a region with fewer
    than ``n_pairs`` passing pairs is filled with its failing pairs of smallest distance.
    """
    she, he = topics.encoder().embed(["she", "he"], progress=False)
    frames = []
    for region, fit in fits.items():
        female, male = fit.top("F", candidates), fit.top("M", candidates)
        if not len(female) or not len(male):
            continue
        frames.append(select_pairs(female, male, topic_vectors(female["words"]),
                                   topic_vectors(male["words"]), she=she, he=he, region=region,
                                   n_pairs=n_pairs, threshold=threshold, condition=condition,
                                   nearest=nearest))
    if not frames:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def unpaired_regions(fits: Mapping[str, RegionTopics], *, candidates: int = 10) -> pd.DataFrame:
    """The regions :func:`topic_pairs` leaves out, with their F and M candidate topics and why:
    a pair needs at least one topic of each gender (no rows: every region has pairs).

    Used in: region-aware/04, region-aware/06.

    >>> table = pd.DataFrame({"gender": ["F", "F", ""], "rank": [1, 2, 1]})
    >>> fit = RegionTopics("X", table, pd.DataFrame(), min_topic_size=10, key="")
    >>> unpaired_regions({"X": fit}).to_dict("records")
    [{'region': 'X', 'F topics': 2, 'M topics': 0, 'why': 'no M topic'}]
    """
    rows = []
    for region, fit in fits.items():
        n = {g: len(fit.top(g, candidates)) for g in ("F", "M")}
        missing = [f"no {g} topic" for g in ("F", "M") if not n[g]]
        if missing:
            rows.append({"region": region, "F topics": n["F"], "M topics": n["M"],
                         "why": " and ".join(missing)})
    return pd.DataFrame(rows, columns=["region", "F topics", "M topics", "why"])


def pair_counts(fits: Mapping[str, RegionTopics], *, candidates: int = 10, n_pairs: int = 5,
                threshold: float = 0.01, condition: str = "or") -> pd.DataFrame:
    """Per region: candidate pairs, how many pass the threshold, how many failing ones
    :func:`topic_pairs` fills into its top ``n_pairs`` (``nearest=True``), the smallest
    distance. A region without candidate pairs has no row; :func:`unpaired_regions` says why.

    Used in: region-aware/04.
    """
    every = candidate_pairs(fits, candidates=candidates, n_pairs=n_pairs, threshold=threshold,
                            condition=condition)
    return (every.groupby("region", sort=False)
            .agg(candidates=("passes", "size"), passing=("passes", "sum"),
                 filled=("pairs", lambda marks: int((marks == "filled").sum())),
                 smallest_distance=("distance", "min"))
            .reset_index())


def candidate_pairs(fits: Mapping[str, RegionTopics], *, candidates: int = 10, n_pairs: int = 5,
                    threshold: float = 0.01, condition: str = "or") -> pd.DataFrame:
    """Every candidate pair of each region (the columns of :func:`topic_pairs`), its ``pairs``
    mark saying what the top ``n_pairs`` with ``nearest=True`` make of it (:func:`mark_filled`).

    Used in: region-aware/04.
    """
    options = {"candidates": candidates, "threshold": threshold, "condition": condition,
               "nearest": True}
    return mark_filled(topic_pairs(fits, n_pairs=candidates ** 2, **options),
                       topic_pairs(fits, n_pairs=n_pairs, **options))


def mark_filled(every: pd.DataFrame, top: pd.DataFrame) -> pd.DataFrame:
    """``every`` candidate pair with ``pairs``: ``"passing"`` below the threshold, ``"filled"``
    if ``top`` (the table the later notebooks use) filled it in, ``"failing"`` otherwise.

    Used in: region-aware/04.

    >>> every = pd.DataFrame({"region": "X", "female_id": [0, 0, 1], "male_id": [5, 6, 5],
    ...                       "passes": [True, False, False]})
    >>> top = every.head(2).assign(pairs=["passing", "filled"])
    >>> mark_filled(every, top)["pairs"].tolist()
    ['passing', 'filled', 'failing']
    """
    keys = ["region", "female_id", "male_id"]
    filled = pd.MultiIndex.from_frame(top.loc[top["pairs"] == "filled", keys])
    is_filled = pd.MultiIndex.from_frame(every[keys]).isin(filled)
    return every.assign(pairs=np.select([every["passes"].astype(bool), is_filled],
                                        list(PAIR_MARKS), "failing"))
