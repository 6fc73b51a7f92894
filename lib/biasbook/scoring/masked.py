"""Token log-probabilities under a masked LM: AUL, AULA and PLL, and masked-slot distributions.

Batches are right-padded with an attention mask, so padding never reaches a real token; special
tokens ([CLS], [SEP], <s>, </s>, a literal [MASK]) are never scored.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

import numpy as np
import torch

from biasbook.models import LanguageModel
from biasbook.scoring.batching import (
    copy_batches,
    gather_logprobs,
    padded,
    token_batches,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

Results = Iterator[tuple[list[int], list[np.ndarray]]]
#: Pseudo-log-likelihood variants: Salazar et al. (2020); Kauf & Ivanova (2023), PLL-word-l2r.
PLL_VARIANTS = ("original", "within_word_l2r")


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
            ids, mask = padded([seqs[i] for i in batch], pad_id(lm), lm.device)
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


def pll_logprobs(lm: LanguageModel, seqs: Sequence[Sequence[int]], batch_tokens: int,
                 words: Sequence[Sequence[int | None]] | None = None) -> Results:
    """Yield ``(indices, arrays)``: log P(w_t | S with w_t masked) for every non-special token.

    ``words`` (each sequence's word ids, None on special tokens) selects ``within_word_l2r``:
    scoring a piece of a multi-piece word also masks the word's pieces to its right.

    **Memory.** Each scored token needs its own masked copy of the sentence; the copies are cut
    into passes by :func:`~biasbook.scoring.batching.copy_batches`, so a pass holds at most
    ``batch_tokens`` padded tokens (``batch_tokens // length`` copies; one copy where a sentence
    alone is longer than the budget), and the copies of one sentence are built pass by pass,
    never all at once. The output head runs only at each copy's masked target (where the model
    allows it, :func:`logits_at`): a pass holds ``copies x vocabulary`` logits, not ``copies x
    length x vocabulary``. A 512-token sentence under the CPU default of 2,048 tokens is 4
    copies per pass (a [4, 512] input), 128 passes; under bert-base-cased (28,996 entries) its
    logits take 0.46 MB a pass instead of 238 MB, and its activations are those of one [4, 512]
    forward pass, never of all 510 copies.
    """
    if words is not None and [len(w) for w in words] != [len(s) for s in seqs]:
        raise ValueError("pll_logprobs: words must give one word id per token of each sequence")
    specials = set(lm.tokenizer.all_special_ids)
    targets = [[t for t, tok in enumerate(s) if tok not in specials] for s in seqs]
    empty = [i for i, scored in enumerate(targets) if not scored]
    if empty:
        yield empty, [np.zeros(0, np.float32)] * len(empty)
    found: dict[int, list[float]] = {}  # the sentences begun and not finished
    for batch in copy_batches([len(s) for s in seqs], [len(t) for t in targets], batch_tokens):
        rows = [(i, targets[i][k]) for i, k in batch]
        ids, mask = padded([seqs[i] for i, _ in rows], pad_id(lm), lm.device)
        at = (torch.arange(len(rows), device=lm.device),
              torch.tensor([t for _, t in rows], device=lm.device))
        wanted = ids[at]
        ids[at] = lm.tokenizer.mask_token_id
        if words is not None:  # within_word_l2r: the target word's pieces to its right too
            right = [(row, u) for row, (i, t) in enumerate(rows)
                     for u in _pieces_right(words[i], t)]
            if right:
                ids[torch.tensor(right, device=lm.device).T.unbind()] = lm.tokenizer.mask_token_id
        logprobs = gather_logprobs(logits_at(lm.model, ids, mask, at), wanted).tolist()
        finished = []
        for (i, _), lp in zip(rows, logprobs, strict=True):
            found.setdefault(i, []).append(lp)  # a sentence's copies come in position order
            if len(found[i]) == len(targets[i]):
                finished.append(i)
        if finished:
            yield finished, [np.array(found.pop(i), np.float32) for i in finished]


def _pieces_right(words: Sequence[int | None], t: int) -> range:
    """Positions after ``t`` that belong to the same word as ``t`` (contiguous)."""
    end = t + 1
    if words[t] is not None:
        while end < len(words) and words[end] == words[t]:
            end += 1
    return range(t + 1, end)


def word_ids(lm: LanguageModel, texts: Sequence[str]) -> list[list[int | None]]:
    """Each text's word id per token of :meth:`LanguageModel.encode` (None on special tokens).

    Only a fast (Rust) tokenizer knows which word each token came from; a slow one is an error.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> tok.tokenize("the cat is unbelievable"), word_ids(bert, ["the cat is unbelievable"])
    (['the', 'cat', 'is', 'un', '##believ', '##able'], [[None, 0, 1, 2, 3, 3, 3, None]])
    """
    check_word_ids(lm)
    encoded = lm.tokenizer(list(texts), add_special_tokens=lm.kind != "causal")  # as lm.encode
    return [encoded.word_ids(i) for i in range(len(texts))]


def check_word_ids(lm: LanguageModel) -> None:
    """A ``ValueError`` unless ``lm``'s tokenizer gives word ids (a fast tokenizer)."""
    if not getattr(lm.tokenizer, "is_fast", False):
        raise ValueError(f"pll='within_word_l2r' needs to know which word each token belongs "
                         f"to, and {lm.name}'s tokenizer ({type(lm.tokenizer).__name__}) is a "
                         "slow one that does not say: load the model with its fast tokenizer "
                         "(AutoTokenizer with use_fast=True), or use pll='original'")


