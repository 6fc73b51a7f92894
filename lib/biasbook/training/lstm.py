"""A word-level LSTM language model, trained with an optional embedding regulariser.

The model of the Bordia & Bowman (2019) chapter: the paper trains a 3-layer AWD-LSTM (section
3.2); this is a plain LSTM (no weight drop, AR/TAR or ASGD), a small, fast stand-in. Input and
output embeddings are tied by default (``LMConfig.tied``): the paper does not say so, the
authors' ``main.py`` sets ``args.tied = True``. With tying, one matrix is both, so a penalty on
the "input" embeddings also acts on the output ones; ``tied=False`` gives the decoder its own
matrix, and ``LMConfig.debias`` picks which embeddings :func:`train_lm` regularises (``input``,
``output`` or ``both``: the paper's section 3.4 comparison), e.g. with the gender-subspace term
of :mod:`biasbook.mitigation.subspace`. :func:`perplexity` and :func:`generate` evaluate it.

Everything runs on the device the model is on (``model.to("cuda")``; CPU by default): inputs,
hidden states and the sampling generator follow the model (:func:`resolve_device` reads
``"auto"``).

>>> vocab = Vocab.build("he is a doctor <eos> she is a nurse <eos>".split())
>>> model = LSTMLanguageModel(len(vocab), LMConfig(layers=1, hidden=8, emb=8))
>>> model(vocab.encode(["he", "is"]).view(2, 1), model.init_hidden(1))[0].shape
torch.Size([2, 1, 8])
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from biasbook import validate
from biasbook.store import Checkpoint
from biasbook.training.fit import fit

EOS, UNK = "<eos>", "<unk>"
DEBIAS = ("input", "output", "both")
Hidden = list[tuple[torch.Tensor, torch.Tensor]]
#: A penalty on an embedding matrix, added to the loss (e.g. mitigation.subspace.BiasRegularizer).
Regularizer = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class LMConfig:
    """Model and training hyper-parameters (the paper's: 3 layers, 1150 hidden, 400 emb, lr 30)."""

    layers: int = 2
    hidden: int = 200
    emb: int = 200
    dropout: float = 0.2
    bptt: int = 35
    batch: int = 20
    lr: float = 20.0
    epochs: int = 1
    clip: float = 0.25
    optimizer: str = "sgd"
    seed: int = 0
    tied: bool = True  # the authors' main.py (args.tied = True); the paper is silent
    debias: str = "input"  # which embeddings a regulariser acts on: input, output or both

    def __post_init__(self):
        validate.choice("debias", self.debias, DEBIAS)
        if self.tied and self.debias != "input":
            raise ValueError(f"debias={self.debias!r} needs tied=False: with tied weights the "
                             "input and output embeddings are one matrix (use debias='input')")


class Vocab:
    """Token <-> id mapping; ``<unk>`` and ``<eos>`` always present (ids 0 and 1).

    >>> v = Vocab.build(["b", "a", "b"])
    >>> v.itos, v.encode(["b", "zzz"]).tolist(), v.decode([2, 1])
    (['<unk>', '<eos>', 'b', 'a'], [2, 0], ['b', '<eos>'])
    """

    def __init__(self, itos: Sequence[str]):
        self.itos = list(itos)
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos) or UNK not in self.stoi or EOS not in self.stoi:
            raise ValueError(f"tokens must be unique and include {UNK} and {EOS}")

    @classmethod
    def build(cls, tokens: Iterable[str], max_size: int | None = None) -> Vocab:
        """Most frequent first (ties alphabetical), capped at ``max_size`` including specials."""
        counts = Counter(t for t in tokens if t not in (UNK, EOS))
        ranked = sorted(counts, key=lambda t: (-counts[t], t))
        keep = None if max_size is None else max(max_size - 2, 0)
        return cls([UNK, EOS, *ranked[:keep]])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(self, tokens: Iterable[str]) -> torch.Tensor:
        """Ids as a LongTensor; unknown tokens map to ``<unk>``."""
        unk = self.stoi[UNK]
        return torch.tensor([self.stoi.get(t, unk) for t in tokens], dtype=torch.long)

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[int(i)] for i in ids]


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``"auto"``: CUDA when available, else the CPU; ``None``: the CPU; else ``device`` itself.

    >>> resolve_device(None), resolve_device("cpu")
    (device(type='cpu'), device(type='cpu'))
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device or "cpu")

