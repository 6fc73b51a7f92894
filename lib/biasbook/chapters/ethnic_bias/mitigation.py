"""The chapter's mitigation runs (Ahn & Oh 2021, Sec. 4 and 6.2-6.3; Tables 2, 4, 5, 6, 8).

Every run measures a model twice: its **CB score** in the language it is scored in
(:func:`biasbook.chapters.ethnic_bias.pipeline.cb_scores`) and a **quality measure**, the
perplexity of held-out source-language text (:func:`perplexity_scores`; pseudo-perplexity for a
masked LM), which stands in for the paper's NER F1 (Table 6).

Variants of a source model (the rows of Tables 2, 5 and 8):

- ``base``: the model as it is (F.T. "X");
- ``ft``: its output head fine-tuned on source-language text, body frozen ("BERT O");
- ``cda``: the same on the text after one-sided counterfactual rewriting of the country names
  (:func:`biasbook.mitigation.cda.balance_terms`; "BERT + CDA");
- ``rand``: a random orthogonal ``W`` after the last hidden layer, then the head fine-tuned
  ("BERT + Rand.");
- ``align``: the Procrustes ``W`` onto the target model's space, learned from anchors in a
  parallel corpus, then the head fine-tuned ("BERT + Alignment").

All fine-tuning is :func:`biasbook.mitigation.alignment.finetune_head` with one recipe, so that
rows differ only in ``W`` and in the text. **X→EN** (Table 2): the source is the model of language
X, the target the English model, X is scored. **EN→X** (Table 5): the source is the English
model, the target the model of X, English is scored.

Offline, the monolingual BERTs are replaced by what exists: SmolLM2 (English) and Gemma-3-270M
(multilingual), which stands in for every non-English monolingual model, so that for X ≠ EN the
"BERT" rows are Gemma rows and the "M-BERT" rows would repeat them
(:func:`.mitigation_runs.plan`).

This module builds and measures one variant (:func:`variant_model`, :func:`measure_with_heldout`);
:mod:`.mitigation_runs` lays out and runs the rows of the tables, :mod:`.mitigation_tables` sets
them against each other and against the paper's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from biasbook import validate
from biasbook.chapters.ethnic_bias import data, parallel
from biasbook.chapters.ethnic_bias.pipeline import CBResult, cb_scores
from biasbook.mitigation import alignment, cda
from biasbook.mitigation.anchors import Anchors, anchor_pairs
from biasbook.models import LanguageModel
from biasbook.scoring import score_sentences

VARIANTS = ("base", "ft", "cda", "rand", "align")
LABELS = {"base": "no fine-tuning", "ft": "fine-tuned head", "cda": "CDA + fine-tuned head",
          "rand": "random W + fine-tuned head", "align": "alignment W + fine-tuned head"}
#: How a country name is matched in running text (cda.term_pattern): agglutinative languages keep
#: their suffixes, Chinese has no word boundaries.
BOUNDARIES = {"en": "word", "de": "word", "es": "word", "el": "word", "ko": "prefix",
              "tr": "prefix", "ar": "prefix", "zh": "none"}


@dataclass(frozen=True)
class Recipe:
    """Head fine-tuning and anchors (the paper: lr 1e-4, batch 16, length 128, warm-up 1000,
    2 epochs; anchors from the whole parallel corpus).

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """

    epochs: int = 2
    lr: float = 1e-4
    batch_size: int = 16
    max_length: int = 128
    warmup_steps: int = 0
    train_sentences: int | None = None      # None: all of the source-language text
    anchor_pairs: int | None = None         # sentence pairs the aligner learns from (None: all)
    anchor_sentences: int | None = None     # of which anchors are taken from (None: all)
    anchor_max_chars: int = 200             # longer sentence pairs are left out
    max_anchors: int | None = None
    max_per_pair: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class Evaluation:
    """What is measured before and after: the CB grid (on ``word_lists``, whose country names CDA
    also balances) and the held-out text.

    Used in: ethnic-bias/04, biasbook plan.
    """

    templates: Sequence[int] | None = None
    attributes: Sequence[str] | None = None
    targets: Sequence[str] | None = None
    heldout_sentences: int | None = None    # None: all held-out sentences
    heldout_max_chars: int = 300            # longer sentences are left out (model-independent)
    word_lists: str = "authors"             # data.WORD_LISTS


@dataclass
class Outcome:
    """One measured model: its table row and its CB result (for distributions).

    Used in: ethnic-bias/04.
    """

    row: dict
    result: CBResult
    details: dict = field(default_factory=dict)
    #: per held-out sentence: log_likelihood and tokens (:func:`perplexity_scores`); None
    #: where the language has no mirrored text
    heldout: pd.DataFrame | None = None


def sample(texts: Sequence[str], n: int | None, seed: int) -> list[str]:
    """``n`` texts drawn without replacement (``seed``), in their original order; all if None.

    Used in: ethnic-bias/04, book/trust.

    >>> sample(["a", "b", "c", "d"], 2, seed=0)
    ['c', 'd']
    """
    texts = list(texts)
    if n is None or n >= len(texts):
        return texts
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
    return [texts[i] for i in keep]


def perplexity_scores(lm: LanguageModel, texts: Sequence[str]) -> pd.DataFrame:
    """What a perplexity (:func:`perplexity_of`) is computed from, per sentence: its
    log-likelihood and its number of scored tokens (the items an interval over held-out
    sentences resamples): next-token for a causal LM, pseudo-log-likelihood (every token masked
    in turn; Salazar et al. 2020) for a masked LM. A WordPiece model's unknown token is scored
    like any token (with a warning naming the sentences); byte-level tokenizers have none.

    Used in: ethnic-bias/04.
    """
    scores = score_sentences(lm, texts, "clm" if lm.kind == "causal" else "pll", progress=False,
                             unknown="report")
    return pd.DataFrame({"sentence": list(scores.sentences), "log_likelihood": scores.sum,
                         "tokens": scores.n_tokens})


def perplexity_of(scores: pd.DataFrame) -> float:
    """``exp(-sum log-likelihood / sum tokens)`` of :func:`perplexity_scores`' frame.

    Used in: ethnic-bias/04.

    >>> perplexity_of(pd.DataFrame({"log_likelihood": [-4.0, -2.0], "tokens": [2, 1]}))
    7.38905609893065
    """
    return float(np.exp(-scores["log_likelihood"].sum() / scores["tokens"].sum()))


def country_terms(language: str, targets: Sequence[str] | None = None,
                  word_lists: str = "authors") -> dict[str, list[str]]:
    """Each target's name in ``language`` (English key -> [term]): what CDA rewrites.

    Used in: ethnic-bias/04, book/trust.
    """
    lang = data.language(language, word_lists)
    keys = data.target_keys() if targets is None else validate.word_list("targets", targets)
    return {k: [lang.targets[k]["term"]] for k in keys}


def counterfactual_text(texts: Sequence[str], language: str, *,
                        targets: Sequence[str] | None = None, seed: int = 0,
                        word_lists: str = "authors") -> cda.Augmented:
    """The fine-tuning text with its country names balanced (one-sided CDA).

    Used in: ethnic-bias/04, book/trust.
    """
    return cda.balance_terms(texts, country_terms(language, targets, word_lists),
                             boundary=BOUNDARIES.get(language, "word"), seed=seed)


def anchor_corpus(source_language: str, target_language: str) -> list[tuple[str, str]]:
    """``(source sentence, target sentence)`` pairs: X→EN or EN→X over the mirrored corpus.

    Used in: ethnic-bias/04, biasbook plan, book/trust.
    """
    if "en" not in (source_language, target_language) or source_language == target_language:
        raise ValueError("alignment runs between English and another language, got "
                         f"{source_language}->{target_language}")
    other = target_language if source_language == "en" else source_language
    pairs = parallel.parallel_pairs(other)
    return [(e, x) for x, e in pairs] if source_language == "en" else pairs


def anchors_for(source_language: str, target_language: str, recipe: Recipe
                ) -> tuple[list[tuple[str, str]], Anchors]:
    """The parallel sentence pairs (source, target) the aligner learns from, and the anchors
    taken from them under ``recipe`` (cached by content).

    Used in: ethnic-bias/04, book/trust.
    """
    fitting = [(s, t) for s, t in anchor_corpus(source_language, target_language)
               if max(len(s), len(t)) <= recipe.anchor_max_chars]
    pairs = sample(fitting, recipe.anchor_pairs, recipe.seed)
    anchors = anchor_pairs(pairs, sentences=recipe.anchor_sentences,
                           max_anchors=recipe.max_anchors, max_per_pair=recipe.max_per_pair,
                           seed=recipe.seed)
    return pairs, anchors


def alignment_matrix(source: LanguageModel, source_language: str, target: LanguageModel,
                     target_language: str, recipe: Recipe) -> tuple[np.ndarray, dict]:
    """Procrustes ``W`` from ``source`` (read in its language) to ``target``, and a summary of
    the anchors (pairs, sentences, count, most frequent word pairs).

    Used in: ethnic-bias/04, book/trust.
    """
    pairs, anchors = anchors_for(source_language, target_language, recipe)
    W = alignment.alignment_matrix(source, target, pairs, anchors)
    return W, {"pairs": len(pairs), "sentences": len(set(anchors.sentence.tolist())),
               "anchors": len(anchors), "top": anchors.top_pairs(8)}


def variant_model(variant: str, source: LanguageModel, language: str, recipe: Recipe, *,
                  target: tuple[LanguageModel, str] | None = None,
                  targets: Sequence[str] | None = None, word_lists: str = "authors",
                  progress: bool = True) -> tuple[LanguageModel, dict]:
    """The model of one variant (module notes) and what went into it; ``targets`` and
    ``word_lists`` name the countries CDA balances.

    Used in: ethnic-bias/04, book/trust.
    """
    validate.choice("variant", variant, VARIANTS)
    if variant == "base":
        return source, {}
    texts = sample(parallel.source_text(language, "train"), recipe.train_sentences, recipe.seed)
    details: dict = {"train_sentences": len(texts)}
    W = None
    if variant == "cda":
        augmented = counterfactual_text(texts, language, targets=targets, seed=recipe.seed,
                                        word_lists=word_lists)
        texts = augmented.texts
        before = augmented.before.values()
        details.update(mentions_before=int(sum(before)), rewritten=augmented.changed,
                       spread_before=max(before) - min(before), spread_after=augmented.spread)
    elif variant == "rand":
        W = alignment.random_orthogonal(alignment.hidden_size(source.model), recipe.seed)
    elif variant == "align":
        if target is None:
            raise ValueError("variant 'align' needs the target model and its language")
        W, details["anchors"] = alignment_matrix(source, language, target[0], target[1], recipe)
    name = f"{source.name}+{variant}" + (f"->{target[1]}" if variant == "align" else "")
    run = alignment.finetune_head(source, texts, W=W, name=f"{name}-{language}",
                                  epochs=recipe.epochs, lr=recipe.lr,
                                  batch_size=recipe.batch_size, max_length=recipe.max_length,
                                  warmup_steps=recipe.warmup_steps, seed=recipe.seed,
                                  progress=progress)
    details["losses"] = [round(x, 4) for x in run.losses]
    return run.lm, details


def measure_with_heldout(lm: LanguageModel, language: str, evaluation: Evaluation,
                         progress: bool | None) -> tuple[CBResult, pd.DataFrame | None]:
    """CB score of ``lm`` in ``language`` and the per-sentence scores behind the perplexity of
    held-out text in it (:func:`perplexity_scores`); ``None`` for a language without mirrored
    text (Arabic, Greek), which :func:`quality` names in the row.

    Used in: ethnic-bias/04.
    """
    result = cb_scores(lm, language, templates=evaluation.templates,
                       attributes=evaluation.attributes, targets=evaluation.targets,
                       word_lists=evaluation.word_lists, progress=progress)
    if not parallel.has_corpus(language):
        return result, None
    return result, perplexity_scores(lm, heldout_text(language, evaluation))


def quality(language: str) -> str:
    """What the ``perplexity`` column of a row in ``language`` measures.

    Used in: ethnic-bias/04.

    >>> quality("ko"), quality("el")
    ('held-out perplexity', 'none: no el text is mirrored')
    """
    if parallel.has_corpus(language):
        return "held-out perplexity"
    return f"none: no {language} text is mirrored"


def heldout_text(language: str, evaluation: Evaluation) -> list[str]:
    """The held-out sentences the perplexity is computed on (the same for every model).

    Used in: ethnic-bias/04.
    """
    fitting = [t for t in parallel.source_text(language, "heldout")
               if len(t) <= evaluation.heldout_max_chars]
    return sample(fitting, evaluation.heldout_sentences, 0)
