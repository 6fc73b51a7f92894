"""The lambda sweep of notebook 02: one LSTM language model per corpus and lambda, and its text.

For each corpus (:func:`prepare`): the training stream with ``<eos>`` at every line, a vocabulary
of the ``vocab_size`` most frequent words, the held-out stream, the defining pairs with both words
in the vocabulary, and the training text without ``<eos>`` for the co-occurrence scores.

Then (:func:`run`), for every training seed of ``seeds``: a warm-up with lambda = 0 on the first
``warmup_tokens`` tokens of the stream (:func:`warm_up`), shared by that seed's lambdas, and for
every lambda a model that continues from it on the next ``sweep_tokens`` tokens (wrapping round to
the start: :func:`stream_slice`), with the regulariser of :mod:`biasbook.mitigation.subspace` when
lambda > 0 (:func:`train_lambda`). The lambda = 0 model gets the same extra training without it,
so every lambda sees the same data in the same order. The seed sets the LSTM's initialisation and
dropout and the sampling of the texts, so the spread over seeds is the spread of the whole
experiment, training included. After training: the held-out perplexity, the mean squared cosine
of the neutral words' normalised input (and output) embeddings with the gender direction, and
``generation["n_seeds"]`` texts of ``generation["length"]`` sampled words (:func:`generate_texts`,
i.e. :func:`biasbook.training.lstm.generate` with the training seed).

:func:`tying_runs` compares, on one corpus and lambda from the first seed's warm-up, the tied model
of the sweep with untied ones whose regulariser acts on the input, the output or both embeddings
(the paper's section 3.4 comparison), each beside an untied lambda = 0 model.

Models train and generate on ``device`` (``cpu``, ``cuda``, or ``auto``: CUDA when available);
what is stored does not depend on it, except that a GPU's arithmetic and random numbers differ,
so the device is part of every cache key.

Every warm-up, trained model and generated corpus is stored with :mod:`biasbook.store` under
``cache_dir()/lm-gender-bias/<stage>/``, keyed by its inputs (the content of the token streams,
vocabulary and defining pairs, or the fingerprint of the model that generates), its parameters and
:data:`CODE_VERSION`: an interrupted sweep resumes at the first lambda it had not finished, and a
changed parameter retrains only what it changes. Every trained model carries the fingerprint of its
weights (:func:`biasbook.models.fingerprint`); ``rec.model(lm)`` records it.

What the sweep is asked to do, corpus by corpus, is :class:`.sweep_settings.Settings`.

>>> stream_slice(torch.arange(5), 3, 4).tolist()
[3, 4, 0, 1]
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from tqdm.auto import tqdm

from biasbook import store
from biasbook.chapters.lm_gender_bias import corpora
from biasbook.chapters.lm_gender_bias.data import defining_pairs
from biasbook.chapters.lm_gender_bias.sweep_settings import Settings
from biasbook.mitigation.subspace import BiasRegularizer
from biasbook.models import fingerprint
from biasbook.processes import in_processes
from biasbook.training.lstm import (
    EOS,
    LMConfig,
    LSTMLanguageModel,
    Vocab,
    generate,
    perplexity,
    resolve_device,
    train_lm,
)

# Bump when a change to this module, the LSTM, its training or generation changes what is stored.
CODE_VERSION = 2
CACHE = "lm-gender-bias"
@dataclass
class LMCorpus:
    """A corpus ready for training: ids, vocabulary, pairs, and its text for the bias scores.

    Used in: lm-gender-bias/02.
    """

    name: str
    vocab: Vocab
    ids: torch.Tensor
    held_ids: torch.Tensor
    pairs: list[tuple[str, str]]  # defining pairs with both words in the vocabulary
    gender: tuple[frozenset[str], frozenset[str]]  # the whole defining set, for the scores
    bias_docs: list[list[str]]  # the training documents without <eos>
    key: str = ""  # content key of the streams, the vocabulary and the pairs

    def __post_init__(self):
        if not self.key:
            self.key = store.content_key(self.ids.numpy(), self.held_ids.numpy(),
                                         self.vocab.itos, self.pairs)


@dataclass
class TrainedLM:
    """A trained LSTM: ``name``, ``kind`` and ``fingerprint`` are what ``rec.model`` records.

    Used in: lm-gender-bias/02.
    """

    name: str
    model: LSTMLanguageModel
    history: list[dict]  # per epoch: train_loss, bias_loss
    key: str  # the cache key it is stored under
    kind: str = "word-lstm"
    fingerprint: str = field(init=False)

    def __post_init__(self):
        self.fingerprint = fingerprint(self.model)


@dataclass
class LambdaRun:
    """One lambda's model, its held-out perplexity, gender projection and generated texts.

    Used in: lm-gender-bias/02.
    """

    corpus: str
    lam: float
    lm: TrainedLM
    ppl: float
    cos2: float  # mean squared cosine of the neutral words with the gender direction
    texts: list[list[str]]
    seed: int = 0
    cos2_out: float = float("nan")  # the same for the output embeddings (= cos2 when tied)


@dataclass
class Sweep:
    """Per training seed, every corpus's warm-up (``None`` without one) and every (corpus,
    lambda) run, in order; ``runs`` holds each corpus's first seed (the detailed tables).

    Used in: lm-gender-bias/02.
    """

    warmups: dict[int, dict[str, TrainedLM | None]]
    by_seed: dict[int, dict[tuple[str, float], LambdaRun]]

    @property
    def runs(self) -> dict[tuple[str, float], LambdaRun]:
        out: dict[tuple[str, float], LambdaRun] = {}
        for runs in self.by_seed.values():
            for key, run in runs.items():
                out.setdefault(key, run)
        return out

    def models(self) -> list[TrainedLM]:
        """Every trained model: the warm-ups, then one per run."""
        return [m for w in self.warmups.values() for m in w.values() if m] + [
            r.lm for runs in self.by_seed.values() for r in runs.values()]

    @property
    def lambdas(self) -> dict[str, list[float]]:
        """Each corpus's lambdas, in the order they were run."""
        out: dict[str, list[float]] = {}
        for name, lam in self.runs:
            out.setdefault(name, []).append(lam)
        return out


