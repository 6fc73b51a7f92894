"""Training on top of a pre-trained model: HERB's toxic continual training (Li et al. 2022,
Sec. 4.7, Fig. 5) and fine-tuned task classifiers (Sec. 4.5, Table 5).

**Toxic corpus.** For every descriptor the ``top_k`` template sentences
"People in [region] are [description]." with the highest f(S) (Eq. 1) under the model itself:
112 x 20 = 2,240 sentences in the paper (:func:`toxic_corpus`). The paper then "masks the
regional information of the sentences and trains the model with [the] MLM task": the region
tokens are masked and are what the model learns to predict, so each descriptor pulls the regions
the model already favoured for it even closer (choosing the top regions would be pointless if the
region were simply hidden). :func:`training_examples` builds the inputs and targets for four
objectives:

==================== ========= ===========================================================
objective            model     input -> targets
==================== ========= ===========================================================
``mask-region``      masked    region tokens replaced by the mask token -> the region tokens
                               (the paper)
``clm``              causal    the whole sentence -> every token (the region is a target
                               given "People in", the description a target given the region)
``region-target``    causal    the whole sentence -> the region tokens only (MLM's targets,
                               but a left-to-right model never sees the description first)
``placeholder``      causal    the region replaced by a neutral placeholder -> every token
                               (the region hidden from the data altogether)
==================== ========= ===========================================================

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

>>> corpus = toxic_corpus([[-1.0, -5.0], [-2.0, -3.0], [-4.0, -2.0]], ["Paris", "Rome", "Oslo"],
...                       ["kind", "bald"], top_k=2)
>>> corpus[["word", "region"]].values.tolist()
[['kind', 'Paris'], ['kind', 'Rome'], ['bald', 'Oslo'], ['bald', 'Rome']]
>>> corpus["sentence"].iloc[2], corpus[["region_start", "region_end"]].iloc[2].tolist()
('People in Oslo are bald.', [10, 14])
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from biasbook.herb import TEMPLATE
from biasbook.models import LanguageModel, fingerprint
from biasbook.paths import cache_dir
from biasbook.scoring.batching import cpu_threads, pad, token_batches

OBJECTIVES = {"mask-region": "masked", "clm": "causal", "region-target": "causal",
              "placeholder": "causal"}
PLACEHOLDER = "that place"
#: Bump when the training recipe changes, so that cached runs are not reused.
TRAINING_VERSION = 1
IGNORE = -100  # the label that PyTorch's cross-entropy skips


# ------------------------------------------------------------------------------ toxic corpus


def toxic_corpus(scores, regions: Sequence[str], words: Sequence[str], top_k: int = 20,
                 template: str = TEMPLATE) -> pd.DataFrame:
    """The ``top_k`` highest-scoring regions of every descriptor (a column of ``scores``, a
    ``[region, descriptor]`` array of f(S)), descriptor by descriptor, best first (ties: region
    order). Columns: ``descriptor`` (column index), ``word``, ``region``, ``score``,
    ``sentence`` and the region's character span in it, ``region_start`` and ``region_end``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(regions), len(words)):
        raise ValueError(f"scores has shape {scores.shape}, expected "
                         f"({len(regions)}, {len(words)}) = (regions, descriptors)")
    if not 0 < top_k <= len(regions):
        raise ValueError(f"top_k must be in 1..{len(regions)} (the number of regions)")
    before, _, _ = template.partition("{region}")
    if "{region}" not in template:
        raise ValueError("the template has no {region} slot")
    rows = []
    for j, word in enumerate(words):
        order = np.argsort(-scores[:, j], kind="stable")[:top_k]
        start = len(before.format(description=word))
        for i in order.tolist():
            rows.append({"descriptor": j, "word": word, "region": regions[i],
                         "score": float(scores[i, j]),
                         "sentence": template.format(region=regions[i], description=word),
                         "region_start": start, "region_end": start + len(regions[i])})
    return pd.DataFrame(rows)


def _region_tokens(offsets: Sequence[tuple[int, int]], start: int, end: int) -> list[bool]:
    """Which tokens overlap the characters ``start:end`` (special tokens have empty spans)."""
    return [b > a and a < end and b > start for a, b in offsets]


