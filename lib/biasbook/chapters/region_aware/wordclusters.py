"""Word clusters of one region's topics (Borah et al. 2024, App. J, Fig. 7 form).

The paper shows the top 10 words of every topic of Africa as word clusters. Here each word is
embedded alone with the chapter's sentence encoder (all-MiniLM-L6-v2, as for the topic vectors of
notebook 04) and the words are projected to two dimensions with PCA, coloured by their topic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def project(vectors: np.ndarray, seed: int = 0) -> np.ndarray:
    """Two PCA coordinates per row (sklearn; the sign of each axis is sklearn's convention).

    Used in: region-aware/03.
    """
    from sklearn.decomposition import PCA

    return PCA(n_components=2, random_state=seed).fit_transform(np.asarray(vectors, float))


def points(fit, *, top_words: int = 10, embed=None) -> pd.DataFrame:
    """One row per (topic, word) of ``fit`` (a ``topics.RegionTopics``): ``topic``, ``name``,
    ``gender``, ``word``, ``x``, ``y``. ``embed`` maps a word list to vectors (default: the
    chapter's encoder).

    Used in: region-aware/03.
    """
    rows = [(t["topic"], t["name"], t["gender"], w) for _, t in fit.table.iterrows()
            for w in list(t["words"])[:top_words]]
    frame = pd.DataFrame(rows, columns=["topic", "name", "gender", "word"])
    if embed is None:
        from biasbook.chapters.region_aware import topics

        embed = lambda words: topics.encoder().embed(words, progress=False)  # noqa: E731
    words = sorted(set(frame["word"]))
    table = dict(zip(words, np.asarray(embed(words)), strict=True))
    xy = project(np.stack([table[w] for w in frame["word"]])) if len(frame) > 1 else np.zeros(
        (len(frame), 2))
    return frame.assign(x=xy[:, 0], y=xy[:, 1])
