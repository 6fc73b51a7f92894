"""Token log-probabilities under a causal LM, with shared prefixes computed once.

Sequence ``x = prefix_ids + ids``: every token after the first is scored,
``log P(x_t | x_<t)``, so the first sentence token is conditioned on the BOS token when the model
has one. The input of a forward pass is ``x[:-1]`` (the last token is only a target) and right
padding needs no attention mask: under causal attention no real token sees the padding after it.

Sequences sharing a token prefix (``[BOS] People in France are ...``) are grouped: the prefix runs
once, its key/value cache is copied to each continuation row, and its last hidden state gives the
distribution of every member's first continuation token. Prefixes of different lengths share
passes: they are right-padded, and each continuation row masks its prefix's padding out of the
cache and continues at its own positions, so that continuations of many groups fill one batch
(small batches waste most of a CPU's matmul throughput). Logits are computed only where a target
is scored, from the backbone's hidden states through the output head, in chunks
(:func:`~biasbook.scoring.batching.gather_logprobs`).
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterator, Sequence

import numpy as np
import torch

from biasbook.models import LanguageModel
from biasbook.scoring.batching import (
    Head,
    HeadQueue,
    gather_logprobs,
    padded,
    shared_prefix_groups,
    token_batches,
)

Results = Iterator[tuple[list[int], list[np.ndarray]]]
Groups = dict[tuple[int, ...], list[int]]
_Split = tuple[torch.nn.Module, Head]
_SPLITS: weakref.WeakKeyDictionary[torch.nn.Module, _Split | None] = weakref.WeakKeyDictionary()


def clm_logprobs(lm: LanguageModel, seqs: Sequence[Sequence[int]], batch_tokens: int,
                 share_prefixes: bool = True) -> Results:
    """Yield ``(indices, token log-probs)`` per finished batch; ``seqs`` exclude ``prefix_ids``."""
    split = _backbone_and_head(lm.model)
    xs = [[*lm.prefix_ids, *s] for s in seqs]
    groups, singles = shared_prefix_groups(xs) if share_prefixes else ({}, list(range(len(xs))))
    yield from _ungrouped(lm, split, xs, singles, batch_tokens)
    window = getattr(lm.model.config.get_text_config(), "sliding_window", None)
    for chunk in _prefix_chunks(groups, xs, batch_tokens, window):
        yield from _grouped(lm, split, xs, chunk, batch_tokens)


def _prefix_chunks(groups: Groups, xs: list[list[int]], batch_tokens: int, window: int | None
                   ) -> Iterator[Groups]:
    """Groups in order of prefix length, cut so that a prefix pass holds <= ``batch_tokens`` tokens.

    Padding shifts positions in the cache, and a sliding-window mask measures distances there:
    groups of different prefix lengths share a chunk only while the padded prefix plus the
    longest continuation input fits inside the window, where no key is cut either way.
    """
    chunk: Groups = {}
    widest = 0  # longest continuation input of the chunk
    for prefix in sorted(groups, key=len):
        inputs = max(len(xs[i]) for i in groups[prefix]) - len(prefix) - 1
        if chunk:
            full = (len(chunk) + 1) * len(prefix) > batch_tokens
            shifted = len(prefix) != len(next(iter(chunk))) and window is not None and (
                len(prefix) + max(widest, inputs) >= window)
            if full or shifted:
                yield chunk
                chunk, widest = {}, 0
        chunk[prefix] = groups[prefix]
        widest = max(widest, inputs)
    if chunk:
        yield chunk


def _backbone_and_head(model: torch.nn.Module) -> _Split | None:
    """(backbone, hidden -> logits) when they reproduce the model's logits, else None.

    Checked once per model on a short probe, so that an architecture with extra logit processing
    falls back to the full forward pass instead of scoring wrongly.
    """
    if model in _SPLITS:
        return _SPLITS[model]
    backbone, output = getattr(model, "base_model", model), model.get_output_embeddings()
    split = None
    if backbone is not model and isinstance(getattr(output, "weight", None), torch.Tensor):
        cap = getattr(model.config.get_text_config(), "final_logit_softcapping", None)
        head = Head(output.weight, getattr(output, "bias", None), cap)
        probe = torch.arange(1, 6, device=next(model.parameters()).device)[None]
        with torch.inference_mode():
            full = model(input_ids=probe).logits
            mine = head(backbone(input_ids=probe).last_hidden_state)
        if torch.allclose(full, mine, rtol=1e-4, atol=1e-4):
            split = (backbone, head)
    _SPLITS[model] = split
    return split


def _forward(lm: LanguageModel, split: _Split | None, ids: torch.Tensor, past=None,
             keep_cache: bool = False, mask: torch.Tensor | None = None,
             positions: torch.Tensor | None = None) -> tuple[torch.Tensor, object]:
    """Hidden states (or logits, without a split) and the key/value cache."""
    module = split[0] if split else lm.model
    extra = {} if positions is None else {"position_ids": positions.to(lm.device)}
    if mask is not None:
        extra["attention_mask"] = mask.to(lm.device)
    out = module(input_ids=ids, past_key_values=past, use_cache=keep_cache or past is not None,
                 **extra)
    return (out.last_hidden_state if split else out.logits), out.past_key_values


def _ungrouped(lm: LanguageModel, split: _Split | None, xs: list[list[int]], items: list[int],
               batch_tokens: int) -> Results:
    empty = [i for i in items if len(xs[i]) < 2]  # no BOS and one token: nothing to score
    if empty:
        yield empty, [np.zeros(0, np.float32)] * len(empty)
    items = [i for i in items if len(xs[i]) >= 2]
    for batch in token_batches([len(xs[i]) - 1 for i in items], batch_tokens):
        rows = [items[b] for b in batch]
        inputs = [xs[i][:-1] for i in rows]
        ids, valid = padded(inputs, 0, lm.device)  # causal: the padding needs no mask
        states, _ = _forward(lm, split, ids)
        targets = torch.tensor([t for i in rows for t in xs[i][1:]], device=lm.device)
        logprobs = gather_logprobs(states[valid.bool()], targets, split and split[1])
        yield rows, _split_rows(logprobs, [len(s) for s in inputs])


def _grouped(lm: LanguageModel, split: _Split | None, xs: list[list[int]], groups: Groups,
             batch_tokens: int) -> Results:
    """Score all members of ``groups``: their prefixes in one right-padded pass, then the rest.

    Hidden states wait in a :class:`~biasbook.scoring.batching.HeadQueue` until enough rows have
    gathered for the output head; results are yielded as the queue is flushed.
    """
    size = [len(p) for p in groups]
    sizes = torch.tensor(size)
    prefixes, real = padded(list(groups), 0, lm.device)  # real: [groups, width], 0 on padding
    states, cache = _forward(lm, split, prefixes, keep_cache=True)
    inner = real[:, 1:].bool()
    members = [(g, i) for g, group in enumerate(groups.values()) for i in group]
    queue = HeadQueue(split and split[1])
    queue.add(states[:, :-1][inner], prefixes[:, 1:][inner])  # the prefixes' own tokens
    queue.add(states[torch.arange(len(size), device=lm.device), (sizes - 1).to(lm.device)],
              torch.tensor([xs[i][size[g]] for g, i in members], device=lm.device),
              rows=torch.tensor([g for g, _ in members], device=lm.device))  # first continuations
    first: dict[int, list[np.ndarray]] = {}  # member -> [prefix log-probs, first continuation]
    waiting: list[list[tuple[int, int]]] = []  # batches whose log-probs are queued

    def drain() -> Results:
        values = queue.flush()
        if not first:
            prefix_lp = _split_rows(values.pop(0), (sizes - 1).tolist())
            first_lp = values.pop(0).cpu().numpy()
            first.update({i: [prefix_lp[g], first_lp[k:k + 1]]
                          for k, (g, i) in enumerate(members)})
            done = [i for g, i in members if len(xs[i]) == size[g] + 1]
            if done:
                yield done, [np.concatenate(first[i]) for i in done]
        for rows, logprobs in zip(waiting, values, strict=True):
            parts = _split_rows(logprobs, [len(xs[i]) - size[g] - 1 for g, i in rows])
            yield [i for _, i in rows], [np.concatenate([*first[i], part])
                                         for (_, i), part in zip(rows, parts, strict=True)]
        waiting.clear()

    rest = [(g, i) for g, i in members if len(xs[i]) > size[g] + 1]
    unequal = not bool(real.all())  # prefixes of different lengths: some are padded
    for batch in token_batches([len(xs[i]) - size[g] - 1 for g, i in rest], batch_tokens):
        rows = [rest[b] for b in batch]
        owners = torch.tensor([g for g, _ in rows])
        ids, valid = padded([xs[i][size[g]:-1] for g, i in rows], 0, lm.device)
        mask = None
        if unequal:  # hide each row's prefix padding; its own right padding is harmless
            mask = torch.cat([real[owners.to(lm.device)], torch.ones_like(ids)], 1)
        positions = sizes[owners][:, None] + torch.arange(ids.shape[1])[None, :]
        states, _ = _forward(lm, split, ids, past=_select_rows(cache, owners.to(lm.device)),
                             mask=mask, positions=positions)
        queue.add(states[valid.bool()],
                  torch.tensor([t for g, i in rows for t in xs[i][size[g] + 1:]], device=lm.device))
        waiting.append(rows)
        if queue.full:
            yield from drain()
    yield from drain()


def _select_rows(cache, rows: torch.Tensor):
    """A copy of ``cache`` holding ``rows`` of its batch; the original stays reusable.

    Layers are copied shallowly (their counters, e.g. a sliding window's length, must not be
    shared) and ``batch_select_indices`` replaces their tensors rather than writing into them.
    """
    selected = copy.copy(cache)
    selected.layers = [copy.copy(layer) for layer in cache.layers]
    selected.batch_select_indices(rows)
    return selected


def _split_rows(values: torch.Tensor, lengths: list[int]) -> list[np.ndarray]:
    return [part.numpy() for part in torch.split(values.cpu(), lengths)]
