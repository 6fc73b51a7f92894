"""Region-aware gender-bias topics and metrics (Borah, Garimella & Mihalcea 2024).

- :mod:`.corpora`: region-labelled corpora (UN General Debate sentences and city tweets stand in
  for GeoWAC; GeoWAC itself on the ``paper`` profile), Table 5 volumes.
- :mod:`.weat_regions`: Sec. 3 and Appendix C, the ten Caliskan WEAT tests on word2vec vectors
  trained per region (Tables 1 and 7).
- :mod:`.region_weat`: Sec. 5, WEAT on region-aware topic pairs with region-specific names, on
  fastText vectors per evaluation domain and region (Table 4).
- :mod:`.iat`: Sec. 4.3's IAT protocol as a small text test a reader can take.
- :mod:`.figures`: the pipeline diagram and effect-size heat maps.
- :mod:`.topics`, :mod:`.personas`: Secs. 4.1-4.2 and 6 (BERTopic topics, topic pairs, personas).

:func:`record_metrics` records one column of a result table, row by row, with the paper's value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def record_metrics(rec, key: str, frame: pd.DataFrame, *, value: str, paper: str | None = None,
                   labels: Sequence[str] = ()) -> int:
    """``rec.metric(key, row[value], paper=row[paper], **labels)`` for every row whose value is a
    finite number (rows that are not computable carry NaN and are left out; their reasons are in
    the recorded tables). A missing paper value is recorded as ``None``. Returns the count.
    """
    count = 0
    for _, row in frame.iterrows():
        number = row[value]
        if number is None or not math.isfinite(float(number)):
            continue
        theirs = None if paper is None else row[paper]
        if theirs is not None and not math.isfinite(float(theirs)):
            theirs = None
        rec.metric(key, float(number), paper=None if theirs is None else float(theirs),
                   **{label: row[label] for label in labels})
        count += 1
    return count
