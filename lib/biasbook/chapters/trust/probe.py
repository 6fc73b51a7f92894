"""A WEAT-style probe of a language model through log-probabilities of a template.

WEAT (Caliskan et al. 2017) asks whether target words ``X`` sit closer to attribute words ``A``
than to ``B``, compared with targets ``Y``, using cosine similarities of word vectors. A language
model has no single vector per word, but it has probabilities: fill a template with an attribute
and ask how likely each target is in its slot. With ``log p(w | a)`` the log-probability of target
``w`` in the template filled with attribute ``a``,

- ``s(w) = mean_{a in A} log p(w | a) - mean_{b in B} log p(w | b)`` (the association),
- effect size ``d = (mean_{x in X} s(x) - mean_{y in Y} s(y)) / sd_{w in X u Y} s(w)`` (sample sd),

exactly WEAT's formulas with the cosine replaced by a log-probability (the log-probability bias
score of Kurita et al. 2019 is the masked-LM version of the same idea). ``log p(w | a)`` comes from
:func:`biasbook.scoring.slot_probabilities`: for a causal LM the probability of the filled
sentence normalised over the targets, i.e. the model's probability of ``w`` given the rest of the
sentence, among the targets. Any per-target constant (how frequent a name is) cancels in
``s(w)``, since it is the same under ``A`` and ``B``.

:func:`association_matrix` scores a model (cached by the scoring engine); :func:`associations`,
:func:`effect_size` and :func:`effect_interval` are pure functions of that matrix.

>>> logp = np.log([[0.6, 0.4],    # attribute a1: p(x1), p(y1)
...                [0.5, 0.5],    # attribute a2
...                [0.2, 0.8]])   # attribute b1
>>> associations(logp, n_a=2).round(3).tolist()
[1.007, -0.582]
>>> round(effect_size(associations(logp, n_a=2), n_x=1), 3)  # one word per side: sd of two
1.414
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from biasbook import stats
from biasbook.metrics import weat
from biasbook.models import LanguageModel
from biasbook.scoring import slot_probabilities

#: The attribute's slot in a probe template; the target's slot is ``{}``.
ATTRIBUTE = "{attribute}"


def fill_attribute(template: str, attribute: str) -> str:
    """The template with its attribute slot filled and the target slot ``{}`` left open.

    Used in: book/trust.

    >>> fill_attribute("{} often thinks about {attribute}.", "salary")
    '{} often thinks about salary.'
    """
    if template.count(ATTRIBUTE) != 1 or template.replace(ATTRIBUTE, "").count("{}") != 1:
        raise ValueError(f"a probe template needs one {{}} (the target) and one {ATTRIBUTE}, "
                         f"got {template!r}")
    return template.replace(ATTRIBUTE, attribute)


def association_matrix(lm: LanguageModel, template: str, targets: Sequence[str],
                       attributes: Sequence[str], *, progress: bool | None = None,
                       cache: bool = True) -> NDArray[np.float64]:
    """``log p(target | attribute)`` as an ``[attribute, target]`` array: one template per
    attribute, every target in its slot (:func:`biasbook.scoring.slot_probabilities`, natural
    logs; normalised over the targets for causal and encoder-decoder models).

    Used in: book/trust.
    """
    filled = [fill_attribute(template, a) for a in attributes]
    logp = slot_probabilities(lm, filled, list(targets), log=True, progress=progress,
                              cache=cache)
    return np.asarray(logp, dtype=np.float64).reshape(len(attributes), len(targets))


def associations(logp: ArrayLike, n_a: int) -> NDArray[np.float64]:
    """``s(w)`` for every target (a column of ``logp``): the mean over the first ``n_a``
    attribute rows (``A``) minus the mean over the others (``B``).

    Used in: book/trust.
    """
    logp = np.asarray(logp, dtype=np.float64)
    if logp.ndim != 2 or not 0 < n_a < logp.shape[0]:
        raise ValueError(f"need an [attribute, target] array with attributes on both sides of "
                         f"n_a={n_a}, got shape {logp.shape}")
    if not np.isfinite(logp).all():
        raise ValueError("the log-probabilities hold NaN or inf")
    return logp[:n_a].mean(axis=0) - logp[n_a:].mean(axis=0)


def effect_size(s: ArrayLike, n_x: int) -> float:
    """WEAT's effect size of associations ``s``, the first ``n_x`` of which are ``X``.

    Used in: book/trust.
    """
    s = np.asarray(s, dtype=np.float64)
    if not 0 < n_x < s.size:
        raise ValueError(f"need targets on both sides of n_x={n_x}, got {s.size}")
    if not np.std(s) > 1e-12:
        raise ValueError("every target has the same association: the effect size is 0/0")
    return float(weat.effect_sizes(s, n_x))


def effect_interval(s: ArrayLike, n_x: int, *, level: float = 0.95, n_resamples: int = 1999,
                    seed: int = 0) -> stats.Interval:
    """The effect size with its percentile bootstrap interval over the target words, ``X`` and
    ``Y`` resampled apart (:func:`biasbook.stats.interval` with ``paired=False``; the attributes
    stay fixed, as in WEAT's own interval in the book).

    Used in: book/trust.
    """
    s = np.asarray(s, dtype=np.float64)
    ci = stats.interval((s[:n_x], s[n_x:]), weat.two_sample_effect_sizes, paired=False, level=level,
                        method="percentile", n_resamples=n_resamples, seed=seed,
                        unit="target words")
    return replace(ci, value=effect_size(s, n_x))
