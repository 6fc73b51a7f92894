"""The lm-gender-bias plan (:mod:`biasbook.plan`): corpus counting, LSTM steps, generated text.

Notebook 01 counts gendered co-occurrences in each corpus (two countings, a fixed 10-word
context and the whole document; PTB and WikiText-2 again at each infinite-context cut-off of
``windows``). Notebook 02 trains, per corpus and training seed, a lambda = 0 warm-up on
``warmup_tokens`` tokens and one LSTM per lambda on ``sweep_tokens`` more (``batch x bptt`` tokens
a step), computes its held-out perplexity and samples ``n_seeds x length`` tokens; ``tying``
adds four untied models (lambda = 0; the regulariser on the input, output or both embeddings).

>>> P = {"02-lambda-sweep": {"corpora": ["ptb"], "lambdas": [0.0, 1.0], "seeds": [0],
...      "warmup_tokens": 0, "sweep_tokens": 7000, "valid_tokens": 700, "vocab_size": 100,
...      "lstm": {"layers": 1, "hidden": 8, "emb": 8, "bptt": 35, "batch": 20},
...      "generation": {"n_seeds": 2, "length": 10}, "tying": None, "un_valid_speeches": 1}}
>>> [(w.what, w.count) for w in work(P)][:3]
[('ptb seed 0 lambda 0: train', 10), ('ptb seed 0 lambda 0: held-out perplexity', 700), \
('ptb seed 0 lambda 0: generate 2 x 10', 20)]
"""

from __future__ import annotations

import math

from biasbook import flops, plan
from biasbook.chapters.lm_gender_bias.sweep_settings import per_corpus

#: Tokens of each corpus as the notebooks read it (counted on the mirror): 01 measures PTB train
#: and WikiText-2 valid+test, 02 holds out PTB test and WikiText-2 test (with <eos>); a UN speech
#: has about 3,300 (3,368 in a 200-speech sample).
MEASURED_TOKENS = {"ptb": 887_521, "wikitext-2": 455_097, "cnn-dailymail": 80_240}
HELD_OUT_TOKENS = {"ptb": 82_430, "wikitext-2": 245_569}
UN_TOKENS_PER_SPEECH = 3_300
FIXED_CONTEXT = 10  # words each side: the fixed context of bias.score
TYING_RUNS = 4  # untied lambda = 0, and untied with the regulariser on input, output, both


def _measured(name: str, p: dict) -> int:
    total = (p["un_speeches"] * UN_TOKENS_PER_SPEECH if name == "un-general-debates"
             else MEASURED_TOKENS[name])
    return total if p["max_tokens"] is None else min(total, p["max_tokens"])


