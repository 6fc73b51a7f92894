"""Co-occurrence bias of a set of documents, in the chapter's countings and contexts.

Both notebooks score text the same way: count co-occurrences with
:func:`biasbook.text.cooccurrence.count_cooccurrences` in one of two countings (``paper``: the
printed method; ``as-coded``: the authors' script's n-grams) and one of two contexts, then turn
the counts into per-word scores with :func:`biasbook.metrics.cooccurrence_bias.bias_scores`. The
printed counting keeps the printed score (with the gender-frequency factor). The ``as-coded``
counting gets the book's reconstruction of the score behind the paper's tables, the log-ratio
without that factor (it reproduces PTB's 0.83); the script itself writes m / (m + f)
(``bias_scores(mode="as-coded")``, shown in notebook 01), which does not. A text in which no
word meets both genders has no score (``None``), never an infinite one, and its statistics are
NaN: the notebooks' :meth:`biasbook.results.Recorder.metrics` lists those as skipped, so tiny smoke
corpora record what they can.

>>> docs = [["he", "runs", "she", "runs", "he", "walks", "she", "sits"]]
>>> s, co = score(docs, ({"he"}, {"she"}), "paper", "fixed")
>>> s.to_series().round(3).to_dict(), co.n_male, co.n_female
({'runs': 0.0, 'sits': 0.0, 'walks': 0.0}, 2, 2)
>>> summary(s)["mu"], summary(None)["words"]
(0.0, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress

import numpy as np

from biasbook import validate
from biasbook.metrics.cooccurrence_bias import (
    BiasScores,
    bias_regression,
    bias_scores,
    mean_abs_bias,
    std_bias,
)
from biasbook.text.cooccurrence import Cooccurrence, count_cooccurrences

COUNTINGS = validate.MODES  # the paper's counting, or the authors' code's
CONTEXTS = ("fixed", "infinite")
Gender = tuple[frozenset[str], frozenset[str]]


def score(documents: Sequence[Sequence[str]], gender: Gender, counting: str, context: str,
          window: float | None = None) -> tuple[BiasScores | None, Cooccurrence]:
    """(bias scores, or ``None`` when no word co-occurs with both genders; the counts).

    Used in: lm-gender-bias/01, lm-gender-bias/02, book/trust.
    """
    male, female = gender
    co = count_cooccurrences(documents, male, female, context=context, window=window,
                             mode=counting)
    try:
        s = bias_scores(co.words, co.male, co.female, co.n_male, co.n_female,
                        gender_frequency=(counting == "paper"))
    except ValueError:
        s = None
    return s, co


def summary(s: BiasScores | None, reference: BiasScores | None = None) -> dict:
    """mu, sigma, beta (against ``reference``) and the number of scored words; NaN if undefined.

    Used in: lm-gender-bias/01, lm-gender-bias/02.

    >>> ref = BiasScores(("a", "b", "c"), np.array([-1.0, 0.0, 1.0]))
    >>> gen = BiasScores(("a", "b", "c"), np.array([-0.5, 0.0, 0.5]))
    >>> {k: round(v, 3) for k, v in summary(gen, ref).items()}
    {'mu': 0.333, 'sigma': 0.5, 'beta': 0.5, 'words': 3}
    """
    out = {"mu": np.nan, "sigma": np.nan, "beta": np.nan, "words": 0}
    if s is None:
        return out
    out.update(mu=mean_abs_bias(s), words=len(s.words))
    if len(s.words) > 1:
        out["sigma"] = std_bias(s)
    if reference is not None:
        with suppress(ValueError):  # fewer than two shared words: no beta
            out["beta"] = bias_regression(reference, s).beta
    return out


def training_sample(documents: Sequence[Sequence[str]], n: int, length: int,
                    seed: int = 0) -> list[list[str]]:
    """``n`` random stretches of ``length`` tokens of the concatenated documents: what a model
    that generates exactly its training text would produce (shorter text: all of it).

    Used in: lm-gender-bias/02.

    >>> stretches = training_sample([["a", "b", "c"], ["d"]], n=5, length=3)
    >>> all(s in (["a", "b", "c"], ["b", "c", "d"]) for s in stretches)
    True
    >>> training_sample([["a", "b"]], n=2, length=3)
    [['a', 'b'], ['a', 'b']]
    """
    stream = [t for doc in documents for t in doc]
    length = min(length, len(stream))
    starts = np.random.default_rng(seed).integers(0, len(stream) - length + 1, n)
    return [stream[i : i + length] for i in starts]
