"""The ethnic-bias plan (:mod:`biasbook.plan`): fill-in sentences, masked forwards, head training.

A CB run of one model in one language fills templates x attributes x targets slots (notebook 01:
the 30 targets and 70 attributes of A.2 by default; 02-04: all 35 targets, and 02 all 75
attributes). A causal model scores each filled sentence; a masked model scores each
(template, attribute) frame once per distinct sub-token length of the targets (candidates of one
length share a forward), and as many again for the prior with the attribute masked. Notebook 02
also scores the other word lists (authors or book) on ``compare_templates`` for comparison; 03
reuses 02's cached scores.
Notebook 04 builds each mitigation row (:func:`.mitigation_runs.plan`): fine-tuning the output
head on the language's text (``recipe``; the body is frozen, so a step costs about one forward),
anchors for alignment, then CB and held-out perplexity (pseudo-perplexity for masked models: one
forward per token).

>>> P = {"02-cb-across-languages": {"languages": ["en"], "monolingual": {"en": "smollm2-135m"},
...      "multilingual": [], "templates": [2], "attributes": ["Enemy", "Pirate"],
...      "word_lists": "authors", "mode": "paper"}}
>>> [(w.what, w.count) for w in work(P)][0]
('en: 1 templates x 2 attributes x 35 targets', 70)
"""

from __future__ import annotations

import math
from functools import cache

from biasbook import plan
from biasbook.chapters.ethnic_bias import data, mitigation, mitigation_runs, parallel, runs


@cache
def _texts(language: str, split: str) -> tuple[int, float]:
    """(sentences, mean estimated tokens) of the language's mitigation text."""
    texts = parallel.source_text(language, split)
    return len(texts), sum(map(plan.estimate_tokens, texts)) / max(len(texts), 1)


def cb_work(notebook: str, model: str, language: str, *, word_lists: str, templates,
            attributes, targets, mode: str = "paper", label: str = "") -> list[plan.Work]:
    """The slot scoring of one CB run (module docstring).

    Used in: biasbook plan.
    """
    # the grid: its frames, the distinct target lengths, the tokens of frames and of slots
    lang = data.language(language, word_lists)
    ids = data.template_ids(lang, None if templates is None else list(templates))
    frames = [data.frame(lang, t, a, mode) for t in ids for a in attributes]
    terms = [data.target_terms(lang, t, list(targets), mode) for t in ids]
    lengths = len({plan.estimate_tokens(x) for row in terms for x in row})
    frame_tokens = sum(plan.estimate_tokens(f.text.replace("{}", "")) + plan.SPECIAL_TOKENS
                       for f in frames)
    slot_tokens = sum(plan.estimate_tokens(x) for row in terms for x in row) * len(attributes)
    sentences = len(frames) * len(targets)
    what = (f"{label}{language}: {len(ids)} templates x {len(attributes)} attributes x "
            f"{len(targets)} targets")
    size = plan.model_size(model)
    if size is not None and size.kind == "masked":
        forwards = len(frames) * lengths
        tokens = frame_tokens * lengths + slot_tokens // len(targets) * lengths
        cache_bytes = plan.score_cache_bytes(sentences, sentences, 64 * sentences)
        return [plan.forward(notebook, w, model, forwards, "masked forwards", tokens=tokens,
                             cache_bytes=cache_bytes, note=f"{sentences} sentences")
                for w in (what, f"{label}{language}: prior, attribute masked")]
    tokens = frame_tokens * len(targets) + slot_tokens
    return [plan.forward(notebook, what, model, sentences, "sentences", tokens=tokens,
                         cache_bytes=plan.score_cache_bytes(sentences, tokens, 64 * sentences))]


