"""The chapter's mitigation runs (Ahn & Oh 2021, Sec. 4 and 6.2-6.3; Tables 2, 4, 5, 6, 8).

Every run measures a model twice: its **CB score** in the language it is scored in
(:func:`biasbook.chapters.ethnic_bias.pipeline.cb_scores`) and a **quality measure**, the
perplexity of held-out source-language text (:func:`perplexity`; pseudo-perplexity for a masked
LM), which stands in for the paper's NER F1 (Table 6).

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
"BERT" rows are Gemma rows and the "M-BERT" rows would repeat them (:func:`plan`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from biasbook import datafiles, validate
from biasbook.chapters.ethnic_bias import data, parallel
from biasbook.chapters.ethnic_bias.pipeline import CBResult, cb_scores
from biasbook.mitigation import alignment, cda
from biasbook.models import LanguageModel
from biasbook.scoring import score_sentences

VARIANTS = ("base", "ft", "cda", "rand", "align")
LABELS = {"base": "no fine-tuning", "ft": "fine-tuned head", "cda": "CDA + fine-tuned head",
          "rand": "random W + fine-tuned head", "align": "alignment W + fine-tuned head"}
#: How a country name is matched in running text (cda.term_pattern): agglutinative languages keep
#: their suffixes, Chinese has no word boundaries.
BOUNDARIES = {"en": "word", "de": "word", "es": "word", "el": "word", "ko": "prefix",
              "tr": "prefix", "ar": "prefix", "zh": "none"}
#: The paper's row names for (model role, variant).
PAPER_ROWS = {("multilingual", "base"): ("M-BERT", False), ("multilingual", "ft"): ("M-BERT", True),
              ("monolingual", "base"): ("BERT", False), ("monolingual", "ft"): ("BERT", True),
              ("monolingual", "cda"): ("BERT + CDA", True),
              ("monolingual", "rand"): ("BERT + Rand. Alignment", True),
              ("monolingual", "align"): ("BERT + Alignment", True)}


@dataclass(frozen=True)
class Recipe:
    """Head fine-tuning and anchors (the paper: lr 1e-4, batch 16, length 128, warm-up 1000,
    2 epochs; anchors from the whole parallel corpus)."""

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
    also balances) and the held-out text."""

    templates: Sequence[int] | None = None
    attributes: Sequence[str] | None = None
    targets: Sequence[str] | None = None
    heldout_sentences: int | None = None    # None: all held-out sentences
    heldout_max_chars: int = 300            # longer sentences are left out (model-independent)
    word_lists: str = "authors"             # data.WORD_LISTS


@dataclass
class Outcome:
    """One measured model: its table row and its CB result (for distributions)."""

    row: dict
    result: CBResult
    details: dict = field(default_factory=dict)
    #: per held-out sentence: log_likelihood and tokens (:func:`perplexity_scores`); None
    #: where the language has no mirrored text
    heldout: pd.DataFrame | None = None


def sample(texts: Sequence[str], n: int | None, seed: int) -> list[str]:
    """``n`` texts drawn without replacement (``seed``), in their original order; all if None.

    >>> sample(["a", "b", "c", "d"], 2, seed=0)
    ['c', 'd']
    """
    texts = list(texts)
    if n is None or n >= len(texts):
        return texts
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=n, replace=False))
    return [texts[i] for i in keep]


def perplexity(lm: LanguageModel, texts: Sequence[str]) -> float:
    """``exp`` of the mean negative log-likelihood per token of ``texts``: next-token for a
    causal LM, pseudo-log-likelihood (every token masked in turn; Salazar et al. 2020) for a
    masked LM. A WordPiece model's unknown token is scored like any token (with a warning naming
    the sentences); byte-level tokenizers have none."""
    return perplexity_of(perplexity_scores(lm, texts))


def perplexity_scores(lm: LanguageModel, texts: Sequence[str]) -> pd.DataFrame:
    """What :func:`perplexity` is computed from, per sentence: its log-likelihood and its number
    of scored tokens (the items an interval over held-out sentences resamples)."""
    scores = score_sentences(lm, texts, "clm" if lm.kind == "causal" else "pll", progress=False,
                             unknown="report")
    return pd.DataFrame({"sentence": list(scores.sentences), "log_likelihood": scores.sum,
                         "tokens": scores.n_tokens})


def perplexity_of(scores: pd.DataFrame) -> float:
    """``exp(-sum log-likelihood / sum tokens)`` of :func:`perplexity_scores`' frame.

    >>> perplexity_of(pd.DataFrame({"log_likelihood": [-4.0, -2.0], "tokens": [2, 1]}))
    7.38905609893065
    """
    return float(np.exp(-scores["log_likelihood"].sum() / scores["tokens"].sum()))