class LSTMLanguageModel(nn.Module):
    """Embedding -> stacked LSTM -> decoder, tied to the embedding unless ``config.tied`` is
    False. The last layer has ``emb`` units, so tying is possible either way.

    >>> model = LSTMLanguageModel(10, LMConfig(layers=1, hidden=4, emb=4, tied=False))
    >>> model.decoder.weight is model.encoder.weight, len(model.debiased("both"))
    (False, 2)
    """

    def __init__(self, n_tokens: int, config: LMConfig):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.encoder = nn.Embedding(n_tokens, config.emb)
            sizes = [config.emb] + [config.hidden] * (config.layers - 1) + [config.emb]
            pairs = zip(sizes[:-1], sizes[1:], strict=True)
            self.rnns = nn.ModuleList(nn.LSTM(a, b) for a, b in pairs)
            self.decoder = nn.Linear(config.emb, n_tokens)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            if not config.tied:
                nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        if config.tied:
            self.decoder.weight = self.encoder.weight
        self.drop = nn.Dropout(config.dropout)

    @property
    def device(self) -> torch.device:
        return self.encoder.weight.device

    @property
    def tied(self) -> bool:
        return self.decoder.weight is self.encoder.weight

    def debiased(self, which: str = "input") -> list[torch.Tensor]:
        """The embedding matrices a regulariser acts on: ``input``, ``output`` or ``both``."""
        validate.choice("which", which, DEBIAS)
        if self.tied and which != "input":
            raise ValueError("tied weights: input and output embeddings are one matrix")
        return {"input": [self.encoder.weight], "output": [self.decoder.weight],
                "both": [self.encoder.weight, self.decoder.weight]}[which]

    def init_hidden(self, batch: int) -> Hidden:
        """Zero (h, c) states of every layer for ``batch`` parallel streams."""
        shapes = [(1, batch, r.hidden_size) for r in self.rnns]
        return [(torch.zeros(s, device=self.device), torch.zeros(s, device=self.device))
                for s in shapes]

    def forward(self, ids: torch.Tensor, hidden: Hidden) -> tuple[torch.Tensor, Hidden]:
        """``ids`` is [time, batch]; returns logits [time, batch, vocab] and the new state."""
        x = self.drop(self.encoder(ids))
        new_hidden = []
        for rnn, h in zip(self.rnns, hidden, strict=True):
            x, h = rnn(x, h)
            x = self.drop(x)
            new_hidden.append(h)
        return self.decoder(x), new_hidden


def batchify(ids: torch.Tensor, batch: int) -> torch.Tensor:
    """Cut a 1-D id stream into ``batch`` columns: shape [len // batch, batch], tail dropped.

    >>> batchify(torch.arange(7), 2).tolist()
    [[0, 3], [1, 4], [2, 5]]
    """
    n = len(ids) // batch
    if n < 2:
        raise ValueError(f"{len(ids)} tokens are too few for batch size {batch}")
    return ids[: n * batch].view(batch, n).t().contiguous()


def train_lm(
    model: LSTMLanguageModel,
    train_ids: torch.Tensor,
    config: LMConfig,
    *,
    regularizer: Regularizer | None = None,
    valid_ids: torch.Tensor | None = None,
    checkpoint: Checkpoint | None = None,
    progress: bool = True,
) -> list[dict[str, float]]:
    """Truncated-BPTT training on the model's device with :func:`~biasbook.training.fit.fit`;
    one dict per epoch (mean losses, validation perplexity). A ``regularizer`` acts on
    ``model.debiased(config.debias)``. With a ``checkpoint`` an interrupted run resumes after its
    last epoch, with the weights and random state it had."""
    if config.tied != model.tied:
        raise ValueError(f"config.tied is {config.tied} but the model's weights are "
                         f"{'' if model.tied else 'un'}tied")
    bptt = _TruncatedBPTT(model, batchify(train_ids, config.batch).to(model.device), config,
                          regularizer, valid_ids)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return fit(model, bptt.step, bptt.windows, epochs=config.epochs,
                   optimiser=_optimizer(model, config), max_grad_norm=config.clip,
                   end_epoch=bptt.record, checkpoint=checkpoint, progress=progress)


def perplexity(
    model: LSTMLanguageModel, ids: torch.Tensor, *, batch: int = 10, bptt: int = 35
) -> float:
    """exp(mean token cross-entropy) over ``ids``, evaluated in ``batch`` parallel streams."""
    data = batchify(ids, batch).to(model.device)
    model.eval()
    hidden, total, count = model.init_hidden(batch), 0.0, 0
    with torch.no_grad():
        for i in range(0, len(data) - 1, bptt):
            x, y = data[i : i + bptt], data[i + 1 : i + 1 + bptt]
            logits, hidden = model(x[: len(y)], hidden)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")
            total += loss.item()
            count += y.numel()
    return math.exp(total / count)


