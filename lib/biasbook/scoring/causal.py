"""Token log-probabilities under a causal LM, with shared prefixes computed once.

Sequence ``x = prefix_ids + ids``: every token after the first is scored,
``log P(x_t | x_<t)``, so the first sentence token is conditioned on the BOS token when the model
has one. The input of a forward pass is ``x[:-1]`` (the last token is only a target) and right
padding needs no attention mask: under causal attention no real token sees the padding after it.

Sequences sharing a token prefix (``[BOS] People in France are ...``) are grouped: the prefix runs
once, its key/value cache is copied to each continuation row, and its last hidden state gives the
distribution of every member's first continuation token. Logits are computed only where a target
is scored, from the backbone's hidden states through the output head, in chunks
(:func:`~biasbook.scoring.batching.gather_logprobs`).
"""

from __future__ import annotations

import copy
import weakref
from collections import defaultdict
from collections.abc import Iterator, Sequence

import numpy as np
import torch

from biasbook.models import LanguageModel
from biasbook.scoring.batching import (
    Head,
    gather_logprobs,
    pad,
    shared_prefix_groups,
    token_batches,
)

Results = Iterator[tuple[list[int], list[np.ndarray]]]
_Split = tuple[torch.nn.Module, Head]
_SPLITS: weakref.WeakKeyDictionary[torch.nn.Module, _Split | None] = weakref.WeakKeyDictionary()


def clm_logprobs(lm: LanguageModel, seqs: Sequence[Sequence[int]], batch_tokens: int,
                 share_prefixes: bool = True) -> Results:
    """Yield ``(indices, token log-probs)`` per finished batch; ``seqs`` exclude ``prefix_ids``."""
    split = _backbone_and_head(lm.model)
    xs = [[*lm.prefix_ids, *s] for s in seqs]
    groups, singles = shared_prefix_groups(xs) if share_prefixes else ({}, list(range(len(xs))))
    yield from _ungrouped(lm, split, xs, singles, batch_tokens)
    by_length: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for prefix in groups:
        by_length[len(prefix)].append(prefix)
    for length, prefixes in sorted(by_length.items()):
        per_pass = max(1, batch_tokens // length)
        for start in range(0, len(prefixes), per_pass):
            chunk = {p: groups[p] for p in prefixes[start: start + per_pass]}
            yield from _grouped(lm, split, xs, chunk, batch_tokens)


def _backbone_and_head(model: torch.nn.Module) -> _Split | None:
    """(backbone, hidden -> logits) when they reproduce the model's logits, else None.

    Checked once per model on a short probe, so that an architecture with extra logit processing
    falls back to the full forward pass instead of scoring wrongly.
    """
    if model in _SPLITS:
        return _SPLITS[model]
    backbone, head = getattr(model, "base_model", model), model.get_output_embeddings()
    split = None
    if backbone is not model and head is not None:
        cap = getattr(model.config.get_text_config(), "final_logit_softcapping", None)

        def project(hidden: torch.Tensor) -> torch.Tensor:
            logits = head(hidden)
            return torch.tanh(logits / cap) * cap if cap else logits

        probe = torch.arange(1, 6, device=next(model.parameters()).device)[None]
        with torch.inference_mode():
            full = model(input_ids=probe).logits
            mine = project(backbone(input_ids=probe).last_hidden_state)
        if torch.allclose(full, mine, rtol=1e-4, atol=1e-4):
            split = (backbone, Head(project, full.shape[-1]))
    _SPLITS[model] = split
    return split


def _forward(lm: LanguageModel, split: _Split | None, ids: torch.Tensor, past=None,
             keep_cache: bool = False) -> tuple[torch.Tensor, object]:
    """Hidden states (or logits, without a split) and the key/value cache."""
    module = split[0] if split else lm.model
    out = module(input_ids=ids, past_key_values=past, use_cache=keep_cache or past is not None)
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
        states, _ = _forward(lm, split, pad(inputs, 0, lm.device))
        lengths = [len(s) for s in inputs]
        valid = torch.arange(states.shape[1])[None, :] < torch.tensor(lengths)[:, None]
        targets = torch.tensor([t for i in rows for t in xs[i][1:]], device=lm.device)
        logprobs = gather_logprobs(states[valid.to(lm.device)], targets, split and split[1])
        yield rows, _split_rows(logprobs, lengths)


def _grouped(lm: LanguageModel, split: _Split | None, xs: list[list[int]],
             groups: dict[tuple[int, ...], list[int]], batch_tokens: int) -> Results:
    """Score all members of groups whose prefixes have one length: prefixes in one pass."""
    head = split and split[1]
    prefixes = torch.tensor(list(groups), device=lm.device)
    n_groups, length = prefixes.shape
    states, cache = _forward(lm, split, prefixes, keep_cache=True)
    prefix_lp = gather_logprobs(states[:, :-1].reshape(n_groups * (length - 1), -1),
                                prefixes[:, 1:].reshape(-1), head).view(n_groups, -1).cpu().numpy()
    members = [(g, i) for g, group in enumerate(groups.values()) for i in group]
    owner = torch.tensor([g for g, _ in members], device=lm.device)
    first_lp = gather_logprobs(states[:, -1], torch.tensor([xs[i][length] for _, i in members],
                                                           device=lm.device), head, rows=owner)
    first = {i: (prefix_lp[g], first_lp[k:k + 1].cpu().numpy()) for k, (g, i) in enumerate(members)}

    done = [i for _, i in members if len(xs[i]) == length + 1]
    if done:
        yield done, [np.concatenate(first[i]) for i in done]
    rest = [(g, i) for g, i in members if len(xs[i]) > length + 1]
    for batch in token_batches([len(xs[i]) - 1 for _, i in rest], batch_tokens):
        rows = [rest[b] for b in batch]
        inputs = [xs[i][length:-1] for _, i in rows]
        states, _ = _forward(lm, split, pad(inputs, 0, lm.device),
                             past=_select_rows(cache, owner.new_tensor([g for g, _ in rows])))
        lengths = [len(s) for s in inputs]
        valid = torch.arange(states.shape[1])[None, :] < torch.tensor(lengths)[:, None]
        targets = torch.tensor([t for _, i in rows for t in xs[i][length + 1:]], device=lm.device)
        logprobs = _split_rows(gather_logprobs(states[valid.to(lm.device)], targets, head), lengths)
        yield [i for _, i in rows], [np.concatenate([*first[i], lp])
                                     for (_, i), lp in zip(rows, logprobs, strict=True)]


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