def _all(keys, default):
    return default if keys is None else list(keys)


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Every notebook's loops (module docstring).

    Used in: biasbook plan.
    """
    out: list[plan.Work] = []
    if (p := params.get("01-templates-and-metric")) is not None:
        out += cb_work("01", p["example_model"], p["example_language"],
                       word_lists=p["word_lists"], templates=[p["example_template"]],
                       attributes=_all(p["example_attributes"], data.attribute_keys()),
                       targets=data.target_keys())
    if (p := params.get("02-cb-across-languages")) is not None:
        other = next(w for w in data.WORD_LISTS if w != p["word_lists"])
        attributes = _all(p["attributes"], data.attribute_keys(extra=True))
        compared = p.get("compare_templates") or p["templates"]
        for lists, templates, label in ((p["word_lists"], p["templates"], ""),
                                        (other, compared, f"{other} lists, ")):
            for _, model, codes in runs.plan(p["languages"], p["monolingual"],
                                              p["multilingual"]):
                for code in codes:
                    out += cb_work("02", model, code, word_lists=lists, templates=templates,
                                   attributes=attributes,
                                   targets=data.target_keys(extra=True), mode=p["mode"],
                                   label=label)
    if (p := params.get("04-mitigation")) is not None:
        out += _mitigation(p)
    return out


def _mitigation(p: dict) -> list[plan.Work]:
    recipe = mitigation.Recipe(**p["recipe"])
    evaluation = mitigation.Evaluation(attributes=p["attributes"], word_lists=p["word_lists"],
                                       **p["evaluation"])
    steps = mitigation_runs.plan(p["x_to_en"], p["en_to_x"], monolingual=p["monolingual"],
                                 multilingual=(p["multilingual"] or [None])[0],
                                 variants=p["variants"]["x_to_en"],
                                 en_to_x_variants=p["variants"]["en_to_x"],
                                 multilingual_variants=p["variants"]["multilingual"])
    out = []
    for step in steps:
        for variant in step.variants:
            row = f"{step.direction} {step.language} {variant}: "
            if variant != "base":
                out += _head_training(row, step, variant, recipe)
            out += cb_work("04", step.source, step.language, word_lists=evaluation.word_lists,
                           templates=evaluation.templates,
                           attributes=_all(evaluation.attributes, data.attribute_keys()),
                           targets=_all(evaluation.targets, data.target_keys()), label=row)
            if parallel.has_corpus(step.language):
                out.append(_perplexity(row, step.source, step.language, evaluation))
    return out


def _head_training(row: str, step, variant: str, recipe) -> list[plan.Work]:
    sentences, mean = _texts(step.language, "train")
    sentences = plan.at_most(recipe.train_sentences, sentences)
    length = min(recipe.max_length, round(mean) + plan.SPECIAL_TOKENS)
    steps = recipe.epochs * math.ceil(sentences / recipe.batch_size)
    out = [plan.forward("04", row + f"head fine-tuning, {recipe.epochs} epochs", step.source,
                        steps, "training steps", tokens=recipe.epochs * sentences * length,
                        note="body frozen: about one forward per token")]
    if variant == "align":
        pairs = len(mitigation.anchor_corpus(step.language, step.target[1]))
        pairs = plan.at_most(recipe.anchor_sentences, plan.at_most(recipe.anchor_pairs, pairs))
        for model in (step.source, step.target[0]):
            out.append(plan.forward("04", row + "anchor hidden states", model, pairs,
                                    "sentences", tokens=pairs * length))
    return out


def _perplexity(row: str, model: str, language: str, evaluation) -> plan.Work:
    sentences, mean = _texts(language, "heldout")
    sentences = plan.at_most(evaluation.heldout_sentences, sentences)
    length = mean + plan.SPECIAL_TOKENS
    size = plan.model_size(model)
    if size is not None and size.kind == "masked":  # pseudo-perplexity: every token masked
        return plan.forward("04", row + "held-out pseudo-perplexity (PLL)", model,
                            round(sentences * mean), "masked forwards",
                            tokens=round(sentences * mean * length))
    return plan.forward("04", row + "held-out perplexity", model, sentences, "sentences",
                        tokens=round(sentences * length))


# ------------------------------------------------------------------------------------ cap

def _first(items: list, n: int) -> list:
    return list(dict.fromkeys(items))[:n]


def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """Every loop bounded by ``n``: ``n`` templates and attributes (the figures' first, so that
    the figures still draw; then one of the five added attributes, so that Table 7 still has its
    extra rows), ``n`` figures and epochs, ``8 n`` training sentences and anchor sentences,
    ``4 n`` held-out sentences. Languages, models and mitigation rows are kept.

    Used in: biasbook plan.
    """
    figures = next((p["figures"] for p in params.values() if "figures" in p), [])
    extra = [a for a in data.attribute_keys(extra=True) if a not in data.attribute_keys()]
    out = {}
    for stem, p in params.items():
        p = dict(p)
        if "templates" in p:
            p["templates"] = _first([t for _, t in figures] + list(
                p["templates"] or range(1, 11)), n)
        if p.get("compare_templates"):
            p["compare_templates"] = p["compare_templates"][:n]
        for key in ("attributes", "example_attributes"):
            if key in p:
                pool = [a for a, _ in figures] + extra[:1] + list(
                    p[key] or data.attribute_keys(extra=True))
                p[key] = _first(pool, n)
        if "figures" in p:
            p["figures"] = p["figures"][:n]
        if "recipe" in p:
            p["recipe"] = {**p["recipe"], "epochs": plan.at_most(p["recipe"]["epochs"], n),
                           **{k: plan.at_most(p["recipe"][k], 8 * n)
                              for k in ("train_sentences", "anchor_pairs", "anchor_sentences")},
                           "max_per_pair": plan.at_most(p["recipe"]["max_per_pair"], n)}
        if "evaluation" in p:
            e = p["evaluation"]
            p["evaluation"] = {**e, "templates": _first(list(e["templates"] or range(1, 11)), n),
                               "heldout_sentences": plan.at_most(e["heldout_sentences"], 4 * n)}
        out[stem] = p
    return out