def generate(
    model: LSTMLanguageModel,
    vocab: Vocab,
    *,
    n_seeds: int,
    length: int,
    temperature: float = 1.0,
    seed: int = 0,
) -> list[list[str]]:
    """``n_seeds`` texts of ``length`` sampled tokens each (the seed word itself not included).

    Each text starts from a seed word drawn uniformly from the vocabulary (section 3.4: "2000
    random seeds", 500 words each); every next word is drawn from softmax(logits / temperature)
    by :func:`sample_categorical`. All texts advance together, one batched step per token, on
    the model's device.
    """
    if temperature <= 0 or n_seeds < 1 or length < 1:
        raise ValueError("need temperature > 0, n_seeds >= 1 and length >= 1")
    gen = torch.Generator(device=model.device).manual_seed(seed)
    model.eval()
    x = torch.randint(len(vocab), (1, n_seeds), generator=gen, device=model.device)
    hidden, out = model.init_hidden(n_seeds), []
    with torch.no_grad():
        for _ in range(length):
            logits, hidden = model(x, hidden)
            x = sample_categorical(logits[-1], temperature, gen).view(1, -1)
            out.append(x[0])
    return [vocab.decode(col) for col in torch.stack(out, 1).cpu()]


def sample_categorical(logits: torch.Tensor, temperature: float = 1.0,
                       generator: torch.Generator | None = None) -> torch.Tensor:
    """One draw per row from softmax(logits / temperature), by inverting the cumulative sum.

    The same distribution as ``torch.multinomial(softmax(...), 1)``, several times faster on a
    CPU for large vocabularies (multinomial's general sampler dominates generation there). With
    ``u`` uniform in (0, total], the draw is the first index whose cumulative weight reaches
    ``u``, so a token of probability 0 is never drawn.

    >>> g = torch.Generator().manual_seed(0)
    >>> draws = sample_categorical(torch.tensor([[0.0, -math.inf, 0.0]]).expand(1000, 3), 1, g)
    >>> sorted(draws.unique().tolist()), round(float((draws == 0).float().mean()), 1)
    ([0, 2], 0.5)
    """
    weights = torch.exp((logits - logits.amax(-1, keepdim=True)) / temperature)
    cdf = torch.cumsum(weights, -1)
    u = (1 - torch.rand(len(cdf), 1, generator=generator, device=cdf.device)) * cdf[:, -1:]
    return torch.searchsorted(cdf, u).clamp_max_(cdf.shape[-1] - 1).squeeze(-1)


def _optimizer(model: nn.Module, config: LMConfig) -> torch.optim.Optimizer:
    optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    return optimizers[validate.choice("optimizer", config.optimizer, optimizers)](
        model.parameters(), lr=config.lr)


@dataclass
class _TruncatedBPTT:
    """The steps of :func:`train_lm`: windows of ``config.bptt`` time steps over ``data``'s
    columns, the hidden state carried from one window to the next (gradients cut between them)."""

    model: LSTMLanguageModel
    data: torch.Tensor
    config: LMConfig
    regularizer: Regularizer | None
    valid_ids: torch.Tensor | None
    hidden: Hidden | None = None

    def windows(self, epoch: int) -> range:
        self.hidden = self.model.init_hidden(self.data.shape[1])
        return range(0, len(self.data) - 1, self.config.bptt)

    def step(self, i: int) -> tuple[float, float]:
        x, y = self.data[i : i + self.config.bptt], self.data[i + 1 : i + 1 + self.config.bptt]
        hidden = [(h.detach(), c.detach()) for h, c in self.hidden]  # truncate BPTT here
        logits, self.hidden = self.model(x[: len(y)], hidden)
        lm_loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        bias_loss = (sum(self.regularizer(w) for w in self.model.debiased(self.config.debias))
                     if self.regularizer else torch.zeros((), device=self.model.device))
        (lm_loss + bias_loss).backward()
        return lm_loss.item(), bias_loss.item()

    def record(self, epoch: int, losses: list[tuple[float, float]]) -> dict[str, float]:
        lm_total = bias_total = 0.0
        for lm_loss, bias_loss in losses:  # summed in order: the recorded losses stay exact
            lm_total += lm_loss
            bias_total += bias_loss
        stats = {"epoch": epoch, "train_loss": lm_total / len(losses),
                 "bias_loss": bias_total / len(losses)}
        if self.valid_ids is not None:
            stats["valid_ppl"] = perplexity(self.model, self.valid_ids, bptt=self.config.bptt)
        return stats
