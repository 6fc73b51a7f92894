"""GloVe (Pennington, Socher & Manning 2014) trained from a sparse co-occurrence matrix.

The model fits, over the non-zero entries X_ij of the co-occurrence matrix only,

    J = sum_ij f(X_ij) (w_i . c_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max) ** alpha if x < x_max else 1       (x_max = 100, alpha = 3/4),

with AdaGrad (accumulator a += g^2, step lr * g / sqrt(a), g the gradient of J/2 as in GloVe's C
code and in ``mittens``) over mini-batches of entries, and returns the word vectors ``W + W~``
(the sum of word and context vectors, as the GloVe paper recommends) as gensim ``KeyedVectors``.

- Any matrix works: a modified one (BIRM) is trained exactly like a counted one. Entries must be
  positive (their log is taken), and each row needs its own word. A word with an empty row or
  column gets no gradient: it is reported (``GloveFit.untrained``, and a warning).
- Mini-batches: every entry is dealt at random to one of ceil(nnz / batch_size) batches once, at
  the start, and every epoch visits the batches in a new random order. This is how GloVe's C code
  shuffles (once, with its ``shuffle`` tool); it saves a shuffle of all entries per epoch, and
  keeps each batch sorted by row, which the CPU step (:mod:`.glove_steps`) relies on.
- Two implementations of one step: ``backend="numba"`` (the default, a compiled CPU loop) and
  ``backend="torch"`` (tensor operations on any ``device``, for GPUs). They agree to float32
  rounding; the backend is part of the cache key.
- Deterministic for a fixed ``seed``: initialisation, batches and their order per epoch come from
  seeded generators, and the sums run in a fixed order.
- Cached by content (:mod:`biasbook.store`): the key is the matrix's hash, the hyper-parameters
  and :data:`CODE_VERSION`. A :class:`~biasbook.store.Checkpoint` (parameters, accumulators and
  losses) is written atomically after an epoch once :data:`CHECKPOINT_SECONDS` have passed since
  the last one, so an interrupted training loses at most that much work; the epoch's seed is
  ``[seed, epoch]``, so no random state needs saving and a resumed training equals an
  uninterrupted one. A damaged checkpoint or result is set aside with
  a warning and the training runs again.
- Initialisation as GloVe's C code: uniform in [-0.5, 0.5) / dim for vectors and biases.

Differences from GloVe's C code (``glove.c``), which updates after every single entry with its
accumulator started at 1 and fed ``(lr * g)^2``: here a mini-batch's gradients are summed per row
before the update, and the accumulator starts at ``initial_accumulator`` (0.1 by default, as in
``mittens``) and is fed ``g^2`` (standard AdaGrad). Because a batch's gradients are summed
before AdaGrad normalises them, a larger learning rate than glove.c's 0.05 pays off (on a
12k-word UN + IMDB matrix, 0.25 halved J after 5 epochs and raised MEN's Spearman from 0.07 to
0.31). ``loss`` per epoch is J summed over the batches as they were visited (each batch with the
parameters before its update); :func:`objective` gives J for given parameters.

>>> import numpy as np, scipy.sparse as sp
>>> x = sp.csr_matrix(np.array([[0, 4.0, 1], [4, 0, 2], [1, 2, 0]]))
>>> fit = train(x, ["a", "b", "c"], dim=2, epochs=3, cache=False, progress=False)
>>> fit.kv.vectors.shape, len(fit.losses)
((3, 2), 3)
"""

from __future__ import annotations

import json
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from gensim.models import KeyedVectors
from scipy import sparse
from tqdm.auto import tqdm

from biasbook import store
from biasbook.embeddings import glove_steps
from biasbook.text.word_context import canonical_csr

CODE_VERSION = 2  # bump when a change alters trained vectors
# Saving after every epoch wrote 66 MB per epoch on the book's 41k-word matrices (11 GB and
# 80 s of system time for its nine runs); at most one save per 30 s bounds the lost work instead.
CHECKPOINT_SECONDS = 30.0
KIND = "glove"
VECTORS = "vectors.npz"  # the result: W, C, bw, bc and the losses (JSON text)


