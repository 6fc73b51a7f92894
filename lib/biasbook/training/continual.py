"""Continual training of a pre-trained language model on a small corpus, resumable.

**Continual training** (:func:`continual_training`) runs plain SGD with a constant learning rate
(the paper: 5e-5 for 20 epochs), shuffling with ``seed + epoch`` and clipping the gradient norm
at 1 by default (the paper does not say; it is the Hugging Face ``Trainer``'s default, and a
causal LM's gradient spikes, norms up to ~200 on this corpus, otherwise derail plain SGD).
Plain SGD has no optimiser state, so the weights after epoch ``k`` and the seed fully determine
the rest of the run: the latest weights are saved (atomically) after every epoch and an
interrupted run resumes exactly. The caller's ``evaluate(lm)`` runs on the base model (epoch 0)
and after every epoch; its results are cached too, so a finished run is a lookup. The base model
passed in is never modified: the training runs on a copy, and nothing is written next to the
cached base weights.

The examples are ``(input_ids, labels)`` pairs, labels ``IGNORE`` where no loss is taken (see
:func:`biasbook.chapters.herb.toxic.training_examples` for four ways of building them).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from biasbook import store
from biasbook.models import LanguageModel, fingerprint
from biasbook.paths import cache_dir
from biasbook.scoring.batching import cpu_threads, pad

#: Bump when the training recipe changes, so that cached runs are not reused.
TRAINING_VERSION = 1
IGNORE = -100  # the label that PyTorch's cross-entropy skips


def sgd_epoch(model: torch.nn.Module, examples: Sequence[tuple[list[int], list[int]]], *,
              lr: float, batch_size: int, seed: int, pad_id: int = 0,
              max_grad_norm: float | None = 1.0, progress: bool = False) -> float:
    """One epoch of plain SGD (constant ``lr``) in random order (``seed``); returns the mean
    training loss over batches. The gradient's global norm is clipped at ``max_grad_norm``
    (None: no clipping), as the Hugging Face ``Trainer`` does by default. The model is left in
    eval mode."""
    from tqdm.auto import tqdm

    torch.manual_seed(seed)  # dropout
    order = np.random.default_rng(seed).permutation(len(examples)).tolist()
    optimiser = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    device = next(model.parameters()).device
    model.train()
    losses = []
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    for batch in tqdm(batches, desc="batches", leave=False, disable=not progress):
        ids = pad([examples[i][0] for i in batch], pad_id, device)
        labels = pad([examples[i][1] for i in batch], IGNORE, device)
        lengths = torch.tensor([len(examples[i][0]) for i in batch])
        mask = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).long().to(device)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimiser.step()
        optimiser.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    model.eval()
    return float(np.mean(losses)) if losses else float("nan")


@dataclass
class TrainingRun:
    """Per-epoch results of :func:`continual_training`; index 0 is the base model."""

    results: list = field(default_factory=list)
    losses: list[float] = field(default_factory=list)  # mean training loss; NaN for epoch 0
    fingerprints: list[str] = field(default_factory=list)
    folder: Path | None = None


def run_key(lm: LanguageModel, examples, **recipe) -> str:
    """sha256 over the base model's fingerprint, the training examples and the recipe."""
    digest = hashlib.sha256()
    digest.update(json.dumps([lm.fingerprint, TRAINING_VERSION, sorted(recipe.items())],
                             default=str).encode())
    for ids, labels in examples:
        digest.update(json.dumps([ids, labels]).encode())
    return digest.hexdigest()


