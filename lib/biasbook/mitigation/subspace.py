"""The gender-subspace regulariser of Bordia & Bowman (2019, section 3.4), for any embedding matrix.

    L_B = lambda * ||N B||_F^2

N holds the embeddings of all words outside the defining pairs and B is the gender subspace: the
first k right singular vectors of C, the stack of (u_i - v_i) / 2 over the defining pairs
(u_i, v_i) present in the vocabulary, with k the smallest number capturing 50% of the variance
(squared singular values). B and N are recomputed from the current embeddings at every call, and
the gradient flows through the SVD, as in the authors' code.

``mode="as-coded"`` follows the authors' ``main.py`` (BordiaS/language-model-bias): k is always 1
(their ``cumul[cumul >= ratio].min(dim=0)`` returns an index into the filtered array), and
embedding rows are L2-normalised before C and N are formed (their default ``norm=True``).

>>> from biasbook.training.lstm import Vocab
>>> vocab = Vocab.build("he is a doctor <eos> she is a nurse <eos>".split())
>>> reg = BiasRegularizer.from_vocab(vocab, [("he", "she")], lam=0.1)
>>> bool(reg(torch.randn(len(vocab), 8)) >= 0)
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from biasbook import validate

if TYPE_CHECKING:
    from biasbook.training.lstm import Vocab

def choose_k(singular_values: torch.Tensor, var_ratio: float = 0.5, mode: str = "paper") -> int:
    """Number of singular vectors needed to capture ``var_ratio`` of the variance (sum of s**2).

    >>> s = torch.tensor([3.0, 2.0, 1.0, 1.0])  # variance shares 9/15, 4/15, 1/15, 1/15
    >>> choose_k(s, 0.5), choose_k(s, 0.8), choose_k(s, 0.8, mode="as-coded")
    (1, 2, 1)
    """
    validate.choice("mode", mode, validate.MODES)
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
        validate.choice("mode", self.mode, validate.MODES)
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
