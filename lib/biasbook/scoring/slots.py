"""Slot probabilities: how likely each candidate fills the ``{}`` of a template (the CB score).

**Masked LMs** (Ahn & Oh 2021, whole-word masking): the slot becomes as many mask tokens as the
candidate has sub-tokens in context, and ``p(c) = prod_j P(mask_j = c_j | masked template)`` with
the j-th sub-token read at the j-th mask (``mode="paper"``). Candidates whose masked inputs are
identical (same sub-token count) share one forward pass. ``mode="as-coded"`` reproduces the
ethnic_bias code, which multiplies every sub-token's probability at every mask position:
``prod_j prod_m P(mask_m = c_j)``. Neither is normalised over the candidates, as in the paper;
other mask tokens written in the template (the prior's masked attribute) stay masked. With
``skip_first_mask`` (as-coded only) the ``k`` positions read are not the candidate's own but the
``k`` that start at the second mask token of the input, as the ethnic_bias code's
``find_mask_token(..., last=True)`` finds them for a prior whose masked attribute comes first:
the candidate's slot when the attribute is one mask, else the attribute's second mask and
whatever follows it.

**Causal LMs** score each filled sentence ``S_c`` with ``clm`` and normalise over the candidates:
``p(c) = P(S_c) / sum_c' P(S_c')``. Since ``P(S_c) = P(prefix) P(c, suffix | prefix)`` and
``P(prefix)`` is common to all candidates, this is exactly the model's conditional probability of
the candidate given the rest of the sentence, restricted to the candidate set:
``P(c | prefix, suffix, c in C)``. The restriction is a per-template constant
``log sum_c' P(S_c')``, which cancels in the CB score (a variance over candidates of
``log p_tgt(c) - log p_prior(c)``).

**Encoder-decoder LMs** ask BART's own question: ``p(c) = P(S_c | template with <mask> in the
slot) / sum_c' P(S_c' | ...)``, the teacher-forced decoder likelihood, normalised likewise.

>>> from biasbook.models import from_model
>>> from biasbook.testing import tiny_model, tiny_tokenizer
>>> tok = tiny_tokenizer()
>>> gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
>>> p = slot_probabilities(gpt, "people in {} are kind .", ["paris", "london", "tokyo"],
...                        cache=False)
>>> p.shape, bool(abs(p.sum() - 1) < 1e-9)
((3,), True)
>>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
>>> slot_probabilities(bert, ["{} is kind .", "{} is [MASK] ."], ["he", "unbelievable"],
...                    cache=False).shape
(2, 2)
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from biasbook import validate
from biasbook.models import LanguageModel
from biasbook.scoring.cache import ScoreCache, Task
from biasbook.scoring.masked import masked_slot_logprobs
from biasbook.scoring.runner import cached_run
from biasbook.scoring.sentences import ENGINE_VERSION, check_unknown, score_sentences
from biasbook.scoring.seq2seq import seq2seq_logprobs
from biasbook.scoring.spans import tokens_in_span

PLACEHOLDER = "{}"


def slot_probabilities(lm: LanguageModel, template: str | Sequence[str],
                       candidates: Sequence[str], *, mode: str = "paper", log: bool = False,
                       batch_tokens: int | None = None, cache: bool | ScoreCache = True,
                       progress: bool | None = None, unknown: str = "error",
                       skip_first_mask: bool = False, workers=None) -> np.ndarray:
    """Probability of each candidate in the ``{}`` slot of ``template`` (see the module notes).

    ``template`` may be a list of templates, computed together: the result is then
    ``[n_templates, n_candidates]`` instead of ``[n_candidates]``. ``log`` returns natural-log
    probabilities, which stay finite where products of sub-token probabilities underflow.
    ``batch_tokens``, ``cache`` and ``workers`` (Ray workers) as in
    :func:`~biasbook.scoring.score_sentences` (after changing weights in place, call
    ``lm.refresh_fingerprint()``).
    ``unknown``: filled templates holding the tokenizer's unknown token are an error, or
    (``"report"``) a warning (see :mod:`biasbook.scoring.sentences`). ``skip_first_mask``:
    ``mode="as-coded"`` read from the input's second mask token on (module notes).
    """
    templates = [template] if isinstance(template, str) else list(template)
    candidates = validate.word_list("candidates", candidates)
    _check(lm, templates, candidates, mode)
    if skip_first_mask and mode != "as-coded":
        raise ValueError("skip_first_mask reproduces the ethnic_bias code: it needs "
                         "mode='as-coded'")
    filled = [_fill(t, c) for t in templates for c in candidates]
    check_unknown(lm, filled, unknown, "filled template")
    options = dict(batch_tokens=batch_tokens, cache=cache, progress=progress, workers=workers)
    if lm.kind == "masked":
        key = ["slot", mode, *(["skip-first-mask"] if skip_first_mask else []), ENGINE_VERSION]
        task = Task(masked_slot_values, dict(mode=mode, skip_first_mask=skip_first_mask))
        scores = _cached_slots(lm, templates, candidates, key, task, **options)
    elif lm.kind == "causal":
        with warnings.catch_warnings():  # already reported above, once
            warnings.filterwarnings("ignore", message=".*hold tokens unknown")
            scores = score_sentences(lm, filled, "clm", unknown="report", **options).sum
    else:
        scores = _cached_slots(lm, templates, candidates, ["slot-seq2seq", ENGINE_VERSION],
                               Task(seq2seq_slot_values), **options)
    logp = scores.reshape(len(templates), len(candidates))
    if lm.kind != "masked":  # normalised over the candidates (module notes)
        top = logp.max(axis=1, keepdims=True)
        logp = logp - top - np.log(np.exp(logp - top).sum(axis=1, keepdims=True))
    if isinstance(template, str):
        logp = logp[0]
    return logp if log else np.exp(logp)


def _check(lm: LanguageModel, templates: list[str], candidates: list[str], mode: str) -> None:
    if not templates:
        raise ValueError("slot_probabilities needs at least one template")
    for t in templates:
        if not isinstance(t, str) or t.count(PLACEHOLDER) != 1:
            raise ValueError(f"template {t!r} must contain exactly one {PLACEHOLDER!r} slot")
    if any(not isinstance(c, str) or not c.strip() for c in candidates):
        raise ValueError("every candidate must be a non-empty string")
    if len(set(candidates)) != len(candidates):
        raise ValueError("candidates must be distinct (a repeat would count twice when "
                         "normalising)")
    validate.choice("mode", mode, validate.MODES)
    if mode == "as-coded" and lm.kind != "masked":
        raise ValueError("mode='as-coded' reproduces the ethnic_bias code for masked LMs only")
    if lm.kind not in ("masked", "causal", "encoder-decoder"):
        raise ValueError(f"{lm.name} is a {lm.kind!r} model without a language-model head")


def _fill(template: str, candidate: str) -> str:
    return template.replace(PLACEHOLDER, candidate)


def _cached_slots(lm: LanguageModel, templates: list[str], candidates: list[str], key: list,
                  task: Task, **options) -> np.ndarray:
    """The cached value of every (template, candidate), summed (as float64), in that order."""
    pairs = [json.dumps([t, c]) for t in templates for c in candidates]
    values = cached_run(lm, json.dumps(key), dict.fromkeys(pairs), task,
                        desc=f"{lm.name} slots", **options)
    return np.array([values[q].sum(dtype=np.float64) for q in pairs])


def masked_slot_values(lm: LanguageModel, todo: list[str], budget: int, *, mode: str,
                       skip_first_mask: bool):
    """The engine of masked slot probabilities: each query is ``json.dumps([template,
    candidate])``, its value the candidate's log-probability (a module-level function, so that a
    Ray worker can run it on its own copy of the model)."""
    pairs = [json.loads(q) for q in todo]
    queries = [_masked_query(lm, *pair) for pair in pairs]
    if skip_first_mask:
        queries = [_after_first_mask(lm, q, t) for q, (t, _) in zip(queries, pairs, strict=True)]
    users: dict[tuple, list[int]] = defaultdict(list)  # each distinct input: its queries
    for j, (ids, slots, _) in enumerate(queries):
        users[(ids, slots)].append(j)
    inputs = list(users)
    for batch, rows in masked_slot_logprobs(lm, inputs, budget):
        done, values = [], []
        for k, logprobs in zip(batch, rows, strict=True):
            for j in users[inputs[k]]:
                tokens = list(queries[j][2])
                picked = (logprobs[range(len(tokens)), tokens] if mode == "paper"
                          else logprobs[:, tokens])
                done.append(j)
                values.append(np.array([picked.double().sum().item()]))
        yield done, values


def _after_first_mask(lm: LanguageModel, query: tuple, template: str) -> tuple:
    """The query read at the ``k`` positions from the input's second mask token on."""
    ids, slots, tokens = query
    masks = [i for i, t in enumerate(ids) if t == lm.tokenizer.mask_token_id]
    if len(masks) < 2:
        raise ValueError(f"skip_first_mask needs a second mask token in {template!r}")
    read = tuple(range(masks[1], masks[1] + len(slots)))
    if read[-1] >= len(ids):
        raise ValueError(f"skip_first_mask reads past the end of {template!r}")
    return ids, read, tokens