def continual_training(lm: LanguageModel, examples: Sequence[tuple[list[int], list[int]]], *,
                       epochs: int, lr: float, batch_size: int = 32, seed: int = 0,
                       max_grad_norm: float | None = 1.0,
                       evaluate: Callable[[LanguageModel], np.ndarray], eval_key: str,
                       cache: bool = True, progress: bool = True) -> TrainingRun:
    """Train a copy of ``lm`` on ``examples`` for ``epochs`` epochs of constant-LR SGD and call
    ``evaluate`` on the base model and after every epoch (module docstring).

    ``eval_key`` names what ``evaluate`` computes (e.g. a hash of the regions and descriptors):
    cached results are reused only under the same key. ``evaluate`` gets a
    :class:`~biasbook.models.LanguageModel` whose fingerprint is that of the trained weights, so
    the scoring engine caches its scores under them. With ``cache`` the run lives in
    ``cache_dir()/finetune/<model>-<key>/``: ``weights.safetensors`` (the latest epoch, with
    the epoch in its metadata), ``epoch-<k>.json`` (loss, fingerprint) and
    ``eval-<key>-<k>.npy``.
    """
    from safetensors import safe_open
    from safetensors.torch import load_model, save_model
    from tqdm.auto import tqdm

    key = run_key(lm, examples, lr=lr, batch_size=batch_size, seed=seed,
                  max_grad_norm=max_grad_norm)
    folder = cache_dir() / "finetune" / f"{lm.name.replace('/', '--')}-{key[:16]}"
    ekey = hashlib.sha256(eval_key.encode()).hexdigest()[:12]
    run = TrainingRun(folder=folder if cache else None)
    results: dict[int, np.ndarray] = {}
    meta: dict[int, dict] = {0: {"loss": float("nan"), "fingerprint": lm.fingerprint}}
    if cache:
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(epochs + 1):
            if (folder / f"eval-{ekey}-{k}.npy").exists():
                results[k] = np.load(folder / f"eval-{ekey}-{k}.npy")
            if k and (folder / f"epoch-{k}.json").exists():
                meta[k] = json.loads((folder / f"epoch-{k}.json").read_text())

    def save_result(k: int, value) -> None:
        results[k] = np.asarray(value)
        if cache:
            with store.atomic_file(folder / f"eval-{ekey}-{k}.npy") as tmp, open(tmp, "wb") as fh:
                np.save(fh, results[k])

    if 0 not in results:
        save_result(0, evaluate(lm))
    missing = [k for k in range(1, epochs + 1) if k not in results or k not in meta]
    if missing:
        model = copy.deepcopy(lm.model)
        start = 0
        weights = folder / "weights.safetensors"
        if cache and weights.exists():
            with safe_open(str(weights), "pt") as fh:
                saved = int(fh.metadata().get("epoch", 0))
            if 0 < saved <= missing[0]:
                load_model(model, str(weights))
                start = saved
        pad_id = lm.tokenizer.pad_token_id
        pad_id = 0 if pad_id is None else pad_id
        with cpu_threads():
            for k in tqdm(range(start + 1, missing[-1] + 1), desc=f"{lm.name} epochs",
                          disable=not progress):
                loss = sgd_epoch(model, examples, lr=lr, batch_size=batch_size, seed=seed + k,
                                 pad_id=pad_id, max_grad_norm=max_grad_norm, progress=progress)
                meta[k] = {"loss": loss, "fingerprint": fingerprint(model)}
                if cache:
                    with store.atomic_file(weights) as tmp:
                        save_model(model, str(tmp), metadata={"epoch": str(k), "format": "pt"})
                    store.write_json(folder / f"epoch-{k}.json", meta[k])
                if k not in results:
                    trained = LanguageModel(
                        name=f"{lm.name}+epoch{k}", model=model, tokenizer=lm.tokenizer,
                        kind=lm.kind, fingerprint=meta[k]["fingerprint"],
                        prefix_ids=lm.prefix_ids, notes=[*lm.notes, f"continual training {k}"])
                    save_result(k, evaluate(trained))
        del model
    run.results = [results[k] for k in range(epochs + 1)]
    run.losses = [meta[k]["loss"] for k in range(epochs + 1)]
    run.fingerprints = [meta[k]["fingerprint"] for k in range(epochs + 1)]
    return run
