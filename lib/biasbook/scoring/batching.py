"""Batch planning and the log-probability kernel shared by every scoring engine.

Nothing here knows about models: batches are lists of item indices, sequences are lists of ids.

>>> token_batches([3, 1, 2, 3, 3, 1], batch_tokens=32)
[[1, 5], [2], [0, 3, 4]]
>>> token_batches([3, 1, 2, 3, 3, 1], batch_tokens=6)
[[1, 5], [2], [0, 3], [4]]
>>> shared_prefix_groups([[5, 1, 2, 3], [5, 1, 2, 4], [5, 1, 2, 4, 9], [7, 8]], min_group=2)
({(5, 1, 2): [0, 1, 2]}, [3])
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch

#: Most logits materialised at once by :func:`gather_logprobs` (64 MiB of float32).
CHUNK_ELEMENTS = 1 << 24


@dataclass(frozen=True)
class Head:
    """The output layer as a function of hidden states, and its vocabulary size."""

    project: Callable[[torch.Tensor], torch.Tensor]
    vocab: int

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.project(hidden)


def default_batch_tokens(device: torch.device) -> int:
    """Tokens per forward pass: a few thousand saturate a CPU's matmuls, a GPU wants more."""
    return 16384 if device.type == "cuda" else 2048


def token_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices sorted by length and cut so that rows x longest row <= ``batch_tokens``.

    A batch also ends where the length changes once it holds ``batch_tokens // 16`` tokens (enough
    rows for efficient matmuls), so that most batches need no padding at all. An item longer than
    the budget gets a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current:
            longest = lengths[current[-1]]
            full = (len(current) + 1) * lengths[i] > batch_tokens
            efficient = len(current) * longest >= batch_tokens // 16
            if full or (lengths[i] != longest and efficient):
                batches.append(current)
                current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def pad(seqs: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> torch.Tensor:
    """Right-padded ``[len(seqs), longest]`` tensor of ids."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
    return out.to(device)


def lengths_mask(lengths: Sequence[int], width: int, device: torch.device) -> torch.Tensor:
    """``[len(lengths), width]`` attention mask: 1 on real tokens, 0 on right padding."""
    return (torch.arange(width)[None, :] < torch.as_tensor(lengths)[:, None]).long().to(device)


def shared_prefix_groups(seqs: Sequence[Sequence[int]], min_group: int = 4, min_prefix: int = 2
                         ) -> tuple[dict[tuple[int, ...], list[int]], list[int]]:
    """Group sequences by a shared token prefix worth computing once.

    Each sequence gets the longest prefix it shares with at least ``min_group - 1`` others, capped
    at its length minus one (its last token is only ever a target). In lexicographic order such
    sequences are neighbours, so the prefix is the largest minimum of adjacent common-prefix lengths
    over the windows of ``min_group`` neighbours that contain it; a sequence left alone joins the
    group of a shorter prefix of it. Returns ``{prefix: [indices]}``
    for groups of two or more and the indices left ungrouped. Prefixes are cut from the token ids of
    the full sequences, so a prefix is always a true prefix of each member's tokenisation.
    """
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    adjacent = [0] + [_common_prefix(seqs[a], seqs[b])
                      for a, b in zip(order, order[1:], strict=False)]
    window = max(2, min_group)
    best = [0] * len(order)
    for start in range(len(order) - window + 1):
        shared = min(adjacent[start + 1: start + window])
        for pos in range(start, start + window):
            best[pos] = max(best[pos], shared)
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for pos, i in enumerate(order):
        length = min(best[pos], len(seqs[i]) - 1)
        groups[tuple(seqs[i][:length]) if length >= min_prefix else ()].append(i)
    singles = groups.pop((), [])
    lonely = [(p, groups.pop(p)[0]) for p in [p for p, m in groups.items() if len(m) < 2]]
    for prefix, i in lonely:
        # A lone sequence joins the group of its longest shorter prefix, if there is one.
        home = next((prefix[:n] for n in range(len(prefix) - 1, min_prefix - 1, -1)
                     if prefix[:n] in groups), None)
        (groups[home] if home else singles).append(i)
    return ({p: sorted(m) for p, m in sorted(groups.items())}, sorted(singles))


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def gather_logprobs(states: torch.Tensor, targets: torch.Tensor, head: Head | None = None,
                    rows: torch.Tensor | None = None) -> torch.Tensor:
    """``log_softmax(head(states))[rows[k], targets[k]]`` for every k, in chunks of rows.

    ``states`` is ``[N, d]`` hidden states projected by ``head``, or ``[N, V]`` logits when ``head``
    is None. ``rows`` (sorted; default ``0..N-1``) lets many targets share one row, so each row's
    logits and logsumexp are computed once. Only logsumexp and the target logits are kept: the
    ``[N, V]`` log-softmax of the naive approach is never materialised, and at most
    :data:`CHUNK_ELEMENTS` logits live at once.
    """
    rows = torch.arange(len(states), device=states.device) if rows is None else rows
    out = torch.empty(len(targets), dtype=torch.float32, device=states.device)
    if len(targets) == 0:
        return out
    step = max(1, CHUNK_ELEMENTS // (head.vocab if head is not None else states.shape[-1]))
    bounds = torch.searchsorted(rows, torch.arange(0, len(states) + step, step,
                                                   device=rows.device)).tolist()
    for n, start in enumerate(range(0, len(states), step)):
        lo, hi = bounds[n], bounds[n + 1]
        if lo == hi:
            continue
        chunk = states[start: start + step]
        logits = (head(chunk) if head is not None else chunk).float()
        local = rows[lo:hi] - start
        out[lo:hi] = logits[local, targets[lo:hi]] - torch.logsumexp(logits, dim=1)[local]
    return out


@contextmanager
def cpu_threads() -> Iterator[None]:
    """Never run more intra-op threads than the CPUs this process may use (containers, taskset)."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    before = torch.get_num_threads()
    if allowed and before > allowed:
        torch.set_num_threads(allowed)
    try:
        yield
    finally:
        torch.set_num_threads(before)
