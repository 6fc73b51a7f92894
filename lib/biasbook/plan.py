"""``biasbook plan``: what a chapter's run will cost, counted before anything runs.

A plan is a list of :class:`Work` rows, one per loop of a notebook (and model): how many
sentences, masked forwards, training steps, generated tokens or GloVe updates it runs, how many
tokens pass through a model, its floating-point operations, and the disk its caches take. The
:class:`Plan` adds the models that must be downloaded and two time estimates.

**Where the counts come from.** What a loop does is chapter knowledge (HERB's regions x
descriptors, the ethnic-bias templates x attributes x targets, an LSTM's steps per lambda), so
every chapter package has a module ``plan.py`` with two functions of the resolved parameters
``params`` (``{notebook stem: {parameter: value}}``, as the notebooks receive them):

- ``work(params) -> list[Work]``, built with :func:`forward`, :func:`training` and :class:`Work`;
- ``cap(params, n) -> params``: the same parameters with every loop bounded by ``n`` (lists of
  regions, templates, attributes, seeds or lambdas keep at most ``n`` items, counts shrink to a
  small multiple of ``n``), keeping what selects a code path (model kinds, languages, mitigation
  variants, corpora, objectives), so that a paper profile's paths run in minutes on tiny models.

**Why looking the chapter up does not break the layering.** Infrastructure never imports a
chapter (``tests/test_layout.py``): chapters sit on top and may change freely. Here
:func:`chapter_module` finds ``biasbook.chapters.<chapter>.plan`` by the chapter's *name*, at call
time, as a plugin is found through an entry point: no module below the chapters names one or
depends on its code, the dependency points from each chapter's ``plan.py`` down to this module
(whose :class:`Work` and helpers it uses), and a chapter without one is an error naming the file
to add. The layout test allows this one lookup (here only) and checks that every chapter package
has its ``plan.py``.

**Estimates, not measurements.** Time *on this machine* is each row's FLOPs divided by the rate
:func:`biasbook.flops.measure` finds here and now, from a fraction of a second of a small
random-init workload of the row's engine (:mod:`biasbook.flops`). It reflects the machine's load
at that moment. Time *on a GPU* assumes :data:`GPU_FLOPS` sustained; engines without a GPU
path (gensim, counting, GloVe) keep this machine's time; sequential work (an LSTM's steps,
token-by-token decoding) reaches only a fraction of that rate, so its GPU figure is a lower bound.
A training step costs three forwards. Tokens are
counted from the text with :func:`estimate_tokens`, since a hub model's tokenizer is not here.

>>> w = forward("01", "score", "bert-base-cased", 1000, "sentences", tokens=10_000)
>>> layer = 4 * 768**2 + 2 * 768 * 3072  # attention and feed-forward of one BERT-base layer
>>> w.engine, w.flops == 2 * (12 * layer + 768 * 28996) * 10_000  # and its 28,996-word head
('masked', True)
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from biasbook import resources
from biasbook.flops import PROBE, measure

#: The GPU rate the plan assumes: 100 TFLOP/s sustained, about a third of an A100's bf16 peak
#: (312 TFLOP/s) or a seventh of an H100's (990); mixed-precision transformer inference reaches
#: that with large batches.
GPU_FLOPS = 1e14
#: Engines whose work runs on a GPU when there is one: not gensim, the co-occurrence counter, nor
#: GloVe (the chapters train it with the numba CPU backend).
GPU_ENGINES = ("masked", "causal", "encoder-decoder", "encoder", "lstm")
TRAINING_FACTOR = 3  # a training step: one forward and a backward of twice its cost


@dataclass(frozen=True)
class Work:
    """One loop of one notebook: ``count`` ``unit`` (sentences, masked forwards, training steps,
    generated tokens, GloVe updates...), ``tokens`` through the model, ``flops`` on ``engine``
    (``None``: not estimated, ``note`` says why), and the disk its caches take."""

    notebook: str
    what: str
    count: int
    unit: str
    model: str | None = None
    tokens: int = 0
    flops: float = 0.0
    engine: str | None = None
    cache_bytes: int = 0
    note: str = ""


@dataclass(frozen=True)
class ModelSize:
    """What the plan needs to know of a model: its kind, the tiny architecture that stands in for
    it (:func:`biasbook.testing.stand_in`), parameters, forward FLOPs per token, download size."""

    kind: str
    arch: str
    params: int
    flops_per_token: float
    disk_bytes: int


def _size(kind: str, arch: str, layers: int, hidden: int, vocab: int, disk: float, *,
          ffn: int | None = None, gated: bool = False, params: int | None = None) -> ModelSize:
    # per layer: attention 4 h^2, feed-forward 2 h f (3 h f gated); the output head h V
    body = layers * (4 * hidden ** 2 + (3 if gated else 2) * hidden * (ffn or 4 * hidden))
    return ModelSize(kind, arch, params or body + vocab * hidden,
                     2.0 * (body + hidden * vocab), int(disk))


def _bert(vocab: int, disk: float) -> ModelSize:
    return _size("masked", "bert", 12, 768, vocab, disk)


#: The hub models of the paper profiles (their config.json and weight files on the hub) and the
#: registry's offline models. A model missing here has no time estimate.
KNOWN_MODELS: dict[str, ModelSize] = {
    "bert-base-cased": _bert(28996, 436e6),
    "bert-base-uncased": _bert(30522, 440e6),
    "albert-base-v2": _size("masked", "albert", 12, 768, 30000, 47e6, params=11_683_584),
    "roberta-base": _size("masked", "roberta", 12, 768, 50265, 499e6),
    "facebook/bart-base": _size("encoder-decoder", "bart", 12, 768, 50265, 558e6),
    "dbmdz/bert-base-german-uncased": _bert(31102, 443e6),
    "dccuchile/bert-base-spanish-wwm-uncased": _bert(31002, 440e6),
    "beomi/kcbert-base": _bert(30000, 436e6),
    "dbmdz/bert-base-turkish-uncased": _bert(32000, 445e6),
    "bert-base-chinese": _bert(21128, 412e6),
    "asafaya/bert-base-arabic": _bert(32000, 445e6),
    "nlpaueb/bert-base-greek-uncased-v1": _bert(35000, 453e6),
    "bert-base-multilingual-uncased": _bert(105879, 672e6),
    "meta-llama/Llama-2-7b-chat-hf": _size("causal", "llama", 32, 4096, 32000, 13.5e9,
                                           ffn=11008, gated=True),
    "mistralai/Mistral-7B-Instruct-v0.1": _size("causal", "mistral", 32, 4096, 32000, 14.5e9,
                                                ffn=14336, gated=True),
    "smollm2-135m": _size("causal", "llama", 30, 576, 49152, 0, ffn=1536, gated=True),
    "gemma-3-270m": _size("causal", "gemma3", 18, 640, 262144, 0, ffn=2048, gated=True),
    "all-minilm-l6-v2": _size("encoder", "bert", 6, 384, 30522, 0),
}


@cache
def model_size(name: str) -> ModelSize | None:
    """:class:`ModelSize` of a known model or a local folder (counted from its config on the
    meta device: nothing is loaded); ``None`` for an unknown hub id."""
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    if not Path(name).is_dir():
        return None
    import torch
    import transformers as tf

    from biasbook.models import _auto_class, infer_kind

    config = tf.AutoConfig.from_pretrained(name)
    kind = infer_kind(config)
    with torch.device("meta"):
        model = _auto_class(kind).from_config(config)
    params = sum(p.numel() for p in model.parameters())
    embed = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    tied = head is None or head.weight is embed
    disk = sum(p.stat().st_size for p in Path(name).glob("*.safetensors")) + sum(
        p.stat().st_size for p in Path(name).glob("*.bin"))
    return ModelSize(kind, config.model_type, params,
                     2.0 * (params - embed.numel() + (embed.numel() if tied else 0)), disk)


def forward(notebook: str, what: str, model: str, count: int, unit: str, *, tokens: int,
            training: bool = False, cache_bytes: int = 0, note: str = "") -> Work:
    """A transformer's loop: ``tokens`` through ``model`` (``training``: forward and backward)."""
    size = model_size(model)
    if size is None:
        return Work(notebook, what, count, unit, model, tokens, cache_bytes=cache_bytes,
                    note=f"size of {model} unknown: add it to biasbook.plan.KNOWN_MODELS")
    factor = TRAINING_FACTOR if training else 1
    return Work(notebook, what, count, unit, model, tokens,
                factor * size.flops_per_token * tokens, size.kind, cache_bytes, note)


