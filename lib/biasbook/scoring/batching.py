"""Batch planning and the log-probability kernel shared by every scoring engine.

Nothing here knows about models: batches are lists of item indices, sequences are lists of ids.

>>> token_batches([3, 1, 2, 3, 3, 1], batch_tokens=32)
[[1, 5], [2], [0, 3, 4]]
>>> token_batches([3, 1, 2, 3, 3, 1], batch_tokens=6)
[[1, 5], [2], [0, 3], [4]]
>>> list(copy_batches([3, 2], copies=[2, 3], batch_tokens=6))  # (item, copy)
[[(1, 0), (1, 1), (1, 2)], [(0, 0), (0, 1)]]
>>> shared_prefix_groups([[5, 1, 2, 3], [5, 1, 2, 4], [5, 1, 2, 4, 9], [7, 8]], min_group=2)
({(5, 1, 2): [0, 1, 2]}, [3])
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate

import torch

#: Most logits materialised at once by :func:`gather_logprobs` (8 MiB of float32: small enough to
#: stay in cache between the matmul that writes them and the logsumexp that reads them).
CHUNK_ELEMENTS = 1 << 21
#: Hidden states projected together by :func:`gather_logprobs`: enough rows for an efficient
#: matmul, whatever the vocabulary size (the vocabulary is cut instead).
ROW_BLOCK = 1024


@dataclass(frozen=True)
class Head:
    """The output layer ``softcap(hidden @ weight.T + bias)``, computable for a vocabulary slice."""

    weight: torch.Tensor
    bias: torch.Tensor | None = None
    softcap: float | None = None

    @property
    def vocab(self) -> int:
        return self.weight.shape[0]

    def __call__(self, hidden: torch.Tensor, lo: int = 0, hi: int | None = None) -> torch.Tensor:
        """Logits of the vocabulary entries ``lo:hi`` (default: all of them)."""
        bias = None if self.bias is None else self.bias[lo:hi]
        logits = torch.nn.functional.linear(hidden, self.weight[lo:hi], bias)
        return torch.tanh(logits / self.softcap) * self.softcap if self.softcap else logits


def default_batch_tokens(device: torch.device) -> int:
    """Tokens per forward pass: a few thousand saturate a CPU's matmuls, a GPU wants more."""
    return 16384 if device.type == "cuda" else 2048


