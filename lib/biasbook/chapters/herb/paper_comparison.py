"""Which of the paper's numbers a result is compared with: the row of the paper's tables that a
model stands for (:func:`paper_row`, :func:`paper_rows`; near misses get none, and why), the
paper's numbers of one table, unscaled and with their continent columns read under a reading
(:func:`paper_values`, :func:`relabel`; see :mod:`.continent_order`), and our tidy results with
the paper's value next to them (:func:`with_paper`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from biasbook.chapters.herb.data import PAPER_READING, printed_numbers, reading_map

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


def relabel(paper: pd.DataFrame, reading: str) -> pd.DataFrame:
    """A frame with a ``region`` column of printed headers, read under ``reading`` (see
    :data:`~.data.READINGS`); the printed header is kept in ``printed column``.

    Used in: herb/02, herb/04.

    >>> t = pd.DataFrame({"region": ["OC", "SA", "NA", "overall"]})
    >>> relabel(t, "code print order")["region"].tolist()
    ['NA', 'OC', 'SA', 'overall']
    """
    mapping = reading_map(reading)
    return paper.assign(**{"printed column": paper["region"],
                           "region": paper["region"].map(lambda r: mapping.get(r, r))})


def paper_values(table_name: str, reading: str = PAPER_READING) -> pd.DataFrame:
    """The paper's numbers of one table, tidy, with the statistic unscaled:
    ``model``, ``metric``, ``condition``, ``region`` (the continent under ``reading``: by
    default the authors' code's print order, see :mod:`.continent_order`), ``printed column``
    (the header it is printed under), ``printed``, ``multiplier``, ``paper`` (= printed /
    multiplier).

    Used in: herb/02, herb/04.

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
    frame = printed_numbers().query("table == @table_name").drop(columns="table")
    if frame.empty:
        raise ValueError(f"no table {table_name!r} in the paper's results")
    frame = relabel(frame, reading)
    return frame.assign(paper=frame["printed"] / frame["multiplier"]).reset_index(drop=True)


def paper_row(model: str) -> tuple[str | None, str]:
    """Which row of the paper's tables ``model`` is compared with, and why (or why none).

    Used in: herb/02.

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

    Used in: herb/02.

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

    Used in: herb/02.

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
