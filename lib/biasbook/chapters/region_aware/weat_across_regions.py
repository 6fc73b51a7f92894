"""Sec. 3 and Appendix C of Borah et al. (2024): Caliskan's WEAT tests on word2vec per region.

The paper trains word2vec on each region's GeoWAC sample separately and runs the WEAT tests of
Caliskan et al. (2017) on each (Table 1: the three gender tests; Table 7: eight tests). Here the
same runs on the offline stand-ins of :mod:`.corpora`, one word2vec model per (domain, region)
(:func:`biasbook.embeddings.train.word2vec`, seeded and cached), all ten Caliskan tests
(:func:`biasbook.embeddings.wordsets.load`, lower-cased because the corpora are), WEAT from
:mod:`biasbook.metrics.weat` (effect size with the sample standard deviation, one-sided
permutation p-value; OOV words dropped and listed, a test is not computable when a set keeps fewer
than half its words).

- :func:`region_vectors`: word2vec per region of a domain.
- :func:`weat_table`: one row per (domain, region, test), with the paper's Table 7 numbers beside
  ours where it has them.
- :func:`table7`, :func:`oov_table`: the paper's layout (test x region) and the OOV words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from tqdm.auto import tqdm

from biasbook import datafiles
from biasbook.chapters.region_aware import corpora
from biasbook.embeddings import train, wordsets
from biasbook.metrics import weat

CHAPTER = "region-aware"


def caliskan_tests() -> dict[str, wordsets.WeatTest]:
    """Caliskan et al.'s ten tests, lower-cased (the corpora and their vectors are).

    Used in: region-aware/02.
    """
    return wordsets.load("caliskan", lowercase=True)


def region_vectors(domain: str, *, regions: Sequence[str] | None = None,
                   max_docs: int | None = None, seed: int = 0,
                   corpus_options: Mapping | None = None, word2vec: Mapping | None = None,
                   progress: bool = True) -> dict:
    """Region -> word2vec ``KeyedVectors`` trained on that region's documents of ``domain``.

    Used in: region-aware/02.

    ``corpus_options`` go to :func:`.corpora.tokenized` (``per_region``, ``years``, ...),
    ``word2vec`` to :func:`biasbook.embeddings.train.word2vec` (gensim's parameters); ``seed``
    draws the sample and seeds training.
    """
    sentences = corpora.tokenized(domain, regions=regions, max_docs=max_docs, seed=seed,
                                  **dict(corpus_options or {}))
    return {region: train.word2vec(docs, seed=seed, **dict(word2vec or {}))
            for region, docs in tqdm(sentences.items(), desc=f"word2vec {domain}",
                                     disable=not progress)}


def _paper_table7() -> dict:
    return datafiles.paper_results(CHAPTER)["table7_weat_by_region"]


def weat_table(vectors: Mapping[str, object], *, domain: str = "",
               tests: Mapping[str, wordsets.WeatTest] | None = None, **weat_options
               ) -> pd.DataFrame:
    """One row per (region, test): ours (effect size, p-value, words kept, OOV words,
    computability) and, where Table 7 has the test, the paper's region-specific numbers
    (``paper_effect_size``, ``paper_p_value``) and the original GloVe ones (``caliskan_*``).

    Used in: region-aware/02.

    ``weat_options`` go to :func:`biasbook.metrics.weat.weat` (``ddof``, ``n_samples``, ``seed``).
    """
    tests = caliskan_tests() if tests is None else tests
    paper = _paper_table7()
    frames = []
    for region, kv in vectors.items():
        table = weat.run_tests(kv, tests, **weat_options)
        table = table.drop(columns=[c for c in table if c.startswith("paper_")])
        table.insert(0, "region", region)
        table.insert(0, "domain", domain)
        table.insert(3, "title", [tests[t].title for t in table["test"]])
        for key in ("effect_size", "p_value"):
            table[f"paper_{key}"] = [paper.get(t, {}).get(region, {}).get(key)
                                     for t in table["test"]]
            table[f"caliskan_{key}"] = [tests[t].paper.get(key) for t in table["test"]]
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def table7(table: pd.DataFrame) -> pd.DataFrame:
    """Table 7's layout: one row per (test, region) with ours beside the paper's, tests in the
    paper's order first, then the two it does not report (NaN paper columns); with the interval
    columns of :func:`.uncertainty.weat_intervals` (``ours``: ``value [low, high]``,
    ``paper_check``) where ``table`` has them.

    Used in: region-aware/02.
    """
    order = list(_paper_table7()) + [t for t in caliskan_tests() if t not in _paper_table7()]
    regions = [r for r in corpora.REGIONS if r in set(table["region"])]
    frame = table.assign(test=pd.Categorical(table["test"], order, ordered=True),
                         region=pd.Categorical(table["region"], regions, ordered=True))
    columns = ["domain", "test", "region", "effect_size", "paper_effect_size", "p_value",
               "paper_p_value", "computable"]
    columns[4:4] = [c for c in ("ours", "paper_check") if c in table]
    return frame.sort_values(["domain", "test", "region"])[columns].reset_index(drop=True)


def effect_matrix(table: pd.DataFrame, *, value: str = "effect_size") -> pd.DataFrame:
    """Test x (domain, region) matrix of one column (for a heat map or Table 1's layout); tests in
    Table 7's order, then those the paper does not report.

    Used in: region-aware/02.
    """
    frame = table.assign(column=table["domain"] + " / " + table["region"])
    wide = frame.pivot(index="test", columns="column", values=value)
    tests = list(table["test"].drop_duplicates())
    order = [t for t in _paper_table7() if t in tests] + [t for t in tests
                                                          if t not in _paper_table7()]
    return wide.loc[order, list(frame["column"].drop_duplicates())]


def oov_table(table: pd.DataFrame) -> pd.DataFrame:
    """The words each (domain, region) lacked, per test and set (only rows with some).

    Used in: region-aware/02.
    """
    columns = ["domain", "region", "test", "n_oov", "oov", "computable"]
    return table.loc[table["n_oov"] > 0, columns].reset_index(drop=True)


def weat_by_domain(vectors: Mapping[str, Mapping[str, object]], **options) -> pd.DataFrame:
    """:func:`weat_table` for every domain of ``vectors`` (domain -> region -> vectors), stacked.

    Used in: region-aware/02.
    """
    return pd.concat([weat_table(by_region, domain=domain, **options)
                      for domain, by_region in vectors.items()], ignore_index=True)


def paper_matrix() -> pd.DataFrame:
    """Table 7's effect sizes as a test x region matrix (the paper's tests, in its order).

    Used in: region-aware/02.
    """
    return pd.DataFrame({test: {r: v[r]["effect_size"] for r in corpora.REGIONS}
                         for test, v in _paper_table7().items()}).T


def computable_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per (domain, region): tests run, tests computable, and the median share of OOV words.

    Used in: region-aware/02.
    """
    sizes = {name: sum(len(getattr(t, s)) for s in "xyab") for name, t in caliskan_tests().items()}
    oov_share = table["n_oov"] / table["test"].map(sizes)
    return (table.assign(oov_share=oov_share).groupby(["domain", "region"], sort=False)
            .agg(tests=("test", "size"), computable=("computable", "sum"),
                 median_oov_share=("oov_share", "median")).reset_index())
