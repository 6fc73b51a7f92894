"""Load each of the chapter's models, note it in the notebook's record, score, let it go.

Every HERB notebook asks its models the same questions: f(S) of the template for each region and
descriptor (Eq. 1), sometimes f(r) of the bare region names (Sec. 3.4, for C_z), the Appendix B
substitutes (Table 6) or the token count of each name. :func:`score_models` does it for a list of
model names, one model in memory at a time, and returns a :class:`ModelScores` per model; the
scoring engine caches every score, so a later notebook gets them back without running a model.
:func:`load_models` is for the notebooks that keep using the models afterwards (hidden states,
training).

``masked_method`` picks how a *masked* model scores a sentence (causal and encoder-decoder models
keep their one method): ``aul``, Eq. 1 as the paper defines it (the default); ``pll``, the
pseudo-log-likelihood of Salazar et al. (2020), one masked copy per token; ``pll_word_l2r``, Kauf
& Ivanova's (2023) fix of PLL, which also masks a word's pieces to the right of the one scored, so
that a region name split into pieces is not given away by its own other pieces
(:mod:`biasbook.scoring.sentences`).

>>> from biasbook.models import from_model
>>> from biasbook.testing import tiny_model, tiny_tokenizer
>>> tok = tiny_tokenizer()
>>> lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
>>> scored = score_models([lm], ["paris", "tokyo"], ["kind", "lazy", "smart"],
...                       region_scores=True, cache=False)
>>> s = scored["tiny-gpt2"]
>>> s.kind, s.scores.shape, s.region_scores.shape, s.substitute_scores is None
('causal', (2, 3), (2,), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from biasbook import models
from biasbook.chapters.herb.sentence_scores import descriptor_scores, region_word_scores
from biasbook.models import LanguageModel
from biasbook.validate import choice, word_list

#: ``masked_method`` -> the scoring engine's options for a masked model (module docstring).
MASKED_METHODS = {"aul": {}, "pll": {"method": "pll"},
                  "pll_word_l2r": {"method": "pll", "pll": "within_word_l2r"}}


@dataclass
class ModelScores:
    """What :func:`score_models` computed for one model; ``None`` where it was not asked for.

    Used in: herb/01, herb/02, herb/04.
    """

    kind: str  # the model's kind: causal, masked or seq2seq
    scores: NDArray[np.float64]  # f(S_ij), [region, descriptor]
    region_scores: NDArray[np.float64] | None = None  # f(r), [region]
    substitute_scores: NDArray[np.float64] | None = None  # f(S) with the substitutes
    token_counts: NDArray[np.int64] | None = None  # tokens in each region's name
    name: str | None = None  # the model's, with its fingerprint: what a record notes
    fingerprint: str | None = None


def _load(model: str | LanguageModel) -> LanguageModel:
    return models.load(model) if isinstance(model, str) else model


def load_models(names: Sequence[str | LanguageModel]) -> dict[str, LanguageModel]:
    """``{name: model}`` for every name (a registry name, Hugging Face id or folder; an already
    loaded model passes through).

    Used in: herb/02, herb/03, herb/05.
    """
    loaded = [_load(model) for model in names]
    return {(m if isinstance(m, str) else lm.name): lm for m, lm in zip(names, loaded, strict=True)}


def score_models(names: Sequence[str | LanguageModel], regions: Sequence[str],
                 words: Sequence[str], *, region_scores: bool = False,
                 substitutes: Sequence[str] | None = None,
                 substitute_models: Sequence[str] = (), token_counts: bool = False,
                 progress: bool | None = None, masked_method: str = "aul",
                 **score_kwargs) -> dict[str, ModelScores]:
    """Score the template for every region and word with each model in turn (module docstring).

    Used in: herb/01, herb/02, herb/04.

    ``region_scores`` adds f(r); ``substitutes`` (aligned with ``words``) are scored for the
    models listed in ``substitute_models`` only; ``token_counts`` counts each name's tokens;
    ``masked_method`` is how masked models score (module docstring). Each model is loaded
    and released before the next one is loaded; each result carries the model's name and
    fingerprint, for the notebook's record.
    """
    choice("masked_method", masked_method, MASKED_METHODS)
    regions = word_list("regions", regions)
    words = word_list("words", words)
    if substitutes is not None and len(word_list("substitutes", substitutes)) != len(words):
        raise ValueError(f"{len(substitutes)} substitutes for {len(words)} words")
    out = {}
    for model in names:
        lm = _load(model)
        name = model if isinstance(model, str) else lm.name
        kw = dict(progress=progress, **score_kwargs,
                  **(MASKED_METHODS[masked_method] if lm.kind == "masked" else {}))
        out[name] = ModelScores(
            kind=lm.kind, scores=descriptor_scores(lm, regions, words, **kw),
            region_scores=region_word_scores(lm, regions, **kw) if region_scores else None,
            substitute_scores=(descriptor_scores(lm, regions, list(substitutes), **kw)
                               if substitutes is not None and name in substitute_models
                               else None),
            token_counts=(np.array([len(lm.encode(r)) for r in regions]) if token_counts
                          else None),
            name=lm.name, fingerprint=lm.fingerprint)
        del lm
    return out