def training(notebook: str, what: str, model: str, steps: int, *, tokens: int,
             cache_bytes: int = 0, note: str = "") -> Work:
    """``steps`` optimiser steps of ``model`` over ``tokens`` tokens in all."""
    return forward(notebook, what, model, steps, "training steps", tokens=tokens, training=True,
                   cache_bytes=cache_bytes, note=note)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_PIECES = re.compile(rf"{_CJK.pattern}|[^\W\d_\u3040-\u30ff\u3400-\u9fff]+|\d+|[^\w\s]")
SPECIAL_TOKENS = 2  # [CLS] ... [SEP], <s> ... </s>, or BOS


def estimate_tokens(text: str) -> int:
    """Subword tokens of ``text``, estimated: 1.3 per word of letters (WordPiece and BPE split
    rarer words), one per number, punctuation mark and CJK character; no special tokens.

    >>> estimate_tokens("People in Paris are bald."), estimate_tokens("北京")
    (7, 2)
    """
    pieces = _PIECES.findall(text)
    words = sum(1 for p in pieces if p.isalpha() and not _CJK.fullmatch(p))
    return round(1.3 * words) + len(pieces) - words


def score_cache_bytes(sentences: int, tokens: int, chars: int) -> int:
    """Disk of the score cache for ``sentences``: the text, a float32 per token, ~64 bytes of
    SQLite row and index per sentence."""
    return chars + 4 * tokens + 64 * sentences


