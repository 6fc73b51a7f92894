"""HERB's plan (:mod:`biasbook.plan`): what each notebook scores and trains, and its cap.

Sentences are regions x 112 descriptors per model, one template ("People in {region} are
{description}."); every model kind scores a sentence in one forward (AUL for masked models, CLM
for causal ones, BART's infill), plus f(r) of each bare region name; where 02's
``masked_method`` is a PLL, a masked model scores one masked copy per token. The score cache keys
sentences by content, so what notebook 01 scored is not counted again where 02, 03 or 05 ask for
the same sentences. Notebook 04 fine-tunes (or probes) a classifier per task and encoder (three
epochs, batch 16) and classifies every test text bare and behind each region's prefix; 05 trains
each model on its toxic corpus and scores every region and descriptor after each epoch.

>>> P = {"01-descriptive-vectors": {"models": ["bert-base-cased"], "countries": ["FR"],
...      "cities_per_country": 2, "country_share": None}}
>>> [(w.what, w.count) for w in work(P)]
[('f(S): 4 regions x 112 descriptors', 448), ('f(r): region names', 4)]
"""

from __future__ import annotations

import math

from biasbook import plan
from biasbook.chapters.herb import data as herb_data
from biasbook.chapters.herb import propagation, regions, sentence_scores

NOTEBOOKS = ("01-descriptive-vectors", "02-hierarchical-bias", "03-maps-and-representations",
             "04-downstream-propagation", "05-toxic-training")
#: (train, test) texts of each task's whole split, and the mean tokens of a text: hatespeech18's
#: balanced split and IMDB's reviews (downstream.hatespeech18, downstream.imdb on the mirror).
TASKS = {"hatespeech18": ((1914, 478), 30), "imdb": ((25000, 25000), 300)}
CLASSIFIER_EPOCHS, CLASSIFIER_BATCH = 3, 16  # training.classifiers.finetune_classifier's


def _sentences(regions_: list[str], words: list[str]) -> tuple[int, int, int]:
    """(sentences, tokens, characters) of the template over ``regions_`` x ``words``."""
    frame = sentence_scores.TEMPLATE.format(region="", description="")
    r_tok = sum(plan.estimate_tokens(r) for r in regions_)
    w_tok = sum(plan.estimate_tokens(w) for w in words)
    n = len(regions_) * len(words)
    base = plan.estimate_tokens(frame) + plan.SPECIAL_TOKENS
    tokens = len(words) * r_tok + len(regions_) * w_tok + n * base
    chars = (len(words) * sum(map(len, regions_)) + len(regions_) * sum(map(len, words))
             + n * len(frame))
    return n, tokens, chars


def _score(notebook: str, what: str, model: str, regions_: list[str], words: list[str],
           pll: bool = False) -> plan.Work:
    n, tokens, chars = _sentences(regions_, words)
    cache = plan.score_cache_bytes(n, tokens, chars)
    if pll:  # one masked copy of a sentence per scored token
        copies = tokens / n - plan.SPECIAL_TOKENS  # per sentence
        return plan.forward(notebook, what, model, round(n * copies), "masked forwards",
                            tokens=round(tokens * copies), cache_bytes=cache)
    return plan.forward(notebook, what, model, n, "sentences", tokens=tokens, cache_bytes=cache)


def _pll(p: dict, model: str) -> bool:
    """Whether 02 scores ``model`` by a PLL (``masked_method``): only masked models do."""
    size = plan.model_size(model)
    return p.get("masked_method", "aul") != "aul" and size is not None and size.kind == "masked"


