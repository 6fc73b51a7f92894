"""Do language models write personas whose gender matches a topic's gender? (Borah et al. 2024,
Sec. 6, Fig. 5.)

For every topic of a region's top topic pairs (:func:`.pairing.topic_pairs`), a model is asked to
"create a persona of a person from <region> who is interested in <topic>" (the paper's Fig. 4 is an
image missing from its text; the reconstructed prompt is in ``data/region-aware/prompts.yml``).
The persona's gender is read off the text (:func:`persona_gender`) and compared with the topic's
gender (F for the female topic of a pair, M for the male one); the **mismatch rate** is the share
of personas with a readable gender whose gender differs from the topic's. The paper averages seven
runs at temperature 0.8 (Appendix L.3) of GPT-3.5, GPT-4, Mistral-7B-Instruct, Claude-3 Sonnet and
Gemini-Pro; the book runs its two local models, SmolLM2-135M-Instruct and Gemma-3-270M (135 and
270 million parameters; Mistral-7B alone is 26 to 52 times larger, and the closed models larger
still). These are far weaker writers: their rates say how such small models behave, not how
GPT-4-class models do.

**Runs.** Run ``r`` samples every prompt of a region once, in one left-padded batch, after
``transformers.set_seed(seed + r)``; a run's personas are cached by content (model fingerprint,
prompts, generation settings, seed), so more runs reuse the earlier ones.

**Gender of a persona** (:func:`persona_gender`), in this order:

1. an explicit field (``Gender: female``, ``gender - male``) decides;
2. otherwise third-person pronouns: more of *she, her, hers, herself* than of *he, him, his,
   himself* is F, fewer is M;
3. otherwise self-descriptions (*woman, girl, lady, female, Mrs, Ms, Miss* against *man, boy,
   gentleman, guy, male, Mr*);
4. otherwise the gender is unknown ("", e.g. a first-person persona without such a word) and the
   persona is left out of the mismatch rate (its share is reported as ``unknown``).

>>> persona_gender("Amara is a 31-year-old chef. She loves her garden.")
('F', 'pronouns')
>>> persona_gender("Gender: Male. Name: Kofi. She is his sister.")
('M', 'field')
>>> persona_gender("I love football and music.")
('', 'none')
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd
import torch

from biasbook import datafiles, models, store, validate
from biasbook.chapters.region_aware import chat
from biasbook.chapters.region_aware.topics import _model
from biasbook.processes import in_processes

PERSONAS_VERSION = 1  # bump when prompting, decoding or classification below changes
TOPIC_TEXTS = ("name", "keywords")
_FIELD = re.compile(r"\b(?:gender|sex)[\s*_]*[:\-–][\s*_]*(female|woman|male|man)\b", re.I)
_PRONOUNS = {"F": re.compile(r"\b(?:she|her|hers|herself)\b", re.I),
             "M": re.compile(r"\b(?:he|him|his|himself)\b", re.I)}
_DESCRIPTORS = {"F": re.compile(r"\b(?:woman|girl|lady|female|mrs|ms|miss)\b", re.I),
                "M": re.compile(r"\b(?:man|boy|gentleman|guy|male|mr)\b", re.I)}


@dataclass(frozen=True)
class PersonaSettings:
    """The profile's ``persona_settings``.

    Used in: region-aware/06, biasbook plan.
    """

    models: tuple[str, ...] = ("smollm2-135m",)
    runs: int = 3
    seed: int = 0
    temperature: float = 0.8           # the paper's (Appendix L.3)
    max_new_tokens: int = 64
    topic_text: str = "name"           # "name": the topic's label; "keywords": its top 3 words

    def __post_init__(self):
        object.__setattr__(self, "models", tuple(validate.word_list("models", self.models)))
        validate.choice("topic_text", self.topic_text, TOPIC_TEXTS)
        if self.runs < 1:
            raise ValueError(f"runs must be at least 1, got {self.runs}")

    @classmethod
    def from_mapping(cls, values: Mapping | None) -> PersonaSettings:
        """Settings from a profile mapping; an unknown key is an error that lists the valid ones.
        """
        return validate.settings(cls, values, "persona")


def persona_gender(text: str) -> tuple[str, str]:
    """(``"F"``, ``"M"`` or ``""``, the rule that decided: ``field``, ``pronouns``,
    ``descriptors`` or ``none``) for a persona (see the module docstring).

    Used in: region-aware/06.
    """
    match = _FIELD.search(text)
    if match:
        return ("F" if match.group(1).lower() in ("female", "woman") else "M"), "field"
    for rule, patterns in (("pronouns", _PRONOUNS), ("descriptors", _DESCRIPTORS)):
        female, male = (len(patterns[g].findall(text)) for g in ("F", "M"))
        if female != male:
            return ("F" if female > male else "M"), rule
    return "", "none"


def topic_prompts(pairs: pd.DataFrame, *, topic_text: str = "name") -> pd.DataFrame:
    """The distinct topics of the pairs, one row each: ``region``, ``topic`` (the text put in
    the prompt), ``topic_gender`` (F for a pair's female topic, M for its male one), ``words``,
    and, where the pairs are marked (:data:`.pairing.PAIR_MARKS`), ``pairs``: ``"passing"`` if
    the topic is in a passing pair, ``"filled"`` if only filled pairs hold it.

    Used in: region-aware/06.

    >>> pairs = pd.DataFrame({"region": ["X", "X"], "female_topic": ["Cooking", "Cooking"],
    ...     "male_topic": ["Football", "Cars"], "female_words": [["food", "cook", "eat"]] * 2,
    ...     "male_words": [["goal", "team", "match"], ["car", "engine", "road"]]})
    >>> topic_prompts(pairs)[["topic", "topic_gender"]].values.tolist()
    [['Cooking', 'F'], ['Football', 'M'], ['Cars', 'M']]
    """
    validate.choice("topic_text", topic_text, TOPIC_TEXTS)
    marked = "pairs" in pairs
    rows = []
    for _, pair in pairs.iterrows():
        for gender, side in (("F", "female"), ("M", "male")):
            words = list(pair[f"{side}_words"])
            text = pair[f"{side}_topic"] if topic_text == "name" else ", ".join(words[:3])
            rows.append({"region": pair["region"], "topic": text, "topic_gender": gender,
                         "words": words, **({"pairs": pair["pairs"]} if marked else {})})
    keys = ["region", "topic", "topic_gender"]
    frame = pd.DataFrame(rows, columns=[*keys, "words", *(["pairs"] if marked else [])])
    if marked:
        frame["pairs"] = frame.groupby(keys, sort=False)["pairs"].transform(
            lambda marks: "passing" if marks.eq("passing").any() else "filled")
    return frame.drop_duplicates(keys).reset_index(drop=True)


def render(tokenizer, region: str, topic: str) -> str:
    """The persona prompt for a topic, in the model's chat template (:func:`.chat.render`).

    Used in: region-aware/06.
    """
    p = datafiles.load("region-aware", "prompts")["persona"]
    messages = [{"role": "system", "content": p["system"]},
                {"role": "user", "content": p["user"].format(region=region, topic=topic)}]
    return chat.render(tokenizer, messages, cue="Persona:")


def generate(lm: models.LanguageModel, prompts: Sequence[str], *, seed: int,
             temperature: float = 0.8, max_new_tokens: int = 64, cache: bool = True) -> list[str]:
    """One sampled continuation per prompt (chat-rendered text), all prompts in one left-padded
    batch after ``set_seed(seed)``; cached by content.

    Used in: region-aware/06.
    """
    prompts = validate.word_list("prompts", prompts)
    if lm.kind != "causal":
        raise ValueError(f"personas are generated text: {lm.name} is a {lm.kind} model, which "
                         "does not generate; use a causal instruct model (e.g. smollm2-135m)")

    def sample() -> list[str]:
        # The chat template already holds every special token the model expects.
        encoded = [lm.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        return [text.strip() for text in models.sample_continuations(
            lm, encoded, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)]

    key = store.content_key("region-aware-personas", PERSONAS_VERSION, lm.fingerprint, prompts,
                            seed, temperature, max_new_tokens)
    return store.cached_json("region-aware-personas", key, sample, cache=cache)


def personas(pairs: pd.DataFrame, settings: PersonaSettings | Mapping | None = None, *,
             workers: int = 1, progress: bool = True, cache: bool = True) -> pd.DataFrame:
    """One row per (model, run, topic): ``model``, ``run``, ``region``, ``topic``,
    ``topic_gender``, the topic's ``pairs`` mark where the pairs have one (:func:`topic_prompts`),
    ``persona``, ``persona_gender``, ``rule``, ``mismatch`` (``None`` where the persona's gender
    is unknown). ``workers > 1`` samples in that many processes
    (:func:`biasbook.processes.in_processes`), each with this process's torch threads, so the
    texts are the same.

    Used in: region-aware/06.
    """
    if not isinstance(settings, PersonaSettings):
        settings = PersonaSettings.from_mapping(settings)
    prompts = topic_prompts(pairs, topic_text=settings.topic_text)
    mark = ["pairs"] if "pairs" in prompts else []
    parts = {region: part for region, part in prompts.groupby("region", sort=False)}
    jobs = [(m, r, region) for m in settings.models for r in range(settings.runs)
            for region in parts]
    texts = in_processes(
        partial(_region_personas, temperature=settings.temperature,
                max_new_tokens=settings.max_new_tokens, cache=cache),
        [(name, region, parts[region]["topic"].tolist(), settings.seed + run)
         for name, run, region in jobs], workers, torch_threads=torch.get_num_threads(),
        desc="personas (model, run, region)", progress=progress)
    rows = []
    for (name, run, region), region_texts in zip(jobs, texts, strict=True):
        for (_, row), text in zip(parts[region].iterrows(), region_texts, strict=True):
            gender, rule = persona_gender(text)
            rows.append({"model": name, "run": run, "region": region, "topic": row["topic"],
                         "topic_gender": row["topic_gender"], **row[mark].to_dict(),
                         "persona": text, "persona_gender": gender, "rule": rule,
                         "mismatch": None if not gender else gender != row["topic_gender"]})
    return pd.DataFrame(rows, columns=["model", "run", "region", "topic", "topic_gender", *mark,
                                       "persona", "persona_gender", "rule", "mismatch"])


def _region_personas(name: str, region: str, topics: list[str], seed: int, *,
                     temperature: float, max_new_tokens: int, cache: bool) -> list[str]:
    """:func:`generate` of one region's topic prompts with model ``name`` (loaded once per
    process)."""
    lm = _model(name)
    return generate(lm, [render(lm.tokenizer, region, t) for t in topics], seed=seed,
                    temperature=temperature, max_new_tokens=max_new_tokens, cache=cache)


def by_length(pairs: pd.DataFrame, settings: PersonaSettings | Mapping | None = None, *,
              region: str, max_new_tokens: Sequence[int], models: Sequence[str] | None = None,
              workers: int = 1, progress: bool = True, cache: bool = True) -> pd.DataFrame:
    """:func:`personas` of one region's topics once per length in ``max_new_tokens``, stacked
    with a ``max_new_tokens`` column (``models``: ``None`` for the settings' models).

    Used in: region-aware/06.

    Run ``r`` samples with seed ``seed + r`` at every length, so a longer persona is the shorter
    one continued (the same random draws come first): the lengths differ only in how much text
    the gender is read from.
    """
    if not isinstance(settings, PersonaSettings):
        settings = PersonaSettings.from_mapping(settings)
    if region not in set(pairs["region"]):
        raise ValueError(f"no pairs of region {region!r}; regions: "
                         f"{list(dict.fromkeys(pairs['region']))}")
    if models is not None:
        settings = replace(settings, models=models)  # checked by PersonaSettings
    one = pairs[pairs["region"] == region]
    return pd.concat([personas(one, replace(settings, max_new_tokens=n), workers=workers,
                               progress=progress, cache=cache).assign(max_new_tokens=n)
                      for n in max_new_tokens], ignore_index=True)


def gender_changes(table: pd.DataFrame) -> pd.DataFrame:
    """How the gender read off each persona of :func:`by_length` changes from the shortest to
    the longest length: counts of (gender at the shortest, at the longest), ``?`` for unknown.

    Used in: region-aware/06.

    >>> table = pd.DataFrame({"model": "m", "run": 0, "region": "X", "topic_gender": "F",
    ...     "topic": ["a", "b", "c"] * 2, "max_new_tokens": [8] * 3 + [24] * 3,
    ...     "persona_gender": ["", "M", "F", "F", "M", "M"]})
    >>> gender_changes(table).to_dict("index")
    {'?': {'F': 1, 'M': 0}, 'F': {'F': 0, 'M': 1}, 'M': {'F': 0, 'M': 1}}
    """
    keys = ["model", "run", "region", "topic", "topic_gender"]
    wide = (table.set_index([*keys, "max_new_tokens"])["persona_gender"].replace("", "?")
            .unstack("max_new_tokens"))
    short, long = min(wide.columns), max(wide.columns)
    return pd.crosstab(wide[short].rename(f"{short} tokens"), wide[long].rename(f"{long} tokens"))


def mismatch_rates(table: pd.DataFrame, *, by: Sequence[str] = ()) -> pd.DataFrame:
    """Fig. 5: per model, region and run (and the columns ``by``, e.g. ``["source"]``) the
    ``personas``, the share with ``unknown`` gender and the ``mismatch`` rate among the others
    (``NaN`` where no persona has a readable gender).

    Used in: region-aware/06.

    >>> table = pd.DataFrame({"model": "m", "region": "X", "run": 0,
    ...     "persona_gender": ["F", "M", "", "M"], "mismatch": [False, True, None, False]})
    >>> mismatch_rates(table)[["personas", "unknown", "mismatch"]].to_dict("records")
    [{'personas': 4, 'unknown': 0.25, 'mismatch': 0.3333333333333333}]
    """
    keys = [*validate.word_list("by", by, allow_empty=True), "model", "region", "run"]
    known = table[table["persona_gender"] != ""]
    counts = table.groupby(keys, sort=False).agg(
        personas=("persona_gender", "size"),
        unknown=("persona_gender", lambda g: float((g == "").mean())))
    rates = known.groupby(keys, sort=False)["mismatch"].agg(
        lambda m: float(np.mean(m.astype(bool))))
    counts["mismatch"] = rates.reindex(counts.index)
    return counts.reset_index()


def mismatch_summary(rates: pd.DataFrame, *, by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean and standard deviation over runs of the mismatch rate, per model and region (and
    the columns ``by``).

    Used in: region-aware/06.
    """
    keys = [*validate.word_list("by", by, allow_empty=True), "model", "region"]
    return (rates.groupby(keys, sort=False)
            .agg(runs=("run", "size"), mismatch=("mismatch", "mean"),
                 mismatch_sd=("mismatch", "std"), unknown=("unknown", "mean"))
            .reset_index())
