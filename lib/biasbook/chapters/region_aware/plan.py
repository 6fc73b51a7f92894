"""The region-aware plan (:mod:`biasbook.plan`): documents, topics and persona generations.

Per region (the paper's five): notebook 02 trains word2vec on ``docs_per_region`` documents of
each source domain; 03 embeds the topic corpus's aligned documents with the sentence encoder,
fits BERTopic (UMAP and HDBSCAN: CPU, not estimated) and has the label model write
``label_tokens`` for the top ``label_top`` topics of each gender; 05 trains fastText on
``eval_docs_per_region`` documents of each evaluation domain; 06 asks each persona model for one
persona per topic of the prompted pairs (two topics a pair), ``runs`` times, ``max_new_tokens``
each. WEAT permutations (02, 05) are CPU work, counted but not estimated.

>>> P = {"06-personas": {"persona_settings": {"models": ["smollm2-135m"], "runs": 2,
...      "max_new_tokens": 10}, "pair_sources": ["paper"], "length_check": None}}
>>> [(w.what, w.count) for w in work(P)]
[('personas: 2 runs x 50 topics (paper pairs)', 1000)]
"""

from __future__ import annotations

from biasbook import flops, plan
from biasbook.chapters.region_aware import corpora, personas, topics

REGIONS = len(corpora.REGIONS)
#: Estimated tokens of a document: a UN sentence, a tweet, a GeoWAC example (a web paragraph).
DOC_TOKENS = {"un-debates": 30, "tweets": 20, "geowac": 80}
#: Documents per region where a profile says "all": the paper's aligned GeoWAC examples (Sec. 4.1)
#: and, for the stand-ins, a round figure of the same order.
ALL_DOCS = 60_000
PAIRS = {"paper": 25, "discovered": None}  # Table 3's pairs; 04's: n_pairs per region
PROMPT_TOKENS = 60  # a persona or label prompt's instructions and topic, in tokens
WORD2VEC_WINDOW = 5


def _embedding(notebook: str, what: str, docs: int, tokens: int, settings: dict) -> plan.Work:
    engine_flops = flops.word2vec_flops(tokens, settings["vector_size"],
                                       settings.get("window", WORD2VEC_WINDOW),
                                       settings["epochs"])
    return plan.Work(notebook, what, docs, "documents", tokens=tokens, flops=engine_flops,
                     engine="word2vec")


def _vectors_and_weat(notebook: str, trainer: str, domains, docs_per_region: int | None,
                      settings: dict, weat_samples: int) -> list[plan.Work]:
    """02 and 05: word vectors per domain and region, then WEAT's permutations."""
    docs = REGIONS * (docs_per_region or ALL_DOCS)
    return [*(_embedding(notebook, f"{trainer} on {domain}, {REGIONS} regions", docs,
                         docs * DOC_TOKENS[domain], settings) for domain in domains),
            plan.Work(notebook, "WEAT permutations", REGIONS * weat_samples, "WEAT samples",
                      note="CPU, vectorised")]


