"""Word-level LSTM language model with the gender-subspace regulariser of Bordia & Bowman (2019).

The paper trains a 3-layer AWD-LSTM (section 3.2) with tied input/output embeddings and adds

    L_B = lambda * ||N B||_F^2                                            (section 3.4)

to the loss, where N holds the embeddings of all words outside the defining pairs and B is the
gender subspace: the first k right singular vectors of C, the stack of (u_i - v_i) / 2 over the
defining pairs (u_i, v_i) present in the vocabulary, with k the smallest number capturing 50% of
the variance (squared singular values). B and N are recomputed from the current embeddings at
every batch, and the gradient flows through the SVD, as in the authors' code.

``mode="as-coded"`` follows the authors' ``main.py`` (BordiaS/language-model-bias): k is always 1
(their ``cumul[cumul >= ratio].min(dim=0)`` returns an index into the filtered array), and
embedding rows are L2-normalised before C and N are formed (their default ``norm=True``).

This is a plain LSTM (no weight drop, AR/TAR or ASGD): a small, fast stand-in for AWD-LSTM.

>>> vocab = Vocab.build("he is a doctor <eos> she is a nurse <eos>".split())
>>> model = LSTMLanguageModel(len(vocab), LMConfig(layers=1, hidden=8, emb=8))
>>> reg = BiasRegularizer.from_vocab(vocab, [("he", "she")], lam=0.1)
>>> bool(reg(model.encoder.weight) >= 0)
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from tqdm.auto import tqdm

EOS, UNK = "<eos>", "<unk>"
REG_MODES = ("paper", "as-coded")
Hidden = list[tuple[torch.Tensor, torch.Tensor]]


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


def read_lm_corpus(path: str | Path) -> list[str]:
    """Tokens of a PTB/WikiText-style file with ``<eos>`` after every line.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write(" a <unk> b \\n \\n")
    >>> read_lm_corpus(f.name); os.unlink(f.name)
    ['a', '<unk>', 'b', '<eos>', '<eos>']
    """
    with open(path, encoding="utf-8") as f:
        return [tok for line in f for tok in (*line.split(), EOS)]


class LSTMLanguageModel(nn.Module):
    """Embedding -> stacked LSTM -> tied decoder. The last layer has ``emb`` units for tying."""

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
        self.decoder.weight = self.encoder.weight
        self.drop = nn.Dropout(config.dropout)

    def init_hidden(self, batch: int) -> Hidden:
        return [
            (torch.zeros(1, batch, r.hidden_size), torch.zeros(1, batch, r.hidden_size))
            for r in self.rnns
        ]

    def forward(self, ids: torch.Tensor, hidden: Hidden) -> tuple[torch.Tensor, Hidden]:
        """``ids`` is [time, batch]; returns logits [time, batch, vocab] and the new state."""
        x = self.drop(self.encoder(ids))
        new_hidden = []
        for rnn, h in zip(self.rnns, hidden, strict=True):
            x, h = rnn(x, h)
            x = self.drop(x)
            new_hidden.append(h)
        return self.decoder(x), new_hidden


def choose_k(singular_values: torch.Tensor, var_ratio: float = 0.5, mode: str = "paper") -> int:
    """Number of singular vectors needed to capture ``var_ratio`` of the variance (sum of s**2).

    >>> s = torch.tensor([3.0, 2.0, 1.0, 1.0])  # variance shares 9/15, 4/15, 1/15, 1/15
    >>> choose_k(s, 0.5), choose_k(s, 0.8), choose_k(s, 0.8, mode="as-coded")
    (1, 2, 1)
    """
    _check_mode(mode)
    if not 0 < var_ratio <= 1:
        raise ValueError(f"var_ratio must be in (0, 1], got {var_ratio}")
    var = singular_values.detach() ** 2
    cumulative = torch.cumsum(var, 0) / var.sum()
    reached = cumulative >= var_ratio - 1e-6  # tolerance: cumsum may end at 0.99999994
    if mode == "as-coded":  # the authors' argmin indexes the filtered array: always 0, so k = 1
        return int(torch.argmin(cumulative[reached])) + 1
    return int(torch.nonzero(reached)[0]) + 1


def gender_subspace(
    weight: torch.Tensor, pair_ids: torch.Tensor, var_ratio: float = 0.5, mode: str = "paper"
) -> torch.Tensor:
    """B = V[:, :k] from the SVD of C = stack((u_i - v_i) / 2); shape [emb, k], differentiable.

    >>> w = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    >>> gender_subspace(w, torch.tensor([[0, 1], [2, 3]])).abs().tolist()
    [[1.0], [0.0]]
    """
    c = (weight[pair_ids[:, 0]] - weight[pair_ids[:, 1]]) / 2
    _, s, vh = torch.linalg.svd(c, full_matrices=False)
    return vh[: choose_k(s, var_ratio, mode)].T


@dataclass
class BiasRegularizer:
    """L_B = lam * ||N B||_F^2 on an embedding matrix; call it on ``model.encoder.weight``.

    ``pair_ids`` [n, 2] index the defining pairs, ``neutral_ids`` the rows of N. ``normalize``
    (L2-normalise rows first) defaults to False in paper mode and True in as-coded mode.
    """

    pair_ids: torch.Tensor
    neutral_ids: torch.Tensor
    lam: float
    var_ratio: float = 0.5
    mode: str = "paper"
    normalize: bool | None = None

    def __post_init__(self):
        _check_mode(self.mode)
        if self.pair_ids.ndim != 2 or self.pair_ids.shape[1] != 2 or len(self.pair_ids) == 0:
            raise ValueError("pair_ids must be a non-empty [n, 2] tensor")
        if len(self.neutral_ids) == 0:
            raise ValueError("neutral_ids is empty")
        if self.normalize is None:
            self.normalize = self.mode == "as-coded"

    @classmethod
    def from_vocab(
        cls, vocab: Vocab, pairs: Iterable[tuple[str, str]], lam: float, **kwargs
    ) -> BiasRegularizer:
        """Keep the pairs with both words in the vocabulary (section 3.4); N = all other words."""
        pairs = [(a, b) for a, b in pairs if a in vocab and b in vocab]
        if not pairs:
            raise ValueError("no defining pair has both words in the vocabulary")
        gendered = {w for p in pairs for w in p}
        neutral = [i for i, t in enumerate(vocab.itos) if t not in gendered]
        pair_ids = torch.tensor([[vocab.stoi[a], vocab.stoi[b]] for a, b in pairs])
        return cls(pair_ids, torch.tensor(neutral, dtype=torch.long), lam, **kwargs)

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            weight = weight / weight.norm(dim=1, keepdim=True)
        b = gender_subspace(weight, self.pair_ids, self.var_ratio, self.mode)
        return self.lam * (weight[self.neutral_ids] @ b).pow(2).sum()


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
    regularizer: BiasRegularizer | None = None,
    valid_ids: torch.Tensor | None = None,
    progress: bool = True,
) -> list[dict[str, float]]:
    """Truncated-BPTT training; one dict per epoch (mean losses, validation perplexity)."""
    data = batchify(train_ids, config.batch)
    optimizer = _optimizer(model, config)
    history = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        for epoch in range(1, config.epochs + 1):
            stats = _train_epoch(model, data, config, optimizer, regularizer, progress, epoch)
            if valid_ids is not None:
                stats["valid_ppl"] = perplexity(model, valid_ids, bptt=config.bptt)
            history.append({"epoch": epoch, **stats})
    return history


def perplexity(
    model: LSTMLanguageModel, ids: torch.Tensor, *, batch: int = 10, bptt: int = 35
) -> float:
    """exp(mean token cross-entropy) over ``ids``, evaluated in ``batch`` parallel streams."""
    data = batchify(ids, batch)
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
    random seeds", 500 words each); every next word is drawn from softmax(logits / temperature).
    """
    if temperature <= 0 or n_seeds < 1 or length < 1:
        raise ValueError("need temperature > 0, n_seeds >= 1 and length >= 1")
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    x = torch.randint(len(vocab), (1, n_seeds), generator=gen)
    hidden, out = model.init_hidden(n_seeds), []
    with torch.no_grad():
        for _ in range(length):
            logits, hidden = model(x, hidden)
            probs = torch.softmax(logits[-1] / temperature, dim=-1)
            x = torch.multinomial(probs, 1, generator=gen).t()
            out.append(x[0])
    return [vocab.decode(col) for col in torch.stack(out, 1)]


