"""Token log-probabilities under a masked LM: AUL, AULA and PLL, and masked-slot distributions.

Batches are right-padded with an attention mask, so padding never reaches a real token; special
tokens ([CLS], [SEP], <s>, </s>, a literal [MASK]) are never scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

import numpy as np
import torch

from biasbook.models import LanguageModel
from biasbook.scoring.batching import gather_logprobs, lengths_mask, pad, token_batches

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

Results = Iterator[tuple[list[int], list[np.ndarray]]]


def pad_id(lm: LanguageModel | PreTrainedTokenizerBase) -> int:
    """The id that pads a batch for ``lm`` (a :class:`LanguageModel` or a tokenizer): the
    tokenizer's pad token, else 0. RoBERTa derives position ids from the pad id, so a batch is
    padded with the model's own; any id does elsewhere, as padding is masked.

    >>> from biasbook.testing import tiny_tokenizer
    >>> pad_id(tiny_tokenizer())
    0
    """
    tokenizer = lm.tokenizer if isinstance(lm, LanguageModel) else lm
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def aul_logprobs(lm: LanguageModel, seqs: Sequence[Sequence[int]], batch_tokens: int,
                 attention: bool = False) -> Results:
    """Yield ``(indices, arrays)``: log P(w_t | S) of every non-special token of the unmasked S.

    With ``attention`` each array is ``[2, n]``: log-probs and AULA weights, the attention each
    token receives averaged over layers, heads and the sentence's real query positions.
    """
    specials = torch.tensor(sorted(lm.tokenizer.all_special_ids), device=lm.device)
    with eager_attention(lm.model) if attention else nullcontext():
        for batch in token_batches([len(s) for s in seqs], batch_tokens):
            lengths = [len(seqs[i]) for i in batch]
            ids = pad([seqs[i] for i in batch], pad_id(lm), lm.device)
            mask = lengths_mask(lengths, ids.shape[1], lm.device)
            out = lm.model(input_ids=ids, attention_mask=mask, output_attentions=attention)
            scored = mask.bool() & ~torch.isin(ids, specials)
            counts = scored.sum(1).tolist()
            logprobs = gather_logprobs(out.logits[scored], ids[scored])
            parts = torch.split(logprobs.cpu(), counts)
            if attention:
                weights = _received_attention(out.attentions, mask)[scored].float().cpu()
                parts = [torch.stack(pair)
                         for pair in zip(parts, torch.split(weights, counts), strict=True)]
            yield batch, [p.numpy() for p in parts]


def _received_attention(attentions: tuple[torch.Tensor, ...], mask: torch.Tensor) -> torch.Tensor:
    """``[B, T]``: mean over layers, heads and real queries of the attention paid to each key."""
    per_layer = torch.stack(attentions)  # [L, B, H, T_query, T_key]
    summed = (per_layer.sum(dim=(0, 2)) * mask[:, :, None]).sum(1)
    return summed / (per_layer.shape[0] * per_layer.shape[2] * mask.sum(1, keepdim=True))


def pll_logprobs(lm: LanguageModel, seqs: Sequence[Sequence[int]], batch_tokens: int) -> Results:
    """Yield ``(indices, arrays)``: log P(w_t | S with w_t masked) for every non-special token."""
    specials = set(lm.tokenizer.all_special_ids)
    copies = [(i, t) for i, s in enumerate(seqs) for t, tok in enumerate(s) if tok not in specials]
    pending = Counter(i for i, _ in copies)
    found: dict[int, dict[int, float]] = {i: {} for i in range(len(seqs))}
    empty = [i for i in range(len(seqs)) if pending[i] == 0]
    if empty:
        yield empty, [np.zeros(0, np.float32)] * len(empty)
    for batch in token_batches([len(seqs[i]) for i, _ in copies], batch_tokens):
        rows = [copies[b] for b in batch]
        lengths = [len(seqs[i]) for i, _ in rows]
        ids = pad([seqs[i] for i, _ in rows], pad_id(lm), lm.device)
        at = (torch.arange(len(rows), device=lm.device),
              torch.tensor([t for _, t in rows], device=lm.device))
        targets = ids[at]
        ids[at] = lm.tokenizer.mask_token_id
        mask = lengths_mask(lengths, ids.shape[1], lm.device)
        logits = lm.model(input_ids=ids, attention_mask=mask).logits
        logprobs = gather_logprobs(logits[at], targets).tolist()
        finished = []
        for (i, t), lp in zip(rows, logprobs, strict=True):
            found[i][t] = lp
            pending[i] -= 1
            if pending[i] == 0:
                finished.append(i)
        if finished:
            yield finished, [_in_order(found.pop(i)) for i in finished]


def _in_order(by_position: dict[int, float]) -> np.ndarray:
    return np.array([by_position[t] for t in sorted(by_position)], np.float32)


def masked_slot_logprobs(lm: LanguageModel, inputs: Sequence[tuple[Sequence[int], Sequence[int]]],
                         batch_tokens: int) -> Iterator[tuple[list[int], list[torch.Tensor]]]:
    """Yield ``(indices, [k, V] log-softmax rows)`` at the ``k`` slot positions of each input.

    ``inputs`` are ``(ids with the slot masked, slot positions)``; only ``k`` rows per input are
    normalised, since a slot query needs the whole vocabulary there and nowhere else.
    """
    for batch in token_batches([len(ids) for ids, _ in inputs], batch_tokens):
        lengths = [len(inputs[i][0]) for i in batch]
        ids = pad([inputs[i][0] for i in batch], pad_id(lm), lm.device)
        mask = lengths_mask(lengths, ids.shape[1], lm.device)
        logits = lm.model(input_ids=ids, attention_mask=mask).logits
        yield batch, [torch.log_softmax(logits[row, list(inputs[i][1])].float(), dim=-1).cpu()
                      for row, i in enumerate(batch)]


@contextmanager
def eager_attention(model: torch.nn.Module) -> Iterator[None]:
    """Switch to eager attention, the only implementation that returns attention weights."""
    before = model.config._attn_implementation
    if before != "eager":
        model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if before != "eager":
            model.set_attn_implementation(before)