def prepare(name: str, settings: Settings) -> LMCorpus:
    """Read corpus ``name`` (:func:`.corpora.lm_text`) and encode it for training.

    Used in: lm-gender-bias/02.
    """
    train_docs, held = corpora.lm_text(
        name, train_tokens=settings.value("train_tokens", name),
        valid_tokens=settings.value("valid_tokens", name),
        un_train_speeches=settings.un_train_speeches,
        un_valid_speeches=settings.un_valid_speeches, un_seed=settings.un_seed)
    stream = [t for doc in train_docs for t in doc]
    vocab = Vocab.build(stream, max_size=settings.value("vocab_size", name))
    all_pairs = defining_pairs(corpora.corpus(name).pairs)
    return LMCorpus(
        name=name, vocab=vocab, ids=vocab.encode(stream), held_ids=vocab.encode(held),
        pairs=[p for p in all_pairs if p[0] in vocab and p[1] in vocab],
        gender=corpora.gender(name),
        bias_docs=[[t for t in doc if t != EOS] for doc in train_docs])


def stream_slice(ids: torch.Tensor, start: int, n: int) -> torch.Tensor:
    """``n`` tokens of the stream from position ``start``, wrapping round (several epochs).

    Used in: lm-gender-bias/02.
    """
    reps = (start + n) // len(ids) + 1
    return ids.repeat(reps)[start : start + n]


def warm_up(data: LMCorpus, settings: Settings, seed: int | None = None, *,
            progress: bool = True) -> TrainedLM | None:
    """The lambda = 0 model after ``warmup_tokens`` tokens (``None`` when that is 0), shared by
    the lambdas of training seed ``seed`` (default: the ``lstm`` setting's).

    Used in: lm-gender-bias/02.
    """
    config, n = settings.config(seed), settings.value("warmup_tokens", data.name)
    if not n:
        return None
    device = resolve_device(settings.device)
    key = store.content_key("warmup", data.key, asdict(config), n, str(device), CODE_VERSION,
                            torch.__version__)

    def compute():
        model = LSTMLanguageModel(len(data.vocab), config).to(device)
        history = train_lm(model, stream_slice(data.ids, 0, n), config, progress=progress)
        return _pack(model, history)

    arrays = store.cached_arrays(f"{CACHE}/warmup", key, compute)
    return _unpack(arrays, f"lstm/{data.name}/seed={config.seed}/warm-up", key,
                   len(data.vocab), config)


def gender_probe(data: LMCorpus, reg_mode: str) -> BiasRegularizer:
    """The regulariser at lambda = 1: measures the embeddings' gender projection.

    Used in: lm-gender-bias/02.
    """
    return BiasRegularizer.from_vocab(data.vocab, data.pairs, lam=1.0, mode=reg_mode)


def mean_cos2(model: LSTMLanguageModel, probe: BiasRegularizer, which: str = "input") -> float:
    """``||N B||_F^2 / |N|`` on the model's ``input`` (or ``output``) embeddings: with
    ``as-coded`` (normalised rows, k = 1), the mean squared cosine of the neutral words with the
    gender direction.

    Used in: lm-gender-bias/02.
    """
    weight = model.encoder.weight if which == "input" else model.decoder.weight
    with torch.no_grad():
        return float(probe(weight.cpu())) / len(probe.neutral_ids)