def _check_mode(mode: str) -> None:
    if mode not in REG_MODES:
        raise ValueError(f"mode must be one of {REG_MODES}, got {mode!r}")


def _optimizer(model: nn.Module, config: LMConfig) -> torch.optim.Optimizer:
    if config.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=config.lr)
    if config.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=config.lr)
    raise ValueError(f"optimizer must be 'sgd' or 'adam', got {config.optimizer!r}")


def _train_epoch(
    model: LSTMLanguageModel,
    data: torch.Tensor,
    config: LMConfig,
    optimizer: torch.optim.Optimizer,
    regularizer: BiasRegularizer | None,
    progress: bool,
    epoch: int,
) -> dict[str, float]:
    model.train()
    hidden = model.init_hidden(data.shape[1])
    starts = range(0, len(data) - 1, config.bptt)
    lm_total = bias_total = 0.0
    for i in tqdm(starts, desc=f"epoch {epoch}", disable=not progress, leave=False):
        x, y = data[i : i + config.bptt], data[i + 1 : i + 1 + config.bptt]
        hidden = [(h.detach(), c.detach()) for h, c in hidden]  # truncate BPTT here
        logits, hidden = model(x[: len(y)], hidden)
        lm_loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        bias_loss = regularizer(model.encoder.weight) if regularizer else torch.zeros(())
        optimizer.zero_grad()
        (lm_loss + bias_loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        lm_total += lm_loss.item()
        bias_total += bias_loss.item()
    return {"train_loss": lm_total / len(starts), "bias_loss": bias_total / len(starts)}
