"""HERB's word lists and reported numbers, read from ``data/herb/`` as tidy frames.

:func:`printed_numbers` is the paper's Tables 1, 2, 3 and 6 as printed, one row per number;
:func:`biasbook.datafiles.paper_results` is the raw ``paper_results.yml`` it is read from.

The files are ``data/herb/*.yml``, read with :mod:`biasbook.datafiles`.

>>> words = descriptors()
>>> len(words), words["word"].nunique()  # `weak` and `strong` are listed twice
(112, 110)
"""

from __future__ import annotations

import pandas as pd

from biasbook import datafiles, validate

TOPICS: tuple[str, ...] = ("occupation", "intelligence", "appearance", "strength", "morality")
#: The continent columns as the paper's Tables 1, 2, 3 and 6 head them.
CONTINENT_COLUMNS: tuple[str, ...] = ("AF", "AS", "EU", "OC", "SA", "NA")
#: The authors' scripts' loop and print order (calculateBias.py, NonHierarchicalBias.py).
CODE_ORDER: tuple[str, ...] = ("AF", "AS", "EU", "NA", "OC", "SA")
#: Printed column position -> the continent it holds, under each reading of the tables.
READINGS: dict[str, tuple[str, ...]] = {"printed header": CONTINENT_COLUMNS,
                                        "code print order": CODE_ORDER}
#: The reading the chapter compares with (notebook 02 tests it: every printed row's implied
#: mean country distance is far more uniform under it; :mod:`.continent_order`).
PAPER_READING = "code print order"


def reading_map(reading: str) -> dict[str, str]:
    """Printed column header -> the continent that column holds under ``reading``.

    Used in: herb/02, herb/04.

    >>> reading_map("code print order")
    {'AF': 'AF', 'AS': 'AS', 'EU': 'EU', 'OC': 'NA', 'SA': 'OC', 'NA': 'SA'}
    """
    validate.choice("reading", reading, READINGS)
    return dict(zip(CONTINENT_COLUMNS, READINGS[reading], strict=True))


def descriptors() -> pd.DataFrame:
    """Appendix A: one row per descriptor entry (112), columns ``topic`` and ``word``, in the
    paper's order, which is the column order of the score arrays.

    Used in: herb/01, herb/02, herb/04, herb/05, biasbook plan, book/trust.

    >>> descriptors().groupby("topic", sort=False).size().tolist()
    [20, 25, 25, 23, 19]
    """
    spec = datafiles.load("herb", "descriptors")
    rows = [(topic, word) for topic in TOPICS for word in spec[topic]]
    return pd.DataFrame(rows, columns=["topic", "word"])


def substitutions() -> pd.DataFrame:
    """Appendix B: one row per descriptor entry, columns ``topic``, ``original`` and
    ``substitute``, aligned row for row with :func:`descriptors`.

    Used in: herb/02, biasbook plan.

    >>> substitutions().set_index("original").loc["bald", "substitute"]
    'eagle'
    """
    spec = datafiles.load("herb", "substitutions")
    rows = [(topic, old, new) for topic in TOPICS for old, new in spec[topic]]
    return pd.DataFrame(rows, columns=["topic", "original", "substitute"])


def printed_numbers() -> pd.DataFrame:
    """Tables 1, 2, 3 and 6, one row per printed number: ``table``, ``model``, ``metric``
    (``C_w``, ``C_z`` or ``plain``), ``condition`` (``full``, ``without <topic>``,
    ``replace <topic>``), ``region`` (the printed column header, or ``overall``), ``printed``
    (the number as printed) and ``multiplier`` (printed = statistic x multiplier). The headers
    are as printed; :func:`reading_map` says which continent a column holds under each reading.

    Used in: herb/02, herb/04.

    >>> table = printed_numbers()
    >>> row = table.query("table == 'table1' and model == 'BERT-base' and metric == 'C_w'")
    >>> float(row.set_index("region").loc["overall", "printed"])
    2.3223
    """
    rows = [
        {"table": name, **{k: record[k] for k in ("model", "metric", "condition")},
         "region": region, "printed": record[region], "multiplier": table["multiplier"]}
        for name, table in datafiles.paper_results("herb")["tables"].items()
        for record in table["rows"]
        for region in (*CONTINENT_COLUMNS, "overall")
    ]
    return pd.DataFrame(rows)
