"""The demo's plan (:mod:`biasbook.plan`): every sentence scored by every model, one forward each.

>>> P = {"01-offline-models": {"models": ["smollm2-135m"], "sentences": ["A cat.", "Cat a."]}}
>>> [(w.what, w.count, w.tokens) for w in work(P)]
[('score the sentences', 2, 12)]
"""

from __future__ import annotations

from biasbook import plan


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Notebook 01's loop: each model scores each sentence.

    Used in: biasbook plan.
    """
    p = params["01-offline-models"]
    tokens = sum(plan.estimate_tokens(s) + plan.SPECIAL_TOKENS for s in p["sentences"])
    chars = sum(map(len, p["sentences"]))
    return [plan.forward("01", "score the sentences", model, len(p["sentences"]), "sentences",
                         tokens=tokens, cache_bytes=plan.score_cache_bytes(
                             len(p["sentences"]), tokens, chars))
            for model in p["models"]]


def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """At most ``n`` sentence pairs; the models are kept.

    Used in: biasbook plan.
    """
    p = params["01-offline-models"]
    return {"01-offline-models": {**p, "sentences": p["sentences"][:2 * n]}}