# ------------------------------------------------------------------------------------ plans

def chapter_module(chapter: str):
    """``biasbook.chapters.<chapter>.plan``, found by name (see the module docstring)."""
    name = f"biasbook.chapters.{chapter.replace('-', '_')}.plan"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if not name.startswith(str(err.name)):  # the plan module, not something it imports
            raise
        raise NotImplementedError(
            f"chapter {chapter!r} has no plan: add lib/biasbook/chapters/"
            f"{chapter.replace('-', '_')}/plan.py with work(params) and cap(params, n)") from err


def capped(chapter: str, params: dict[str, dict], n: int) -> dict[str, dict]:
    """The chapter's ``cap``: ``params`` with every loop bounded by ``n``."""
    if n < 1:
        raise ValueError(f"a cap must be 1 or more, got {n}")
    return chapter_module(chapter).cap(params, n)


@dataclass
class Plan:
    """A chapter's work under one profile, the downloads it needs and its time estimates."""

    chapter: str
    profile: str
    works: list[Work]
    downloads: dict[str, int | None]  # hub model -> bytes (None: unknown)
    rates: dict[str, float] = field(default_factory=dict)  # engine -> FLOP/s measured here
    gpu_flops: float = GPU_FLOPS

    def cpu_seconds(self, w: Work) -> float | None:
        rate = self.rates.get(w.engine) if w.engine else None
        return w.flops / rate if rate else None

    def gpu_seconds(self, w: Work) -> float | None:
        # a row without an engine has no rate here either: None
        return w.flops / self.gpu_flops if w.engine in GPU_ENGINES else self.cpu_seconds(w)

    def totals(self) -> dict[str, int]:
        """Counts per unit over every row."""
        out: dict[str, int] = defaultdict(int)
        for w in self.works:
            out[w.unit] += w.count
        return dict(out)

    def summary(self) -> str:
        """One line: counts, tokens, both estimates, disk and downloads."""
        counts = ", ".join(f"{number(c)} {u}" for u, c in self.totals().items())
        tokens = sum(w.tokens for w in self.works)
        cpu = sum(self.cpu_seconds(w) or 0 for w in self.works)
        gpu = sum(self.gpu_seconds(w) or 0 for w in self.works)
        unknown = sum(1 for w in self.works if w.engine is None and w.count)
        missing = f" (+{unknown} rows not estimated)" if unknown else ""
        disk = sum(w.cache_bytes for w in self.works)
        size = sum(b or 0 for b in self.downloads.values())
        down = (f"download {len(self.downloads)} model(s), {_bytes(size)}" if self.downloads
                else "no downloads")
        here = f"{_duration(cpu)} here" if self.rates else "not measured here"
        return (f"plan {self.chapter}/{self.profile}: {counts}; {number(tokens)} tokens; estimated "
                f"{here}, {_duration(gpu)} on a GPU at an assumed "
                f"{self.gpu_flops / 1e12:g} TFLOP/s{missing}; caches {_bytes(disk)}; {down}")

    def render(self) -> str:
        """The table: one line per row, then the downloads, the rates and the summary."""
        lines = [f"{'nb':3s} {'model':28s} {'what':48s} {'count':>18s} {'tokens':>8s} "
                 f"{'here':>8s} {'GPU':>8s} {'cache':>8s}"]
        for w in self.works:
            cpu, gpu = self.cpu_seconds(w), self.gpu_seconds(w)
            lines.append(
                f"{w.notebook[:3]:3s} {_short(w.model or '-', 28):28s} {w.what[:48]:48s} "
                f"{number(w.count) + ' ' + _unit(w.unit):>18s} {number(w.tokens):>8s} "
                f"{_duration(cpu):>8s} {_duration(gpu):>8s} {_bytes(w.cache_bytes):>8s}"
                + (f"  ({w.note})" if w.note else ""))
        if self.downloads:
            lines.append("to download from the Hugging Face hub: " + ", ".join(
                f"{m} ({_bytes(b) if b else 'size unknown'})" for m, b in self.downloads.items()))
        if self.rates:
            lines.append("estimates: FLOPs / this machine's rate measured just now on small "
                         "random-init workloads (" + ", ".join(
                             f"{p} {r / 1e9:.1f}" for p, r in
                             {PROBE[e]: r for e, r in self.rates.items()}.items())
                         + " GFLOP/s); GPU: FLOPs / an assumed "
                         f"{self.gpu_flops / 1e12:g} TFLOP/s, a lower bound for LSTMs and "
                         "decoding (gensim, counting and GloVe stay on the CPU)")
        lines.append(self.summary())
        return "\n".join(lines)


