"""The Categorical Bias (CB) score of Ahn & Oh (2021) and its normalised probabilities.

Arrays hold log-probabilities laid out ``[..., attributes, targets]``: the last axis runs over the
target groups (here, countries), the one before it over attributes; leading axes (templates) are
averaged like attributes.

**Normalised probability** (Kurita et al. 2019): how much an attribute raises the probability of
a target over the target's prior probability in the same sentence frame,

.. math:: P'(n \\mid t, a) = p_{tgt}(n \\mid t, a) / p_{prior}(n \\mid t, a).

For a masked LM, ``p_tgt`` is the probability of ``n`` in the masked target slot of template
``t`` filled with attribute ``a``, and ``p_prior`` the same with the attribute masked too
(:func:`normalized_log_probability`). A causal LM cannot mask the attribute;
:func:`attribute_mean_prior` marginalises it over the attribute list instead.

**CB score**: the variance over targets of ``log P'``, averaged over templates and attributes,

.. math:: CB = \\frac{1}{|T|}\\frac{1}{|A|} \\sum_{t} \\sum_{a} \\operatorname{Var}_{n}(\\log P').

The authors' code takes the sample variance (``pandas.Series.var``, ``ddof=1``), the default here.

A worked example: two attributes, three targets, the prior uniform.

>>> import numpy as np
>>> log_tgt = np.log([[0.5, 0.25, 0.25],    # "enemy": the first target twice as likely
...                   [1/3, 1/3, 1/3]])     # "doctor": no preference
>>> log_prior = np.log(np.full((2, 3), 1/3))
>>> log_norm = normalized_log_probability(log_tgt, log_prior)
>>> np.round(target_variances(log_norm), 4).tolist()   # Var(log 1.5, log .75, log .75), 0
[0.1602, 0.0]
>>> round(categorical_bias(log_norm), 4)                # (0.1602 + 0) / 2
0.0801
>>> np.round(scaled_probabilities(log_norm)[0], 3).tolist()
[0.5, 0.25, 0.25]
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, rel_entr


def _finite(name: str, values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} non-finite value(s) (a zero probability "
                         "or a NaN): the CB score needs a finite log-probability for every "
                         "target")
    return array


def normalized_log_probability(log_p_target, log_p_prior) -> np.ndarray:
    """``log P' = log p_tgt - log p_prior``, elementwise (arrays broadcast)."""
    return _finite("log_p_target", log_p_target) - _finite("log_p_prior", log_p_prior)


def attribute_mean_prior(log_p_target, *, attribute_axis: int = -2) -> np.ndarray:
    """The prior of a causal LM: ``p_prior(n) = mean_a p(n | a)``, as a log, with the attribute
    axis kept (size 1) so that it broadcasts against ``log_p_target``.

    ``log_p_target`` may carry any offset per (template, attribute): each attribute's row is first
    normalised over the targets (last axis), so the prior is the probability of ``n`` when the
    attribute is unknown, drawn uniformly from the list. With it, the mean of ``P'`` over
    attributes is 1 for every target, and ``log P'`` is the pointwise mutual information of target
    and attribute under a uniform attribute distribution.

    >>> import numpy as np
    >>> prior = attribute_mean_prior(np.log([[0.5, 0.5], [0.9, 0.1]]))
    >>> np.round(np.exp(prior), 3).tolist()
    [[0.7, 0.3]]
    """
    logp = _finite("log_p_target", log_p_target)
    if logp.ndim < 2:
        raise ValueError("log_p_target needs an attribute axis and a target axis")
    n = logp.shape[attribute_axis]
    if n < 2:
        raise ValueError("the attribute-mean prior needs at least 2 attributes: with one, every "
                         "P' is 1 and the CB score 0 whatever the model")
    logp = logp - logsumexp(logp, axis=-1, keepdims=True)
    return logsumexp(logp, axis=attribute_axis, keepdims=True) - np.log(n)


def target_variances(log_p_norm, *, ddof: int = 1) -> np.ndarray:
    """``Var_n log P'`` for every (template, attribute): the last axis is reduced."""
    values = _finite("log_p_norm", log_p_norm)
    if ddof < 0:
        raise ValueError(f"ddof must be 0 or more, got {ddof}")
    if values.ndim == 0 or values.shape[-1] <= ddof:
        raise ValueError(f"the variance over targets with ddof={ddof} needs more than {ddof} "
                         f"target(s); got shape {values.shape}")
    if values.size == 0:
        raise ValueError(f"no (template, attribute) cell to average: got shape {values.shape}")
    return values.var(axis=-1, ddof=ddof)


def categorical_bias(log_p_norm, *, ddof: int = 1) -> float:
    """The CB score: the mean over every other axis of the variance over targets (last axis)."""
    return float(target_variances(log_p_norm, ddof=ddof).mean())


def scaled_probabilities(log_p_norm) -> np.ndarray:
    """``P'`` divided by its sum over targets (the paper's Figures 1, 3 and 5)."""
    values = _finite("log_p_norm", log_p_norm)
    return np.exp(values - logsumexp(values, axis=-1, keepdims=True))


def jensen_shannon(p, q) -> np.ndarray:
    """Jensen-Shannon divergence in nats (``0 <= JSD <= ln 2``) along the last axis.

    ``p`` and ``q`` are non-negative weights, each normalised to sum 1 first.

    >>> round(float(jensen_shannon([1, 0], [0, 1])), 6) == round(float(np.log(2)), 6)
    True
    >>> float(jensen_shannon([0.2, 0.8], [0.2, 0.8]))
    0.0
    """
    p, q = _finite("p", p), _finite("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape; got {p.shape} and {q.shape}")
    if (p < 0).any() or (q < 0).any():
        raise ValueError("p and q must be non-negative")
    for name, weights in (("p", p), ("q", q)):
        empty = np.argwhere(np.atleast_1d(weights.sum(axis=-1)) == 0)
        if weights.shape[-1] == 0 or empty.size:
            raise ValueError(f"{name} has no weight to normalise (all zero) at "
                             f"{[tuple(map(int, i)) for i in empty[:5]] or 'every position'}")
    p, q = (w / w.sum(axis=-1, keepdims=True) for w in (p, q))
    m = (p + q) / 2
    return 0.5 * rel_entr(p, m).sum(axis=-1) + 0.5 * rel_entr(q, m).sum(axis=-1)
