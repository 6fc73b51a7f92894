"""Sentence scores: per-token log-probabilities and their mean and sum, by a named method.

========== ================= ===========================================================
method     model kind        log-probability of each token (special tokens are never scored)
========== ================= ===========================================================
``aul``    masked (default)  log P(w_t | S), one pass on the unmasked sentence
                             (Kaneko & Bollegala 2022; HERB Eq. 1 is its mean)
``aula``   masked            the same, weighted: a_t log P(w_t | S), where a_t is the attention
                             token t receives averaged over all layers, heads and the sentence's
                             real query positions ([CLS]/[SEP] included, padding excluded); the
                             mean divides by the number of scored tokens, as the authors' code
``pll``    masked            log P(w_t | S with w_t masked), one pass per token (Salazar et al.
                             2020); ``sum`` is their PLL. ``pll="within_word_l2r"``: Kauf &
                             Ivanova's (2023) PLL-word-l2r (below)
``clm``    causal (default)  log P(w_t | BOS, w_<t): the first token is conditioned on
                             ``lm.prefix_ids`` where the model has a BOS token, else unscored
``infill`` encoder-decoder   log P(w_t | w_<t, encoder("<mask>")): the decoder's teacher-forced
           (default)         likelihood of S when the encoder sees one lone mask
========== ================= ===========================================================

**Encoder-decoder models.** BART has no masked-LM likelihood: its decoder generates the whole
text conditioned on a corrupted input. The HERB code loads BART through ``AutoModelForMaskedLM``
and calls it on S, so the decoder is teacher-forced on S while the encoder sees S itself: every
token is scored by ``log P(w_t | w_<t, S)``, a *copy* task (values near 0 for any text the model
can copy, fluent or not). That is ``method="aul", mode="as-coded"``. The default ``infill``
instead asks BART's own pre-training question, text infilling, with all of S as the masked span:
``log P(S | <mask>) = sum_t log P(w_t | w_<t, <mask>)`` is a proper distribution over sentences
(like ``clm``), costs one pass, and does not let the encoder reveal the answer.

``mode="as-coded"`` changes only that case: for the other methods the HERB code differs from the
paper only through padding (pad log-probs leak into its means), which is a bug, not a definition.
A sentence with no token to score (only special tokens, such as a literal ``[MASK]``; one token
under a causal model without BOS) is an error naming it: its mean would be 0/0.

**PLL of multi-piece words.** Under the original PLL a word split into pieces
(``un ##believ ##able``) is overrated: each piece is predicted while the word's other pieces stay
in view, and they all but give it away. ``pll="within_word_l2r"`` (Kauf & Ivanova 2023, "A Better
Way to Do Masked Language Model Scoring") also masks the pieces of the same word to the target's
right, so a word is scored left to right, each piece seeing only the pieces before it; a word of
one piece is scored as before. Words are the tokenizer's (``word_ids`` of a fast tokenizer; a slow
tokenizer is an error). The variant is part of the score cache's key. Either way a sentence of n
scored tokens costs n masked copies, cut into passes under ``batch_tokens``
(:func:`~biasbook.scoring.masked.pll_logprobs`), so long sentences fit a fixed memory.

**Unknown tokens.** A text that the tokenizer maps (in part) to its unknown token (``[UNK]``) is
an error by default (``unknown="error"``), for every model kind: masked models would skip the
``[UNK]`` as a special token and causal ones would score it, and either way two different texts
("kenya", "peru") could get identical scores. ``unknown="report"`` scores them anyway and lists
them in ``SentenceScores.unknown`` (with a warning).

>>> from biasbook.models import from_model
>>> from biasbook.testing import tiny_model, tiny_tokenizer
>>> tok = tiny_tokenizer()
>>> gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
>>> scores = score_sentences(gpt, ["the cat is good .", "a dog"], cache=False)
>>> scores.method, scores.n_tokens.tolist()
('clm', [5, 2])
>>> bool(abs(scores.sum[1] - scores.token_logprobs[1].sum()) < 1e-9)
True
>>> scores.to_frame().columns.tolist()
['sentence', 'mean', 'sum', 'n_tokens']
>>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
>>> plain, l2r = (score_sentences(bert, ["the cat is unbelievable"], "pll", pll=v, cache=False)
...               for v in PLL_VARIANTS)
>>> [bool(np.isclose(a, b)) for a, b in zip(plain.token_logprobs[0], l2r.token_logprobs[0])]
[True, True, True, False, False, True]
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np
from tqdm.auto import tqdm

from biasbook import validate
from biasbook.models import LanguageModel
from biasbook.scoring.cache import ScoreCache, Task
from biasbook.scoring.causal import clm_logprobs
from biasbook.scoring.masked import (
    PLL_VARIANTS,
    aul_logprobs,
    check_word_ids,
    pll_logprobs,
    word_ids,
)
from biasbook.scoring.runner import cached_run
from biasbook.scoring.seq2seq import seq2seq_logprobs

#: Bump when a definition changes, so that old cached scores are not reused.
ENGINE_VERSION = 1
METHODS = {"aul": ("masked", "encoder-decoder"), "aula": ("masked",), "pll": ("masked",),
           "clm": ("causal",), "infill": ("encoder-decoder",)}
DEFAULT_METHOD = {"masked": "aul", "causal": "clm", "encoder-decoder": "infill"}
UNKNOWN = ("error", "report")


@dataclass(frozen=True)
class SentenceScores:
    """Scores of ``sentences`` in input order; ``token_weights`` only for ``aula``."""

    sentences: list[str]
    method: str
    token_logprobs: list[np.ndarray]
    token_weights: list[np.ndarray] | None = None
    unknown: tuple[str, ...] = ()  # sentences holding the tokenizer's unknown token

    @property
    def n_tokens(self) -> np.ndarray:
        return np.array([len(lp) for lp in self.token_logprobs], dtype=np.int64)

    @property
    def sum(self) -> np.ndarray:
        return np.array([float(np.sum(t, dtype=np.float64)) for t in self._terms()])

    @property
    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum / self.n_tokens

    def _terms(self) -> list[np.ndarray]:
        if self.token_weights is None:
            return self.token_logprobs
        return [lp.astype(np.float64) * w
                for lp, w in zip(self.token_logprobs, self.token_weights, strict=True)]

    def __len__(self) -> int:
        return len(self.sentences)

    def to_frame(self):
        """A ``pandas.DataFrame`` with one row per sentence."""
        import pandas as pd

        return pd.DataFrame({"sentence": self.sentences, "mean": self.mean, "sum": self.sum,
                             "n_tokens": self.n_tokens})


def score_sentences(lm: LanguageModel, sentences: Sequence[str], method: str | None = None, *,
                    mode: str = "paper", batch_tokens: int | None = None,
                    cache: bool | ScoreCache = True, progress: bool | None = None,
                    unknown: str = "error", pll: str = "original", workers=None
                    ) -> SentenceScores:
    """Score ``sentences`` under ``lm`` with ``method`` (default: by model kind; see the table).

    Repeated sentences are scored once. ``batch_tokens`` (>= 1; None: by device) bounds the
    padded tokens of a forward pass. ``cache`` (True: the model's file under
    ``cache_dir()/scores``, keyed by ``lm.fingerprint``) makes reruns compute only new sentences
    and resume after an interruption; after changing ``lm.model``'s weights in place, call
    ``lm.refresh_fingerprint()`` (a cheap probe catches most such changes, with a warning:
    :meth:`~biasbook.models.LanguageModel.check_fingerprint`). ``progress`` None shows a bar on
    long runs.
    ``unknown``: what to do with sentences holding the unknown token (module notes).
    ``pll`` (method ``pll`` only): ``"original"`` (Salazar et al.) or ``"within_word_l2r"``
    (Kauf & Ivanova; module notes).
    ``workers``: None scores in this process (the default); ``N`` (a number) on N Ray workers on
    this machine, an address string (``"auto"``, ``"ray://host:10001"``) on a Ray cluster, or a
    :class:`~biasbook.scoring.distributed.Workers`; the same cache, so a run resumes on any
    number of workers (:mod:`biasbook.scoring.distributed`; needs ``biasbook[ray]``).
    """
    sentences = validate.word_list("sentences", sentences)
    for i, text in enumerate(sentences):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"sentence {i} is {text!r}: every sentence must be a non-empty string")
    method, mode = resolve_method(lm, method, mode)
    check_pll(lm, method, pll)
    with_unknown = check_unknown(lm, sentences, unknown, "sentence")
    key = method_key(lm, method, mode, pll)

    task = Task(sentence_logprobs, dict(method=method, pll=pll))
    values = cached_run(lm, key, dict.fromkeys(sentences), task, batch_tokens=batch_tokens,
                        cache=cache, progress=progress, desc=f"{lm.name} {method}",
                        workers=workers)
    arrays = [values[text] for text in sentences]
    # cached before such sentences were refused
    _refuse_unscored(lm, method, [t for t in dict.fromkeys(sentences) if values[t].size == 0])
    if method == "aula":
        return SentenceScores(sentences, method, [a.reshape(2, -1)[0] for a in arrays],
                              [a.reshape(2, -1)[1] for a in arrays], unknown=with_unknown)
    return SentenceScores(sentences, method, arrays, unknown=with_unknown)


#: Sentences per chunk of :func:`score_stream`, in this process and (per Ray run) on workers.
STREAM_CHUNK = 16384
STREAM_CHUNK_WORKERS = 262144


def score_stream(lm: LanguageModel, sentences: Iterable[str], method: str | None = None, *,
                 chunk: int | None = None, align: int = 1, total: int | None = None,
                 progress: bool | None = None, **options) -> Iterator[SentenceScores]:
    """:func:`score_sentences` of an iterable of any length in constant memory: it is read
    ``chunk`` sentences at a time (default :data:`STREAM_CHUNK`, or
    :data:`STREAM_CHUNK_WORKERS` with ``workers``: one Ray run per chunk), and each chunk's
    scores are yielded, in order, before the next is read. Keep what you need of each (its means,
    say) and drop the rest: nothing else is held. ``align``: chunks hold a multiple of this many
    sentences (at least one multiple), so that groups such as one region's sentences (which share
    a prefix) stay together. ``options`` as for :func:`score_sentences` (cache, workers, ...);
    ``total`` (the number of sentences, if known) sizes the progress bar.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    >>> texts = (f"people in {r} are kind ." for r in ["paris", "tokyo", "london"])
    >>> [len(s) for s in score_stream(gpt, texts, chunk=2, cache=False)]
    [2, 1]
    """
    if chunk is None:
        chunk = STREAM_CHUNK if options.get("workers") is None else STREAM_CHUNK_WORKERS
    for name, value in (("chunk", chunk), ("align", align)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    chunk = max(1, chunk // align) * align
    if isinstance(sentences, str):
        raise TypeError(f"sentences must be an iterable of strings, not the bare string "
                        f"{sentences!r}")
    show = (total or 0) >= 256 if progress is None else progress
    with tqdm(total=total, desc=f"{lm.name} sentences", unit="sentence", disable=not show,
              leave=False) as bar:
        iterator = iter(sentences)
        while part := list(islice(iterator, chunk)):
            scores = score_sentences(lm, part, method, progress=False, **options)
            bar.update(len(scores))
            yield scores


def sentence_logprobs(lm: LanguageModel, todo: list[str], budget: int, *, method: str,
                      pll: str = "original") -> Iterator[tuple[list[int], list[np.ndarray]]]:
    """The engine of :func:`score_sentences`: ``(indices into todo, arrays)`` per finished batch
    (a module-level function, so that a Ray worker can run it on its own copy of the model)."""
    seqs = [lm.encode(text) for text in todo]
    _refuse_unscored(lm, method, _unscored(lm, method, todo, seqs))
    limit = context_length(lm) - len(lm.prefix_ids)
    for text, seq in zip(todo, seqs, strict=True):
        if limit and len(seq) > limit:
            raise ValueError(f"sentence {text[:60]!r}... has {len(seq)} tokens, more than "
                             f"{lm.name} can read ({limit}); shorten or split it")
    if method == "clm":
        return clm_logprobs(lm, seqs, budget)
    if method in ("aul", "aula") and lm.kind == "masked":
        return aul_logprobs(lm, seqs, budget, attention=method == "aula")
    if method == "pll":
        words = word_ids(lm, todo) if pll == "within_word_l2r" else None
        return pll_logprobs(lm, seqs, budget, words)
    encoder = seqs if method == "aul" else [lm.encode(lm.tokenizer.mask_token)] * len(seqs)
    return seq2seq_logprobs(lm, encoder, seqs, budget)


def _unscored(lm: LanguageModel, method: str, texts: Sequence[str],
              seqs: Sequence[Sequence[int]]) -> list[str]:
    """The ``texts`` whose token ids ``seqs`` (as :meth:`LanguageModel.encode` gives them) hold no
    token that ``method`` scores."""
    pairs = zip(texts, seqs, strict=True)
    if method == "clm":
        first = 0 if lm.prefix_ids else 1  # without BOS the first token is only context
        return [text for text, seq in pairs if len(seq) <= first]
    specials = set(lm.tokenizer.all_special_ids)
    return [text for text, seq in pairs if all(token in specials for token in seq)]


def _refuse_unscored(lm: LanguageModel, method: str, texts: Sequence[str]) -> None:
    """A ``ValueError`` naming ``texts``, sentences with no token to score (mean 0/0)."""
    if not texts:
        return
    why = ("the model has no BOS token, so a text's first token is never scored"
           if method == "clm" else
           f"special tokens ({', '.join(lm.tokenizer.all_special_tokens)}) are never scored")
    raise ValueError(f"{len(texts)} sentence(s) have no token to score under {lm.name} "
                     f"({method}): {list(texts[:5])}; {why}")


def check_unknown(lm: LanguageModel, texts: Sequence[str], unknown: str, what: str
                  ) -> tuple[str, ...]:
    """The distinct ``texts`` that ``lm``'s tokenizer maps to its unknown token; an error (with
    the first few named) under ``unknown="error"``, a warning under ``"report"``."""
    validate.choice("unknown", unknown, UNKNOWN)
    unk = getattr(lm.tokenizer, "unk_token_id", None)
    if unk is None:  # byte-level tokenizers (GPT-2, Llama, Gemma) can spell any text
        return ()
    distinct = list(dict.fromkeys(texts))
    ids = lm.tokenizer(distinct, add_special_tokens=False)["input_ids"]
    found = tuple(text for text, seq in zip(distinct, ids, strict=True) if unk in seq)
    if found:
        message = (f"{len(found)} {what}(s) hold tokens unknown to {lm.name}'s tokenizer, e.g. "
                   f"{list(found[:5])}")
        if unknown == "error":
            raise ValueError(message + "; pass unknown='report' to score them anyway")
        warnings.warn(message + "; they are scored anyway (unknown='report')", stacklevel=3)
    return found


def resolve_method(lm: LanguageModel, method: str | None, mode: str) -> tuple[str, str]:
    """Check ``method`` against the model kind; normalise ``mode`` to where it matters."""
    validate.choice("mode", mode, validate.MODES)
    if lm.kind not in DEFAULT_METHOD:
        raise ValueError(f"{lm.name} is a {lm.kind!r} model without a language-model head: "
                         "it cannot score sentences")
    method = method or DEFAULT_METHOD[lm.kind]
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {sorted(METHODS)}")
    if lm.kind not in METHODS[method]:
        fits = sorted(m for m, kinds in METHODS.items() if lm.kind in kinds)
        raise ValueError(f"method {method!r} does not fit {lm.name}, a {lm.kind} model; "
                         f"use one of {fits}")
    if method == "aul" and lm.kind == "encoder-decoder":
        if mode != "as-coded":
            raise ValueError("AUL is undefined for an encoder-decoder model: use method='infill' "
                             "or, for the HERB code's reconstruction score, mode='as-coded'")
        return method, mode
    return method, "paper"


def check_pll(lm: LanguageModel, method: str, pll: str) -> None:
    """A ``ValueError`` for an unknown PLL variant, a variant with another method, or
    ``within_word_l2r`` without word ids."""
    validate.choice("pll", pll, PLL_VARIANTS)
    if pll != "original" and method != "pll":
        raise ValueError(f"pll={pll!r} is a variant of method 'pll', not of {method!r}: pass "
                         "method='pll' or leave pll='original'")
    if pll == "within_word_l2r":
        check_word_ids(lm)


def context_length(lm: LanguageModel) -> int:
    """The most positions the model reads (0 where its config does not say)."""
    config = getattr(lm.model, "config", None)
    if config is None:
        return 0
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None) or getattr(config.get_text_config(), name, None)
        if isinstance(value, int) and value > 0:
            return value - (2 if config.model_type in ("roberta", "xlm-roberta", "camembert")
                            else 0)  # RoBERTa's positions start after the padding index
    return 0


def method_key(lm: LanguageModel, method: str, mode: str, pll: str = "original") -> str:
    """Everything besides the weights and the query that a cached score depends on (the PLL
    variant only where it is not the original, so that scores cached before it existed stay
    valid)."""
    variant = [] if pll == "original" else [pll]
    return json.dumps([method, mode, ENGINE_VERSION, list(lm.prefix_ids), *variant])