def hub_models(names: Iterable[str]) -> list[str]:
    """The models among ``names`` that are neither registry models nor local folders."""
    return [n for n in dict.fromkeys(names)
            if n not in resources.names("model") and not Path(n).is_dir()]


def downloads(names: Iterable[str]) -> dict[str, int | None]:
    """The hub models among ``names`` (:func:`hub_models`) that are not in the Hugging Face
    cache either, with their download size where known."""
    from huggingface_hub import try_to_load_from_cache

    out = {}
    for name in hub_models(names):
        if not isinstance(try_to_load_from_cache(name, "config.json"), str):
            size = model_size(name)
            out[name] = size.disk_bytes if size else None
    return out


def at_most(value, limit: int):
    """``value`` bounded by ``limit`` for a chapter's ``cap``: ``None`` (all) becomes ``limit``,
    0 stays 0, and a mapping (a per-corpus value) is bounded value by value.

    >>> at_most(None, 3), at_most(5, 3), at_most(0, 3), at_most({"ptb": 9, "un": 2}, 3)
    (3, 3, 0, {'ptb': 3, 'un': 2})
    """
    if isinstance(value, dict):
        return {k: at_most(v, limit) for k, v in value.items()}
    return limit if value is None else min(value, limit)


def chapter_plan(chapter: str, profile: str, params: dict[str, dict], *,
                 gpu_flops: float = GPU_FLOPS, measured: bool = True) -> Plan:
    """The :class:`Plan` of ``chapter`` with resolved ``params`` (``measured=False``: no rates,
    so no time on this machine)."""
    works = chapter_module(chapter).work(params)
    engines = sorted({w.engine for w in works if w.engine})
    rates = {e: measure(e) for e in engines} if measured else {}
    return Plan(chapter, profile, works, downloads(w.model for w in works if w.model), rates,
                gpu_flops)


# ---------------------------------------------------------------------------------- display

def number(x: float) -> str:
    """``x`` in three digits with k, M, G or T: ``number(2_840_000) == '2.84M'``."""
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.0f}"


def _bytes(b: float) -> str:
    for div, suffix in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if b >= div:
            return f"{b / div:.3g} {suffix}"
    return f"{b:.0f} B"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for div, suffix in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= div:
            return f"{seconds / div:.3g} {suffix}"
    return f"{seconds:.2g} s"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3):]


def _unit(unit: str) -> str:
    return {"sentences": "sent.", "masked forwards": "masked fw", "training steps": "steps",
            "generated tokens": "gen. tok", "GloVe updates": "updates"}.get(unit, unit)