def _counting(what: str, tokens: int, window: int) -> plan.Work:
    return plan.Work("01", what, tokens, "tokens counted", tokens=tokens,
                     flops=flops.counting_flops(tokens, window), engine="counting")


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Every notebook's loops (module docstring).

    Used in: biasbook plan.
    """
    out: list[plan.Work] = []
    if (p := params.get("01-corpus-bias")) is not None:
        for name in p["corpora"]:
            tokens = _measured(name, p)
            out.append(_counting(f"{name}: co-occurrences, two countings", 2 * tokens,
                                 FIXED_CONTEXT))
            if name in ("ptb", "wikitext-2"):
                for window in p["windows"]:
                    out.append(_counting(f"{name}: cut-off {window}, two countings",
                                         2 * tokens, window))
    if (p := params.get("02-lambda-sweep")) is not None:
        for name in p["corpora"]:
            out += _sweep(name, p)
    return out


def _sweep(name: str, p: dict) -> list[plan.Work]:
    lstm, gen = p["lstm"], p["generation"]
    vocab = per_corpus(p["vocab_size"], name)
    per_token = flops.lstm_flops_per_token(lstm["layers"], lstm["hidden"], lstm["emb"], vocab)
    params = 4 * (vocab * lstm["emb"] + lstm["hidden"] * lstm["emb"] + sum(
        4 * lstm["hidden"] * ((lstm["emb"] if i == 0 else lstm["hidden"]) + lstm["hidden"])
        for i in range(lstm["layers"])))
    held = per_corpus(p["valid_tokens"], name)
    if held is None:
        held = HELD_OUT_TOKENS.get(name, p["un_valid_speeches"] * UN_TOKENS_PER_SPEECH)
    step_tokens = lstm["batch"] * lstm["bptt"]
    generated = gen["n_seeds"] * gen["length"]

    def lstm_work(what: str, count: int, unit: str, tokens: int, factor: int,
                  weights: bool = False) -> plan.Work:
        return plan.Work("02", what, count, unit, tokens=tokens,
                         flops=factor * per_token * tokens, engine="lstm",
                         cache_bytes=params if weights else 0)

    def one_model(label: str, tokens: int) -> list[plan.Work]:
        return [lstm_work(f"{label}: train", math.ceil(tokens / step_tokens), "training steps",
                          tokens, plan.TRAINING_FACTOR, weights=True),
                lstm_work(f"{label}: held-out perplexity", held, "tokens scored", held, 1),
                lstm_work(f"{label}: generate {gen['n_seeds']} x {gen['length']}", generated,
                          "generated tokens", generated, 1)]

    out = []
    warm = per_corpus(p["warmup_tokens"], name) or 0
    sweep = per_corpus(p["sweep_tokens"], name)
    seeds = per_corpus(p["seeds"], name)
    for seed in seeds:
        if warm:
            out.append(lstm_work(f"{name} seed {seed}: lambda = 0 warm-up",
                                 math.ceil(warm / step_tokens), "training steps", warm,
                                 plan.TRAINING_FACTOR, weights=True))
        for lam in per_corpus(p["lambdas"], name):
            out += one_model(f"{name} seed {seed} lambda {lam:g}", sweep)
    if p["tying"] and p["tying"]["corpus"] == name:
        for _ in range(TYING_RUNS):
            out += one_model(f"{name} seed {seeds[0]} untied (tying)", sweep)
    return out


# ------------------------------------------------------------------------------------ cap

def _ends(values, n: int):
    """The first ``n - 1`` and the last of a list (lambda = 0 and the largest lambda stay), per
    corpus where ``values`` is a mapping."""
    if isinstance(values, dict):
        return {k: _ends(v, n) for k, v in values.items()}
    if len(values) <= n:
        return values
    return [*values[:n - 1], values[-1]] if n > 1 else values[:1]


def _first(values, n: int):
    if isinstance(values, dict):
        return {k: _first(v, n) for k, v in values.items()}
    return values[:n]


def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """Every loop bounded by ``n``: ``n`` lambdas (the first ``n - 1`` and the largest), seeds,
    cut-off windows and UN valid speeches; ``5 n`` UN speeches to measure and ``4 n`` to train
    on; ``10,000 n`` tokens to measure or train on, ``5,000 n`` for the warm-up and each lambda,
    ``2,000 n`` held-out tokens; vocabulary ``1,000 n``; an LSTM of ``8 n`` units (its layers
    kept) with ``bptt`` and ``batch`` at most ``10 n``; ``20 n`` generated texts of ``100 n``
    tokens (at ``n = 2``, 8,000 tokens a model: fewer left the texts at lambda = 0 and at the
    largest lambda without a scored word in common, which notebook 02 compares); ``10 n``
    bootstrap resamples. Corpora, the regulariser's mode, the optimiser and the tying
    comparison are kept.

    Used in: biasbook plan.
    """
    out = {}
    for stem, p in params.items():
        p = dict(p)
        if "max_tokens" in p:
            p.update(max_tokens=plan.at_most(p["max_tokens"], 10_000 * n),
                     un_speeches=plan.at_most(p["un_speeches"], 5 * n), windows=p["windows"][:n])
        if "lambdas" in p:
            lstm = p["lstm"]
            p.update(
                lambdas=_ends(p["lambdas"], n), seeds=_first(p["seeds"], n),
                train_tokens=plan.at_most(p["train_tokens"], 10_000 * n),
                valid_tokens=plan.at_most(p["valid_tokens"], 2_000 * n),
                un_train_speeches=plan.at_most(p["un_train_speeches"], 4 * n),
                un_valid_speeches=plan.at_most(p["un_valid_speeches"], n),
                vocab_size=plan.at_most(p["vocab_size"], 1_000 * n),
                warmup_tokens=plan.at_most(p["warmup_tokens"], 5_000 * n),
                sweep_tokens=plan.at_most(p["sweep_tokens"], 5_000 * n),
                lstm={**lstm, "hidden": min(lstm["hidden"], 8 * n),
                      "emb": min(lstm["emb"], 8 * n), "bptt": min(lstm["bptt"], 10 * n),
                      "batch": min(lstm["batch"], 10 * n)},
                generation={"n_seeds": min(p["generation"]["n_seeds"], 20 * n),
                            "length": min(p["generation"]["length"], 100 * n)})
        if "interval_resamples" in p:
            p["interval_resamples"] = min(p["interval_resamples"], 10 * n)
        out[stem] = p
    return out
