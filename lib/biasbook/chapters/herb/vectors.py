"""Looking inside the descriptive vectors of notebook 01 (Eq. 1-2): the extreme descriptors of a
region, how far apart the countries' vectors are, and the vectors centred for a heatmap.

>>> x = np.array([[-1.0, -2.0], [-1.1, -2.1], [-3.0, -1.0]])
>>> bool(np.abs(centred_vectors(x).mean(axis=0)).max() < 1e-12)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import pdist

from biasbook.chapters.herb.sentence_scores import TEMPLATE
from biasbook.metrics.sparseness import descriptive_vectors


def extreme_descriptors(scores: ArrayLike, regions: Sequence[str], words: pd.DataFrame,
                        region: str, k: int = 5) -> pd.DataFrame:
    """The ``k`` most and ``k`` least likely template sentences of ``region``: column ``f(S)``,
    indexed by the sentence with the descriptor's topic in brackets. ``words`` has the columns
    ``word`` and ``topic`` (:func:`~biasbook.chapters.herb.data.descriptors`), aligned with
    the columns of ``scores``.

    Used in: herb/01.

    >>> words = pd.DataFrame({"word": ["kind", "lazy", "tall"], "topic": ["m", "m", "a"]})
    >>> extreme_descriptors([[-1.0, -3.0, -2.0]], ["Peru"], words, "Peru", k=1).index.tolist()
    ['People in Peru are kind (m).', 'People in Peru are lazy (m).']
    """
    labels = words["word"] + " (" + words["topic"] + ")"
    row = pd.Series(np.asarray(scores)[list(regions).index(region)], index=labels)
    sample = pd.concat([row.nlargest(k), row.nsmallest(k)]).rename("f(S)").to_frame()
    sample.index = [TEMPLATE.format(region=region, description=i) for i in sample.index]
    return sample


def country_spread(table: pd.DataFrame, scores: Mapping[str, ArrayLike]) -> pd.DataFrame:
    """Per model, how far apart the countries' unit vectors v (Eq. 2) are: the median and
    maximum Euclidean distance and the median and minimum cosine similarity over all pairs.

    Used in: herb/01.
    """
    country = (table["level"] == "country").to_numpy()
    if country.sum() < 2:
        raise ValueError("country_spread needs at least two countries")
    rows = []
    for name, x in scores.items():
        v = descriptive_vectors(x)
        d = pdist(v[country])
        cos = 1 - pdist(v[country], "cosine")
        rows.append({"model": name, "median distance between countries": np.median(d),
                     "max distance": d.max(), "median cosine": np.median(cos),
                     "min cosine": cos.min()})
    return pd.DataFrame(rows).set_index("model")


def centred_vectors(scores: ArrayLike) -> NDArray[np.float64]:
    """The unit vectors v (Eq. 2), each descriptor centred on its mean over the regions: what
    is left once the direction that every region shares is removed.

    Used in: herb/01.
    """
    v = descriptive_vectors(scores)
    return v - v.mean(axis=0)