def country_terms(language: str, targets: Sequence[str] | None = None,
                  word_lists: str = "authors") -> dict[str, list[str]]:
    """Each target's name in ``language`` (English key -> [term]): what CDA rewrites."""
    lang = data.language(language, word_lists)
    keys = data.target_keys() if targets is None else validate.word_list("targets", targets)
    return {k: [lang.targets[k]["term"]] for k in keys}


def counterfactual_text(texts: Sequence[str], language: str, *,
                        targets: Sequence[str] | None = None, seed: int = 0,
                        word_lists: str = "authors") -> cda.Augmented:
    """The fine-tuning text with its country names balanced (one-sided CDA)."""
    return cda.balance_terms(texts, country_terms(language, targets, word_lists),
                             boundary=BOUNDARIES.get(language, "word"), seed=seed)


def anchor_corpus(source_language: str, target_language: str) -> list[tuple[str, str]]:
    """``(source sentence, target sentence)`` pairs: X→EN or EN→X over the mirrored corpus."""
    if "en" not in (source_language, target_language) or source_language == target_language:
        raise ValueError("alignment runs between English and another language, got "
                         f"{source_language}->{target_language}")
    other = target_language if source_language == "en" else source_language
    pairs = parallel.parallel_pairs(other)
    return [(e, x) for x, e in pairs] if source_language == "en" else pairs


def anchors_for(source_language: str, target_language: str, recipe: Recipe
                ) -> tuple[list[tuple[str, str]], alignment.Anchors]:
    """The parallel sentence pairs (source, target) the aligner learns from, and the anchors
    taken from them under ``recipe`` (cached by content)."""
    fitting = [(s, t) for s, t in anchor_corpus(source_language, target_language)
               if max(len(s), len(t)) <= recipe.anchor_max_chars]
    pairs = sample(fitting, recipe.anchor_pairs, recipe.seed)
    anchors = alignment.anchor_pairs(pairs, sentences=recipe.anchor_sentences,
                                     max_anchors=recipe.max_anchors,
                                     max_per_pair=recipe.max_per_pair, seed=recipe.seed)
    return pairs, anchors


def alignment_matrix(source: LanguageModel, source_language: str, target: LanguageModel,
                     target_language: str, recipe: Recipe) -> tuple[np.ndarray, dict]:
    """Procrustes ``W`` from ``source`` (read in its language) to ``target``, and a summary of
    the anchors (pairs, sentences, count, most frequent word pairs)."""
    pairs, anchors = anchors_for(source_language, target_language, recipe)
    W = alignment.alignment_matrix(source, target, pairs, anchors)
    return W, {"pairs": len(pairs), "sentences": len(set(anchors.sentence.tolist())),
               "anchors": len(anchors), "top": anchors.top_pairs(8)}


def variant_model(variant: str, source: LanguageModel, language: str, recipe: Recipe, *,
                  target: tuple[LanguageModel, str] | None = None,
                  targets: Sequence[str] | None = None, word_lists: str = "authors",
                  progress: bool = True) -> tuple[LanguageModel, dict]:
    """The model of one variant (module notes) and what went into it; ``targets`` and
    ``word_lists`` name the countries CDA balances."""
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
        details.update(mentions_before=int(sum(augmented.before.values())),
                       rewritten=augmented.changed, spread_before=_spread(augmented.before),
                       spread_after=augmented.spread)
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


def _spread(counts: Mapping[str, int]) -> int:
    return max(counts.values()) - min(counts.values())


def measure(lm: LanguageModel, language: str, evaluation: Evaluation,
            progress: bool | None = None) -> tuple[CBResult, float]:
    """CB score of ``lm`` in ``language`` and the perplexity of held-out text in it; NaN for a
    language without mirrored text (Arabic, Greek), which :func:`quality` names in the row."""
    result, scores = _measure(lm, language, evaluation, progress)
    return result, float("nan") if scores is None else perplexity_of(scores)


def _measure(lm: LanguageModel, language: str, evaluation: Evaluation,
             progress: bool | None) -> tuple[CBResult, pd.DataFrame | None]:
    """:func:`measure` with the per-sentence scores behind the perplexity (None: no text)."""
    result = cb_scores(lm, language, templates=evaluation.templates,
                       attributes=evaluation.attributes, targets=evaluation.targets,
                       word_lists=evaluation.word_lists, progress=progress)
    if not parallel.has_corpus(language):
        return result, None
    return result, perplexity_scores(lm, heldout_text(language, evaluation))


def quality(language: str) -> str:
    """What the ``perplexity`` column of a row in ``language`` measures.

    >>> quality("ko"), quality("el")
    ('held-out perplexity', 'none: no el text is mirrored')
    """
    if parallel.has_corpus(language):
        return "held-out perplexity"
    return f"none: no {language} text is mirrored"


