"""Contextual word alignment of one language model onto another (Ahn & Oh 2021, section 4.2).

The recipe of Wang et al. (2019) and Conneau et al. (2020), as Ahn & Oh use it:

1. **Anchors** (:func:`~biasbook.mitigation.anchors.anchor_pairs`): word
   pairs that a statistical word aligner (FastAlign, symmetrised) links in a parallel corpus.
2. **Representations** (:func:`word_vectors`): an anchor word's contextual vector is the mean of
   its sub-tokens' hidden states at one layer (default: the last, which the output head reads).
3. **Orthogonal Procrustes** (:func:`procrustes`): with the source vectors as the columns of
   ``X`` and the target vectors as the columns of ``Y``,
   ``W* = argmin_{W orthogonal} ||WX - Y||_F = U V^T`` where ``U S V^T = SVD(Y X^T)``
   (Smith et al. 2017). :func:`random_orthogonal` draws the "Rand." ablation's matrix.
4. **Head-only fine-tuning** (:func:`finetune_head`): ``W`` goes after the source model's last
   hidden layer, the body and ``W`` are frozen, and only the output head is trained on
   source-language text (Adam, linear warm-up and decay, gradient norm clipped at 1).

What "the output head" is (:func:`insert_alignment`):

- a **masked LM**'s MLM head minus the output matrix it shares with the input embeddings: BERT's
  transform (dense, activation, LayerNorm) and output bias, which is what trains when
  ``model.bert`` is frozen in Hugging Face (the tied decoder matrix *is* the frozen body's word
  embedding matrix). ``W`` is inserted before the head's first dense layer.
- a **causal LM** has nothing between its final norm and its (usually tied) output matrix, so it
  gets a trainable affine map ``d -> d`` initialised to the identity, the counterpart of BERT's
  transform; ``W`` and the map are inserted after the final norm. An untied output matrix is the
  head's own and trains too.

A linear first head layer can absorb an orthogonal ``W`` exactly (its weight ``A`` becomes
``A W^T``), so fully converged head training would undo the alignment: whatever differs between
the aligned, randomly rotated and unrotated models after fine-tuning comes from where training
started and how far it got (tested in ``tests/test_alignment.py``).

>>> rng = np.random.default_rng(0)
>>> R = random_orthogonal(4, seed=1)
>>> X = rng.normal(size=(50, 4))            # 50 anchors, one per row
>>> bool(np.allclose(procrustes(X, X @ R.T), R))
True
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from biasbook import store, validate
from biasbook.mitigation.anchors import Anchors
from biasbook.models import LanguageModel
from biasbook.scoring.batching import cpu_threads, padded
from biasbook.scoring.sentences import context_length
from biasbook.scoring.spans import tokens_in_span
from biasbook.training.fit import fit
from biasbook.training.objectives import TokenLoss, training_sequences

#: Bump when vectors or the head-training recipe change, so that caches are not reused.
ALIGNMENT_VERSION = 1


# --------------------------------------------------------------------------- representations


def word_vectors(lm: LanguageModel, sentences: Sequence[str],
                 spans: Sequence[Sequence[tuple[int, int]]], *, layer: int = -1,
                 batch_size: int = 16, cache: bool = True) -> np.ndarray:
    """``[n_words, d]``: each word's hidden state at ``layer`` (an index into the model's
    ``hidden_states``: 0 the embeddings, -1 the last layer), averaged over its sub-tokens.

    ``spans[k]`` lists the character spans of the words wanted in ``sentences[k]``; rows follow
    that order. A sub-token belongs to every word its character offsets overlap. Sentences get
    the model's usual framing ([CLS] ... [SEP] for a masked LM, ``prefix_ids`` for a causal LM).
    Cached by content.
    """
    sentences = validate.word_list("sentences", sentences)
    if len(spans) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(spans)} span lists")
    if not getattr(lm.tokenizer, "is_fast", False):
        raise TypeError(f"{lm.name}'s tokenizer gives no character offsets: word_vectors needs a "
                        "fast (Rust) tokenizer")
    spans = [[(int(a), int(b)) for a, b in s] for s in spans]

    def compute() -> dict[str, np.ndarray]:
        rows = []
        with cpu_threads(), torch.inference_mode():
            for start in range(0, len(sentences), batch_size):
                rows += _batch_vectors(lm, sentences[start:start + batch_size],
                                       spans[start:start + batch_size], layer)
        return {"vectors": np.stack(rows) if rows else np.zeros((0, 0), np.float32)}

    key = store.content_key("vectors", ALIGNMENT_VERSION, lm.fingerprint, sentences, spans, layer)
    return store.cached_arrays("alignment-vectors", key, compute, cache=cache)["vectors"]


def _batch_vectors(lm: LanguageModel, texts: list[str], spans: list[list[tuple[int, int]]],
                   layer: int) -> list[np.ndarray]:
    enc = lm.tokenizer(texts, add_special_tokens=lm.kind != "causal",
                       return_offsets_mapping=True)
    prefix = list(lm.prefix_ids)
    ids = [prefix + list(x) for x in enc["input_ids"]]
    offsets = [[(0, 0)] * len(prefix) + [tuple(o) for o in x] for x in enc["offset_mapping"]]
    limit = context_length(lm)
    for text, x in zip(texts, ids, strict=True):
        if limit and len(x) > limit:
            raise ValueError(f"{text[:60]!r}... has {len(x)} tokens, more than {lm.name} reads "
                             f"({limit}): leave such sentences out of the anchors")
    body = getattr(lm.model, "base_model", lm.model)
    inputs, mask = padded(ids, 0, lm.device)
    hidden = body(input_ids=inputs, attention_mask=mask, output_hidden_states=True).hidden_states
    states = hidden[layer].float().cpu()
    rows = []
    for row, (text, offs, wanted) in enumerate(zip(texts, offsets, spans, strict=True)):
        for s, e in wanted:
            tokens = tokens_in_span(offs, s, e)
            if not tokens:
                raise ValueError(f"the word {text[s:e]!r} of {text[:60]!r} has no token under "
                                 f"{lm.name}'s tokenizer (empty span or truncated sentence)")
            rows.append(states[row, tokens].mean(0).numpy())
    return rows


def anchor_vectors(lm: LanguageModel, pairs: Sequence[tuple[str, str]], anchors: Anchors, *,
                   side: str, layer: int = -1, cache: bool = True) -> np.ndarray:
    """``[len(anchors), d]``: the anchors' source (``side="src"``) or target words' vectors."""
    validate.choice("side", side, ("src", "trg"))
    column, spans = (0, anchors.src_span) if side == "src" else (1, anchors.trg_span)
    grouped: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for k, span in zip(anchors.sentence.tolist(), spans.tolist(), strict=True):
        grouped[k].append(tuple(span))
    sentences = sorted(grouped)
    # Rows come back sentence by sentence in anchor order: the anchors' own order, as they are
    # sorted by sentence.
    return word_vectors(lm, [pairs[k][column] for k in sentences],
                        [grouped[k] for k in sentences], layer=layer, cache=cache)


# ---------------------------------------------------------------------------------- Procrustes


def procrustes(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """The orthogonal ``W`` minimising ``sum_i ||W x_i - y_i||^2``; row i of ``X`` and ``Y`` is
    the i-th anchor pair (the paper stacks them as columns: ``SVD(Y X^T) = U S V^T``,
    ``W = U V^T``)."""
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or X.shape != Y.shape:
        raise ValueError(f"X and Y must be [n_anchors, d] of the same shape, got {X.shape} and "
                         f"{Y.shape} (see match_dimensions for models of different widths)")
    if not len(X):
        raise ValueError("no anchors: W cannot be estimated")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise ValueError("anchor vectors contain NaN or infinity")
    U, _, Vt = np.linalg.svd(Y.T @ X)
    return U @ Vt


def match_dimensions(Y: np.ndarray, d: int) -> np.ndarray:
    """Target vectors ``Y`` ([n, d_y]) in ``d`` dimensions, so that an orthogonal ``d x d`` map
    can reach them from a source space of width ``d``.

    A narrower target is zero-padded (W then rotates the source space so that its first ``d_y``
    coordinates match the target's). A wider one is projected onto its ``d`` leading (uncentred)
    right singular vectors, the ``d``-dimensional subspace that keeps most of the anchors' energy.
    (With fewer anchors than ``d``, ``W`` is not determined on the directions no anchor spans.)

    >>> match_dimensions(np.ones((3, 2)), 4).tolist()[0]
    [1.0, 1.0, 0.0, 0.0]
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape[1] == d:
        return Y
    if Y.shape[1] < d:
        return np.hstack([Y, np.zeros((len(Y), d - Y.shape[1]))])
    _, _, Vt = np.linalg.svd(Y, full_matrices=True)  # fewer anchors than d: pad the basis
    return Y @ Vt[:d].T


def random_orthogonal(d: int, seed: int = 0) -> np.ndarray:
    """A Haar-random ``d x d`` orthogonal matrix (the "Rand." ablation of Table 2)."""
    from scipy.stats import ortho_group

    return ortho_group.rvs(d, random_state=seed)


def alignment_matrix(src_lm: LanguageModel, trg_lm: LanguageModel,
                     pairs: Sequence[tuple[str, str]], anchors: Anchors, *, layer: int = -1,
                     cache: bool = True) -> np.ndarray:
    """``W`` mapping ``src_lm``'s vectors of the source side of ``pairs`` onto ``trg_lm``'s
    vectors of the target side, at the anchors (target width matched to the source's)."""
    X = anchor_vectors(src_lm, pairs, anchors, side="src", layer=layer, cache=cache)
    Y = anchor_vectors(trg_lm, pairs, anchors, side="trg", layer=layer, cache=cache)
    return procrustes(X, match_dimensions(Y, X.shape[1]))


# ---------------------------------------------------------------------------- head insertion


class FixedLinear(torch.nn.Module):
    """``x -> W x`` with ``W`` a buffer: in the state dict (and fingerprint), never trained."""

    def __init__(self, W: np.ndarray | torch.Tensor):
        super().__init__()
        self.register_buffer("weight", torch.as_tensor(np.asarray(W), dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight.to(x.dtype))


_FINAL_NORMS = ("norm", "ln_f", "final_layer_norm")


def hidden_size(model: torch.nn.Module) -> int:
    """The width of the hidden states that the output head reads."""
    config = model.config.get_text_config()
    for name in ("hidden_size", "n_embd", "dim", "d_model"):
        if getattr(config, name, None):
            return int(getattr(config, name))
    raise ValueError(f"cannot tell the hidden size of {type(model).__name__}")


def insert_alignment(model: torch.nn.Module, kind: str, W: np.ndarray | None = None
                     ) -> list[str]:
    """Put ``W`` (None: no rotation) after ``model``'s last hidden layer, in place, and freeze all
    but the output head (module notes); returns the names of the trainable parameters."""
    validate.choice("kind", kind, ("masked", "causal"))
    body = model.base_model
    if body is model:
        raise ValueError(f"{type(model).__name__} has no separate body and output head")
    d = hidden_size(model)
    if W is not None and np.shape(W) != (d, d):
        raise ValueError(f"W must be {d} x {d} for this model, got {np.shape(W)}")
    first = next(model.parameters())
    align = (torch.nn.Identity() if W is None else FixedLinear(W)).to(first.device, first.dtype)
    body_ids = {id(p) for p in body.parameters()}
    if kind == "masked":
        path = _first_head_linear(model, body)
        parent, attr = model.get_submodule(path.rpartition(".")[0]), path.rpartition(".")[2]
        setattr(parent, attr, torch.nn.Sequential(align, getattr(parent, attr)))
        head = [m for m in model.children() if m is not body]
    else:
        attr = next((n for n in _FINAL_NORMS if isinstance(getattr(body, n, None),
                                                          torch.nn.Module)), None)
        if attr is None:
            raise ValueError(f"cannot find the final norm of {type(body).__name__} (looked for "
                             f"{_FINAL_NORMS})")
        affine = torch.nn.Linear(d, d).to(first.device, first.dtype)  # starts as the identity
        torch.nn.init.eye_(affine.weight)
        torch.nn.init.zeros_(affine.bias)
        setattr(body, attr, torch.nn.Sequential(getattr(body, attr), align, affine))
        head = [affine, model.get_output_embeddings()]
    own = {id(p) for m in head for p in m.parameters()} - body_ids
    names = [n for n, p in model.named_parameters() if id(p) in own]
    for n, p in model.named_parameters():
        p.requires_grad_(n in names)
    return names


def _first_head_linear(model: torch.nn.Module, body: torch.nn.Module) -> str:
    """Dotted path of the first dense layer of a masked LM's head (BERT's transform.dense)."""
    for name, child in model.named_children():
        if child is body:
            continue
        for sub, module in child.named_modules():
            if isinstance(module, torch.nn.Linear):
                return f"{name}.{sub}" if sub else name
    raise ValueError(f"{type(model).__name__} has no dense layer in its output head")


# ------------------------------------------------------------------------- head fine-tuning


@dataclass
class HeadRun:
    """The result of :func:`finetune_head`."""

    lm: LanguageModel                  # the fine-tuned copy (W inserted, head trained)
    losses: list[float]                # mean training loss per epoch
    trainable: list[str]               # names of the trained parameters
    folder: Path | None = None         # the cache folder (None without cache)


def finetune_head(lm: LanguageModel, texts: Sequence[str], *, W: np.ndarray | None = None,
                  name: str | None = None, epochs: int = 2, lr: float = 1e-4,
                  batch_size: int = 16, micro_batch: int = 4, max_length: int = 128,
                  warmup_steps: int = 0, max_grad_norm: float | None = 1.0,
                  mlm_probability: float = 0.15, seed: int = 0, cache: bool = True,
                  progress: bool = True) -> HeadRun:
    """A copy of ``lm`` with ``W`` inserted (:func:`insert_alignment`) whose output head is
    trained on ``texts`` (masked LMs: BERT masking; causal LMs: next-token prediction).

    Adam (eps 1e-8) at ``lr`` with ``warmup_steps`` of linear warm-up then linear decay to 0,
    ``batch_size`` sequences per step (computed ``micro_batch`` at a time), gradient norm clipped
    at ``max_grad_norm``; the paper: lr 1e-4, batch 16, length 128, warm-up 1000, 2 epochs. The
    loop is :func:`biasbook.training.fit.fit` over a
    :class:`~biasbook.training.objectives.TokenLoss`. With ``cache`` the run lives under
    ``cache_dir()/head-finetune/`` keyed by the base model's fingerprint, ``W``, the token ids and
    the recipe: a :class:`~biasbook.store.Checkpoint` after every epoch, so an interrupted run
    resumes where it stopped, and a finished run is a lookup.
    """
    validate.choice("kind", lm.kind, ("masked", "causal"))
    sequences = training_sequences(lm, texts, max_length)
    if not sequences:
        raise ValueError("no training text: every text is empty")
    recipe = dict(epochs=epochs, lr=lr, batch_size=batch_size, warmup_steps=warmup_steps,
                  max_grad_norm=max_grad_norm, mlm_probability=mlm_probability, seed=seed)
    key = store.content_key("head", ALIGNMENT_VERSION, lm.fingerprint,
                            None if W is None else np.asarray(W, np.float32), sequences, recipe)
    label = name or f"{lm.name}+head"
    checkpoint = (store.Checkpoint(store.cache_path("head-finetune", key, name=label))
                  if cache else None)
    model = copy.deepcopy(lm.model)
    trainable = insert_alignment(model, lm.kind, W)
    losses = (checkpoint.read_result(lambda folder: _load_head(model, folder, trainable))
              if checkpoint is not None else None)  # None: not finished, or set aside damaged
    if losses is None:
        objective = TokenLoss(lm, model, sequences, batch_size=batch_size,
                              micro_batch=micro_batch, mlm_probability=mlm_probability,
                              seed=seed)
        losses = _train_head(objective, epochs=epochs, lr=lr, warmup_steps=warmup_steps,
                             max_grad_norm=max_grad_norm, checkpoint=checkpoint,
                             progress=progress, desc=f"{label} epochs")
        if checkpoint is not None:
            with checkpoint.finish() as out:
                store.write_json(out / "run.json", {"losses": losses, "recipe": recipe,
                                                    "base": lm.fingerprint,
                                                    "trainable": trainable})
                save_file({n: p.detach().cpu().contiguous()
                           for n, p in model.named_parameters() if n in trainable},
                          str(out / "head.safetensors"))
    return HeadRun(_wrap(lm, model, label, trainable), losses, trainable,
                   checkpoint.folder if checkpoint is not None else None)


def _train_head(objective: TokenLoss, *, epochs: int, lr: float, warmup_steps: int,
                max_grad_norm: float | None, checkpoint: store.Checkpoint | None,
                progress: bool, desc: str) -> list[float]:
    from transformers import get_linear_schedule_with_warmup

    head = [p for p in objective.model.parameters() if p.requires_grad]
    optimiser = torch.optim.Adam(head, lr=lr, eps=1e-8)
    steps = epochs * -(-len(objective.sequences) // objective.batch_size)
    schedule = get_linear_schedule_with_warmup(optimiser, warmup_steps, steps)
    with cpu_threads():
        return fit(objective.model, objective.step, objective.batches, epochs=epochs,
                   optimiser=optimiser, schedule=schedule, max_grad_norm=max_grad_norm,
                   end_epoch=objective.record, checkpoint=checkpoint, progress=progress,
                   desc=desc)


def _load_head(model: torch.nn.Module, folder: Path, trainable: list[str]) -> list[float]:
    """Load a finished run's head into ``model``; its losses. Both files are read and checked
    before ``model`` changes, and an unreadable one raises ValueError (the run is then set aside
    and trained again from the untouched model)."""
    from safetensors import SafetensorError

    try:
        tensors = load_file(str(folder / "head.safetensors"))
        losses = json.loads((folder / "run.json").read_text())["losses"]
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{folder}: {err}") from err
    if sorted(tensors) != sorted(trainable):
        raise ValueError(f"saved head has parameters {sorted(tensors)}, expected {trainable}")
    model.load_state_dict(tensors, strict=False)
    return losses


def _wrap(lm: LanguageModel, model: torch.nn.Module, label: str,
          trainable: list[str]) -> LanguageModel:
    for p in model.parameters():
        p.requires_grad_(False)
    model.eval()
    return replace(lm, name=label, model=model,
                   fingerprint=derived_fingerprint(lm, model, trainable),
                   notes=[*lm.notes, f"output head fine-tuned ({label})"])


def derived_fingerprint(lm: LanguageModel, model: torch.nn.Module, trainable: list[str]) -> str:
    """The fingerprint of ``model``, a copy of ``lm``'s with :func:`insert_alignment` applied and
    only ``trainable`` changed: sha256 over ``lm``'s fingerprint, the state's key layout, ``W``
    and the trained tensors. It identifies the weights as :func:`biasbook.models.fingerprint`
    does, without hashing the frozen body again (seconds for a few hundred million weights)."""
    state = model.state_dict()
    fixed = [f"{n}.weight" for n, m in model.named_modules() if isinstance(m, FixedLinear)]
    digest = hashlib.sha256(json.dumps([lm.fingerprint, sorted(state)]).encode())
    for key in sorted({*trainable, *fixed}):
        digest.update(key.encode())
        digest.update(state[key].detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
    return digest.hexdigest()
