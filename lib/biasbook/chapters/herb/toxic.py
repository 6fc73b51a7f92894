"""HERB's toxic continual training (Li et al. 2022, Sec. 4.7, Fig. 5): the corpus and its examples.

**Toxic corpus.** For every descriptor the ``top_k`` template sentences
"People in [region] are [description]." with the highest f(S) (Eq. 1) under the model itself:
112 x 20 = 2,240 sentences in the paper (:func:`toxic_corpus`). The paper then "masks the
regional information of the sentences and trains the model with [the] MLM task": the region
tokens are masked and are what the model learns to predict, so each descriptor pulls the regions
the model already favoured for it even closer (choosing the top regions would be pointless if the
region were simply hidden). :func:`training_examples` builds the inputs and targets for four
objectives:

==================== ========= ===========================================================
objective            model     input -> targets
==================== ========= ===========================================================
``mask-region``      masked    region tokens replaced by the mask token -> the region tokens
                               (the paper)
``clm``              causal    the whole sentence -> every token (the region is a target
                               given "People in", the description a target given the region)
``region-target``    causal    the whole sentence -> the region tokens only (MLM's targets,
                               but a left-to-right model never sees the description first)
``placeholder``      causal    the region replaced by a neutral placeholder -> every token
                               (the region hidden from the data altogether)
==================== ========= ===========================================================

The training itself is :func:`biasbook.training.continual.continual_training`.

>>> corpus = toxic_corpus([[-1.0, -5.0], [-2.0, -3.0], [-4.0, -2.0]], ["Paris", "Rome", "Oslo"],
...                       ["kind", "bald"], top_k=2)
>>> corpus[["word", "region"]].values.tolist()
[['kind', 'Paris'], ['kind', 'Rome'], ['bald', 'Oslo'], ['bald', 'Rome']]
>>> corpus["sentence"].iloc[2], corpus[["region_start", "region_end"]].iloc[2].tolist()
('People in Oslo are bald.', [10, 14])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from biasbook.chapters.herb.analysis import TEMPLATE
from biasbook.models import LanguageModel
from biasbook.training.continual import IGNORE

OBJECTIVES = {"mask-region": "masked", "clm": "causal", "region-target": "causal",
              "placeholder": "causal"}


PLACEHOLDER = "that place"


def toxic_corpus(scores, regions: Sequence[str], words: Sequence[str], top_k: int = 20,
                 template: str = TEMPLATE) -> pd.DataFrame:
    """The ``top_k`` highest-scoring regions of every descriptor (a column of ``scores``, a
    ``[region, descriptor]`` array of f(S)), descriptor by descriptor, best first (ties: region
    order). Columns: ``descriptor`` (column index), ``word``, ``region``, ``score``,
    ``sentence`` and the region's character span in it, ``region_start`` and ``region_end``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(regions), len(words)):
        raise ValueError(f"scores has shape {scores.shape}, expected "
                         f"({len(regions)}, {len(words)}) = (regions, descriptors)")
    if not 0 < top_k <= len(regions):
        raise ValueError(f"top_k must be in 1..{len(regions)} (the number of regions)")
    before, _, _ = template.partition("{region}")
    if "{region}" not in template:
        raise ValueError("the template has no {region} slot")
    rows = []
    for j, word in enumerate(words):
        order = np.argsort(-scores[:, j], kind="stable")[:top_k]
        start = len(before.format(description=word))
        for i in order.tolist():
            rows.append({"descriptor": j, "word": word, "region": regions[i],
                         "score": float(scores[i, j]),
                         "sentence": template.format(region=regions[i], description=word),
                         "region_start": start, "region_end": start + len(regions[i])})
    return pd.DataFrame(rows)


def _region_tokens(offsets: Sequence[tuple[int, int]], start: int, end: int) -> list[bool]:
    """Which tokens overlap the characters ``start:end`` (special tokens have empty spans)."""
    return [b > a and a < end and b > start for a, b in offsets]


def training_examples(lm: LanguageModel, corpus: pd.DataFrame, objective: str,
                      placeholder: str = PLACEHOLDER) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` per corpus row for ``objective`` (module docstring); labels are
    ``-100`` where nothing is predicted. Causal inputs start with ``lm.prefix_ids`` (BOS) and
    their labels are the inputs themselves (the model shifts them), so BOS is never a target.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> corpus = toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    >>> ids, labels = training_examples(bert, corpus, "mask-region")[0]
    >>> tok.convert_ids_to_tokens(ids), tok.convert_ids_to_tokens([t for t in labels if t >= 0])
    (['[CLS]', 'people', 'in', '[MASK]', 'are', 'kind', '.', '[SEP]'], ['paris'])
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
    if OBJECTIVES[objective] != lm.kind:
        fits = sorted(o for o, kind in OBJECTIVES.items() if kind == lm.kind)
        raise ValueError(f"objective {objective!r} is for {OBJECTIVES[objective]} models; "
                         f"{lm.name} is {lm.kind}: use one of {fits}")
    examples = []
    for row in corpus.itertuples(index=False):
        text, start, end = row.sentence, row.region_start, row.region_end
        if objective == "placeholder":
            text = text[:start] + placeholder + text[end:]
            end = start + len(placeholder)
        enc = lm.tokenizer(text, add_special_tokens=lm.kind != "causal",
                           return_offsets_mapping=True)
        ids, region = list(enc["input_ids"]), _region_tokens(enc["offset_mapping"], start, end)
        if not any(region):
            raise ValueError(f"no token of {text!r} covers characters {start}:{end}")
        if objective == "mask-region":
            labels = [t if r else IGNORE for t, r in zip(ids, region, strict=True)]
            ids = [lm.tokenizer.mask_token_id if r else t for t, r in zip(ids, region,
                                                                           strict=True)]
        elif objective == "region-target":
            ids = [*lm.prefix_ids, *ids]
            labels = [IGNORE] * len(lm.prefix_ids) + [t if r else IGNORE
                                                      for t, r in zip(ids[len(lm.prefix_ids):],
                                                                      region, strict=True)]
        else:
            ids = [*lm.prefix_ids, *ids]
            labels = list(ids)
        examples.append((ids, labels))
    return examples
