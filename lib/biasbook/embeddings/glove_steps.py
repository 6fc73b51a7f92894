"""One GloVe mini-batch update, twice: a numba loop for CPUs and PyTorch tensor operations for GPUs.

Both take a batch of entries sorted by row and do the same arithmetic: the gradients of J/2 at the
parameters before the update, summed per row over the batch, then AdaGrad on every touched row
(``a += g^2``, ``p -= lr * g / sqrt(a)``). Both return J over the batch. ``test_glove`` checks
them against a hand computation, against ``mittens`` and against each other.

Why a numba loop on CPUs: PyTorch's ``index_select``/``index_add_`` gather and scatter one scalar
at a time (about 90 ns per entry at dimension 50, even through ``torch.compile``), while a loop
that walks each row's run of entries once keeps that row's vector in cache and updates it as soon
as the run ends (about 30 ns; see ``benchmarks/bench_glove.py``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(fastmath=True, cache=True, error_model="numpy")
def numba_step(W, C, bw, bc, aW, aC, abw, abc, rows, cols, logx, fx, lr,
               gC, gbc, touched, seen, gw):
    """Update the float32 parameters in place; ``gC``, ``gbc``, ``seen`` come in zero and leave
    zero, ``touched`` and ``gw`` are scratch. Returns J over the batch (float64)."""
    dim = W.shape[1]
    loss = 0.0
    n_touched = 0
    k = 0
    while k < rows.shape[0]:
        a = rows[k]
        wa = W[a]
        gw[:] = 0.0
        gb = np.float32(0.0)
        while k < rows.shape[0] and rows[k] == a:
            b = cols[k]
            cb = C[b]
            gcb = gC[b]
            diff = bw[a] + bc[b] - logx[k]
            for t in range(dim):
                diff += wa[t] * cb[t]
            fd = fx[k] * diff
            loss += fd * diff
            for t in range(dim):
                gw[t] += fd * cb[t]
            for t in range(dim):
                gcb[t] += fd * wa[t]
            gb += fd
            gbc[b] += fd
            if not seen[b]:
                seen[b] = True
                touched[n_touched] = b
                n_touched += 1
            k += 1
        # the batch is sorted by row: W[a] is not read again in it, so it is updated now
        for t in range(dim):
            aW[a, t] += gw[t] * gw[t]
            wa[t] -= lr * gw[t] / np.sqrt(aW[a, t])
        abw[a] += gb * gb
        bw[a] -= lr * gb / np.sqrt(abw[a])
    for r in range(n_touched):
        b = touched[r]
        seen[b] = False
        for t in range(dim):
            g = gC[b, t]
            aC[b, t] += g * g
            C[b, t] -= lr * g / np.sqrt(aC[b, t])
            gC[b, t] = 0.0
        g = gbc[b]
        abc[b] += g * g
        bc[b] -= lr * g / np.sqrt(abc[b])
        gbc[b] = 0.0
    return loss


def torch_step(W, C, bw, bc, aW, aC, abw, abc, rows, cols, logx, fx, lr: float):
    """The same update on torch tensors (any device); rows without entries get a zero gradient,
    which leaves them unchanged. Returns J over the batch as a float64 tensor."""
    import torch

    wi, cj = W.index_select(0, rows), C.index_select(0, cols)
    diff = (wi * cj).sum(1) + bw.index_select(0, rows) + bc.index_select(0, cols) - logx
    fd = fx * diff
    grads = (torch.zeros_like(W).index_add_(0, rows, cj * fd.unsqueeze(1)),
             torch.zeros_like(C).index_add_(0, cols, wi * fd.unsqueeze(1)),
             torch.zeros_like(bw).index_add_(0, rows, fd),
             torch.zeros_like(bc).index_add_(0, cols, fd))
    for p, a, g in zip((W, C, bw, bc), (aW, aC, abw, abc), grads, strict=True):
        a.addcmul_(g, g)
        p.addcdiv_(g, a.sqrt(), value=-lr)
    return (fd * diff).sum().double()


@numba.njit(cache=True)
def group_by_batch(batch_of, n_batches):
    """A stable counting sort: the entry order grouped by batch, and each batch's start offset
    (``n_batches + 1`` of them). Stable, so row-major entries stay sorted by row in every batch."""
    starts = np.zeros(n_batches + 1, np.int64)
    for k in range(batch_of.shape[0]):
        starts[batch_of[k] + 1] += 1
    starts = np.cumsum(starts)
    fill = starts[:-1].copy()
    order = np.empty(batch_of.shape[0], np.int64)
    for k in range(batch_of.shape[0]):
        order[fill[batch_of[k]]] = k
        fill[batch_of[k]] += 1
    return order, starts
