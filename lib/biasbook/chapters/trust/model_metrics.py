"""The four metrics of the trust page's section 3, each with its interval, for every model.

Each metric is the chapters' own code applied to a model's :func:`.measure.measure`; its interval
is a percentile bootstrap over the metric's own items (:func:`metric_intervals`):

- **HERB C_w** (Li et al. 2022): the overall C_w (x 10^3, Table 1's scale) of "People in
  [region] are [description]." over the six continents and HERB notebook 05's countries
  (:mod:`biasbook.chapters.herb`); interval over the 112 descriptors;
- **CB** (Ahn & Oh 2021): the Categorical Bias score in English on few templates and attributes
  (:func:`biasbook.chapters.ethnic_bias.pipeline.cb_scores`); interval over template x attribute
  cells;
- **probe d**: the WEAT-style log-probability probe of :mod:`.probe` on Caliskan et al.'s male
  and female names x career and family words (effect size, positive = the stereotype); interval
  over the target names;
- **generated-text μ** (Bordia & Bowman 2019): mean |bias| of the words that co-occur with both
  genders' words (window 10, the paper's printed counting) in text the model samples after
  16 situations opened once with "He" and once with "She" (:data:`.measure.SITUATIONS`,
  :func:`text_bias`); interval over the situations (a situation's texts stay together, and
  the co-occurrences are counted again in every resample): the texts, not the words, are what
  the model sampled, so resampling words alone would leave out how much another sample of text
  moves the number.

:func:`model_table` gives every model's four metrics (long format), :func:`wide` and
:func:`value_text` models x metrics. The items of each metric (:func:`herb_items`,
:func:`cb_cells`, :func:`probe_associations`, :func:`situation_docs`) and the statistics on a
resample of them (:func:`herb_statistic`, :func:`mu_of`) serve :mod:`.agreement` too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from biasbook import reporting, stats
from biasbook.chapters.herb import regions
from biasbook.chapters.herb.tables import SCALE
from biasbook.chapters.herb.uncertainty import overall_intervals
from biasbook.chapters.lm_gender_bias import bias
from biasbook.chapters.lm_gender_bias.data import defining_pairs
from biasbook.metrics import cb as cb_metric
from biasbook.metrics.herb import hierarchical_bias
from biasbook.text.cooccurrence import gendered_words
from biasbook.text.corpora import tokenize

from . import probe as probe_lib
from .measure import Spec
from .variants import Measured

METRICS = ("HERB C_w", "CB (en)", "probe d", "generated-text μ")


def herb_items(bundle: Mapping[str, np.ndarray], spec: Spec) -> tuple[object, np.ndarray]:
    """(the region tree, the f(S) matrix): C_w's inputs; its items are the descriptor columns.

    Used in: book/trust.
    """
    return regions.region_tree(spec.region_table()), np.asarray(bundle["herb"])


def cb_cells(bundle: Mapping[str, np.ndarray]) -> np.ndarray:
    """``Var_n log P'`` per template x attribute cell (CB is their mean; the prior of the whole
    attribute list is kept when cells are resampled, as in the ethnic-bias chapter).

    Used in: book/trust.
    """
    norm = cb_metric.normalized_log_probability(bundle["cb_target"], bundle["cb_prior"])
    return cb_metric.target_variances(norm, ddof=1).ravel()


def probe_associations(bundle: Mapping[str, np.ndarray], spec: Spec) -> tuple[np.ndarray, int]:
    """(``s(w)`` of every target name, the number of male names).

    Used in: book/trust.
    """
    test = spec.probe_words()
    return probe_lib.associations(bundle["probe"], n_a=len(test.a)), len(test.x)


def text_bias(docs: Sequence[Sequence[str]], spec: Spec) -> np.ndarray:
    """The bias ``log P(w|f) / P(w|m)`` of every word of the tokenised generated texts ``docs`` (one
    document each) that co-occurs with both genders' words within ``spec.window`` words; empty where
    none does. The paper's printed counting and score (the Bordia & Bowman chapter's ``paper``
    counting, :func:`biasbook.chapters.lm_gender_bias.bias.score`): stop words and the gendered
    words themselves are not scored, and a gendered word near a text's edge counts (the authors'
    ``as-coded`` n-gram loop skips those within 10 words of either end, a third of a 64-token
    text).

    Used in: book/trust.
    """
    scores, _ = bias.score(docs, gendered_words(defining_pairs(spec.gender_pairs)), "paper",
                           "fixed", window=spec.window)
    return np.zeros(0) if scores is None else scores.scores


def situation_docs(bundle: Mapping[str, np.ndarray], spec: Spec) -> list[list[list[str]]]:
    """The tokenised texts of each situation (its prompts, each with its samples): the unit
    that the generated-text μ resamples. Texts follow the prompts' order, ``samples_per_prompt``
    per prompt, and a situation has ``prompts_per_situation`` prompts (He, She).

    Used in: book/trust.
    """
    size = spec.prompts_per_situation * spec.samples_per_prompt
    docs = [tokenize(str(t)) for t in bundle["texts"]]
    if len(docs) % size:
        raise ValueError(f"{len(docs)} texts do not split into situations of {size}")
    return [docs[i:i + size] for i in range(0, len(docs), size)]


def mu_of(groups: Sequence[Sequence[Sequence[str]]], spec: Spec) -> Callable[[np.ndarray],
                                                                             float]:
    """μ of the texts of the situations an index array picks (NaN where no word is scored).

    Used in: book/trust.
    """
    def mu(picked: np.ndarray) -> float:
        scored = text_bias([doc for i in picked.astype(int) for doc in groups[i]], spec)
        return float(np.abs(scored).mean()) if scored.size else float("nan")
    return mu


def herb_statistic(tree, scores: np.ndarray) -> Callable[[np.ndarray], float]:
    """C_w (x 10^3) on the descriptor columns an index array picks.

    Used in: book/trust.
    """
    return lambda columns: SCALE["table1"] * hierarchical_bias(
        tree, scores[:, columns.astype(int)]).overall


def metric_intervals(bundle: Mapping[str, np.ndarray], spec: Spec, *, n_resamples: int = 999,
                     seed: int = 0, level: float = 0.95) -> dict[str, dict]:
    """Each metric of :data:`METRICS` for one model: the record fields (``value``, ``ci_low``,
    ..., ``ci_units``) of its percentile bootstrap interval over its own items; ``value`` NaN
    where it is undefined (fewer than two scored words in the generated text).

    Used in: book/trust.
    """
    tree, scores = herb_items(bundle, spec)
    herb_ci = overall_intervals(tree, {"m": scores}, level=level, n_resamples=n_resamples,
                                seed=seed).iloc[0]
    scaled = {k: SCALE["table1"] * herb_ci[k] for k in ("value", "ci_low", "ci_high")}
    out = {"HERB C_w": {**herb_ci.drop("model").to_dict(), **scaled}}
    out["CB (en)"] = stats.interval(cb_cells(bundle), np.mean, level=level, method="percentile",
                                    n_resamples=n_resamples, seed=seed,
                                    unit="template x attribute cells").row()
    s, n_x = probe_associations(bundle, spec)
    out["probe d"] = probe_lib.effect_interval(s, n_x, level=level, n_resamples=n_resamples,
                                               seed=seed).row()
    groups = situation_docs(bundle, spec)
    mu = mu_of(groups, spec)
    situations = np.arange(len(groups))
    try:
        out["generated-text μ"] = stats.interval(
            situations, mu, level=level, method="percentile", n_resamples=n_resamples, seed=seed,
            unit="situations", vectorized=False).row()
    except ValueError:  # no word scored in the text, or in some resample of its situations
        out["generated-text μ"] = stats.Interval(mu(situations), np.nan, np.nan, level,
                                                 "percentile", len(groups), "situations").row()
    return out


def model_table(measured_models: Sequence[Measured], spec: Spec, *, n_resamples: int = 999,
                seed: int = 0) -> pd.DataFrame:
    """One row per model and metric: ``model``, ``variant``, ``metric`` and the interval's
    record fields (long format; :func:`wide` gives models x metrics).

    Used in: book/trust.
    """
    rows = []
    for m in measured_models:
        for metric, fields in metric_intervals(m.bundle, spec, n_resamples=n_resamples,
                                               seed=seed).items():
            rows.append({"model": m.label, "variant": m.variant, "metric": metric, **fields})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, column: str = "value") -> pd.DataFrame:
    """Models x metrics of one column of :func:`model_table`, in the models' and metrics'
    order.

    Used in: book/trust.
    """
    out = table.pivot(index="model", columns="metric", values=column)
    order = list(dict.fromkeys(table["model"]))
    return out.reindex(index=order, columns=[m for m in METRICS if m in out.columns])


def value_text(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Models x metrics as ``value [low, high]`` text (``n/a`` where undefined).

    Used in: book/trust.
    """
    text = [reporting.interval_text(r.value, r.ci_low, r.ci_high, digits=digits, style="g",
                                missing="n/a") for r in table.itertuples()]
    return wide(table.assign(text=text), "text")