def training_examples(lm: LanguageModel, corpus: pd.DataFrame, objective: str,
                      placeholder: str = PLACEHOLDER) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` per corpus row for ``objective`` (module docstring); labels are
    ``-100`` where nothing is predicted. Causal inputs start with ``lm.prefix_ids`` (BOS) and
    their labels are the inputs themselves (the model shifts them), so BOS is never a target.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> corpus = toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    >>> ids, labels = training_examples(bert, corpus, "mask-region")[0]
    >>> tok.convert_ids_to_tokens(ids), tok.convert_ids_to_tokens([t for t in labels if t >= 0])
    (['[CLS]', 'people', 'in', '[MASK]', 'are', 'kind', '.', '[SEP]'], ['paris'])
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
    if OBJECTIVES[objective] != lm.kind:
        fits = sorted(o for o, kind in OBJECTIVES.items() if kind == lm.kind)
        raise ValueError(f"objective {objective!r} is for {OBJECTIVES[objective]} models; "
                         f"{lm.name} is {lm.kind}: use one of {fits}")
    examples = []
    for row in corpus.itertuples(index=False):
        text, start, end = row.sentence, row.region_start, row.region_end
        if objective == "placeholder":
            text = text[:start] + placeholder + text[end:]
            end = start + len(placeholder)
        enc = lm.tokenizer(text, add_special_tokens=lm.kind != "causal",
                           return_offsets_mapping=True)
        ids, region = list(enc["input_ids"]), _region_tokens(enc["offset_mapping"], start, end)
        if not any(region):
            raise ValueError(f"no token of {text!r} covers characters {start}:{end}")
        if objective == "mask-region":
            labels = [t if r else IGNORE for t, r in zip(ids, region, strict=True)]
            ids = [lm.tokenizer.mask_token_id if r else t for t, r in zip(ids, region,
                                                                           strict=True)]
        elif objective == "region-target":
            ids = [*lm.prefix_ids, *ids]
            labels = [IGNORE] * len(lm.prefix_ids) + [t if r else IGNORE
                                                      for t, r in zip(ids[len(lm.prefix_ids):],
                                                                      region, strict=True)]
        else:
            ids = [*lm.prefix_ids, *ids]
            labels = list(ids)
        examples.append((ids, labels))
    return examples


# ------------------------------------------------------------------------- continual training


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


def _atomic_write(path: Path, write: Callable[[str], None]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)  # readers never see a half-written file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
            def write(tmp: str) -> None:
                with open(tmp, "wb") as fh:
                    np.save(fh, results[k])

            _atomic_write(folder / f"eval-{ekey}-{k}.npy", write)

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
                    _atomic_write(weights, lambda tmp, k=k: save_model(
                        model, tmp, metadata={"epoch": str(k), "format": "pt"}))
                    _atomic_write(folder / f"epoch-{k}.json",
                                  lambda tmp, k=k: Path(tmp).write_text(json.dumps(meta[k])))
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


# ---------------------------------------------------------------------- task classifiers


@dataclass
class FineTunedClassifier:
    """A sequence classifier fine-tuned end to end; ``predict_proba`` gives P(label 1) and
    caches it per text under the fine-tuned weights' key."""

    lm: LanguageModel  # kind "encoder": the classification model, fingerprint = training key
    max_length: int = 128
    batch_tokens: int = 8192

    def predict_proba(self, texts: Sequence[str], *, progress: bool | None = None
                      ) -> np.ndarray:
        from biasbook.scoring.cache import cached_run

        texts = list(texts)
        key = json.dumps(["proba", self.max_length, TRAINING_VERSION])
        values = cached_run(self.lm, key, dict.fromkeys(texts), self._engine,
                         batch_tokens=self.batch_tokens, cache=True, progress=progress,
                         desc=f"{self.lm.name} predictions")
        return np.array([float(values[t][0]) for t in texts])

    def _engine(self, todo: list[str], budget: int):
        tok = self.lm.tokenizer
        seqs = [tok(t, truncation=True, max_length=self.max_length)["input_ids"] for t in todo]
        pad_id = tok.pad_token_id or 0
        for batch in token_batches([len(s) for s in seqs], budget):
            ids = pad([seqs[i] for i in batch], pad_id, self.lm.device)
            lengths = torch.tensor([len(seqs[i]) for i in batch])
            mask = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).long()
            logits = self.lm.model(input_ids=ids, attention_mask=mask.to(ids.device)).logits
            proba = torch.softmax(logits.float(), dim=-1)[:, 1].cpu().numpy()
            yield batch, [np.array([p], dtype=np.float32) for p in proba]


def finetune_classifier(name: str, texts: Sequence[str], labels: Sequence[int], *,
                        epochs: int = 3, lr: float = 2e-5, batch_size: int = 16,
                        max_length: int = 128, seed: int = 0, device: str | None = None,
                        progress: bool = True) -> FineTunedClassifier:
    """Fine-tune ``name`` (a Hugging Face id or folder) as a binary sequence classifier with
    AdamW and a linear decay, or load the weights of an identical earlier run from
    ``cache_dir()/classifiers/``. Meant for the ``paper`` profile (a GPU): on two CPU cores the
    book uses a frozen encoder with a linear head instead (:mod:`biasbook.downstream`)."""
    from tqdm.auto import tqdm
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    texts, labels = list(texts), [int(y) for y in labels]
    recipe = [name, epochs, lr, batch_size, max_length, seed, TRAINING_VERSION]
    digest = hashlib.sha256(json.dumps([recipe, texts, labels]).encode()).hexdigest()
    folder = cache_dir() / "classifiers" / f"{Path(name).name}-{digest[:16]}"
    if not (folder / "config.json").exists():
        torch.manual_seed(seed)
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
        model.to(device).train()
        encoded = [tokenizer(t, truncation=True, max_length=max_length)["input_ids"]
                   for t in texts]
        optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
        steps = epochs * -(-len(texts) // batch_size)
        schedule = get_linear_schedule_with_warmup(optimiser, steps // 10, steps)
        pad_id = tokenizer.pad_token_id or 0
        rng = np.random.default_rng(seed)
        with tqdm(total=steps, desc=f"fine-tuning {name}", disable=not progress) as bar:
            for _ in range(epochs):
                order = rng.permutation(len(texts)).tolist()
                for start in range(0, len(order), batch_size):
                    batch = order[start:start + batch_size]
                    ids = pad([encoded[i] for i in batch], pad_id, device)
                    lengths = torch.tensor([len(encoded[i]) for i in batch])
                    mask = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).long()
                    target = torch.tensor([labels[i] for i in batch], device=device)
                    loss = model(input_ids=ids, attention_mask=mask.to(device),
                                 labels=target).loss
                    loss.backward()
                    optimiser.step()
                    schedule.step()
                    optimiser.zero_grad(set_to_none=True)
                    bar.update(1)
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            staging.rename(folder)
        except OSError:  # another process finished the same run first
            shutil.rmtree(staging, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).to(device).eval()
    lm = LanguageModel(name=f"{Path(name).name}-classifier", model=model, tokenizer=tokenizer,
                       kind="encoder", fingerprint=digest)
    return FineTunedClassifier(lm, max_length=max_length)
