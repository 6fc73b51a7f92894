"""One training loop for every model the book trains, after d2l's ``Trainer.fit``.

:func:`fit` runs epochs ``1..epochs`` of ``batches(epoch)``. For each batch the caller's ``step``
computes the loss and its gradient (``loss.backward()``, once or per micro-batch) and returns what
the epoch's record needs; ``fit`` then clips the gradient norm, steps the optimiser and the
learning-rate schedule, and clears the gradients. ``end_epoch(epoch, outputs)`` turns the steps'
outputs into the epoch's record (validation goes there); ``fit`` returns the records.

**Resuming.** With a :class:`~biasbook.store.Checkpoint`, the state after every epoch is saved:
the trainable parameters and the buffers, the optimiser and schedule states, the records, and the
states of the random generators. A later call resumes after the last saved epoch; the frozen
parameters are the caller's to rebuild as they were.

**Determinism.** ``fit`` draws no random number itself. A loop is deterministic given its seed
when ``batches`` and ``step`` draw only from seeded generators: torch's global one (dropout;
:func:`seeded` reseeds it) and numpy generators (shuffling, masking), which are passed as
``rngs``. A checkpoint stores their states, so a resumed run draws the numbers an uninterrupted
one draws, and ends with the same weights, bit for bit.

>>> _ = torch.manual_seed(0)
>>> model = torch.nn.Linear(1, 1)
>>> x = torch.linspace(-1, 1, 8)[:, None]
>>> y = 3 * x + 1
>>> def step(batch):
...     loss = torch.nn.functional.mse_loss(model(x[batch]), y[batch])
...     loss.backward()
...     return loss.item()
>>> rng = np.random.default_rng(0)
>>> history = fit(model, step, lambda epoch: shuffled(8, 4, rng), epochs=100, rngs=[rng],
...               optimiser=torch.optim.SGD(model.parameters(), lr=0.2), progress=False)
>>> len(history), round(history[-1], 6), round(model.weight.item(), 3), round(model.bias.item(), 3)
(100, 0.0, 3.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from biasbook.store import Checkpoint


def fit(module: torch.nn.Module, step: Callable[[Any], Any],
        batches: Callable[[int], Sequence[Any]], *, epochs: int,
        optimiser: torch.optim.Optimizer, schedule: Any = None,
        max_grad_norm: float | None = None,
        end_epoch: Callable[[int, list], Any] | None = None,
        checkpoint: Checkpoint | None = None, resume: bool = True,
        rngs: Sequence[np.random.Generator] = (), progress: bool = True,
        desc: str = "epochs") -> list:
    """Train ``module`` for ``epochs`` epochs (module docstring); returns one record per epoch.

    ``step(batch)`` computes the loss's gradient and returns the batch's output (e.g. its loss);
    ``end_epoch(epoch, outputs)`` makes the epoch's record (default: :func:`mean_loss`), with the
    module in eval mode. ``max_grad_norm`` clips the global gradient norm of the optimiser's
    parameters. With ``checkpoint`` (and ``resume``) training continues after the last saved
    epoch; ``resume=False`` starts afresh, overwriting it.
    """
    end_epoch = end_epoch or mean_loss
    history: list = []
    state = checkpoint.load() if checkpoint is not None and resume else None
    if state is not None:
        if state["epoch"] > epochs:
            raise ValueError(f"the checkpoint in {checkpoint.folder} is at epoch "
                             f"{state['epoch']}, past the {epochs} asked for")
        _restore(state, module, optimiser, schedule, rngs)
        history = state["history"]
    params = [p for group in optimiser.param_groups for p in group["params"]]
    optimiser.zero_grad(set_to_none=True)
    for epoch in tqdm(range(len(history) + 1, epochs + 1), desc=desc, initial=len(history),
                      total=epochs, disable=not progress):
        module.train()
        outputs = []
        for batch in tqdm(batches(epoch), desc="steps", leave=False, disable=not progress):
            outputs.append(step(batch))
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
            optimiser.step()
            if schedule is not None:
                schedule.step()
            optimiser.zero_grad(set_to_none=True)
        module.eval()
        history.append(end_epoch(epoch, outputs))
        if checkpoint is not None:
            checkpoint.save(_state(epoch, history, module, optimiser, schedule, rngs))
    return history


def mean_loss(epoch: int, outputs: list[float]) -> float:
    """The default record of an epoch: the mean of its steps' losses (NaN without steps)."""
    return float(np.mean(outputs)) if outputs else float("nan")


def shuffled(n: int, batch_size: int, rng: np.random.Generator) -> list[list[int]]:
    """The indices ``0..n-1`` in an order drawn from ``rng``, cut into batches of ``batch_size``.

    >>> batches = shuffled(5, 2, np.random.default_rng(0))
    >>> [len(b) for b in batches], sorted(i for b in batches for i in b)
    ([2, 2, 1], [0, 1, 2, 3, 4])
    """
    order = rng.permutation(n).tolist()
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


def seeded(seed: int) -> np.random.Generator:
    """Reseed torch's global generator (dropout) with ``seed``; a numpy generator of that seed."""
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def saved_epoch(checkpoint: Checkpoint | None) -> int:
    """The last epoch :func:`fit` saved in ``checkpoint`` (0: none)."""
    state = checkpoint.load() if checkpoint is not None else None
    return 0 if state is None else state["epoch"]


def _state(epoch: int, history: list, module: torch.nn.Module,
           optimiser: torch.optim.Optimizer, schedule: Any,
           rngs: Sequence[np.random.Generator]) -> dict:
    trained = {n for n, p in module.named_parameters() if p.requires_grad}
    trained |= {n for n, _ in module.named_buffers()}
    return {"epoch": epoch, "history": history,
            "tensors": {n: t for n, t in module.state_dict().items() if n in trained},
            "optimiser": optimiser.state_dict(),
            "schedule": None if schedule is None else schedule.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None,
            "numpy_rngs": [rng.bit_generator.state for rng in rngs]}


def _restore(state: dict, module: torch.nn.Module, optimiser: torch.optim.Optimizer,
             schedule: Any, rngs: Sequence[np.random.Generator]) -> None:
    unexpected = module.load_state_dict(state["tensors"], strict=False).unexpected_keys
    if unexpected:
        raise ValueError(f"the checkpoint holds tensors this model lacks: {unexpected[:5]}")
    optimiser.load_state_dict(state["optimiser"])
    if schedule is not None:
        schedule.load_state_dict(state["schedule"])
    torch.set_rng_state(state["torch_rng"])
    if state["cuda_rng"] is not None:
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    if len(rngs) != len(state["numpy_rngs"]):
        raise ValueError(f"the checkpoint holds {len(state['numpy_rngs'])} numpy generators, "
                         f"{len(rngs)} were given")
    for rng, saved in zip(rngs, state["numpy_rngs"], strict=True):
        rng.bit_generator.state = saved
