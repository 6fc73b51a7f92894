"""The demo chapter: do two offline language models prefer grammatical sentences to scrambled ones?

The profile lists sentences in (grammatical, scrambled) pairs; :func:`sentence_table` scores each
with every model and :func:`pair_summary` counts, per model, how often the grammatical sentence of
a pair has the higher mean log-probability per token.

>>> import pandas as pd
>>> table = pd.DataFrame({"model": ["m"] * 4, "pair": [0, 0, 1, 1],
...                       "order": ["grammatical", "scrambled"] * 2,
...                       "mean log-prob": [-2.0, -3.0, -4.0, -3.5]})
>>> pair_summary(table).loc["m"].tolist()
[2.0, 0.5, 0.25]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from biasbook.models import LanguageModel
from biasbook.scoring import score_sentences


def sentence_table(models: Mapping[str, LanguageModel], sentences: Sequence[str]) -> pd.DataFrame:
    """One row per (model, sentence): pair index, order, token count, mean and summed log-prob.
    An odd number of sentences (no scrambled partner) is refused.

    Used in: demo/01.
    """
    if len(sentences) < 2 or len(sentences) % 2:
        raise ValueError(f"sentences come in (grammatical, scrambled) pairs: got "
                         f"{len(sentences)} sentence(s) ({list(sentences)[:3]}); give an even "
                         "number, e.g. -p 'sentences=[The dog ran., Ran dog the.]'")
    rows = []
    for name, lm in models.items():
        scores = score_sentences(lm, sentences, progress=False)
        for i, sentence in enumerate(sentences):
            rows.append({"model": name, "pair": i // 2,
                         "order": "grammatical" if i % 2 == 0 else "scrambled",
                         "sentence": sentence, "tokens": int(scores.n_tokens[i]),
                         "mean log-prob": float(scores.mean[i]),
                         "sum log-prob": float(scores.sum[i])})
    return pd.DataFrame(rows)


def pair_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: number of pairs, share the grammatical sentence wins, mean gap (nats/token).

    Used in: demo/01.
    """
    wide = table.pivot_table(index=["model", "pair"], columns="order", values="mean log-prob")
    gap = wide["grammatical"] - wide["scrambled"]
    return gap.groupby("model").agg(pairs="size", wins=lambda g: (g > 0).mean(), mean_gap="mean")