def train_lambda(data: LMCorpus, lam: float, settings: Settings, warm: TrainedLM | None, *,
                 seed: int | None = None, tied: bool = True, debias: str = "input",
                 progress: bool = True) -> tuple[TrainedLM, dict[str, float]]:
    """(model, {ppl, cos2, cos2_out}) after ``sweep_tokens`` more tokens at ``lam``: held-out
    perplexity and the mean cos^2 of the input and output embeddings. ``tied=False`` unties the
    warm-up's embedding into two copies and regularises the ``debias`` ones.

    Used in: lm-gender-bias/02.
    """
    config, lam = settings.config(seed, tied=tied, debias=debias), float(lam)
    n_warm = settings.value("warmup_tokens", data.name) or 0
    n_sweep = settings.value("sweep_tokens", data.name)
    device = resolve_device(settings.device)
    key = store.content_key("lambda", data.key, asdict(config), n_warm, n_sweep, lam,
                            settings.reg_mode, str(device), CODE_VERSION, torch.__version__)

    def compute():
        model = LSTMLanguageModel(len(data.vocab), config)
        if warm is not None:  # untied: encoder and decoder both start from the tied matrix
            model.load_state_dict(warm.model.state_dict())
        model.to(device)
        reg = (BiasRegularizer.from_vocab(data.vocab, data.pairs, lam=lam, mode=settings.reg_mode)
               if lam > 0 else None)
        history = train_lm(model, stream_slice(data.ids, n_warm, n_sweep), config,
                           regularizer=reg, progress=progress)
        probe = gender_probe(data, settings.reg_mode)
        return _pack(model, history, ppl=perplexity(model, data.held_ids, bptt=config.bptt),
                     cos2=mean_cos2(model, probe), cos2_out=mean_cos2(model, probe, "output"))

    arrays = store.cached_arrays(f"{CACHE}/lambda", key, compute)
    name = f"lstm/{data.name}/seed={config.seed}/lambda={lam:g}"
    if not tied:
        name += f"/untied-{debias}"
    lm = _unpack(arrays, name, key, len(data.vocab), config)
    return lm, {k: float(arrays[k]) for k in ("ppl", "cos2", "cos2_out")}


def generate_texts(lm: TrainedLM, vocab: Vocab, n_seeds: int, length: int,
                   seed: int = 0, device: str = "cpu") -> list[list[str]]:
    """:func:`biasbook.training.lstm.generate` on ``device``, stored by the model's
    fingerprint.

    Used in: lm-gender-bias/02.
    """
    device = resolve_device(device)
    key = store.content_key("generated", lm.fingerprint, vocab.itos, n_seeds, length, seed,
                            str(device), CODE_VERSION, torch.__version__)

    def compute():
        texts = generate(lm.model.to(device), vocab, n_seeds=n_seeds, length=length, seed=seed)
        lm.model.cpu()
        return {"ids": torch.stack([vocab.encode(t) for t in texts]).numpy()}

    ids = store.cached_arrays(f"{CACHE}/generated", key, compute)["ids"]
    return [vocab.decode(row) for row in ids]


def lambda_run(data: LMCorpus, lam: float, settings: Settings, warm: TrainedLM | None, *,
               seed: int, progress: bool = True, **untie) -> LambdaRun:
    """:func:`train_lambda`, then the model's texts (generated with the training seed).

    Used in: lm-gender-bias/02.
    """
    lm, stats = train_lambda(data, lam, settings, warm, seed=seed, progress=progress, **untie)
    texts = generate_texts(lm, data.vocab, settings.n_seeds, settings.gen_length, seed=seed,
                           device=settings.device)
    return LambdaRun(data.name, float(lam), lm, stats["ppl"], stats["cos2"], texts, seed,
                     stats["cos2_out"])


def run(data: dict[str, LMCorpus], settings: Settings, *, workers: int = 1,
        progress: bool = True) -> Sweep:
    """For every corpus of ``data`` and each of its training seeds: warm up, then train and
    generate for each of its lambdas. With ``workers > 1``, that many processes train first
    (:func:`train_in_processes`) and this loop reads their models back.

    Used in: lm-gender-bias/02.
    """
    warmups, by_seed = {}, {}
    jobs = [(seed, name, lam) for name in data for seed in settings.value("seeds", name)
            for lam in settings.value("lambdas", name)]
    if workers > 1:
        train_in_processes(data, settings, workers, progress=progress)
    for seed, name, lam in tqdm(jobs, desc="λ sweep (train + generate)", disable=not progress):
        if name not in warmups.setdefault(seed, {}):
            warmups[seed][name] = warm_up(data[name], settings, seed, progress=progress)
        by_seed.setdefault(seed, {})[name, lam] = lambda_run(
            data[name], lam, settings, warmups[seed][name], seed=seed, progress=progress)
    return Sweep(warmups, by_seed)