def _generation(notebook: str, what: str, model: str, prompts: int, new_tokens: int,
                prompt_tokens: int) -> plan.Work:
    # each new token attends over the prompt; counted as a forward of prompt and answer
    return plan.forward(notebook, what, model, prompts * new_tokens, "generated tokens",
                        tokens=prompts * (prompt_tokens + new_tokens),
                        note="decoding is memory-bound: slower than its FLOPs")


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Every notebook's loops (module docstring).

    Used in: biasbook plan.
    """
    out: list[plan.Work] = []
    if (p := params.get("02-weat-across-regions")) is not None:
        out += _vectors_and_weat("02", "word2vec", p["source_domains"], p["docs_per_region"],
                                 p["word2vec"], p["weat_samples"])
    if (p := params.get("03-topics")) is not None:
        s = topics.TopicSettings.from_mapping(p["topic_settings"])
        docs = REGIONS * (s.docs_per_region or ALL_DOCS)
        tokens = docs * min(s.max_length, DOC_TOKENS[s.domain] + plan.SPECIAL_TOKENS)
        out.append(plan.forward("03", f"embed {s.domain} documents", topics.ENCODER, docs,
                                "sentences", tokens=tokens))
        out.append(plan.Work("03", "BERTopic: UMAP and HDBSCAN per region", docs, "documents",
                             note="CPU, not estimated"))
        if s.label_model is not None and s.label_top:
            labels = REGIONS * 2 * s.label_top
            prompt = PROMPT_TOKENS + round(1.3 * s.label_docs * s.label_doc_words)
            out.append(_generation("03", f"topic labels: {labels} topics", s.label_model,
                                   labels, s.label_tokens, prompt))
    if (p := params.get("05-region-aware-weat")) is not None:
        out += _vectors_and_weat("05", "fastText", p["eval_domains"], p["eval_docs_per_region"],
                                 p["fasttext"], p["weat_samples"])
    if (p := params.get("06-personas")) is not None:
        out += _personas(p, params.get("04-topic-pairs"))
    return out


def _personas(p: dict, pairs_params: dict | None) -> list[plan.Work]:
    s = personas.PersonaSettings.from_mapping(p["persona_settings"])
    n_pairs = (pairs_params or {}).get("pair_settings", {}).get("n_pairs", 5)
    out = []
    for source in p["pair_sources"]:
        prompts = 2 * (PAIRS[source] or REGIONS * n_pairs)
        for model in s.models:
            out.append(_generation("06", f"personas: {s.runs} runs x {prompts} topics "
                                   f"({source} pairs)", model, s.runs * prompts,
                                   s.max_new_tokens, PROMPT_TOKENS))
    check = p["length_check"]
    if check:
        for model in check["models"]:
            prompts = 2 * PAIRS["paper"] // REGIONS
            out.append(_generation("06", f"length check: {check['region']}", model,
                                   s.runs * prompts, check["max_new_tokens"], PROMPT_TOKENS))
    return out


# ------------------------------------------------------------------------------------ cap

def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """Every loop bounded by ``n`` (only where the profile sets the key): ``100 n`` documents per
    region (02, 03 and 05), ``n``
    countries per region, ``n`` epochs of word2vec and fastText, ``100 n`` WEAT samples, BERTopic
    topics of at least ``5 n`` documents, ``n`` labelled topics per gender of ``8 n`` tokens,
    ``n`` persona runs of ``16 n`` tokens, ``n`` pairs per region, ``100 n`` bootstrap resamples
    and permutations. Domains, models and pair sources are kept.

    Used in: biasbook plan.
    """
    out = {}
    for stem, p in params.items():
        p = dict(p)
        limits = {"countries_per_region": n, "eval_countries_per_region": n,
                  "docs_per_region": 100 * n, "eval_docs_per_region": 100 * n,
                  "weat_samples": 100 * n, "interval_resamples": 100 * n,
                  "permutation_resamples": 100 * n, "keybert_top_n": 5 * n}
        p.update({k: plan.at_most(p[k], v) for k, v in limits.items() if k in p})
        for key in ("word2vec", "fasttext"):
            if key in p:
                p[key] = {**p[key], "epochs": min(p[key]["epochs"], n)}
        if "topic_settings" in p:
            given = p["topic_settings"]
            limits = {"docs_per_region": 100 * n, "min_topic_size": 5 * n, "label_top": n,
                      "label_tokens": 8 * n}  # only keys the profile sets (check_types)
            p["topic_settings"] = {**given, **{k: plan.at_most(given[k], v)
                                               for k, v in limits.items() if k in given}}
        if "pair_settings" in p:
            p["pair_settings"] = {**p["pair_settings"],
                                  "n_pairs": min(p["pair_settings"]["n_pairs"], n)}
        if "persona_settings" in p:
            s = personas.PersonaSettings.from_mapping(p["persona_settings"])
            p["persona_settings"] = {**p["persona_settings"], "runs": min(s.runs, n),
                                     "max_new_tokens": min(s.max_new_tokens, 16 * n)}
        out[stem] = p
    return out