_SPLITS: weakref.WeakKeyDictionary[torch.nn.Module, bool] = weakref.WeakKeyDictionary()


def logits_at(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor,
              at: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """``[len(at[0]), V]``: the model's logits at positions ``at = (rows, columns)`` only.

    The encoder's hidden states are cut to those positions before the output head sees them (a
    forward hook on ``model.base_model``), so the head's matmul and its logits cover only them.
    That holds for every masked LM whose head works position by position on the encoder's output;
    it is checked once per model on a short probe, and a model where it fails gets its full
    logits indexed instead.
    """
    if _splits(model):
        with _only_rows(model.base_model, at):
            return model(input_ids=ids, attention_mask=mask).logits[:, 0]
    return model(input_ids=ids, attention_mask=mask).logits[at]


def _splits(model: torch.nn.Module) -> bool:
    if model not in _SPLITS:
        ok = getattr(model, "base_model", model) is not model
        if ok:
            device = next(model.parameters()).device
            probe = torch.arange(1, 7, device=device).reshape(2, 3)
            at = (torch.tensor([0, 1, 1], device=device), torch.tensor([1, 0, 2], device=device))
            with torch.inference_mode():
                full = model(input_ids=probe).logits[at]
                try:
                    with _only_rows(model.base_model, at):
                        mine = model(input_ids=probe).logits[:, 0]
                    ok = mine.shape == full.shape and torch.allclose(full, mine, rtol=1e-4,
                                                                     atol=1e-4)
                except (RuntimeError, ValueError, IndexError, TypeError):
                    ok = False
        _SPLITS[model] = ok
    return _SPLITS[model]


@contextmanager
def _only_rows(base: torch.nn.Module, at: tuple[torch.Tensor, torch.Tensor]) -> Iterator[None]:
    """Replace ``base``'s last hidden state ``[B, T, d]`` by its rows at ``at``, ``[n, 1, d]``."""

    def cut(module, args, output):
        if isinstance(output, tuple):
            return (output[0][at][:, None], *output[1:])
        first = next(iter(output.keys()))
        output[first] = output[first][at][:, None]
        return output

    handle = base.register_forward_hook(cut)
    try:
        yield
    finally:
        handle.remove()


def masked_slot_logprobs(lm: LanguageModel, inputs: Sequence[tuple[Sequence[int], Sequence[int]]],
                         batch_tokens: int) -> Iterator[tuple[list[int], list[torch.Tensor]]]:
    """Yield ``(indices, [k, V] log-softmax rows)`` at the ``k`` slot positions of each input.

    ``inputs`` are ``(ids with the slot masked, slot positions)``; only ``k`` rows per input are
    normalised, since a slot query needs the whole vocabulary there and nowhere else.
    """
    for batch in token_batches([len(ids) for ids, _ in inputs], batch_tokens):
        ids, mask = padded([inputs[i][0] for i in batch], pad_id(lm), lm.device)
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