def token_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices sorted by length and cut so that rows x longest row <= ``batch_tokens``.

    A batch also ends where the length changes once it holds ``batch_tokens // 16`` tokens (enough
    rows for efficient matmuls), or where padding it to the next length would cost more than a
    quarter of its tokens, so that few batches need padding at all. An item longer than the budget
    gets a batch of its own.

    >>> token_batches([20, 3, 5, 3, 3], 32)   # 3 rows of 3 are efficient (>= 32 // 16); 2 x 20 > 32
    [[1, 3, 4], [2], [0]]
    >>> token_batches([4, 5], 1000), token_batches([3, 5], 1000)   # padding 3 -> 5 is wasteful
    ([[0, 1]], [[0], [1]])
    """
    return [[i for i, _ in batch] for batch in copy_batches(lengths, [1] * len(lengths),
                                                            batch_tokens)]


def copy_batches(lengths: Sequence[int], copies: Sequence[int], batch_tokens: int
                 ) -> Iterator[list[tuple[int, int]]]:
    """:func:`token_batches` of ``copies[i]`` copies of each item ``i``, lazily: batches of
    ``(item, copy number)``, cut exactly as ``token_batches`` would cut the list of all copies
    (each as long as its item), without building that list. The cutting rule is written here
    once; ``token_batches`` is the case of one copy each.

    For pseudo-log-likelihood, where a sentence of n scored tokens has n masked copies: a batch
    holds at most ``batch_tokens // length`` copies (one where a sentence alone is longer than
    the budget), so a long sentence's copies are spread over many passes, never built at once.
    """
    order = sorted((i for i in range(len(lengths)) if copies[i] > 0),
                   key=lambda i: (lengths[i], i))
    current: list[tuple[int, int]] = []
    longest = 0
    for i in order:
        length = lengths[i]
        for k in range(copies[i]):
            if current:
                full = (len(current) + 1) * length > batch_tokens
                efficient = len(current) * longest >= batch_tokens // 16
                wasteful = 4 * length > 5 * longest
                if full or (length != longest and (efficient or wasteful)):
                    yield current
                    current = []
            current.append((i, k))
            longest = length
    if current:
        yield current


def pad(seqs: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> torch.Tensor:
    """Right-padded ``[len(seqs), longest]`` tensor of ids."""
    rows = [torch.as_tensor(seq, dtype=torch.long) for seq in seqs]
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad_id).to(device)


def padded(seqs: Sequence[Sequence[int]], pad_id: int, device: torch.device
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`pad`'s ids of ``seqs`` and their attention mask (1 on real tokens, 0 on the right
    padding): a model's two inputs."""
    ids = pad(seqs, pad_id, device)
    lengths = torch.as_tensor([len(s) for s in seqs])
    return ids, (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).long().to(device)


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
    return next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def gather_logprobs(states: torch.Tensor, targets: torch.Tensor, head: Head | None = None,
                    rows: torch.Tensor | None = None) -> torch.Tensor:
    """``log_softmax(head(states))[rows[k], targets[k]]`` for every k, in bounded chunks.

    ``states`` is ``[N, d]`` hidden states projected by ``head``, or ``[N, V]`` logits when ``head``
    is None. ``rows`` (sorted; default ``0..N-1``) lets many targets share one row, so each row's
    logits and logsumexp are computed once. Only logsumexp and the target logits are kept: the
    ``[N, V]`` log-softmax of the naive approach is never materialised, and at most
    :data:`CHUNK_ELEMENTS` logits live at once. With a head, :data:`ROW_BLOCK` rows are projected
    onto one slice of the vocabulary at a time and the slices' logsumexps are combined, so that
    the projection stays an efficient matmul even for a 262k-entry vocabulary.
    """
    rows = torch.arange(len(states), device=states.device) if rows is None else rows
    out = torch.empty(len(targets), dtype=torch.float32, device=states.device)
    if len(targets) == 0:
        return out
    step = ROW_BLOCK if head is not None else max(1, CHUNK_ELEMENTS // states.shape[-1])
    bounds = torch.searchsorted(rows, torch.arange(0, len(states) + step, step,
                                                   device=rows.device)).tolist()
    for n, start in enumerate(range(0, len(states), step)):
        lo, hi = bounds[n], bounds[n + 1]
        if lo == hi:
            continue
        block, local, wanted = states[start: start + step], rows[lo:hi] - start, targets[lo:hi]
        if head is None:
            logits = block.float()
            out[lo:hi] = logits[local, wanted] - torch.logsumexp(logits, dim=1)[local]
            continue
        width = 1 << (max(1, CHUNK_ELEMENTS // len(block)).bit_length() - 1)  # a power of two
        logsumexp = torch.full((len(block),), -torch.inf, device=states.device)
        picked = torch.empty(hi - lo, dtype=torch.float32, device=states.device)
        for first in range(0, head.vocab, width):
            logits = head(block, first, first + width).float()
            logsumexp = torch.logaddexp(logsumexp, torch.logsumexp(logits, dim=1))
            inside = (wanted >= first) & (wanted < first + width)
            picked[inside] = logits[local[inside], wanted[inside] - first]
        out[lo:hi] = picked - logsumexp[local]
    return out


class HeadQueue:
    """Hidden states waiting for the output head, so that it projects many rows at once.

    Every projection streams the whole output matrix from memory (671 MB for Gemma-3's 262k-entry
    vocabulary), so one projection of :data:`ROW_BLOCK` rows costs little more than one of six.
    Add pieces, check :attr:`full` and :meth:`flush` to get each piece's log-probabilities, in
    order. Without a head the states are full logits: they are not held back.
    """

    def __init__(self, head: Head | None):
        self.head = head
        self.rows = 0
        self._pieces: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]] = []

    def add(self, states: torch.Tensor, targets: torch.Tensor,
            rows: torch.Tensor | None = None) -> None:
        """Queue ``gather_logprobs(states, targets, head, rows)``."""
        self._pieces.append((states, targets, rows))
        self.rows += len(states)

    @property
    def full(self) -> bool:
        return bool(self._pieces) and (self.head is None or self.rows >= ROW_BLOCK)

    def flush(self) -> list[torch.Tensor]:
        """The log-probabilities of every queued piece, in order; the queue is emptied."""
        if not self._pieces:
            return []
        offsets = accumulate((len(s) for s, _, _ in self._pieces), initial=0)
        rows = torch.cat([(torch.arange(len(s), device=s.device) if r is None else r) + offset
                          for (s, _, r), offset in zip(self._pieces, offsets, strict=False)])
        values = gather_logprobs(torch.cat([s for s, _, _ in self._pieces]),
                                 torch.cat([t for _, t, _ in self._pieces]), self.head, rows)
        sizes = [len(t) for _, t, _ in self._pieces]
        self._pieces, self.rows = [], 0
        return list(torch.split(values, sizes))


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