def heldout_text(language: str, evaluation: Evaluation) -> list[str]:
    """The held-out sentences the perplexity is computed on (the same for every model)."""
    fitting = [t for t in parallel.source_text(language, "heldout")
               if len(t) <= evaluation.heldout_max_chars]
    return sample(fitting, evaluation.heldout_sentences, 0)


def paper_cb(direction: str, role: str, variant: str, language: str,
             aligned_to: str | None = None) -> float | None:
    """The paper's CB for a row: Table 2 (X→EN, X in DE ES KO TR ZH, scored in X), Table 8
    (AR, EL) or Table 5 (EN→X, English scored; ``aligned_to`` X for the alignment rows).

    >>> paper_cb("x->en", "monolingual", "align", "ko")
    5.616
    >>> paper_cb("en->x", "multilingual", "ft", "en")
    0.558
    >>> paper_cb("en->x", "monolingual", "align", "en", aligned_to="tr")
    0.612
    """
    if (role, variant) not in PAPER_ROWS:
        return None
    name, tuned = PAPER_ROWS[(role, variant)]
    tables = datafiles.paper_results(data.CHAPTER)["tables"]
    if direction == "x->en":
        table = tables["table8" if language in ("ar", "el") else "table2"]
        if language not in table["columns"]:
            return None
        return next((row["values"][table["columns"].index(language)] for row in table["rows"]
                     if row["model"] == name and row["fine_tuned"] == tuned), None)
    name = "BERT + Rand." if variant == "rand" else name  # Table 5's spelling
    wanted = (name, tuned, aligned_to if variant == "align" else None)
    return next((row["cb"] for row in tables["table5"]["rows"]
                 if (row["model"], row["fine_tuned"], row["aligned_to"]) == wanted), None)


