"""HERB's toxic continual training (Li et al. 2022, Sec. 4.7, Fig. 5): the corpus and its examples.

**Toxic corpus.** For every descriptor the ``top_k`` template sentences
"People in [region] are [description]." with the highest f(S) (Eq. 1) under the model itself:
112 x 20 = 2,240 sentences in the paper (:func:`toxic_corpus`). The paper then "masks the
regional information of the sentences and trains the model with [the] MLM task": the region
tokens are masked and are what the model learns to predict, so each descriptor pulls the regions
the model already favoured for it even closer (choosing the top regions would be pointless if the
region were simply hidden). :func:`training_examples` builds the inputs and targets for four
objectives:

==================== ========= ===========================================================
objective            model     input -> targets
==================== ========= ===========================================================
``mask-region``      masked    region tokens replaced by the mask token -> the region tokens
                               (the paper)
``clm``              causal    the whole sentence -> every token (the region is a target
                               given "People in", the description a target given the region)
``region-target``    causal    the whole sentence -> the region tokens only (MLM's targets,
                               but a left-to-right model never sees the description first)
``placeholder``      causal    the region replaced by a neutral placeholder -> every token
                               (the region hidden from the data altogether)
==================== ========= ===========================================================

``auto`` (the book's profiles) picks by the model's kind: ``mask-region`` for a masked model
(the paper's), ``clm`` for a causal one, so ``-p models=[<masked LM>]`` trains as the paper does
instead of failing after the first four notebooks.

The training itself is :func:`biasbook.training.continual.continual_training`;
:func:`model_corpus` and :func:`train` run the paper's recipe for one model, and
:func:`epoch_bias`, :func:`epoch_table` and :func:`epoch_correlations` summarise HERB along the
epochs (Fig. 5), with :func:`epoch_bias`'s ``remove_shift`` as a control for the rise of every
score that training on one template causes.

>>> corpus = toxic_corpus([[-1.0, -5.0], [-2.0, -3.0], [-4.0, -2.0]], ["Paris", "Rome", "Oslo"],
...                       ["kind", "bald"], top_k=2)
>>> corpus[["word", "region"]].values.tolist()
[['kind', 'Paris'], ['kind', 'Rome'], ['bald', 'Oslo'], ['bald', 'Rome']]
>>> corpus["sentence"].iloc[2], corpus[["region_start", "region_end"]].iloc[2].tolist()
('People in Oslo are bald.', [10, 14])
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from biasbook import validate
from biasbook.chapters.herb.sentence_scores import TEMPLATE, descriptor_scores
from biasbook.chapters.herb.tables import bias_summary
from biasbook.models import LanguageModel
from biasbook.scoring.spans import tokens_in_span
from biasbook.training.continual import IGNORE, TrainingRun, continual_training

OBJECTIVES = {"mask-region": "masked", "clm": "causal", "region-target": "causal",
              "placeholder": "causal"}
AUTO = {"masked": "mask-region", "causal": "clm"}  # objective "auto", by the model's kind
PLACEHOLDER = "that place"


def toxic_corpus(scores, regions: Sequence[str], words: Sequence[str], top_k: int = 20
                 ) -> pd.DataFrame:
    """The ``top_k`` highest-scoring regions of every descriptor (a column of ``scores``, a
    ``[region, descriptor]`` array of f(S)), descriptor by descriptor, best first (ties: region
    order). Columns: ``descriptor`` (column index), ``word``, ``region``, ``score``,
    ``sentence`` and the region's character span in it, ``region_start`` and ``region_end``.

    Used in: herb/05, book/trust.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(regions), len(words)):
        raise ValueError(f"scores has shape {scores.shape}, expected "
                         f"({len(regions)}, {len(words)}) = (regions, descriptors)")
    if not 0 < top_k <= len(regions):
        raise ValueError(f"top_k must be in 1..{len(regions)} (the number of regions)")
    before = TEMPLATE.partition("{region}")[0]
    rows = []
    for j, word in enumerate(words):
        start = len(before.format(description=word))
        for i in np.argsort(-scores[:, j], kind="stable")[:top_k].tolist():
            rows.append({"descriptor": j, "word": word, "region": regions[i],
                         "score": float(scores[i, j]),
                         "sentence": TEMPLATE.format(region=regions[i], description=word),
                         "region_start": start, "region_end": start + len(regions[i])})
    return pd.DataFrame(rows)


