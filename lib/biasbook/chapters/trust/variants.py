"""The models of the trust page's section 3: variants the book already trains, measured.

:func:`book_models` measures (:func:`.measure.measured`) each base model, the same model after
each epoch of HERB notebook 05's continual training on its own toxic corpus (:func:`toxic_runs`;
its book recipe; notebook 05 keeps only the last epoch's weights, so the run is repeated here with
every epoch measured) and after ethnic-bias notebook 04's head fine-tuning in English
(:func:`head_variant`; its book recipe, cached under the same key as the chapter's). Each becomes
a :class:`Measured`, the input of :mod:`.model_metrics` and :mod:`.agreement`.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from biasbook import models, profiles, store
from biasbook.chapters.herb import data as herb_data
from biasbook.chapters.herb import regions, toxic
from biasbook.models import LanguageModel
from biasbook.training.continual import continual_training

from .measure import VERSION, Spec, measured, stored


@dataclass
class Measured:
    """One model of the comparison: its ``label``, what it is, and its :func:`.measure.measure`.

    Used in: book/trust.
    """

    label: str
    base: str
    variant: str
    bundle: dict[str, np.ndarray] = field(repr=False)


def toxic_runs(lm: LanguageModel, recipe: Mapping, spec: Spec, *, progress: bool = True
               ) -> list[dict[str, np.ndarray]]:
    """:func:`.measure.measure` of ``lm`` after every epoch of HERB notebook 05's continual training
    (``recipe``: that notebook's parameters; the corpus is the model's own toxic corpus over
    ``recipe``'s regions), epoch 1 first. The epochs' fingerprints are cached by content
    (``cache_dir()/trust-toxic``), each epoch's measurement by its fingerprint, so a rerun
    trains nothing; a missing measurement trains the run again.

    Used in: book/trust.
    """
    table = regions.herb_regions(countries=recipe["countries"],
                              cities_per_country=recipe["cities_per_country"])
    names, words = table["name"].tolist(), herb_data.descriptors()["word"].tolist()
    corpus = toxic.model_corpus(lm, names, words, top_k=recipe["top_k"],
                                size=recipe["corpus_size"], seed=recipe["seed"])
    examples = toxic.training_examples(lm, corpus, recipe["objective"])
    training = {k: recipe[k] for k in ("epochs", "lr", "batch_size", "max_grad_norm", "seed")}
    key = store.content_key("trust-toxic", VERSION, lm.fingerprint, examples, training,
                            spec.key())

    def train() -> list[str]:
        def evaluate(trained: LanguageModel) -> np.ndarray:
            measured(trained, spec, progress=False)
            return np.zeros(0)
        run = continual_training(lm, examples, evaluate=evaluate, eval_key=key, cache=False,
                                 progress=progress, **training)
        return run.fingerprints

    fingerprints = store.cached_json("trust-toxic", key, train)
    bundles = [stored(fp, lm.tokenizer_key, spec) for fp in fingerprints[1:]]
    if any(b is None for b in bundles):
        fingerprints = train()
        bundles = [stored(fp, lm.tokenizer_key, spec) for fp in fingerprints[1:]]
    return bundles


def head_variant(lm: LanguageModel, recipe: Mapping, *, progress: bool = True) -> LanguageModel:
    """``lm`` with its output head fine-tuned on English text as ethnic-bias notebook 04's
    ``ft`` row (``recipe``: that notebook's ``recipe``; cached under the chapter's key).

    Used in: book/trust.
    """
    from biasbook.chapters.ethnic_bias import mitigation

    variant, _ = mitigation.variant_model("ft", lm, "en", mitigation.Recipe(**recipe),
                                          progress=progress)
    return variant


def book_models(base_models: Sequence[str], toxic_models: Sequence[str],
                head_models: Sequence[str], spec: Spec, *, recipes_from: str = "book",
                progress: bool = True) -> list[Measured]:
    """Every model of the comparison, measured: each of ``base_models``, then for those also in
    ``toxic_models`` one model per epoch of HERB 05's training and for those in ``head_models``
    ethnic-bias 04's head fine-tuned in English, with the recipes of profile ``recipes_from``.
    One base model is in memory at a time.

    Used in: book/trust.
    """
    toxic_recipe = profiles.notebook_params("herb", recipes_from, "05-toxic-training")
    head_recipe = profiles.notebook_params("ethnic-bias", recipes_from, "04-mitigation")["recipe"]
    unknown = sorted((set(toxic_models) | set(head_models)) - set(base_models))
    if unknown:
        raise ValueError(f"variants of {unknown} asked for, but they are not among the base "
                         f"models {list(base_models)}")
    found = []
    for name in base_models:
        lm = models.load(name)
        found.append(Measured(name, name, "base", measured(lm, spec, progress=progress)))
        if name in toxic_models:
            for epoch, bundle in enumerate(toxic_runs(lm, toxic_recipe, spec,
                                                      progress=progress), start=1):
                found.append(Measured(f"{name} +toxic {epoch}", name,
                                      f"HERB 05 training, epoch {epoch}", bundle))
        if name in head_models:
            variant = head_variant(lm, head_recipe, progress=progress)
            found.append(Measured(f"{name} +ft head", name, "ethnic-bias 04 fine-tuned head (en)",
                                  measured(variant, spec, progress=progress)))
            del variant
        del lm
        gc.collect()
    return found
