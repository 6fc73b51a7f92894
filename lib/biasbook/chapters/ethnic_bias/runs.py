"""Score every (model, language) pair a profile asks for, loading each model once.

A profile names ``monolingual`` models (a mapping language -> model: the paper's monolingual
BERTs, or SmolLM2 for English offline) and ``multilingual`` models (each scored in every
language). :func:`score_all` returns ``(group, CBResult)`` pairs in a fixed order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tqdm.auto import tqdm

from biasbook import models
from biasbook.chapters.ethnic_bias import data
from biasbook.chapters.ethnic_bias.pipeline import CBResult, cb_scores


def plan(languages: Sequence[str], monolingual: Mapping[str, str] | None,
         multilingual: Sequence[str] | None) -> list[tuple[str, str, list[str]]]:
    """``(group, model, languages)`` triples, one per model to load.

    Used in: ethnic-bias/02, ethnic-bias/03, biasbook plan.

    >>> plan(["en", "ko"], {"en": "smollm2-135m", "de": "x"}, ["gemma-3-270m"])
    [('monolingual', 'smollm2-135m', ['en']), ('multilingual', 'gemma-3-270m', ['en', 'ko'])]
    """
    for code in languages:
        data.language(code)  # an unknown code fails here, before any model loads
    by_model: dict[str, list[str]] = {}
    for code, name in (monolingual or {}).items():
        if code in languages:
            by_model.setdefault(name, []).append(code)
    out = [("monolingual", name, codes) for name, codes in by_model.items()]
    out += [("multilingual", name, list(languages)) for name in multilingual or []]
    return out


def score_all(languages: Sequence[str], monolingual: Mapping[str, str] | None,
              multilingual: Sequence[str] | None, *, templates: Sequence[int] | None = None,
              attributes: Sequence[str] | None = None, mode: str = "paper", ddof: int = 1,
              word_lists: str = "authors",
              on_model: Callable[[models.LanguageModel], None] | None = None,
              on_result: Callable[[models.LanguageModel, CBResult], None] | None = None
              ) -> list[tuple[str, CBResult]]:
    """CB results of every planned (model, language), on all 35 targets.

    Used in: ethnic-bias/02, ethnic-bias/03.

    ``attributes`` None means all 75 (the 70 of A.2 and the 5 added ones); tables take the
    subsets they need (:meth:`CBResult.subset`). ``word_lists``: ``authors`` or ``book``
    (:data:`data.WORD_LISTS`). ``on_model`` sees each loaded model (e.g.
    ``Recorder.model``), ``on_result`` each result with its model (while it is loaded).
    """
    results = []
    data.language("en", word_lists)  # an unknown list fails here, before any model loads
    attributes = data.attribute_keys(extra=True) if attributes is None else list(attributes)
    for group, name, codes in plan(languages, monolingual, multilingual):
        lm = models.load(name)
        if on_model:
            on_model(lm)
        for code in tqdm(codes, desc=f"{name} languages"):
            result = cb_scores(lm, code, targets=data.target_keys(extra=True),
                               attributes=attributes, templates=templates, mode=mode, ddof=ddof,
                               word_lists=word_lists)
            if on_result:
                on_result(lm, result)
            results.append((group, result))
        del lm
    return results
