"""Hidden-state representations of the region names (Sec. 4.3, Fig. 3) and how strongly they
cluster by continent: :func:`region_representations` (one vector per bare region name),
:func:`neighbour_agreement` (share of nearest neighbours on the same continent) and
:func:`chance_agreement` (the same share for neighbours drawn at random).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from biasbook.models import LanguageModel
from biasbook.scoring.batching import padded
from biasbook.scoring.masked import pad_id


@torch.inference_mode()
def region_representations(lm: LanguageModel, regions: Sequence[str], *, layer: int = -1,
                           batch_size: int = 64) -> NDArray[np.float64]:
    """Hidden state of each bare region name (Sec. 4.3, Fig. 3): layer ``layer`` (default the
    last), averaged over the name's own tokens. Special tokens ([CLS], [SEP], a causal model's
    BOS prefix) are run but not averaged; an encoder-decoder model gives its encoder's states.

    Used in: herb/03.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> lm = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> region_representations(lm, ["paris", "tokyo"]).shape
    (2, 16)
    """
    rows, spans = [], []
    for name in regions:
        ids = lm.encode(name)
        if lm.kind == "causal":  # the name's own ids follow the BOS prefix
            own, start = ids, len(lm.prefix_ids)
            ids = [*lm.prefix_ids, *ids]
        else:  # the name's own ids sit inside the added special tokens ([CLS] ... [SEP])
            own = lm.tokenizer(name, add_special_tokens=False)["input_ids"]
            start = next((s for s in range(len(ids) - len(own) + 1)
                          if ids[s:s + len(own)] == own), None)
            if not own or start is None:
                raise ValueError(f"cannot locate the tokens of {name!r} in {lm.name}'s encoding")
        rows.append(ids)
        spans.append((start, start + len(own)))
    pooled = []
    for start in range(0, len(rows), batch_size):
        ids, mask = padded(rows[start:start + batch_size], pad_id(lm), lm.device)
        output = lm.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        states = getattr(output, "encoder_hidden_states", None) or output.hidden_states
        hidden = states[layer].float().cpu().numpy()
        pooled += [hidden[i, a:b].mean(axis=0)
                   for i, (a, b) in enumerate(spans[start:start + batch_size])]
    return np.stack(pooled).astype(np.float64)


def neighbour_agreement(x: ArrayLike, labels: Sequence, k: int = 5, *,
                        metric_name: str = "cosine") -> float:
    """Share of each point's ``k`` nearest neighbours (itself excluded) that carry its label,
    averaged over points: how strongly a representation space clusters by continent (Fig. 3).

    Used in: herb/03.

    >>> x = [[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.1]]
    >>> neighbour_agreement(x, ["EU", "EU", "AS", "AS"], k=1)
    1.0
    """
    from sklearn.neighbors import NearestNeighbors

    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels)
    k = min(k, len(x) - 1)
    if k < 1:
        raise ValueError("neighbour_agreement needs at least two points")
    _, found = NearestNeighbors(n_neighbors=k + 1, metric=metric_name).fit(x).kneighbors(x)
    # drop each point itself (exact duplicates may put it second: drop one occurrence of i)
    others = np.array([[j for j in row if j != i][:k] for i, row in enumerate(found)])
    return float((labels[others] == labels[:, None]).mean())


def chance_agreement(labels: Sequence) -> float:
    """Expected :func:`neighbour_agreement` when neighbours are drawn at random: the chance that
    another point shares a point's label, averaged over points.

    Used in: herb/03.

    >>> chance_agreement(["EU", "EU", "AS", "AS"])  # one of the three others matches
    0.3333333333333333
    """
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    n = counts.sum()
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))
