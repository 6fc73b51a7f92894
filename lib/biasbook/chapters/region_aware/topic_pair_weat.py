"""Sec. 5 of Borah et al. (2024): WEAT on region-aware topic pairs, per evaluation domain, region.

For every F-M topic pair of a region the paper builds a WEAT test from the two topics' word lists
(top words by KeyBERT), male/female terms and ten region-specific names per gender (Appendix F,
Table 12; ``data/region-aware/weat-terms.yml``), trains fastText on each evaluation domain split by
region and reports the effect size (Table 4). A positive effect means the bias points the pair's
way: the F topic nearer the female words, the M topic nearer the male words.

Choices, each an option:

- ``terms``: ``"text"`` (default) uses Appendix F's prose list of 11 + 11 terms (brother/sister,
  father/mother, ... male/female); ``"table-12"`` the 8 + 8 Table 12 prints. ``names=False``
  leaves the region's names out.
- ``roles``: WEAT's target and attribute sets are not interchangeable (the effect size is
  normalised over the targets). ``"gender-targets"`` (default) follows Caliskan et al.'s gender
  tests, which the paper's Table 7 lists as "Male names vs Female names - career vs family":
  X = male words, Y = female words, A = M-topic words, B = F-topic words. ``"topic-targets"``
  swaps them (X = F-topic words, Y = M-topic words, A = female, B = male words), the order of
  Table 1's caption. Both have the same sign convention.
- ``oov``: the paper picked fastText "because it allows to extract embeddings of words that are
  not present in the target text": ``"subword"`` (default) answers every word from its character
  n-grams and lists the words so synthesised; ``"drop"`` treats them as OOV (WEAT drops them, and
  a set keeping under half its words makes the test not computable).

Pairs may carry a ``pairs`` mark (:data:`.pairing.PAIR_MARKS`: ``"passing"``, or ``"filled"``
for a failing pair that :func:`.pairing.topic_pairs` filled in); every result row, Table 4 row and
heat-map row keeps it, and :func:`pair_sets` sets the passing pairs beside the filled ones.

Words are lower-cased (the corpora are): every pair's test is a
:class:`~biasbook.embeddings.wordsets.WeatTest` (:func:`pair_test`) lower-cased by
:meth:`~biasbook.embeddings.wordsets.WeatTest.lowercased`, and its vectors are read by WEAT's one
lookup step (:func:`biasbook.embeddings.vectors.oov_report`, with ``subword`` for ``"subword"``).
:func:`keybert_words` gives a topic's KeyBERT words from its documents (KeyBERT 0.9 with the
offline all-MiniLM-L6-v2; the topic's embedding is the mean embedding of its documents, so long
topics are not truncated to the encoder's window).

>>> g = gender_words("Asia", terms="table-12")
>>> g["female"][-3:], len(g["male"]), len(g["female"])
(['nami', 'anika', 'rina'], 18, 18)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook import datafiles, validate
from biasbook.chapters.region_aware import corpora
from biasbook.embeddings import train, wordsets
from biasbook.embeddings.vectors import normalise
from biasbook.metrics import weat

CHAPTER = "region-aware"
TERMS = ("text", "table-12")
ROLES = ("gender-targets", "topic-targets")
OOV = ("subword", "drop")
RESULT_COLUMNS = ["domain", "region", "rank", "female_topic", "male_topic", "effect_size",
                  "p_value", "n_gender", "n_topic", "synthesised", "n_synthesised", "oov",
                  "shared", "has_vectors", "computable", "reason"]


def gender_words(region: str, *, terms: str = "text", names: bool = True) -> dict[str, list[str]]:
    """``{"male": [...], "female": [...]}``: the gender terms, then the region's names (Table 12),
    lower-cased, repeats removed (a hyphenated name stays one word: fastText embeds it whole).

    Used in: region-aware/05.
    """
    validate.choice("terms", terms, TERMS)
    data = datafiles.load(CHAPTER, "weat-terms")
    if region not in data["names"]:
        raise ValueError(f"no names for region {region!r}; regions: {list(data['names'])}")
    out = {}
    for gender in ("male", "female"):
        words = list(data["gender_terms"][terms][gender])
        if names:
            words += data["names"][region][gender]
        out[gender] = list(dict.fromkeys(normalise(w, "lower") for w in words))
    return out


def paper_pairs(regions: Sequence[str] | None = None) -> pd.DataFrame:
    """The paper's topic pairs (Table 3) with their Table 12 words and Table 4 effect sizes:
    ``region``, ``rank`` (P1..P5 as 1..5), ``female_topic``, ``male_topic``, ``female_words``,
    ``male_words``, ``pairs`` (``"passing"``: Table 3 lists pairs that met Sec. 4.2's
    condition), ``paper_reddit``, ``paper_un``.

    Used in: region-aware/05, region-aware/06.
    """
    pairs = datafiles.paper_results(CHAPTER)["table3_4_topic_pairs"]
    words = datafiles.load(CHAPTER, "weat-terms")["topics"]
    rows = [{"region": region, "rank": int(p["pair"][1:]), "female_topic": p["female"],
             "male_topic": p["male"], "female_words": list(words[region][p["female"]]),
             "male_words": list(words[region][p["male"]]), "pairs": "passing",
             "paper_reddit": p["reddit"], "paper_un": p["un"]}
            for region, listed in pairs.items() for p in listed
            if regions is None or region in regions]
    return pd.DataFrame(rows)


def evaluation_vectors(domain: str, *, regions: Sequence[str] | None = None,
                       max_docs: int | None = None, seed: int = 0,
                       corpus_options: Mapping | None = None, fasttext: Mapping | None = None,
                       progress: bool = True) -> dict:
    """Region -> fastText vectors trained on that region's documents of an evaluation domain
    (``corpus_options`` to :func:`.corpora.tokenized`, ``fasttext`` to gensim's ``FastText``).

    Used in: region-aware/05.
    """
    sentences = corpora.tokenized(domain, regions=regions, max_docs=max_docs, seed=seed,
                                  **dict(corpus_options or {}))
    return {region: train.fasttext(docs, seed=seed, **dict(fasttext or {}))
            for region, docs in tqdm(sentences.items(), desc=f"fastText {domain}",
                                     disable=not progress)}


def pair_test(pair, gender: dict[str, list[str]], roles: str = "gender-targets"
              ) -> wordsets.WeatTest:
    """The WEAT of one topic pair (a row of :func:`paper_pairs`) with ``gender``
    (:func:`gender_words`), its sets in the order ``roles`` gives (module docstring), lower-cased.

    Used in: region-aware/05.
    """
    female, male = pair["female_topic"], pair["male_topic"]
    sides = [(gender["male"], "male words"), (gender["female"], "female words"),
             (pair["male_words"], f"{male} (M)"), (pair["female_words"], f"{female} (F)")]
    if validate.choice("roles", roles, ROLES) == "topic-targets":
        sides.reverse()  # X = F topic, Y = M topic, A = female, B = male
    fields = {k: v for side, (words, label) in zip(wordsets.SIDES, sides, strict=True)
              for k, v in ((side, tuple(words)), (f"{side}_name", label))}
    return wordsets.WeatTest(name=f"{female} - {male}", title=f"{female} - {male}",
                             source="borah2024region", **fields).lowercased()


def region_weat(pairs: pd.DataFrame, vectors: Mapping[str, object], *, domain: str = "",
                terms: str = "text", names: bool = True, roles: str = "gender-targets",
                oov: str = "subword", **weat_options) -> pd.DataFrame:
    """One WEAT (:func:`pair_test`) per topic pair (rows of ``pairs``: ``region``, ``rank``,
    ``female_topic``, ``male_topic``, ``female_words``, ``male_words``) on its region's vectors.

    Used in: region-aware/05.

    Columns: :data:`RESULT_COLUMNS` (``synthesised``: words answered from n-grams only, and
    ``n_synthesised`` of them; ``has_vectors``: whether the region has vectors in the domain;
    ``oov``: words dropped; ``shared``: words in both a gender list and a topic list, which WEAT
    keeps, as the paper's lists do) plus the ``pairs`` mark and any ``paper_*`` columns of
    ``pairs``. A pair whose region has no vectors in this domain is a row with
    ``computable=False`` and the reason. ``weat_options`` go to :func:`biasbook.metrics.weat.weat`.
    """
    validate.choice("oov", oov, OOV)
    rows = []
    for _, pair in pairs.iterrows():
        gender = gender_words(pair["region"], terms=terms, names=names)
        test = pair_test(pair, gender, roles)
        row = {**pair, "domain": domain, "n_gender": len(gender["male"]) + len(gender["female"]),
               "n_topic": len(pair["female_words"]) + len(pair["male_words"]),
               "shared": ", ".join(sorted(set(test.x + test.y) & set(test.a + test.b))),
               "synthesised": "", "n_synthesised": 0, "oov": "", "effect_size": np.nan,
               "p_value": np.nan, "has_vectors": pair["region"] in vectors, "computable": False,
               "reason": f"domain {domain!r} has no documents of {pair['region']}"}
        if pair["region"] in vectors:
            result = weat.weat(vectors[pair["region"]], *test.sets().values(),
                               subword=oov == "subword", **weat_options)
            synthesised = dict.fromkeys(w for ws in result.synthesised.values() for w in ws)
            row |= result.row() | {"synthesised": ", ".join(synthesised),
                                   "n_synthesised": len(synthesised)}
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame[RESULT_COLUMNS + [c for c in frame if _carried(c)]]


def _carried(column) -> bool:
    """A column of the pairs that every result row keeps: the mark and the paper's numbers."""
    return column == "pairs" or str(column).startswith("paper_")


#: The paper's Table 4 column each evaluation domain is compared with (tweets stand in for Reddit).
PAPER_COLUMN = {"un-debates": "paper_un", "tweets": "paper_reddit"}


def weat_by_domain(pairs: pd.DataFrame, vectors: Mapping[str, Mapping[str, object]],
                   **options) -> pd.DataFrame:
    """:func:`region_weat` for every domain of ``vectors`` (domain -> region -> vectors),
    stacked, with ``paper``: the Table 4 value of the domain's column (:data:`PAPER_COLUMN`)
    where ``pairs`` carries it.

    Used in: region-aware/05.
    """
    frames = []
    for domain, by_region in vectors.items():
        frame = region_weat(pairs, by_region, domain=domain, **options)
        frames.append(frame.assign(paper=frame.get(PAPER_COLUMN.get(domain), np.nan)))
    return pd.concat(frames, ignore_index=True)


def subword_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per (domain, region): pairs, computable pairs, and the mean share of a test's words that
    fastText had to build from character n-grams (words unseen in that region's text).

    Used in: region-aware/05.
    """
    share = results["n_synthesised"] / (results["n_gender"] + results["n_topic"])
    share = share.where(results["has_vectors"])
    return (results.assign(synthesised_share=share)
            .groupby(["domain", "region"], sort=False)
            .agg(pairs=("rank", "size"), computable=("computable", "sum"),
                 synthesised_share=("synthesised_share", "mean")).reset_index())


def table4(results: pd.DataFrame) -> pd.DataFrame:
    """Table 4's layout: one row per (region, pair), one effect-size column per domain, the
    paper's Reddit and UN columns beside them when the pairs carried them, and the ``pairs``
    mark where the pairs had one.

    Used in: region-aware/05.
    """
    index = ["region", "rank", "female_topic", "male_topic"]
    index += ["pairs"] if "pairs" in results else []
    wide = results.set_index([*index, "domain"])["effect_size"].unstack("domain")
    wide.columns = [f"ours_{c}" for c in wide.columns]
    # the paper's numbers: not the per-domain "paper", nor the interval check's text
    paper = [c for c in results if c.startswith("paper_") and c != "paper_check"]
    if paper:
        wide = wide.join(results.groupby(index, sort=False)[paper].first())
    return _in_paper_order(wide.reset_index())


def _in_paper_order(table: pd.DataFrame) -> pd.DataFrame:
    """``table``'s rows by region (in :data:`.corpora.REGIONS`' order), then by pair ``rank``."""
    order = table["region"].map({r: i for i, r in enumerate(corpora.REGIONS)})
    return table.assign(_order=order).sort_values(["_order", "rank"]).drop(columns="_order") \
        .reset_index(drop=True)


def heatmap_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Rows "region P<rank>: F topic - M topic" (ending " [filled]" for a filled pair),
    columns the effect-size columns of :func:`table4` (ours per domain, then the paper's).

    Used in: region-aware/05.

    >>> table = pd.DataFrame({"region": ["Asia", "Asia"], "rank": [1, 2], "pairs": ["passing",
    ...     "filled"], "female_topic": ["A", "B"], "male_topic": ["C", "D"], "ours_un": [0.5, 1]})
    >>> heatmap_frame(table).index.tolist()
    ['Asia P1: A - C', 'Asia P2: B - D [filled]']
    """
    values = [c for c in table if c.startswith(("ours_", "paper_"))]
    labels = (table["region"] + " P" + table["rank"].astype(str) + ": " + table["female_topic"]
              + " - " + table["male_topic"])
    if "pairs" in table:
        labels = labels.where(table["pairs"] != "filled", labels + " [filled]")
    return table[values].set_axis(labels, axis=0).astype(float)


#: The sets of :func:`pair_sets`: which ``pairs`` marks each holds.
PAIR_SETS = {"passing": ("passing",), "filled": ("filled",),
             "passing+filled": ("passing", "filled")}


def pair_sets(results: pd.DataFrame, *, by: Sequence[str] = ("domain", "region")
              ) -> pd.DataFrame:
    """The region-aware WEAT on the passing pairs only, the filled pairs only and both (the
    set the pipeline used): per group of ``by`` and set (column ``pairs``, :data:`PAIR_SETS`),
    ``n_pairs``, ``computable``, ``mean_effect`` and ``positive`` (share of the computable
    effects above 0, the pair's way) over the computable pairs; NaN where a set has none.

    Used in: region-aware/05.

    >>> results = pd.DataFrame({"domain": "un", "pairs": ["passing", "filled", "filled"],
    ...                         "effect_size": [0.5, -0.25, float("nan")]})
    >>> pair_sets(results, by=["domain"])[["pairs", "n_pairs", "mean_effect"]].values.tolist()
    [['passing', 1, 0.5], ['filled', 2, -0.25], ['passing+filled', 3, 0.125]]
    """
    keys = validate.word_list("by", by)
    rows = []
    for group, part in results.groupby(keys, sort=False):
        for name, marks in PAIR_SETS.items():
            chosen = part[part["pairs"].isin(marks)]
            effects = chosen["effect_size"].dropna()
            rows.append({**dict(zip(keys, group, strict=True)), "pairs": name,
                         "n_pairs": len(chosen), "computable": len(effects),
                         "mean_effect": float(effects.mean()) if len(effects) else np.nan,
                         "positive": float((effects > 0).mean()) if len(effects) else np.nan})
    return pd.DataFrame(rows, columns=[*keys, "pairs", "n_pairs", "computable", "mean_effect",
                                       "positive"])


# --- KeyBERT topic words ---------------------------------------------------------------------

@cache
def _keybert(max_length: int):
    """KeyBERT on the book's offline all-MiniLM-L6-v2 encoder (embeddings cached per text)."""
    from keybert import KeyBERT
    from keybert.backend import BaseEmbedder

    from biasbook.chapters.region_aware import topics

    class BookEncoder(BaseEmbedder):
        def __init__(self):
            super().__init__()
            self.encoder = topics.encoder(max_length)

        def embed(self, documents, verbose: bool = False) -> np.ndarray:
            return self.encoder.embed(list(documents), progress=False)

    return KeyBERT(model=BookEncoder())


def keybert_words(texts: Sequence[str], *, top_n: int = 10, n_candidates: int = 100,
                  max_length: int = 128) -> list[str]:
    """The ``top_n`` KeyBERT words of a topic's documents: candidates are the ``n_candidates``
    words (alphabetic, English stop words removed) in most documents; KeyBERT ranks them by
    cosine similarity to the mean embedding of the documents.

    Used in: region-aware/05.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    texts = validate.word_list("texts", texts)
    counter = CountVectorizer(stop_words="english", token_pattern=r"(?u)\b[^\W\d_]{2,}\b")
    try:
        present = counter.fit_transform(texts) > 0
    except ValueError:  # no word survives the stop list
        return []
    words = counter.get_feature_names_out()
    df = np.asarray(present.sum(axis=0)).ravel()
    candidates = [str(words[i]) for i in np.lexsort((words, -df))[:n_candidates]]
    model = _keybert(max_length)
    doc = model.model.embed(texts).mean(axis=0, keepdims=True)
    keywords = model.extract_keywords(" ".join(texts), candidates=candidates, top_n=top_n,
                                      doc_embeddings=doc,
                                      word_embeddings=model.model.embed(candidates))
    return [w for w, _ in keywords]


def keybert_pairs(pairs: pd.DataFrame, documents: Mapping[str, pd.DataFrame], *,
                  top_n: int = 10, progress: bool = True, **options) -> pd.DataFrame:
    """``pairs`` (with ``female_id`` and ``male_id`` topic ids) with their word lists replaced
    by :func:`keybert_words` of each topic's documents; ``documents`` maps a region to its
    examples (columns ``text`` and ``topic``). The c-TF-IDF words stay as ``*_ctfidf_words``.

    Used in: region-aware/05.
    """
    out = pairs.copy()
    for side in ("female", "male"):
        out[f"{side}_ctfidf_words"] = out[f"{side}_words"]
        words = []
        for _, pair in tqdm(pairs.iterrows(), total=len(pairs), desc=f"KeyBERT {side} topics",
                            disable=not progress):
            docs = documents[pair["region"]]
            texts = docs.loc[docs["topic"] == pair[f"{side}_id"], "text"].tolist()
            words.append(keybert_words(texts, top_n=top_n, **options))
        out[f"{side}_words"] = words
    return out