@dataclass(frozen=True)
class GloveFit:
    """Trained vectors and how they were obtained.

    ``kv``: W + W~ per word. ``params``: arrays ``W``, ``C``, ``bw``, ``bc``. ``losses``: J per
    epoch (see the module docstring). ``seconds``: wall time per epoch trained in this call
    (empty when the result came from the cache). ``untrained``: words whose row or column of the
    matrix is empty, so that no gradient ever reaches their W or W~: that part of their vector
    stays the random initialisation (:func:`train` warns about them).
    """

    kv: KeyedVectors
    params: dict[str, np.ndarray]
    losses: list[float]
    seconds: list[float] = field(default_factory=list)
    key: str = ""
    untrained: list[str] = field(default_factory=list)


def weighting(x, x_max: float = 100.0, alpha: float = 0.75):
    """GloVe's weight f(x) = min(1, (x / x_max) ** alpha).

    >>> weighting(np.array([1.0, 50.0, 100.0, 400.0]), 100, 0.5).round(4).tolist()
    [0.1, 0.7071, 1.0, 1.0]
    """
    return np.minimum(1.0, (np.asarray(x, dtype=float) / x_max) ** alpha)


def objective(matrix, W, C, bw, bc, *, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """J = sum over non-zeros of f(X_ij) (w_i . c_j + b_i + b~_j - log X_ij)^2, in float64."""
    coo = _entries(matrix)
    W, C = np.asarray(W, dtype=float), np.asarray(C, dtype=float)
    pred = np.einsum("ij,ij->i", W[coo.row], C[coo.col]) + np.asarray(bw, float)[coo.row] \
        + np.asarray(bc, float)[coo.col]
    diff = pred - np.log(coo.data)
    return float(np.sum(weighting(coo.data, x_max, alpha) * diff**2))


def _check_arguments(coo, vocab: Sequence[str] | None, *, dim: int, epochs: int,
                     batch_size: int, lr: float, initial_accumulator: float, x_max: float,
                     alpha: float, backend: str, custom_init: bool) -> None:
    """:func:`train`'s arguments, each with its own message (NaN fails every bound)."""
    if vocab is None or len(vocab) != coo.shape[0]:
        raise ValueError(f"vocab must name the {coo.shape[0]} rows of the matrix")
    repeated = sorted({w for w, n in Counter(vocab).items() if n > 1})
    if repeated:
        # KeyedVectors keeps one row per word: the other rows would be trained and lost
        raise ValueError(f"vocab repeats {repeated[:10]} ({len(repeated)} words): each row of "
                         "the matrix needs its own word")
    if dim < 1 or epochs < 0 or batch_size < 1:
        raise ValueError("need dim >= 1, epochs >= 0, batch_size >= 1")
    for name, value in (("lr", lr), ("initial_accumulator", initial_accumulator),
                        ("x_max", x_max)):
        if not (np.isfinite(value) and value > 0):  # written so that NaN fails too
            raise ValueError(f"{name} must be finite and > 0, got {value}")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be finite and >= 0, got {alpha}")
    if backend not in ("numba", "torch"):
        raise ValueError(f"backend must be 'numba' or 'torch', got {backend!r}")
    if custom_init:
        raise ValueError("a custom init is not part of the cache key: pass cache=False")


def train(
    matrix,
    vocab: Sequence[str] | None = None,
    *,
    dim: int = 100,
    epochs: int = 25,
    x_max: float = 100.0,
    alpha: float = 0.75,
    lr: float = 0.05,
    initial_accumulator: float = 0.1,
    batch_size: int = 1 << 14,
    seed: int = 0,
    backend: str = "numba",
    device: str = "cpu",
    init: dict[str, np.ndarray] | None = None,
    cache: bool = True,
    progress: bool = True,
) -> GloveFit:
    """Train GloVe on ``matrix`` (a scipy sparse matrix, or a
    :class:`~biasbook.text.word_context.WordContextMatrix`, which brings its vocabulary).

    ``backend``: ``"numba"`` (CPU, single thread) or ``"torch"`` on ``device`` (e.g. ``"cuda"``).
    ``init``: starting ``W``, ``C``, ``bw``, ``bc`` (tests; not part of the cache key, so it needs
    ``cache=False``).
    """
    if hasattr(matrix, "total") and hasattr(matrix, "vocab"):
        vocab = matrix.vocab.tolist() if vocab is None else vocab
        matrix = matrix.total
    coo = _entries(matrix)
    _check_arguments(coo, vocab, dim=dim, epochs=epochs, batch_size=batch_size, lr=lr,
                     initial_accumulator=initial_accumulator, x_max=x_max, alpha=alpha,
                     backend=backend, custom_init=init is not None and cache)
    hyper = {"dim": dim, "epochs": epochs, "x_max": x_max, "alpha": alpha, "lr": lr,
             "initial_accumulator": initial_accumulator, "batch_size": batch_size, "seed": seed,
             "backend": backend, "device": device if backend == "torch" else None}
    untrained = _untrained(coo, vocab)
    key = store.content_key(KIND, CODE_VERSION, _matrix_hash(coo), list(vocab), hyper)
    checkpoint = store.Checkpoint(store.cache_path(KIND, key)) if cache else None
    if checkpoint is not None:
        _adopt_flat_file(checkpoint, key)
        found = checkpoint.read_result(_read_vectors)
        if found is not None:
            params, losses = found
            return GloveFit(_keyed(vocab, params), params, losses, [], key, untrained)
    trainer = _Trainer(coo, dim, x_max, alpha, lr, initial_accumulator, batch_size, seed, init,
                       backend, device)
    state = checkpoint.load() if checkpoint is not None else None
    if state is not None:
        trainer.p, trainer.acc, trainer.losses = state["p"], state["acc"], state["losses"]
    seconds, saved = [], time.perf_counter()
    for epoch in tqdm(range(len(trainer.losses), epochs), desc="GloVe epochs",
                      initial=len(trainer.losses), total=epochs, disable=not progress):
        start = time.perf_counter()
        trainer.epoch()
        seconds.append(time.perf_counter() - start)
        due = time.perf_counter() - saved >= CHECKPOINT_SECONDS
        if checkpoint is not None and due and epoch < epochs - 1:  # the last one is the result
            checkpoint.save({"p": trainer.p, "acc": trainer.acc, "losses": trainer.losses})
            saved = time.perf_counter()
    params = trainer.arrays()
    if checkpoint is not None:
        with checkpoint.finish() as out:
            np.savez(out / VECTORS, **params, losses=np.array(json.dumps(trainer.losses)))
    return GloveFit(_keyed(vocab, params), params, list(trainer.losses), seconds, key,
                    untrained)


def _read_vectors(result) -> tuple[dict[str, np.ndarray], list[float]]:
    with np.load(result / VECTORS, allow_pickle=False) as z:
        return {k: z[k] for k in _Trainer.NAMES}, json.loads(str(z["losses"]))


def _adopt_flat_file(checkpoint: store.Checkpoint, key: str) -> None:
    """Move vectors cached before checkpoints were folders (``glove/<key>.npz``, the same
    contents) into ``checkpoint``'s result, so that they are not trained again."""
    flat = store.cache_path(KIND, key, ".npz")
    if flat.is_file() and not checkpoint.finished:
        with checkpoint.finish() as out:
            flat.replace(out / VECTORS)


class _Trainer:
    """Parameters, AdaGrad accumulators and the batched entries of one GloVe training."""

    NAMES = ("W", "C", "bw", "bc")

    def __init__(self, coo, dim, x_max, alpha, lr, a0, batch_size, seed, init, backend, device):
        n = coo.shape[0]
        rng = np.random.default_rng(seed)
        if init is None:
            init = {k: (rng.random(shape, dtype=np.float32) - 0.5) / dim
                    for k, shape in (("W", (n, dim)), ("C", (n, dim)), ("bw", (n,)),
                                     ("bc", (n,)))}
        n_batches = -(-coo.nnz // batch_size)
        order, self.starts = glove_steps.group_by_batch(rng.integers(0, n_batches, coo.nnz),
                                                        n_batches)
        self.entries = (coo.row[order].astype(np.int64), coo.col[order].astype(np.int64),
                        np.log(coo.data[order]).astype(np.float32),
                        weighting(coo.data[order], x_max, alpha).astype(np.float32))
        self.p = {k: np.array(init[k], dtype=np.float32) for k in self.NAMES}
        self.acc = {k: np.full_like(v, a0) for k, v in self.p.items()}
        self.lr, self.seed, self.backend, self.device = lr, seed, backend, device
        self.losses: list[float] = []

    def epoch(self) -> None:
        batches = np.random.default_rng([self.seed, len(self.losses)]).permutation(
            len(self.starts) - 1)
        run = self._numba_epoch if self.backend == "numba" else self._torch_epoch
        self.losses.append(run(batches))

    def _numba_epoch(self, batches) -> float:
        n, dim = self.p["W"].shape
        scratch = (np.zeros((n, dim), np.float32), np.zeros(n, np.float32),
                   np.empty(n, np.int64), np.zeros(n, np.bool_), np.empty(dim, np.float32))
        total = 0.0
        for b in batches:
            part = [e[self.starts[b]:self.starts[b + 1]] for e in self.entries]
            total += glove_steps.numba_step(*self.p.values(), *self.acc.values(), *part,
                                            np.float32(self.lr), *scratch)
        return total

    def _torch_epoch(self, batches) -> float:
        import torch

        def tensors(arrays):
            return [torch.from_numpy(a).to(self.device) for a in arrays]

        params, acc = tensors(self.p.values()), tensors(self.acc.values())
        entries = tensors(self.entries)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for b in batches:
            lo, hi = self.starts[b], self.starts[b + 1]
            total += glove_steps.torch_step(*params, *acc, *(e[lo:hi] for e in entries), self.lr)
        for kept, new in ((self.p, params), (self.acc, acc)):
            kept.update({k: t.cpu().numpy() for k, t in zip(self.NAMES, new, strict=True)})
        return float(total)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.p.items()}


def _entries(matrix) -> sparse.coo_matrix:
    """The non-zero entries, row-major, checked: square, finite and positive."""
    if not sparse.issparse(matrix):
        matrix = sparse.csr_matrix(np.asarray(matrix, dtype=float))
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"the co-occurrence matrix must be square, got {matrix.shape}")
    csr = canonical_csr(sparse.csr_matrix(matrix, dtype=np.float64))
    if csr.nnz == 0:
        raise ValueError("the co-occurrence matrix has no non-zero entry")
    if not np.all(np.isfinite(csr.data)) or np.any(csr.data < 0):
        raise ValueError("co-occurrence values must be finite and non-negative")
    return csr.tocoo()


def _untrained(coo: sparse.coo_matrix, vocab: Sequence[str]) -> list[str]:
    """The words with an empty row or column (see :class:`GloveFit`), with a warning."""
    n = coo.shape[0]
    empty = (np.bincount(coo.row, minlength=n) == 0) | (np.bincount(coo.col, minlength=n) == 0)
    words = [vocab[i] for i in np.flatnonzero(empty)]
    if words:
        warnings.warn(f"{len(words)} word(s) never co-occur in the matrix (an empty row or "
                      f"column), e.g. {words[:10]}: their vectors keep (part of) their random "
                      "initialisation; drop them from the matrix", stacklevel=3)
    return words


def _matrix_hash(coo: sparse.coo_matrix) -> str:
    return store.content_key(np.asarray(coo.shape), coo.row, coo.col, coo.data)


def _keyed(vocab: Sequence[str], params: dict[str, np.ndarray]) -> KeyedVectors:
    kv = KeyedVectors(params["W"].shape[1])
    kv.add_vectors(list(vocab), (params["W"] + params["C"]).astype(np.float32))
    return kv
