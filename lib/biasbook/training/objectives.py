"""Language-modelling objectives on token ids: masked (BERT masking) and causal (next token).

- :func:`training_sequences`: the token ids of texts as a model reads them.
- :func:`mask_tokens` and :func:`lm_example`: one ``(inputs, labels)`` pair, labels
  :data:`IGNORE` where no loss is taken.
- :class:`TokenLoss`: the ``batches`` / ``step`` / ``record`` of :func:`~biasbook.training.fit.fit`
  for either objective. A step's loss is the mean over all the scored tokens of its batch, even
  when the batch is computed a few sequences (``micro_batch``) at a time, so that the micro-batch
  size changes memory use, not the result.

>>> inputs, labels = mask_tokens([2, 7, 8, 9, 3], np.random.default_rng(0), mask_id=4,
...                              vocab_size=10, specials={2, 3}, probability=0.0)
>>> sum(label != IGNORE for label in labels)
1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from biasbook import validate
from biasbook.models import LanguageModel
from biasbook.scoring.batching import pad, padded
from biasbook.scoring.masked import pad_id
from biasbook.training.fit import seeded, shuffled

IGNORE = -100  # the label PyTorch's cross-entropy skips
Example = tuple[list[int], list[int]]


def training_sequences(lm: LanguageModel, texts: Sequence[str], max_length: int = 128
                       ) -> list[list[int]]:
    """Token ids of each text as the model reads it (framing included), cut to ``max_length``;
    blank texts are left out."""
    texts = validate.word_list("texts", texts)
    prefix = list(lm.prefix_ids)
    return [(prefix + lm.encode(t))[:max_length] for t in texts if t.strip()]


def mask_tokens(ids: Sequence[int], rng: np.random.Generator, *, mask_id: int, vocab_size: int,
                specials: set[int], probability: float = 0.15) -> Example:
    """BERT's masking (Devlin et al. 2019): each non-special token is chosen with
    ``probability`` (at least one per sequence); a chosen token becomes the mask token (80%),
    a random token (10%) or stays (10%), and only chosen tokens have labels."""
    candidates = [i for i, t in enumerate(ids) if t not in specials]
    if not candidates:
        raise ValueError("a sequence with only special tokens cannot be masked")
    chosen = [i for i in candidates if rng.random() < probability]
    if not chosen:
        chosen = [candidates[int(rng.integers(len(candidates)))]]
    inputs, labels = list(ids), [IGNORE] * len(ids)
    for i in chosen:
        labels[i] = ids[i]
        r = rng.random()
        if r < 0.8:
            inputs[i] = mask_id
        elif r < 0.9:
            inputs[i] = int(rng.integers(vocab_size))
    return inputs, labels


def lm_example(lm: LanguageModel, ids: list[int], rng: np.random.Generator,
               mlm_probability: float = 0.15) -> Example:
    """``(inputs, labels)`` of one sequence: the sequence itself for a causal LM (the labels are
    shifted in the loss), BERT masking drawn from ``rng`` for a masked LM."""
    if lm.kind == "causal":
        return ids, list(ids)
    tok = lm.tokenizer
    return mask_tokens(ids, rng, mask_id=tok.mask_token_id, vocab_size=len(tok),
                       specials=set(tok.all_special_ids), probability=mlm_probability)


def summed_loss(lm: LanguageModel, model: torch.nn.Module, part: Sequence[Example]
                ) -> torch.Tensor:
    """The cross-entropy of ``model`` (``lm``'s kind and tokenizer) summed over the scored
    tokens of ``part``; a causal LM predicts token t + 1 from tokens up to t."""
    ids, mask = padded([x for x, _ in part], pad_id(lm), lm.device)
    labels = pad([y for _, y in part], IGNORE, lm.device)
    logits = model(input_ids=ids, attention_mask=mask).logits
    if lm.kind == "causal":
        logits, labels = logits[:, :-1], labels[:, 1:]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                             labels.reshape(-1), ignore_index=IGNORE,
                                             reduction="sum")


def scored_tokens(lm: LanguageModel, labels: list[int]) -> int:
    """How many labels of one example the loss scores (a causal LM never predicts token 0)."""
    scored = labels[1:] if lm.kind == "causal" else labels
    return sum(label != IGNORE for label in scored)


@dataclass
class TokenLoss:
    """Language modelling of ``sequences`` by ``model`` (a copy of ``lm.model``, possibly
    modified) as :func:`~biasbook.training.fit.fit` runs it: epoch k shuffles and masks with
    ``seed + k - 1`` (torch's generator too, for dropout), a step takes ``batch_size`` sequences,
    and an epoch's record is its mean loss per scored token."""

    lm: LanguageModel
    model: torch.nn.Module
    sequences: list[list[int]]
    batch_size: int = 16
    micro_batch: int = 4
    mlm_probability: float = 0.15
    seed: int = 0

    def batches(self, epoch: int) -> list[list[Example]]:
        rng = seeded(self.seed + epoch - 1)
        return [[lm_example(self.lm, self.sequences[i], rng, self.mlm_probability) for i in batch]
                for batch in shuffled(len(self.sequences), self.batch_size, rng)]

    def step(self, batch: list[Example]) -> tuple[list[float], int]:
        """Back-propagate the batch's mean token loss; its micro-batches' shares and the number
        of scored tokens."""
        scored = sum(scored_tokens(self.lm, labels) for _, labels in batch)
        shares = []
        for m in range(0, len(batch), self.micro_batch):
            loss = summed_loss(self.lm, self.model, batch[m:m + self.micro_batch]) / scored
            loss.backward()
            shares.append(float(loss.detach()) * scored)
        return shares, scored

    def record(self, epoch: int, outputs: list[tuple[list[float], int]]) -> float:
        total, count = 0.0, 0
        for shares, scored in outputs:
            for share in shares:  # summed in the order computed: the recorded losses stay exact
                total += share
            count += scored
        return total / count
