"""Text classifiers on top of a pre-trained encoder, with every prediction cached.

- :class:`SentenceEncoder`: mean-pooled (and by default L2-normalised) hidden states of any
  Hugging Face encoder (e.g. the offline all-MiniLM-L6-v2), cached per text under the model's
  fingerprint.
- :class:`EmbeddingClassifier`: a frozen encoder with a logistic-regression head (a linear probe).
- :func:`finetune_classifier`: an end-to-end fine-tuned sequence classifier
  (``AutoModelForSequenceClassification``), saved once per recipe and training data, whose
  fingerprint is that key (:class:`FineTunedClassifier`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from biasbook import store
from biasbook.models import LanguageModel
from biasbook.scoring.batching import padded, token_batches
from biasbook.scoring.masked import pad_id
from biasbook.scoring.runner import cached_run
from biasbook.training.fit import fit, shuffled

TRAINING_VERSION = 1


@dataclass
class FineTunedClassifier:
    """A sequence classifier fine-tuned end to end; ``predict_proba`` gives P(label 1) and
    caches it per text under the fine-tuned weights' key."""

    lm: LanguageModel  # kind "encoder": the classification model, fingerprint = training key
    max_length: int = 128
    batch_tokens: int = 8192

    def predict_proba(self, texts: Sequence[str], *, progress: bool | None = None
                      ) -> np.ndarray:
        texts = list(texts)
        key = json.dumps(["proba", self.max_length, TRAINING_VERSION])
        values = cached_run(self.lm, key, dict.fromkeys(texts), self._engine,
                            batch_tokens=self.batch_tokens, cache=True, progress=progress,
                            desc=f"{self.lm.name} predictions")
        return np.array([float(values[t][0]) for t in texts])

    def _engine(self, todo: list[str], budget: int):
        for batch, ids, mask in _batches(self.lm, todo, self.max_length, budget):
            logits = self.lm.model(input_ids=ids, attention_mask=mask).logits
            proba = torch.softmax(logits.float(), dim=-1)[:, 1].cpu().numpy()
            yield batch, [np.array([p], dtype=np.float32) for p in proba]


def _batches(lm: LanguageModel, texts: list[str], max_length: int, budget: int
             ) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """``(indices, ids, attention mask)`` per batch of ``texts``, each cut to ``max_length``
    tokens: the inputs of :class:`FineTunedClassifier` and :class:`SentenceEncoder`."""
    seqs = [lm.tokenizer(t, truncation=True, max_length=max_length)["input_ids"] for t in texts]
    for batch in token_batches([len(s) for s in seqs], budget):
        yield batch, *padded([seqs[i] for i in batch], pad_id(lm), lm.device)