def _names(p: dict, *, share: bool = True) -> list[str]:
    table = regions.herb_regions(p["countries"], p["cities_per_country"],
                                  country_share=p.get("country_share") if share else None)
    return table["name"].tolist()


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Every notebook's loops (module docstring).

    Used in: biasbook plan.
    """
    words = herb_data.descriptors()["word"].tolist()
    out: list[plan.Work] = []
    scored: dict[str, set[str]] = {}  # model -> region names whose f(S) is cached by then
    steps = (_notebook_01, _notebook_02, _notebook_03, _notebook_04, _notebook_05)
    for stem, step in zip(NOTEBOOKS, steps, strict=True):  # in order: each sees what came before
        if (p := params.get(stem)) is not None:
            out += step(p, words, scored)
    return out


def _new(model: str, names: list[str], scored: dict[str, set[str]]) -> list[str]:
    """The regions whose sentences ``model`` has not scored yet (and marks them scored)."""
    todo = [n for n in names if n not in scored.get(model, set())]
    scored.setdefault(model, set()).update(todo)
    return todo


def _notebook_01(p: dict, words: list[str], scored: dict) -> list[plan.Work]:
    names = _names(p)
    out = []
    for model in p["models"]:
        out.append(_score("01", f"f(S): {len(names)} regions x {len(words)} descriptors", model,
                          names, words))
        out.append(_score("01", "f(r): region names", model, names, [""]))
        scored.setdefault(model, set()).update(names)
    return out


def _notebook_02(p: dict, words: list[str], scored: dict) -> list[plan.Work]:
    names = _names(p)
    out = []
    for model in p["models"]:
        if _pll(p, model):  # another cache key than 01's AUL: all of it, f(r) too
            method = p["masked_method"]
            out.append(_score("02", f"f(S) by {method}: {len(names)} regions x {len(words)} "
                              "descriptors", model, names, words, pll=True))
            out.append(_score("02", f"f(r) by {method}: region names", model, names, [""],
                              pll=True))
        elif todo := _new(model, names, scored):
            out.append(_score("02", f"f(S): {len(todo)} regions x {len(words)} descriptors",
                              model, todo, words))
    substitutes = herb_data.substitutions()["substitute"].tolist()
    for model in (m for m in p["robustness_models"] if m in p["models"]):
        out.append(_score("02", "Table 6: Appendix B substitutes", model, names, substitutes,
                          pll=_pll(p, model)))
    pairs = len(p["models"]) * (len(p["models"]) - 1) // 2
    out.append(plan.Work("02", "bootstrap and permutations of C_w",
                         p["interval_resamples"] * (len(p["models"]) + 2 * pairs),
                         "C_w evaluations", note=f"CPU; each over {len(names)} regions"))
    return out


def _notebook_03(p: dict, words: list[str], scored: dict) -> list[plan.Work]:
    table = regions.herb_regions(p["countries"], p["cities_per_country"],
                                  country_share=p["country_share"])
    upper = table.loc[table["level"] != "city", "name"].tolist()
    countries = table.loc[table["level"] == "country", "name"].tolist()
    out = []
    for model in p["models"]:
        if todo := [n for n in upper if n not in scored.get(model, set())]:
            out.append(_score("03", f"map: [{p['map_descriptor']}] of {len(todo)} regions",
                              model, todo, [p["map_descriptor"]]))
        tokens = sum(plan.estimate_tokens(c) + plan.SPECIAL_TOKENS for c in countries)
        out.append(plan.forward("03", "hidden states of country names", model, len(countries),
                                "sentences", tokens=tokens))
    return out


def _notebook_04(p: dict, words: list[str], scored: dict) -> list[plan.Work]:
    tested = propagation.prefix_regions(p["countries"], p["per_continent"], p["extra_regions"])
    sizes = {"hatespeech18": (p["hate_train"], p["hate_test"]),
             "imdb": (p["imdb_train"], p["imdb_test"])}
    out = []
    for task, ((all_train, all_test), mean_tokens) in TASKS.items():
        train = min(sizes[task][0] or all_train, all_train)
        test = min(sizes[task][1] or all_test, all_test)
        length = min(p["max_length"], mean_tokens + 8)  # + the region prefix
        for encoder in p["encoders"]:
            if p["method"] == "finetune":
                steps = CLASSIFIER_EPOCHS * math.ceil(train / CLASSIFIER_BATCH)
                out.append(plan.training("04", f"{task}: fine-tune classifier", encoder, steps,
                                         tokens=CLASSIFIER_EPOCHS * train * length,
                                         cache_bytes=_weights(encoder)))
            else:
                out.append(plan.forward("04", f"{task}: embed training texts", encoder, train,
                                        "sentences", tokens=train * length))
            n = test * (1 + len(tested.names))
            out.append(plan.forward("04", f"{task}: classify {test} texts x "
                                    f"{1 + len(tested.names)} prefixes", encoder, n, "sentences",
                                    tokens=n * length))
    countries = tested.countries["name"].tolist()
    for model in p["models"]:
        if todo := _new(model, countries, scored):
            out.append(_score("04", f"HERB of {len(todo)} countries", model, todo, words))
    return out


def _notebook_05(p: dict, words: list[str], scored: dict) -> list[plan.Work]:
    names = _names(p, share=False)
    corpus = plan.at_most(p["corpus_size"], len(words) * p["top_k"])
    n, tokens, _ = _sentences(names, words)
    per_sentence = tokens / max(n, 1)
    out = []
    for model in p["models"]:
        if todo := _new(model, names, scored):
            out.append(_score("05", "f(S) of the base model (the toxic corpus)", model, todo,
                              words))
        steps = p["epochs"] * math.ceil(corpus / p["batch_size"])
        out.append(plan.training("05", f"{p['objective']}: {p['epochs']} epochs of "
                                 f"{corpus} sentences", model, steps,
                                 tokens=round(p["epochs"] * corpus * per_sentence),
                                 cache_bytes=_weights(model)))
        w = _score("05", f"f(S) after each of {p['epochs']} epochs", model, names, words)
        out.append(plan.forward("05", w.what, model, w.count * p["epochs"], "sentences",
                                tokens=w.tokens * p["epochs"],
                                cache_bytes=w.cache_bytes * p["epochs"]))
    return out


def _weights(model: str) -> int:
    size = plan.model_size(model)
    return 4 * size.params if size else 0


# ------------------------------------------------------------------------------------ cap

def spread_countries(n: int) -> list[str]:
    """``n`` countries on as many continents as possible: the most populous country of each
    continent (continents by their number of countries), then each one's second, ...

    Used in: biasbook plan.

    >>> spread_countries(3)
    ['NG', 'RU', 'CN']
    """
    table = regions.countries().sort_values("population", ascending=False, kind="stable")
    by_continent = sorted((group["code"].tolist() for _, group in table.groupby("continent")),
                          key=len, reverse=True)
    ranked = [codes[i] for i in range(len(by_continent[0])) for codes in by_continent
              if i < len(codes)]
    return ranked[:n]


def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """Every loop bounded by ``n``: ``n`` countries on different continents (chapter-wide, 04 and
    05; at least three, the fewest points a UMAP map takes), at most ``n`` cities each, ``n``
    extra regions, top-k and epochs; ``10 n`` resamples; ``8 n`` texts per classifier split and
    toxic sentences. Models, the classifier method and the toxic objective are kept.

    Used in: biasbook plan.
    """
    countries = spread_countries(max(n, 3))
    limits = {"cities_per_country": n, "per_continent": n, "top_k": n, "epochs": n,
              "interval_resamples": 10 * n, "hate_train": 8 * n, "hate_test": 8 * n,
              "imdb_train": 8 * n, "imdb_test": 8 * n, "corpus_size": 8 * n}
    out = {}
    for stem, p in params.items():
        p = dict(p)
        if "countries" in p:
            p["countries"] = countries
        for key in limits.keys() & p.keys():
            p[key] = plan.at_most(p[key], limits[key])
        if "extra_regions" in p:
            p["extra_regions"] = p["extra_regions"][:n]
        out[stem] = p
    return out