@dataclass(frozen=True)
class Step:
    """One source model measured in one language under some variants."""

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
    """Run every step (:func:`run_variants`), loading each model once."""
    loaded: dict[str, LanguageModel] = {}

    def get(name: str) -> LanguageModel:
        if name not in loaded:
            loaded[name] = load(name)
        return loaded[name]

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
    that only one fine-tuned copy is held in memory."""
    validate.choice("direction", direction, ("x->en", "en->x"))
    outcomes = []
    for variant in variants:
        lm, details = variant_model(variant, source, language, recipe, target=target,
                                    targets=evaluation.targets,
                                    word_lists=evaluation.word_lists, progress=progress)
        result, heldout = _measure(lm, language, evaluation, progress)
        ppl = float("nan") if heldout is None else perplexity_of(heldout)
        aligned_to = target[1] if target and variant == "align" else None
        row = {"direction": direction, "language": language, "model": source.name,
               "role": role, "variant": variant, "method": LABELS[variant],
               "aligned_to": aligned_to, "fine_tuned": variant != "base",
               "cb": result.cb, "perplexity": ppl, "quality": quality(language),
               "paper_cb": paper_cb(direction, role, variant, language, aligned_to)}
        outcome = Outcome(row, result, details, heldout)
        outcomes.append(outcome)
        del lm  # one fine-tuned copy at a time
        gc.collect()
    return outcomes


def steps_table(steps: Sequence[Step]) -> pd.DataFrame:
    """The plan, one row per step."""
    return pd.DataFrame([{"direction": s.direction, "scored in": s.language, "model": s.source,
                          "as": s.role + (" (stand-in)" if s.stand_in else ""),
                          "variants": ", ".join(s.variants),
                          "aligned to": "" if s.target is None else "{} ({})".format(*s.target)}
                         for s in steps])


def details_table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """What went into each fine-tuned row: sentences, losses, CDA counts, anchors."""
    rows = []
    for o in outcomes:
        if o.details:
            anchors = o.details.get("anchors", {})
            rows.append({**{k: o.row[k] for k in ("direction", "language", "model", "variant")},
                         **{k: v for k, v in o.details.items() if k != "anchors"},
                         **{f"anchor {k}": v for k, v in anchors.items() if k != "top"}})
    return pd.DataFrame(rows)


def table(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """The outcomes as one table (Tables 2/5/8 form, with the quality column)."""
    return pd.DataFrame([o.row for o in outcomes])


def against(frame: pd.DataFrame, reference: str = "base",
            max_perplexity_ratio: float = 2.0) -> pd.DataFrame:
    """Each row of :func:`table` set against the monolingual ``reference`` row of its direction
    and language: ``base`` (the paper's "BERT, F.T. X": what fine-tuning, CDA, alignment or a
    multilingual model (Method 1) change) or ``ft`` (the same fine-tuning without ``W`` or
    rewriting: what the rotation or CDA add; unfine-tuned rows are then left out). Columns: the
    relative change of CB, ours and the paper's, whether they go the same way, the perplexity
    ratio, and ``usable``: perplexity at most ``max_perplexity_ratio`` times the reference's
    (True where no quality measure exists). A row that is not usable measures a broken language
    model, not a mitigated one.

    >>> rows = pd.DataFrame({"direction": "x->en", "language": "ko", "role": "monolingual",
    ...                      "variant": ["base", "ft", "rand"], "cb": [2.0, 1.0, 3.0],
    ...                      "paper_cb": [15.293, 6.995, 6.087], "perplexity": [10, 12, 900]})
    >>> against(rows)[["variant", "cb_change", "agrees", "usable"]].values.tolist()
    [['ft', -0.5, True, True], ['rand', 0.5, False, False]]
    >>> against(rows, "ft")[["variant", "cb_change", "agrees", "usable"]].values.tolist()
    [['rand', 2.0, False, False]]
    """
    validate.choice("reference", reference, ("base", "ft"))
    keys = ["direction", "language"]
    aligned = ["aligned_to"] if "aligned_to" in frame else []  # tells EN→X's align rows apart
    is_reference = (frame["variant"] == reference) & (frame["role"] == "monolingual")
    ref = frame[is_reference].set_index(keys)[["cb", "paper_cb", "perplexity"]]
    others = frame[~is_reference & ~((reference == "ft") & (frame["variant"] == "base"))]
    others = others.join(ref.add_suffix("_ref"), on=keys, how="inner")
    ratio = others["perplexity"] / others["perplexity_ref"]
    ours = others["cb"] / others["cb_ref"] - 1
    paper = (others["paper_cb"] / others["paper_cb_ref"] - 1).astype(float)
    return others.assign(reference=reference, cb_change=ours, paper_change=paper,
                         agrees=np.where(paper.isna(), None, np.sign(ours) == np.sign(paper)),
                         perplexity_ratio=ratio,
                         usable=ratio.isna() | (ratio <= max_perplexity_ratio)
                         )[[*keys, "role", "variant", *aligned, "reference", "cb_ref", "cb",
                            "cb_change", "paper_change", "agrees", "perplexity_ratio", "usable"]
                           ].reset_index(drop=True)


def jsd_to_english(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """Table 9 form: the mean Jensen-Shannon divergence (:func:`tables.mean_jsd`) between each
    row's distributions and those of the English monolingual ``base`` row. X→EN rows: how close
    language X's model comes to English (the paper: closer after alignment); EN→X rows: how far
    the English model moves from its original (the paper: further after alignment). The paper's
    value for the row is beside ours: "No Alignment" for ``ft``, "Alignment" for ``align``.
    Empty where the outcomes hold no English ``base`` row (a plan without EN→X).
    """
    from biasbook.chapters.ethnic_bias import tables

    english, compared = english_pairs(outcomes)
    if english is None:
        return pd.DataFrame()
    paper = datafiles.paper_results(data.CHAPTER)["tables"]["table9"]
    rows = []
    for o in compared:
        r = o.row
        rows.append({"direction": r["direction"], "language": r["language"], "model": r["model"],
                     "variant": r["variant"], "aligned_to": r["aligned_to"],
                     "jsd_to_english_base": tables.mean_jsd(o.result, english.result),
                     "paper": _paper_jsd(paper, r)})
    return pd.DataFrame(rows)


def english_pairs(outcomes: Sequence[Outcome]) -> tuple[Outcome | None, list[Outcome]]:
    """The English monolingual ``base`` outcome (None if the run has none) and, in order, the
    monolingual outcomes :func:`jsd_to_english` sets against it."""
    english = next((o for o in outcomes if o.row["language"] == "en"
                    and o.row["variant"] == "base" and o.row["role"] == "monolingual"), None)
    if english is None:
        return None, []
    return english, [o for o in outcomes if o is not english and o.row["role"] == "monolingual"]


def _paper_jsd(paper: dict, row: dict) -> float | None:
    column = {"ft": "no_alignment", "align": "alignment"}.get(row["variant"])
    if column is None:
        return None
    if row["direction"] == "x->en":
        printed = paper["rows"].get(row["language"])
    else:  # EN→X without alignment: one printed value, the same in every row
        printed = paper["rows"].get(row["aligned_to"] or next(iter(paper["rows"])))
    prefix = "x_to_en" if row["direction"] == "x->en" else "en_to_x"
    return None if printed is None else printed[paper["columns"].index(f"{prefix}_{column}")]


def distributions(outcomes: Sequence[Outcome], attribute: str, template: int) -> pd.DataFrame:
    """Scaled ``P'`` over targets for one attribute and template, one column per variant
    (the paper's Figures 4 and 6)."""
    return pd.DataFrame({f"{o.row['language']} {o.row['variant']}":
                         o.result.distribution(attribute, template) for o in outcomes})
