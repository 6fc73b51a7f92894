"""Continual training of a pre-trained language model on a small corpus, resumable.

**Continual training** (:func:`continual_training`) runs plain SGD with a constant learning rate
(the paper: 5e-5 for 20 epochs), epoch k shuffling with ``seed + k`` and clipping the gradient
norm at 1 by default (the paper does not say; it is the Hugging Face ``Trainer``'s default, and a
causal LM's gradient spikes, norms up to ~200 on this corpus, otherwise derail plain SGD). The
loop is :func:`biasbook.training.fit.fit`. The caller's ``evaluate(lm)`` runs on the base model
(epoch 0) and after every epoch. Each epoch's record (mean loss, fingerprint) and evaluation are
kept, and the weights after the latest epoch are a :class:`~biasbook.store.Checkpoint`: plain
SGD has no optimiser state, so those weights and the seed determine the rest of the run, an
interrupted run resumes exactly, and a finished run is a lookup. The base model passed in is
never modified: the training runs on a copy, and nothing is written next to the cached base
weights.

The examples are ``(input_ids, labels)`` pairs, labels ``IGNORE`` where no loss is taken (see
:func:`biasbook.chapters.herb.toxic.training_examples` for four ways of building them).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from biasbook import store
from biasbook.models import LanguageModel, fingerprint
from biasbook.scoring.batching import cpu_threads, pad, padded
from biasbook.scoring.masked import pad_id
from biasbook.training.fit import fit, mean_loss, saved_epoch, seeded, shuffled
from biasbook.training.objectives import IGNORE

#: Bump when the training recipe changes, so that cached runs are not reused.
TRAINING_VERSION = 1
Examples = Sequence[tuple[list[int], list[int]]]


@dataclass
class TrainingRun:
    """Per-epoch results of :func:`continual_training`; index 0 is the base model."""

    results: list = field(default_factory=list)
    losses: list[float] = field(default_factory=list)  # mean training loss; NaN for epoch 0
    fingerprints: list[str] = field(default_factory=list)
    folder: Path | None = None


def run_key(lm: LanguageModel, examples, **recipe) -> str:
    """sha256 over the base model's fingerprint, the training examples and the recipe."""
    digest = hashlib.sha256(json.dumps([lm.fingerprint, TRAINING_VERSION, sorted(recipe.items())],
                                       default=str).encode())
    for ids, labels in examples:
        digest.update(json.dumps([ids, labels]).encode())
    return digest.hexdigest()


