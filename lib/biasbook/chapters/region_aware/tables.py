"""Corpus tables of the region-aware chapter in the paper's forms (Tables 5 and 6).

- :func:`paper_table5`: GeoWAC's examples per country as the paper prints them.
- :func:`volumes`: the stand-ins' Table 5 over several domains.
- :func:`selection_coverage`: per (domain, region), how many countries the corpus has and the
  share of the region's documents the selected ones hold.
- :func:`fm_table`: Table 6 (F- and M-aligned examples per region) beside the paper's.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from biasbook import datafiles
from biasbook.chapters.region_aware import corpora, gendered

CHAPTER = "region-aware"


def paper_table5() -> pd.DataFrame:
    """``region``, ``country``, ``examples`` of the paper's Table 5.

    Used in: region-aware/01.
    """
    data = datafiles.paper_results(CHAPTER)["table5_geowac_examples"]
    return pd.DataFrame([(region, country, n) for region, countries in data.items()
                         for country, n in countries.items()],
                        columns=["region", "country", "examples"])


def volumes(options: Mapping[str, Mapping], *, all_sources: bool = False) -> pd.DataFrame:
    """:func:`.corpora.volume_table` of every domain of ``options`` (domain -> its options),
    stacked with a ``domain`` column.

    Used in: region-aware/01.
    """
    return pd.concat([corpora.volume_table(d, all_sources=all_sources, **opts).assign(domain=d)
                      for d, opts in options.items()], ignore_index=True)


def selection_coverage(options: Mapping[str, Mapping]) -> pd.DataFrame:
    """Per (domain, region): ``countries`` in the corpus, ``documents`` of all of them,
    ``selected`` documents of the top countries, and ``share_selected``.

    Used in: region-aware/01.
    """
    every = volumes(options, all_sources=True)
    every["kept"] = every["examples"].where(every["selected"], 0)
    table = (every.groupby(["domain", "region"], sort=False)
             .agg(countries=("code", "size"), documents=("examples", "sum"),
                  selected=("kept", "sum")).reset_index())
    table["share_selected"] = table["selected"] / table["documents"]
    return table


def fm_table(options: Mapping[str, Mapping], *, rule: str = "exclusive") -> pd.DataFrame:
    """Table 6 per domain: :func:`.gendered.counts` of every selected document, the paper's
    counts (``paper_total``, ``paper_female``, ``paper_male``) and both female shares
    (female / (female + male)).

    Used in: region-aware/01.
    """
    frames = [gendered.counts(gendered.label_documents(corpora.documents(d, **opts), rule=rule))
              .assign(domain=d) for d, opts in options.items()]
    table = pd.concat(frames, ignore_index=True)
    paper = pd.DataFrame(datafiles.paper_results(CHAPTER)["table6_fm_datasets"]).T
    table = table.join(paper.add_prefix("paper_"), on="region")
    table["female_share"] = table["female"] / (table["female"] + table["male"])
    table["paper_female_share"] = table["paper_female"] / table["paper_total"]
    return table