def train_in_processes(data: dict[str, LMCorpus], settings: Settings, workers: int, *,
                       progress: bool = True) -> None:
    """Every model of :func:`run` and :func:`tying_runs` and its texts, trained by ``workers``
    processes into the cache (:func:`biasbook.processes.in_processes`): the warm-ups first, then
    the lambdas. One small LSTM trains on one core, so this uses them all; each worker has this
    process's torch threads, so the models are the same as trained here.

    Used in: lm-gender-bias/02.
    """
    slim = {name: replace(d, bias_docs=[]) for name, d in data.items()}  # what training reads
    seeds = {name: settings.value("seeds", name) for name in data}
    warm = [(slim[name], settings, seed) for name in data for seed in seeds[name]
            if settings.value("warmup_tokens", name)]
    runs = [(slim[name], settings, seed, lam, {}) for name in data for seed in seeds[name]
            for lam in settings.value("lambdas", name)]
    if settings.tying is not None and settings.tying["corpus"] in data:
        name, lam = settings.tying["corpus"], float(settings.tying["lam"])
        runs += [(slim[name], settings, seeds[name][0], lam_, untie)
                 for _, lam_, untie in _untied_jobs(lam)]
    threads = torch.get_num_threads()
    in_processes(_warm_up_job, warm, workers, torch_threads=threads, desc="warm-ups",
                 progress=progress)
    in_processes(_lambda_job, runs, workers, torch_threads=threads, desc="λ models",
                 progress=progress)


def _warm_up_job(data: LMCorpus, settings: Settings, seed: int) -> None:
    """:func:`warm_up` in a worker process; the model stays in the cache, not sent back."""
    warm_up(data, settings, seed, progress=False)


def _lambda_job(data: LMCorpus, settings: Settings, seed: int, lam: float, untie: dict) -> None:
    """:func:`lambda_run` in a worker process, from its seed's (cached) warm-up."""
    warm = warm_up(data, settings, seed, progress=False)
    lambda_run(data, lam, settings, warm, seed=seed, progress=False, **untie)


def _untied_jobs(lam: float) -> list[tuple[str, float, dict]]:
    """The untied models of :func:`tying_runs`: (variant, lambda, options of
    :func:`train_lambda`)."""
    return [("untied", 0.0, {"tied": False}),
            *((f"untied, {w}", lam, {"tied": False, "debias": w})
              for w in ("input", "output", "both"))]


def tying_runs(data: dict[str, LMCorpus], settings: Settings, sweep: Sweep, *,
               progress: bool = True) -> dict[tuple[str, float], LambdaRun]:
    """The tied sweep model at ``tying["lam"]`` (and lambda = 0) of the first seed beside
    untied models regularised on the input, the output or both embeddings, and an untied
    lambda = 0 model, all from the same warm-up: ``{(variant, lam): run}`` with variants
    ``tied``, ``untied, input``, ``untied, output``, ``untied, both``. ``{}`` without
    ``tying``.

    Used in: lm-gender-bias/02.
    """
    if settings.tying is None:
        return {}
    name, lam = settings.tying["corpus"], float(settings.tying["lam"])
    seed, d = settings.value("seeds", name)[0], data[name]
    warm = sweep.warmups[seed][name]
    jobs = [("tied", 0.0, {}), ("tied", lam, {}), *_untied_jobs(lam)]
    out = {}
    for variant, lam_, untie in tqdm(jobs, desc="tied vs untied", disable=not progress):
        done = sweep.by_seed[seed].get((name, lam_)) if variant == "tied" else None
        out[variant, lam_] = done or lambda_run(d, lam_, settings, warm, seed=seed,
                                                progress=progress, **untie)
    return out


def _pack(model: LSTMLanguageModel, history: list[dict], **scalars: float) -> dict:
    """A model's weights, training history and scalars as arrays for :func:`store.cached_arrays`.
    """
    arrays = {f"state.{k}": v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    arrays["history"] = np.array(json.dumps(history))
    arrays.update({k: np.array(v, dtype=np.float64) for k, v in scalars.items()})
    return arrays


def _unpack(arrays: dict, name: str, key: str, n_tokens: int, config: LMConfig) -> TrainedLM:
    model = LSTMLanguageModel(n_tokens, config)
    model.load_state_dict({k.removeprefix("state."): torch.from_numpy(v)
                           for k, v in arrays.items() if k.startswith("state.")})
    return TrainedLM(name, model, json.loads(str(arrays["history"])), key)
