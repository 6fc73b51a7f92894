"""The template sentences and their scores under one language model: f(S_ij) of Eq. 1 for every
region and descriptor (:func:`descriptor_scores`), f(r) of each bare region name for C_z
(:func:`region_word_scores`), and a score matrix with one topic's columns swapped for its
Appendix B substitutes' (:func:`replace_topic`, Table 6). :mod:`.model_scores` runs these for
every model of a notebook.

>>> list(fill_template(["Paris"], ["kind", "bald"]))
['People in Paris are kind.', 'People in Paris are bald.']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from biasbook.metrics.herb import topic_mask
from biasbook.models import LanguageModel
from biasbook.scoring import score_sentences, score_stream

TEMPLATE = "People in {region} are {description}."


def fill_template(regions: Sequence[str], words: Sequence[str], template: str = TEMPLATE
                  ) -> Iterator[str]:
    """Sentences ``S_ij``, region-major (all descriptors of the first region, then the next),
    made one at a time: the paper setting has 2.8 million per model.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, book/trust.
    """
    return (template.format(region=r, description=w) for r in regions for w in words)


def descriptor_scores(lm: LanguageModel, regions: Sequence[str], words: Sequence[str], *,
                      template: str = TEMPLATE, progress: bool | None = None,
                      chunk: int | None = None, **score_kwargs) -> NDArray[np.float64]:
    """f(S_ij) of Eq. 1 as a ``[region, descriptor]`` array: the mean token log-probability of
    each filled template under ``lm`` (its default method: ``clm`` causal, ``aul`` masked,
    ``infill`` encoder-decoder). Cached by the scoring engine, so a rerun is a lookup.

    Used in: herb/01, herb/02, herb/03, herb/04, herb/05, book/trust.

    The sentences are made and scored as a stream, whole regions at a time (about ``chunk``
    sentences; default :data:`~biasbook.scoring.sentences.STREAM_CHUNK`), and only their means
    are kept: the paper setting's 2.8 million sentences per model are never in memory at once.
    ``score_kwargs`` go to :func:`~biasbook.scoring.score_sentences` (``cache``, ``workers``, ...).

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    >>> descriptor_scores(lm, ["paris", "tokyo", "london"], ["kind", "smart"], cache=False).shape
    (3, 2)
    """
    regions, words = list(regions), list(words)
    if not regions or not words:
        raise ValueError(f"descriptor_scores needs at least one region and one word; got "
                         f"{len(regions)} and {len(words)}")
    means = [scores.mean for scores in score_stream(
        lm, fill_template(regions, words, template), chunk=chunk, align=len(words),
        total=len(regions) * len(words), progress=progress, **score_kwargs)]
    values = np.concatenate(means).reshape(len(regions), len(words))
    if not np.isfinite(values).all():
        raise ValueError(f"{lm.name}: some sentences have no scored token")
    return values


def region_word_scores(lm: LanguageModel, regions: Sequence[str], *,
                       progress: bool | None = None, **score_kwargs) -> NDArray[np.float64]:
    """f(r) of Sec. 3.4: Eq. 1 on the bare region name, one value per region (for C_z).

    Used in: herb/01, herb/02, herb/04.
    """
    values = score_sentences(lm, list(regions), progress=progress, **score_kwargs).mean
    if not np.isfinite(values).all():
        raise ValueError(f"{lm.name}: a region name has no scored token (one token, no BOS)")
    return values


def replace_topic(scores: ArrayLike, substitute_scores: ArrayLike, topics: Sequence[str],
                  topic: str) -> NDArray[np.float64]:
    """Score matrix with the columns of ``topic`` taken from ``substitute_scores`` (Table 6).

    Used in: herb/02.

    >>> replace_topic([[1.0, 2.0]], [[8.0, 9.0]], ["a", "b"], "b")
    array([[1., 9.]])
    """
    swap = ~topic_mask(topics, topic)
    return np.where(swap[None, :], np.asarray(substitute_scores, dtype=np.float64),
                    np.asarray(scores, dtype=np.float64))
