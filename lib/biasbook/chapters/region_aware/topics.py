"""Gender-aligned topics per region (Borah et al. 2024, Sec. 4.1); their F-M pairs are in
:mod:`.pairs`.

**Topics (Sec. 4.1, Appendix L.1).** Per region, BERTopic (Grootendorst 2022) clusters the F- and
M-aligned examples of :mod:`.gendered` together: all-MiniLM-L6-v2 sentence embeddings (offline,
through :class:`biasbook.training.classifiers.SentenceEncoder`, cached per text), UMAP to five
dimensions and HDBSCAN, BERTopic's defaults except for fixed seeds; c-TF-IDF gives the top 10
words of a topic (``top_n_words=10``; English stop words removed).
The paper sets ``min_topic_size=100`` for about 60,000 examples per region; the stand-in corpora
have a few thousand, so the size is scaled to the data: ``max(min_topic_floor,
round(min_topic_fraction * n))``.

**Alignment and coherence** of each topic: :mod:`.topic_measures`.

**Labels (Appendix H, L.2).** The top ``label_top`` topics of each gender get a label from a local
instruct model through BERTopic's ``TextGeneration`` representation model, with the paper's
three-part Llama 2 prompt (``data/region-aware/prompts.yml``) rendered by the model's chat
template; greedy decoding, repetition penalty 1.1 as in L.2. Every topic also has a keyword label
(its top three c-TF-IDF words); :attr:`name` is the LLM label where there is one.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook import datafiles, models, store, validate
from biasbook.chapters.region_aware import chat, corpora, gendered
from biasbook.chapters.region_aware.topic_measures import alignment, assigned_probability, umass

TOPICS_VERSION = 2  # bump when the fit or labelling below, or .topic_measures, changes
ALIGNMENTS = ("probability", "share")
ENCODER = "all-minilm-l6-v2"
#: Packages whose version keys the cached topics.
_DISTRIBUTIONS = ("bertopic", "umap-learn", "hdbscan", "scikit-learn", "gensim", "transformers")


@dataclass(frozen=True)
class TopicSettings:
    """Everything that decides the topics of a region (the profile's ``topic_settings``).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06, biasbook plan.
    """

    domain: str = "un-debates"
    regions: tuple[str, ...] | None = None       # None: every region the domain has
    years: tuple[int, int] | None = None         # UN sessions (first, last); None: all
    docs_per_region: int | None = 1500           # aligned examples per region (None: all)
    rule: str = "exclusive"                      # gendered.RULES
    alignment: str = "probability"               # ALIGNMENTS: which rule sets a topic's gender
    seed: int = 0
    min_topic_size: int | None = None            # None: scaled to the data
    min_topic_fraction: float = 0.01
    min_topic_floor: int = 10
    top_n_words: int = 10
    umap_neighbors: int = 15
    umap_components: int = 5
    max_length: int = 128                        # encoder tokens per example
    label_model: str | None = "smollm2-135m"     # None: keyword labels only
    label_top: int = 5                           # LLM labels for the top topics of each gender
    label_docs: int = 4                          # representative examples in the prompt
    label_doc_words: int = 30                    # each cut to this many words
    label_tokens: int = 16                       # new tokens per label

    def __post_init__(self):
        validate.choice("rule", self.rule, gendered.RULES)
        validate.choice("alignment", self.alignment, ALIGNMENTS)
        if self.regions is not None:
            object.__setattr__(self, "regions",
                               tuple(validate.word_list("regions", self.regions)))
        if self.years is not None:
            object.__setattr__(self, "years", tuple(self.years))

    @classmethod
    def from_mapping(cls, values: Mapping | None) -> TopicSettings:
        """Settings from a profile mapping; an unknown key is an error that lists the valid ones.

        >>> TopicSettings.from_mapping({"docs_per_region": 200}).docs_per_region
        200
        >>> TopicSettings.from_mapping({"doc_per_region": 200})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: unknown topic setting(s) ['doc_per_region']; valid: domain, regions, years, ...
        """
        return validate.settings(cls, values, "topic")

    def topic_size(self, n_docs: int) -> int:
        """``min_topic_size`` for ``n_docs`` examples.

        >>> TopicSettings().topic_size(1500), TopicSettings().topic_size(300)
        (15, 10)
        """
        if self.min_topic_size is not None:
            return self.min_topic_size
        return max(self.min_topic_floor, round(self.min_topic_fraction * n_docs))


@dataclass
class RegionTopics:
    """The topics of one region.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.

    ``table``: one row per topic (outliers excluded): ``topic``, ``size``, ``n_female``,
    ``n_male``, ``p_female``, ``p_male``, ``gender`` (F, M or "" for a tie, by the settings'
    ``alignment`` rule), ``gender_by_probability``, ``share_female``, ``gender_by_share``,
    ``coherence``, ``rank`` (by coherence within its gender, 1 = best),
    ``words`` (top words), ``keywords``, ``llm_label``, ``name``.
    ``documents``: the region's examples with ``group``, ``topic`` (-1: outlier), ``probability``.
    """

    region: str
    table: pd.DataFrame
    documents: pd.DataFrame
    min_topic_size: int
    key: str

    def top(self, gender: str, k: int | None = None) -> pd.DataFrame:
        """The ``k`` most coherent topics of ``gender`` (``"F"`` or ``"M"``), best first."""
        validate.choice("gender", gender, gendered.GROUPS)
        rows = self.table[self.table["gender"] == gender].sort_values("rank")
        return rows if k is None else rows.head(k)


def clean_label(text: str, max_words: int = 10) -> str:
    """A generated label as a short name: first non-empty line, no quotes, markup or ``Label:``.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.

    >>> clean_label('  **Label:** "Football and sports fans."\\nThe topic is about ...')
    'Football and sports fans'
    """
    line = next((s for s in text.splitlines() if s.strip()), "")
    line = re.sub(r"^\W*(topic\s+)?label\W*:\W*", "", line.strip(), flags=re.I)
    line = line.strip(" *\"'`.#-:")
    return " ".join(line.split()[:max_words])


# --------------------------------------------------------------------------- models


@cache
def _model(name: str) -> models.LanguageModel:
    return models.load(name, device="cpu")


def encoder(max_length: int = 128):
    """The offline all-MiniLM-L6-v2 sentence encoder (embeddings cached per text).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    from biasbook.training.classifiers import SentenceEncoder

    return SentenceEncoder(_model(ENCODER), max_length=max_length)


def _label_prompt(tokenizer) -> str:
    p = datafiles.load("region-aware", "prompts")["topic_label"]
    messages = [{"role": "system", "content": p["system"]},
                {"role": "user", "content": p["example_user"]},
                {"role": "assistant", "content": p["example_assistant"]},
                {"role": "user", "content": p["main"]}]
    return chat.render(tokenizer, messages, cue="Label:")


def _label_identity(settings: TopicSettings) -> list | None:
    if settings.label_model is None:
        return None
    lm = _model(settings.label_model)
    return [lm.fingerprint, _label_prompt(lm.tokenizer), settings.label_top, settings.label_docs,
            settings.label_doc_words, settings.label_tokens]


# --------------------------------------------------------------------------- the pipeline


def labelled_documents(settings: TopicSettings) -> pd.DataFrame:
    """Every gendered example of the settings' domain and regions (:func:`gendered.label_documents`
    over :func:`corpora.documents`); the input of Table 6 and of :func:`region_topics`.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    docs = corpora.documents(settings.domain, regions=settings.regions, years=settings.years)
    return gendered.label_documents(docs, rule=settings.rule)


def region_topics(settings: TopicSettings | Mapping | None = None, *,
                  labelled: pd.DataFrame | None = None, progress: bool = True,
                  cache: bool = True) -> dict[str, RegionTopics]:
    """Region -> :class:`RegionTopics` for ``settings`` (a mapping is read with
    :meth:`TopicSettings.from_mapping`). Every region's result is cached by content: the examples,
    the settings, the encoder's and the labelling model's fingerprints and the library versions.

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    if not isinstance(settings, TopicSettings):
        settings = TopicSettings.from_mapping(settings)
    if labelled is None:
        labelled = labelled_documents(settings)
    used = gendered.aligned(labelled, max_docs=settings.docs_per_region, seed=settings.seed)
    return {region: fit_region(region, frame["text"].tolist(), frame["group"].tolist(), settings,
                               cache=cache)
            for region, frame in tqdm(used.groupby("region", sort=False),
                                      desc="BERTopic per region", disable=not progress)}


def fit_region(region: str, texts: Sequence[str], groups: Sequence[str],
               settings: TopicSettings, *, cache: bool = True) -> RegionTopics:
    """The topics of one region's F/M-aligned ``texts`` (``groups``: ``"F"``/``"M"`` each).

    Used in: region-aware/03, region-aware/04, region-aware/05, region-aware/06.
    """
    texts = validate.word_list(f"examples of {region}", texts)
    groups = validate.word_list(f"groups of {region}", groups)
    if len(texts) != len(groups):
        raise ValueError("texts and groups must have the same length")
    fit_settings = {k: v for k, v in dataclasses.asdict(settings).items()
                    if k not in ("domain", "regions", "docs_per_region", "rule")}
    key = store.content_key(
        "region-aware-topics", TOPICS_VERSION, texts, groups, fit_settings,
        _model(ENCODER).fingerprint, _label_identity(settings),
        [version(d) for d in _DISTRIBUTIONS])
    result = store.cached_json("region-aware-topics", key,
                               lambda: _fit(region, texts, groups, settings, cache),
                               cache=cache)
    table = pd.DataFrame(result["topics"], columns=_TABLE_COLUMNS)
    documents = pd.DataFrame({"text": texts, "group": groups, "topic": result["doc_topic"],
                              "probability": result["doc_probability"]})
    return RegionTopics(region, table, documents, result["min_topic_size"], key)


_TABLE_COLUMNS = ["topic", "size", "n_female", "n_male", "p_female", "p_male", "gender",
                  "gender_by_probability", "share_female", "gender_by_share", "coherence",
                  "rank", "words", "keywords",
                  "llm_label", "name"]


def _fit(region: str, texts: list[str], groups: list[str], settings: TopicSettings,
         cache: bool) -> dict:
    from bertopic import BERTopic
    from hdbscan import HDBSCAN
    from sklearn.feature_extraction.text import CountVectorizer
    from umap import UMAP

    embeddings = encoder(settings.max_length).embed(texts, cache=cache, progress=False)
    size = settings.topic_size(len(texts))
    umap_model = UMAP(n_neighbors=min(settings.umap_neighbors, len(texts) - 1),
                      n_components=settings.umap_components, min_dist=0.0, metric="cosine",
                      low_memory=False, random_state=settings.seed)
    hdbscan_model = HDBSCAN(min_cluster_size=size, metric="euclidean",
                            cluster_selection_method="eom", prediction_data=True)
    model = BERTopic(umap_model=umap_model, hdbscan_model=hdbscan_model,
                     vectorizer_model=CountVectorizer(stop_words="english"),
                     top_n_words=settings.top_n_words, min_topic_size=size,
                     calculate_probabilities=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UMAP: "n_jobs overridden by random_state" (wanted)
        try:
            assigned, probabilities = model.fit_transform(texts, embeddings=embeddings)
        except (ValueError, TypeError, IndexError) as err:  # UMAP/HDBSCAN name no region
            raise ValueError(f"BERTopic could not cluster {region}'s {len(texts)} examples "
                             f"({type(err).__name__}: {str(err)[:120]}); give the region more "
                             "documents (docs_per_region) or leave it out") from err
    assigned = np.asarray(assigned, dtype=int)
    doc_probability = assigned_probability(assigned, probabilities)
    table = alignment(assigned, doc_probability, groups)
    table.insert(6, "gender", table[f"gender_by_{settings.alignment}"])
    words = {t: [w for w, _ in model.get_topic(t) if w] for t in table["topic"]}
    analyzer = model.vectorizer_model.build_analyzer()
    seen = model._preprocess_text(texts)  # the text c-TF-IDF counted (ASCII letters and digits)
    table["coherence"] = umass([words[t] for t in table["topic"]],
                               [analyzer(t) for t in seen]) if len(table) else []
    table["rank"] = table.groupby("gender")["coherence"].rank(ascending=False, method="first")
    table["words"] = [words[t] for t in table["topic"]]
    table["keywords"] = [", ".join(words[t][:3]) for t in table["topic"]]
    labels = _llm_labels(model, texts, assigned, table, settings)
    table["llm_label"] = [labels.get(t, "") for t in table["topic"]]
    table["name"] = [labels.get(t) or k for t, k in zip(table["topic"], table["keywords"],
                                                         strict=True)]
    table["rank"] = table["rank"].fillna(0).astype(int)
    return {"topics": table[_TABLE_COLUMNS].to_dict("records"), "doc_topic": assigned.tolist(),
            "doc_probability": doc_probability.tolist(), "min_topic_size": size}


def _llm_labels(model, texts: list[str], assigned: np.ndarray, table: pd.DataFrame,
                settings: TopicSettings) -> dict[int, str]:
    """LLM labels of the ``label_top`` most coherent topics of each gender, through BERTopic's
    ``TextGeneration`` representation model (given only those topics and their c-TF-IDF rows)."""
    if settings.label_model is None or settings.label_top == 0 or not len(table):
        return {}
    from bertopic.representation import TextGeneration
    from transformers import pipeline

    chosen = sorted(table.loc[(table["gender"] != "") & (table["rank"] <= settings.label_top),
                              "topic"].astype(int))
    if not chosen:
        return {}
    lm = _model(settings.label_model)
    generator = pipeline("text-generation", model=lm.model, tokenizer=lm.tokenizer)
    labeller = TextGeneration(
        generator, prompt=_label_prompt(lm.tokenizer), random_state=settings.seed,
        nr_docs=settings.label_docs, doc_length=settings.label_doc_words, tokenizer="whitespace",
        pipeline_kwargs={"max_new_tokens": settings.label_tokens, "do_sample": False,
                         "repetition_penalty": 1.1, "return_full_text": False})
    ids = sorted(set(assigned.tolist()))  # the rows of c_tf_idf_, in topic order (-1 first)
    if model.c_tf_idf_.shape[0] != len(ids):
        raise RuntimeError("BERTopic's c-TF-IDF rows do not match its topics")
    documents = pd.DataFrame({"Document": texts, "ID": range(len(texts)), "Topic": assigned})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # generation-config notes about unused sampling flags
        out = labeller.extract_topics(model, documents,
                                      model.c_tf_idf_[[ids.index(t) for t in chosen]],
                                      {t: model.get_topic(t) for t in chosen})
    return {int(t): clean_label(out[t][0][0]) for t in chosen}


# --------------------------------------------------------------------------- tables


def topic_table(fits: Mapping[str, RegionTopics], *, top: int | None = 5) -> pd.DataFrame:
    """Tables 2 (``top=5``) and 8 (``top=None``): per region and gender the most coherent topics
    with their name, top words, coherence, alignment probabilities and size.

    Used in: region-aware/03.
    """
    columns = ["rank", "name", "words", "coherence", "p_female", "p_male", "size", "n_female",
               "topic"]
    rows = []
    for region, fit in fits.items():
        for gender in gendered.GROUPS:
            for _, row in fit.top(gender, top).iterrows():
                rows.append({"region": region, "gender": gender, **row[columns],
                             "words": ", ".join(row["words"])})
    return pd.DataFrame(rows, columns=["region", "gender", *columns])


def summary(fits: Mapping[str, RegionTopics]) -> pd.DataFrame:
    """Per region: examples, ``min_topic_size``, topics, outliers, F and M topics, and how often
    the paper's probability rule and the share rule agree on a topic's gender.

    Used in: region-aware/03.
    """
    rows = []
    for region, fit in fits.items():
        t = fit.table
        rows.append({"region": region, "examples": len(fit.documents),
                     "min_topic_size": fit.min_topic_size, "topics": len(t),
                     "outliers": int((fit.documents["topic"] < 0).sum()),
                     "F topics": int((t["gender"] == "F").sum()),
                     "M topics": int((t["gender"] == "M").sum()),
                     "rules agree": float((t["gender_by_probability"]
                                           == t["gender_by_share"]).mean())
                     if len(t) else float("nan")})
    return pd.DataFrame(rows)