def continual_training(lm: LanguageModel, examples: Examples, *,
                       epochs: int, lr: float, batch_size: int = 32, seed: int = 0,
                       max_grad_norm: float | None = 1.0,
                       evaluate: Callable[[LanguageModel], np.ndarray], eval_key: str,
                       also: Mapping[str, Callable[[LanguageModel], np.ndarray]] | None = None,
                       cache: bool = True, progress: bool = True) -> TrainingRun:
    """Train a copy of ``lm`` on ``examples`` for ``epochs`` epochs of constant-LR SGD and call
    ``evaluate`` on the base model and after every epoch (module docstring).

    ``eval_key`` names what ``evaluate`` computes (e.g. a hash of the regions and descriptors):
    cached results are reused only under the same key. ``evaluate`` gets a
    :class:`~biasbook.models.LanguageModel` whose fingerprint is that of the trained weights, so
    the scoring engine caches its scores under them. With ``cache`` the run lives in
    ``cache_dir()/finetune/<model>-<key>/``: ``state.pt`` (the checkpoint after the latest
    epoch), ``epoch-<k>.json`` (loss, fingerprint) and ``eval-<key>-<k>.npy``.

    ``also`` maps more evaluation keys to evaluations of the same epochs, cached under their
    own keys but not returned: two readers of one run (HERB notebook 05 and the trust page)
    train it once, and a later call under either key alone is a lookup.
    """
    key = run_key(lm, examples, lr=lr, batch_size=batch_size, seed=seed,
                  max_grad_norm=max_grad_norm)
    folder = store.cache_path("finetune", key[:16], name=lm.name)
    kept, *extra = (_Epochs.read(folder if cache else None, k, epochs, lm.fingerprint)
                    for k in [eval_key, *(also or {})])
    evaluations = list(zip([kept, *extra], [evaluate, *(also or {}).values()], strict=True))
    for epochs_kept, evaluation in evaluations:
        if 0 not in epochs_kept.results:
            epochs_kept.save_result(0, evaluation(lm))
    todo = [k for k in range(1, epochs + 1)
            if k not in kept.records or any(k not in e.results for e, _ in evaluations)]
    if todo:
        checkpoint = store.Checkpoint(folder) if cache else None
        model = copy.deepcopy(lm.model)

        def end_epoch(k: int, losses: list[float]) -> dict:
            kept.save_record(k, {"loss": mean_loss(k, losses), "fingerprint": fingerprint(model)})
            trained = replace(lm, name=f"{lm.name}+epoch{k}", model=model,  # what evaluate scores
                              fingerprint=kept.records[k]["fingerprint"],
                              notes=[*lm.notes, f"continual training {k}"])
            for epochs_kept, evaluation in evaluations:
                if k not in epochs_kept.results:
                    epochs_kept.save_result(k, evaluation(trained))
            return kept.records[k]

        def step(batch: list[int]) -> float:  # the model's own mean token loss on a batch
            ids, mask = padded([examples[i][0] for i in batch], pad_id(lm), lm.device)
            labels = pad([examples[i][1] for i in batch], IGNORE, lm.device)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            return float(loss.detach())

        optimiser = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
        with cpu_threads():
            # Saved weights past the first epoch to evaluate cannot give it: retrain from the base.
            fit(model, step, lambda k: shuffled(len(examples), batch_size, seeded(seed + k)),
                epochs=todo[-1], optimiser=optimiser, max_grad_norm=max_grad_norm,
                end_epoch=end_epoch, checkpoint=checkpoint,
                resume=saved_epoch(checkpoint) < todo[0], progress=progress,
                desc=f"{lm.name} epochs")
    return TrainingRun(results=[kept.results[k] for k in range(epochs + 1)],
                       losses=[kept.records[k]["loss"] for k in range(epochs + 1)],
                       fingerprints=[kept.records[k]["fingerprint"] for k in range(epochs + 1)],
                       folder=folder if cache else None)


@dataclass
class _Epochs:
    """Each epoch's record (loss, fingerprint) and evaluation result, kept in ``folder`` (if
    any) as ``epoch-<k>.json`` and ``eval-<hash of eval_key>-<k>.npy``."""

    folder: Path | None
    eval_key: str
    records: dict[int, dict] = field(default_factory=dict)
    results: dict[int, np.ndarray] = field(default_factory=dict)

    @classmethod
    def read(cls, folder: Path | None, eval_key: str, epochs: int, base: str) -> _Epochs:
        kept = cls(folder, hashlib.sha256(eval_key.encode()).hexdigest()[:12],
                   records={0: {"loss": float("nan"), "fingerprint": base}})
        for k in range(epochs + 1) if folder is not None else ():
            # a damaged file is set aside and that epoch's record or evaluation made again
            result = store.read_or_set_aside(kept._result_file(k), np.load)
            if result is not None:
                kept.results[k] = result
            record = store.read_or_set_aside(folder / f"epoch-{k}.json",
                                             lambda p: json.loads(p.read_text())) if k else None
            if record is not None:
                kept.records[k] = record
        return kept

    def save_record(self, k: int, record: dict) -> None:
        self.records[k] = record
        if self.folder is not None:
            store.write_json(self.folder / f"epoch-{k}.json", record)

    def save_result(self, k: int, value) -> None:
        self.results[k] = np.asarray(value)
        if self.folder is not None:
            with store.atomic_file(self._result_file(k)) as tmp, open(tmp, "wb") as fh:
                np.save(fh, self.results[k])

    def _result_file(self, k: int) -> Path:
        return self.folder / f"eval-{self.eval_key}-{k}.npy"
