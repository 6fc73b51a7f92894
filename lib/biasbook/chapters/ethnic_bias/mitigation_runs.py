"""The mitigation runs of Tables 2, 5 and 8 (Ahn & Oh 2021, Sec. 6.2-6.3): which source model
is measured in which language under which variants (:func:`plan`), and running them
(:func:`run_plan`), one fine-tuned copy in memory at a time; the variants themselves are
:mod:`.mitigation`'s.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import pandas as pd

from biasbook import validate
from biasbook.chapters.ethnic_bias import data, parallel
from biasbook.chapters.ethnic_bias.mitigation import (
    LABELS,
    VARIANTS,
    Evaluation,
    Outcome,
    Recipe,
    measure_with_heldout,
    perplexity_of,
    quality,
    variant_model,
)
from biasbook.chapters.ethnic_bias.mitigation_tables import paper_cb
from biasbook.models import LanguageModel


@dataclass(frozen=True)
class Step:
    """One source model measured in one language under some variants.

    Used in: ethnic-bias/04, biasbook plan.
    """

    direction: str                        # "x->en" (Table 2/8) or "en->x" (Table 5)
    language: str                         # the language scored and fine-tuned on
    source: str                           # model name
    role: str                             # "monolingual" or "multilingual" (the paper's rows)
    variants: tuple[str, ...]
    target: tuple[str, str] | None = None  # (model, language) that "align" maps onto
    stand_in: bool = False                # the multilingual model doing a monolingual's job


def plan(x_to_en: Sequence[str], en_to_x: Sequence[str], *, monolingual: Mapping[str, str],
         multilingual: str | None, variants: Sequence[str],
         en_to_x_variants: Sequence[str] | None = None,
         multilingual_variants: Sequence[str] = ("base", "ft")) -> list[Step]:
    """The runs of Tables 2/8 (``x_to_en`` languages, ``variants``) and 5 (``en_to_x``,
    ``en_to_x_variants``, default the same); the multilingual model gets
    ``multilingual_variants``.

    Used in: ethnic-bias/04, biasbook plan.

    A language without a monolingual model gets the multilingual one in its place
    (``stand_in``), and then no separate multilingual rows, which would repeat it. A language
    without mirrored text keeps only ``base`` (nothing to fine-tune on or align with).

    >>> [(s.language, s.source, s.variants, s.stand_in) for s in plan(
    ...     ["ko"], [], monolingual={"en": "smollm2"}, multilingual="gemma",
    ...     variants=["base", "align"])]
    [('ko', 'gemma', ('base', 'align'), True)]
    """
    en_to_x_variants = variants if en_to_x_variants is None else en_to_x_variants
    for v in [*variants, *en_to_x_variants, *multilingual_variants]:
        validate.choice("variant", v, VARIANTS)
    if "en" not in monolingual:
        raise ValueError("the plan needs an English model: monolingual['en']")
    english = monolingual["en"]
    steps = []
    for x in x_to_en:
        data.language(x)  # a known language
        usable = tuple(v for v in variants if v == "base" or parallel.has_corpus(x))
        if x in monolingual:
            steps.append(Step("x->en", x, monolingual[x], "monolingual", usable, (english, "en")))
            if multilingual:
                steps.append(Step("x->en", x, multilingual, "multilingual",
                                  tuple(v for v in multilingual_variants if v in usable)))
        elif multilingual:
            steps.append(Step("x->en", x, multilingual, "monolingual", usable, (english, "en"),
                              stand_in=True))
    if en_to_x:
        steps.append(Step("en->x", "en", english, "monolingual",
                          tuple(v for v in en_to_x_variants if v != "align")))
        if multilingual:
            steps.append(Step("en->x", "en", multilingual, "multilingual",
                              tuple(multilingual_variants)))
        for x in en_to_x:
            if "align" in en_to_x_variants and parallel.has_corpus(x):
                steps.append(Step("en->x", "en", english, "monolingual", ("align",),
                                  (monolingual.get(x, multilingual), x)))
    return [s for s in steps if s.variants]


def run_plan(steps: Sequence[Step], load: Callable[[str], LanguageModel], *, recipe: Recipe,
             evaluation: Evaluation, progress: bool = True) -> list[Outcome]:
    """Run every step (:func:`run_variants`), loading each model once.

    Used in: ethnic-bias/04.
    """
    get = cache(load)  # each model loaded once
    outcomes = []
    for step in steps:
        target = (get(step.target[0]), step.target[1]) if step.target else None
        for outcome in run_variants(get(step.source), step.language, step.variants,
                                    direction=step.direction, role=step.role, recipe=recipe,
                                    evaluation=evaluation, target=target,
                                    progress=progress):
            outcome.row["stand_in"] = step.stand_in
            outcomes.append(outcome)
    return outcomes


def run_variants(source: LanguageModel, language: str, variants: Sequence[str], *,
                 direction: str, role: str, recipe: Recipe, evaluation: Evaluation,
                 target: tuple[LanguageModel, str] | None = None, progress: bool = True
                 ) -> list[Outcome]:
    """Build and measure each variant of ``source`` (scored in ``language``), one at a time so
    that only one fine-tuned copy is held in memory.

    Used in: ethnic-bias/04.
    """
    validate.choice("direction", direction, ("x->en", "en->x"))
    outcomes = []
    for variant in variants:
        lm, details = variant_model(variant, source, language, recipe, target=target,
                                    targets=evaluation.targets,
                                    word_lists=evaluation.word_lists, progress=progress)
        result, heldout = measure_with_heldout(lm, language, evaluation, progress)
        ppl = float("nan") if heldout is None else perplexity_of(heldout)
        aligned_to = target[1] if target and variant == "align" else None
        row = {"direction": direction, "language": language, "model": source.name,
               "role": role, "variant": variant, "method": LABELS[variant],
               "aligned_to": aligned_to, "fine_tuned": variant != "base",
               "cb": result.cb, "perplexity": ppl, "quality": quality(language),
               "paper_cb": paper_cb(direction, role, variant, language, aligned_to)}
        outcomes.append(Outcome(row, result, details, heldout))
        del lm  # one fine-tuned copy at a time
        gc.collect()
    return outcomes


def steps_table(steps: Sequence[Step]) -> pd.DataFrame:
    """The plan, one row per step.

    Used in: ethnic-bias/04.
    """
    return pd.DataFrame([{"direction": s.direction, "scored in": s.language, "model": s.source,
                          "as": s.role + (" (stand-in)" if s.stand_in else ""),
                          "variants": ", ".join(s.variants),
                          "aligned to": "" if s.target is None else "{} ({})".format(*s.target)}
                         for s in steps])


def details_table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """What went into each fine-tuned row: sentences, losses, CDA counts, anchors.

    Used in: ethnic-bias/04.
    """
    rows = []
    for o in outcomes:
        if o.details:
            anchors = o.details.get("anchors", {})
            rows.append({**{k: o.row[k] for k in ("direction", "language", "model", "variant")},
                         **{k: v for k, v in o.details.items() if k != "anchors"},
                         **{f"anchor {k}": v for k, v in anchors.items() if k != "top"}})
    return pd.DataFrame(rows)
