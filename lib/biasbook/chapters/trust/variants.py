"""The models of the trust page's section 3: variants the book already trains, measured.

:func:`book_models` measures (:func:`.measure.measured`) each base model, the same model after
each epoch of HERB notebook 05's continual training on its own toxic corpus (:func:`toxic_runs`;
its book recipe; the notebook's own run, trained once for both pages) and after ethnic-bias
notebook 04's head fine-tuning in English (:func:`head_variant`; its book recipe, cached under
the same key as the chapter's). Each becomes a :class:`Measured`, the input of
:mod:`.model_metrics` and :mod:`.agreement`.
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
    ``recipe``'s regions), epoch 1 first. The run is notebook 05's own
    (:func:`biasbook.chapters.herb.toxic.train`, its evaluation included), with this
    measurement as a second evaluation of every epoch: whichever of the two pages runs first
    trains it for both. Each measurement is cached by the epoch's fingerprint; if one is lost, the
    run is trained again, and a measurement still missing then is a ``RuntimeError``.

    Used in: book/trust.
    """
    table = regions.herb_regions(countries=recipe["countries"],
                              cities_per_country=recipe["cities_per_country"])
    names, words = table["name"].tolist(), herb_data.descriptors()["word"].tolist()
    corpus = toxic.model_corpus(lm, names, words, top_k=recipe["top_k"],
                                size=recipe["corpus_size"], seed=recipe["seed"])
    examples = toxic.training_examples(lm, corpus, recipe["objective"])
    training = {k: recipe[k] for k in ("epochs", "lr", "batch_size", "max_grad_norm", "seed")}

    def evaluate(trained: LanguageModel) -> np.ndarray:
        measured(trained, spec, progress=False)
        return np.zeros(0)  # the measurement itself is cached by the weights' fingerprint

    also = {store.content_key("trust-toxic", VERSION, spec.key()): evaluate}
    for cache in (True, False):
        run = toxic.train(lm, examples, names, words, also=also, cache=cache, progress=progress,
                          **training)
        bundles = [stored(fp, lm.tokenizer_key, spec) for fp in run.fingerprints[1:]]
        if all(b is not None for b in bundles):
            return bundles
    lost = [epoch for epoch, b in enumerate(bundles, 1) if b is None]
    raise RuntimeError(f"{lm.name}: the measurement of toxic epoch(s) {lost} is not in the cache "
                       "even after training again; is the cache folder writable?")


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