def finetune_classifier(name: str, texts: Sequence[str], labels: Sequence[int], *,
                        epochs: int = 3, lr: float = 2e-5, batch_size: int = 16,
                        max_length: int = 128, seed: int = 0, device: str | None = None,
                        progress: bool = True) -> FineTunedClassifier:
    """Fine-tune ``name`` (a Hugging Face id or folder) as a binary sequence classifier with
    AdamW and a linear decay, or load the weights of an identical earlier run from
    ``cache_dir()/classifiers/``; an interrupted run resumes after its last epoch (a
    :class:`~biasbook.store.Checkpoint`). Meant for the ``paper`` profile (a GPU): on two CPU
    cores the book uses a frozen encoder with a linear head instead (:class:`EmbeddingClassifier`).
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    texts, labels = list(texts), [int(y) for y in labels]
    recipe = [name, epochs, lr, batch_size, max_length, seed, TRAINING_VERSION]
    digest = store.content_key(recipe, texts, labels, length=64)
    checkpoint = store.Checkpoint(store.cache_path("classifiers", digest[:16], name=name))

    def read(folder: Path):
        try:
            return (AutoTokenizer.from_pretrained(folder),
                    AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2))
        except OSError as err:  # a file missing or unreadable: set aside, trained again
            raise ValueError(str(err)) from err

    if (found := checkpoint.read_result(read)) is None:
        _finetune(name, texts, labels, checkpoint, epochs=epochs, lr=lr, batch_size=batch_size,
                  max_length=max_length, seed=seed, device=device, progress=progress)
        found = read(checkpoint.result)
    tokenizer, model = found
    lm = LanguageModel(name=f"{Path(name).name}-classifier", model=model.to(device).eval(),
                       tokenizer=tokenizer, kind="encoder", fingerprint=digest)
    return FineTunedClassifier(lm, max_length=max_length)


def _finetune(name: str, texts: list[str], labels: list[int], checkpoint: store.Checkpoint, *,
              epochs: int, lr: float, batch_size: int, max_length: int, seed: int, device: str,
              progress: bool) -> None:
    """Train the classifier with :func:`~biasbook.training.fit.fit`; its result is the model's
    and the tokenizer's folder."""
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    torch.manual_seed(seed)  # the new head's initialisation, then dropout
    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
    model.to(device).train()
    encoded = [tokenizer(t, truncation=True, max_length=max_length)["input_ids"] for t in texts]
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    steps = epochs * -(-len(texts) // batch_size)
    schedule = get_linear_schedule_with_warmup(optimiser, steps // 10, steps)

    def step(batch: list[int]) -> float:
        ids, mask = padded([encoded[i] for i in batch], pad_id(tokenizer), device)
        target = torch.tensor([labels[i] for i in batch], device=device)
        loss = model(input_ids=ids, attention_mask=mask, labels=target).loss
        loss.backward()
        return float(loss.detach())

    rng = np.random.default_rng(seed)  # one stream of orders over all epochs
    fit(model, step, lambda epoch: shuffled(len(texts), batch_size, rng), epochs=epochs,
        optimiser=optimiser, schedule=schedule, checkpoint=checkpoint, rngs=[rng],
        progress=progress, desc=f"fine-tuning {name}")
    with checkpoint.finish() as out:
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)


#: Bump when the embedding definition changes, so that cached embeddings are not reused.
EMBEDDING_VERSION = 1


@dataclass
class SentenceEncoder:
    """Mean-pooled (and by default L2-normalised) last hidden states of a Hugging Face encoder,
    truncated to ``max_length`` tokens: the sentence-transformers pipeline of all-MiniLM-L6-v2
    (``Transformer -> Pooling(mean) -> Normalize``). Embeddings are cached per text by the
    scoring engine's cache, keyed by the model fingerprint, ``max_length`` and ``normalize``.
    """

    lm: LanguageModel
    max_length: int = 128
    normalize: bool = True
    batch_tokens: int = 8192

    @property
    def key(self) -> str:
        return json.dumps(["embed-mean", self.max_length, self.normalize, EMBEDDING_VERSION])

    def embed(self, texts: Sequence[str], *, cache: bool = True,
              progress: bool | None = None) -> np.ndarray:
        """``[len(texts), hidden]`` float32 embeddings, in input order."""
        texts = list(texts)
        values = cached_run(self.lm, self.key, dict.fromkeys(texts), self._engine,
                            batch_tokens=self.batch_tokens, cache=cache, progress=progress,
                            desc=f"{self.lm.name} embeddings")
        return np.stack([values[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def _engine(self, todo: list[str], budget: int) -> Iterator[tuple[list[int], list]]:
        for batch, ids, mask in _batches(self.lm, todo, self.max_length, budget):
            hidden = self.lm.model(input_ids=ids, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            if self.normalize:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            yield batch, list(pooled.float().cpu().numpy())


@dataclass
class EmbeddingClassifier:
    """A frozen :class:`SentenceEncoder` with a logistic-regression head (scikit-learn).

    Only the head is trained, so whatever the pre-trained encoder does with a region name
    reaches the prediction unchanged by task training.
    """

    encoder: SentenceEncoder
    C: float = 1.0
    head: object = field(default=None, repr=False)

    @property
    def lm(self):
        """The encoder's language model (as a fine-tuned classifier's ``lm``)."""
        return self.encoder.lm

    def fit(self, texts: Sequence[str], labels: Sequence[int], *,
            progress: bool | None = None) -> EmbeddingClassifier:
        from sklearn.linear_model import LogisticRegression

        x = self.encoder.embed(texts, progress=progress)
        self.head = LogisticRegression(C=self.C, max_iter=2000).fit(x, np.asarray(labels))
        return self

    def predict_proba(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        if self.head is None:
            raise RuntimeError("fit the classifier first")
        return self.head.predict_proba(self.encoder.embed(texts, progress=progress))[:, 1]
