"""What the chapter measures of a region's fitted topics (Borah et al. 2024, Sec. 4.1): which
gender each topic is aligned with, each example's probability of its topic, and each topic's
coherence. :mod:`.topics` fits the topics and calls these.

**Alignment (Sec. 4.1).** HDBSCAN's soft clustering gives every example a topic distribution
(``calculate_probabilities=True``); the examples that "dominantly belong" to topic :math:`t` are
those BERTopic assigns to it (outliers, topic -1, belong to none). Of its :math:`n` examples,
:math:`m` are F-aligned:

.. math:: p_{Ft} = \\frac{1}{m}\\sum_{k=1}^{m} p_{i_k t}, \\qquad
          p_{Mt} = \\frac{1}{n-m}\\sum_{k=m+1}^{n} p_{i_k t},

and the topic is an F topic if :math:`p_{Ft} > p_{Mt}`, an M topic if smaller (:func:`alignment`;
an empty group counts as probability 0, an exact tie is neither). This rule ignores *how many* F
and M examples a topic has; the table also gives ``gender_by_share`` (F if the topic's share of
F examples exceeds the region's), which the chapter compares, and ``alignment="share"`` makes it
the rule that decides.

**Coherence.** Topics are ranked within each gender by u_mass coherence (Mimno et al. 2011) over
the region's examples (gensim ``CoherenceModel``, :func:`umass`): for the top words
:math:`w_1..w_N`,

.. math:: C = \\frac{2}{N(N-1)} \\sum_{i=2}^{N}\\sum_{j<i}
          \\log\\frac{D(w_i, w_j) / n + \\epsilon}{D(w_j) / n}

with :math:`D` document frequencies over :math:`n` documents and gensim's
:math:`\\epsilon = 10^{-12}`. Mimno et al. sum :math:`\\log\\frac{D(w_i, w_j) + 1}{D(w_j)}`
instead. For topics of equal length the sum is the mean times a constant, but the +1 is not: it
adds :math:`\\log(1 + 1/D(w_i, w_j))`, more to a rare pair of words than to a frequent one (and a
pair that never co-occurs scores :math:`-\\log D(w_j)` instead of about :math:`\\log\\epsilon`),
so the two forms can rank topics of equal length in opposite orders
(``tests/test_region_topics.py`` has a hand-worked counterexample). The paper cites Mimno et al.
without naming an implementation; the book uses gensim's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from biasbook import validate
from biasbook.chapters.region_aware import gendered


def alignment(topics: Sequence[int], probabilities: Sequence[float], groups: Sequence[str]
              ) -> pd.DataFrame:
    """Per topic (outliers, -1, excluded): ``size``, ``n_female``, ``n_male``, ``p_female``,
    ``p_male`` (mean probability of the topic over its F / M examples; 0 for an empty group),
    ``gender_by_probability`` (Sec. 4.1's rule; "" on a tie), ``share_female`` and
    ``gender_by_share`` (F if ``share_female`` exceeds the share of F examples of all of them).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06, biasbook plan.

    >>> t = alignment([0, 0, 0, 1, -1], [0.9, 0.5, 0.4, 1.0, 0.1], ["F", "M", "M", "M", "F"])
    >>> t.drop(columns=["size", "n_male", "share_female"]).values.tolist()
    [[0, 1, 0.9, 0.45, 'F', 'M'], [1, 0, 0.0, 1.0, 'M', 'M']]

    (Topic 0 is an F topic by the paper's rule, though only a third of its examples are F, less
    than the region's two fifths.)
    """
    frame = pd.DataFrame({"topic": np.asarray(topics, dtype=int),
                          "p": np.asarray(probabilities, dtype=float),
                          "group": validate.word_list("groups", groups)})
    if len(frame) != len(probabilities):
        raise ValueError("topics, probabilities and groups must have the same length")
    bad = sorted(set(frame["group"]) - set(gendered.GROUPS))
    if bad:
        raise ValueError(f"groups must be 'F' or 'M', got {bad}")
    overall_female = float((frame["group"] == "F").mean())
    rows = []
    for topic, part in frame[frame["topic"] >= 0].groupby("topic"):
        female, male = part[part["group"] == "F"], part[part["group"] == "M"]
        p_female = float(female["p"].mean()) if len(female) else 0.0
        p_male = float(male["p"].mean()) if len(male) else 0.0
        share = len(female) / len(part)
        rows.append({"topic": int(topic), "size": len(part), "n_female": len(female),
                     "n_male": len(male), "p_female": p_female, "p_male": p_male,
                     "gender_by_probability": _sign(p_female - p_male), "share_female": share,
                     "gender_by_share": _sign(share - overall_female)})
    columns = ["topic", "size", "n_female", "n_male", "p_female", "p_male",
               "gender_by_probability", "share_female", "gender_by_share"]
    return pd.DataFrame(rows, columns=columns)


def assigned_probability(assigned: Sequence[int], probabilities) -> np.ndarray:
    """Each example's probability of the topic it is assigned to (0 for an outlier, -1).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.

    ``probabilities`` is BERTopic's: a matrix (examples x topics) when the model has several
    topics, but a vector (each example's probability of its own cluster) when HDBSCAN found only
    one, and nothing useful when it found none.

    >>> assigned_probability([1, -1, 0], [[0.2, 0.7], [0.1, 0.1], [0.6, 0.3]]).tolist()
    [0.7, 0.0, 0.6]
    >>> assigned_probability([0, -1, 0], [0.9, 0.0, 0.4]).tolist()
    [0.9, 0.0, 0.4]
    """
    assigned = np.asarray(assigned, dtype=int)
    if not (assigned >= 0).any():
        return np.zeros(len(assigned))
    values = np.asarray(probabilities, dtype=float)
    if values.ndim == 1:
        if len(values) != len(assigned):
            raise ValueError(f"{len(values)} probabilities for {len(assigned)} examples")
        picked = values
    else:
        if values.shape[0] != len(assigned) or values.shape[1] <= assigned.max():
            raise ValueError(f"a {values.shape} probability matrix for {len(assigned)} examples "
                             f"and {assigned.max() + 1} topics")
        picked = values[np.arange(len(assigned)), np.clip(assigned, 0, None)]
    return np.where(assigned >= 0, picked, 0.0)


def _sign(difference: float) -> str:
    return "F" if difference > 0 else "M" if difference < 0 else ""


def umass(topic_words: Sequence[Sequence[str]], documents: Sequence[Sequence[str]]
          ) -> list[float]:
    """u_mass coherence of each topic's word list over tokenized ``documents`` (gensim).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.

    Words that no document contains are an error (their coherence is undefined).

    >>> docs = [["a", "b"], ["a", "c"], ["b", "c"], ["a", "b", "c"]]
    >>> round(umass([["a", "b"]], docs)[0], 6) == round(float(np.log(2 / 3)), 6)
    True
    """
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    dictionary = Dictionary(documents)
    missing = sorted({w for words in topic_words for w in words} - set(dictionary.token2id))
    if missing:
        raise ValueError(f"topic words absent from every document: {missing[:10]}")
    corpus = [dictionary.doc2bow(doc) for doc in documents]
    model = CoherenceModel(topics=[list(w) for w in topic_words], corpus=corpus,
                           dictionary=dictionary, coherence="u_mass",
                           topn=max(len(w) for w in topic_words))
    return [float(c) for c in model.get_coherence_per_topic()]