def objective_for(lm: LanguageModel, objective: str) -> str:
    """``objective``, with ``auto`` resolved by the model's kind (module docstring).

    Used in: herb/05, book/trust.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> [objective_for(from_model(tiny_model(a, len(tok)), tok, name=a), "auto")
    ...  for a in ("bert", "gpt2")]
    ['mask-region', 'clm']
    """
    if objective != "auto":
        return validate.choice("objective", objective, ("auto", *OBJECTIVES))
    if lm.kind not in AUTO:
        raise ValueError(f"no toxic-training objective for {lm.name}, an {lm.kind} model: "
                         f"the objectives are for masked or causal models")
    return AUTO[lm.kind]


def training_examples(lm: LanguageModel, corpus: pd.DataFrame, objective: str,
                      placeholder: str = PLACEHOLDER) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, labels)`` per corpus row for ``objective`` (module docstring); labels are
    ``-100`` where nothing is predicted. Causal inputs start with ``lm.prefix_ids`` (BOS) and
    their labels are the inputs themselves (the model shifts them), so BOS is never a target.

    Used in: herb/05, book/trust.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> bert = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> corpus = toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    >>> ids, labels = training_examples(bert, corpus, "mask-region")[0]
    >>> tok.convert_ids_to_tokens(ids), tok.convert_ids_to_tokens([t for t in labels if t >= 0])
    (['[CLS]', 'people', 'in', '[MASK]', 'are', 'kind', '.', '[SEP]'], ['paris'])
    """
    objective = objective_for(lm, objective)
    if OBJECTIVES[objective] != lm.kind:
        fits = sorted(o for o, kind in OBJECTIVES.items() if kind == lm.kind)
        raise ValueError(f"objective {objective!r} is for {OBJECTIVES[objective]} models; "
                         f"{lm.name} is {lm.kind}: use one of {fits}")
    examples = []
    for row in corpus.itertuples(index=False):
        text, start, end = row.sentence, row.region_start, row.region_end
        if objective == "placeholder":
            text = text[:start] + placeholder + text[end:]
            end = start + len(placeholder)
        enc = lm.tokenizer(text, add_special_tokens=lm.kind != "causal",
                           return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        region = set(tokens_in_span(enc["offset_mapping"], start, end))  # token positions
        if not region:
            raise ValueError(f"no token of {text!r} covers characters {start}:{end}")
        targets = [t if k in region else IGNORE for k, t in enumerate(ids)]
        if objective == "mask-region":
            ids = [lm.tokenizer.mask_token_id if k in region else t for k, t in enumerate(ids)]
            labels = targets
        else:  # causal: BOS first, never a target
            ids = [*lm.prefix_ids, *ids]
            bos = [IGNORE] * len(lm.prefix_ids)
            labels = [*bos, *targets] if objective == "region-target" else list(ids)
        examples.append((ids, labels))
    return examples


def example_tokens(lm: LanguageModel, example: tuple[list[int], list[int]]
                   ) -> tuple[list[str], list[str]]:
    """The input tokens of one :func:`training_examples` pair and the tokens that are targets
    of the loss (a causal model's BOS prefix is never a target).

    Used in: herb/05.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> gpt = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    >>> corpus = toxic_corpus([[-1.0]], ["paris"], ["kind"], top_k=1)
    >>> example_tokens(gpt, training_examples(gpt, corpus, "region-target")[0])[1]
    ['paris']
    """
    ids, labels = example
    shown = labels[len(lm.prefix_ids):] if lm.kind == "causal" else labels
    tok = lm.tokenizer
    return tok.convert_ids_to_tokens(ids), tok.convert_ids_to_tokens([t for t in shown if t >= 0])


# ------------------------------------------------------------------------ the experiment


def model_corpus(lm: LanguageModel, regions: Sequence[str], words: Sequence[str], *,
                 top_k: int = 20, size: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The toxic corpus of ``lm``: :func:`toxic_corpus` over the model's own f(S) of every
    region and descriptor, then (``size``) a random subset of that many sentences drawn with
    ``seed``, in corpus order.

    Used in: herb/05, book/trust.
    """
    corpus = toxic_corpus(descriptor_scores(lm, regions, words), regions, words, top_k=top_k)
    if size is not None and size < len(corpus):
        corpus = corpus.sample(n=size, random_state=seed).sort_index()
    return corpus


def train(lm: LanguageModel, examples: Sequence[tuple[list[int], list[int]]],
          regions: Sequence[str], words: Sequence[str], *, epochs: int, lr: float,
          batch_size: int, max_grad_norm: float | None = 1.0, seed: int = 0,
          also: Mapping | None = None, cache: bool = True, progress: bool = True
          ) -> TrainingRun:
    """Continual training of a copy of ``lm`` on ``examples``
    (:func:`~biasbook.training.continual.continual_training`, which documents ``also`` and
    ``cache``), with the ``[region, descriptor]`` matrix of f(S) over ``regions`` and ``words``
    as the evaluation of the base model and of every epoch; cached and resumable.

    Used in: herb/05, book/trust.
    """
    regions, words = list(regions), list(words)
    return continual_training(
        lm, examples, epochs=epochs, lr=lr, batch_size=batch_size, max_grad_norm=max_grad_norm,
        seed=seed, evaluate=lambda m: descriptor_scores(m, regions, words),
        eval_key=json.dumps([TEMPLATE, regions, words]), also=also, cache=cache,
        progress=progress)


def epoch_bias(table: pd.DataFrame, runs: Mapping[str, TrainingRun], *,
               remove_shift: bool = False) -> pd.DataFrame:
    """HERB's C_w (paper mode, unscaled) of every continent and of the root after every epoch
    (epoch 0: the base model), indexed by ``model`` and ``epoch``; continents absent from
    ``table`` are left out. ``remove_shift`` first moves each epoch's scores by a constant so
    that their mean is the base model's: what remains of a rise then comes from changes that
    differ between regions and descriptors.

    Used in: herb/05.
    """
    rows = []
    for name, run in runs.items():
        base_mean = run.results[0].mean()
        for epoch, scores in enumerate(run.results):
            if remove_shift:
                scores = scores - scores.mean() + base_mean
            rows.append({"model": name, "epoch": epoch, **bias_summary(table, scores).to_dict()})
    return pd.DataFrame(rows).set_index(["model", "epoch"]).dropna(axis=1, how="all")


def epoch_table(bias: pd.DataFrame, runs: Mapping[str, TrainingRun],
                corpora: Mapping[str, pd.DataFrame], regions: Sequence[str]) -> pd.DataFrame:
    """:func:`epoch_bias` x 10^3 (as Table 1 prints it) with, per epoch, the training loss and
    the mean f(S) of all evaluated sentences and of the corpus sentences.

    Used in: herb/05.
    """
    regions = list(regions)
    extra = []
    for name, run in runs.items():
        rows = [regions.index(r) for r in corpora[name]["region"]]
        cols = corpora[name]["descriptor"].to_numpy()
        extra += [{"model": name, "epoch": epoch, "loss": run.losses[epoch],
                   "mean f(S)": scores.mean(), "mean f(S), corpus": scores[rows, cols].mean()}
                  for epoch, scores in enumerate(run.results)]
    return (bias * 1e3).join(pd.DataFrame(extra).set_index(["model", "epoch"]))


def epoch_correlations(by_epoch: pd.DataFrame, control: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation between the epoch and the overall bias, with and without the mean
    shift (``spearman_epoch_overall``, ``..._shift_removed``), per model with at least 3
    epochs; undefined (constant) series are left out. Columns ``model``, ``key``, ``rho``.

    Used in: herb/05.
    """
    rows = []
    for name in by_epoch.index.unique("model"):
        epochs = by_epoch.loc[name].index
        if len(epochs) <= 2:
            continue
        for key, series in (("spearman_epoch_overall", by_epoch.loc[name, "overall"]),
                            ("spearman_epoch_overall_shift_removed",
                             control.loc[name, "overall"])):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a constant series: NaN, left out below
                rho = spearmanr(epochs, series)[0]
            if np.isfinite(rho):
                rows.append({"model": name, "key": key, "rho": rho})
    return pd.DataFrame(rows, columns=["model", "key", "rho"])