def _masked_query(lm: LanguageModel, template: str, candidate: str
                  ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(ids with the candidate's sub-tokens masked, their positions, the sub-tokens).

    The sub-tokens are those of the filled sentence whose characters overlap the candidate, so
    they are the candidate's tokenisation in context (a BPE word with its leading space).
    """
    if not getattr(lm.tokenizer, "is_fast", False):
        raise ValueError(f"{lm.name}: slot probabilities need a fast tokenizer (character offsets)")
    encoded = lm.tokenizer(_fill(template, candidate), return_offsets_mapping=True,
                           return_special_tokens_mask=True)
    start = template.index(PLACEHOLDER)
    slots = tuple(tokens_in_span(encoded["offset_mapping"], start, start + len(candidate),
                                 encoded["special_tokens_mask"]))
    ids = list(encoded["input_ids"])
    tokens = tuple(ids[t] for t in slots)
    for t in slots:
        ids[t] = lm.tokenizer.mask_token_id
    return tuple(ids), slots, tokens


def seq2seq_slot_values(lm: LanguageModel, todo: list[str], budget: int):
    """The engine of encoder-decoder slot probabilities: the decoder's token log-probabilities
    of the filled template given the template with a mask in the slot."""
    pairs = [json.loads(q) for q in todo]
    encoders = [lm.encode(_fill(template, lm.tokenizer.mask_token)) for template, _ in pairs]
    decoders = [lm.encode(_fill(template, candidate)) for template, candidate in pairs]
    return seq2seq_logprobs(lm, encoders, decoders, budget)
