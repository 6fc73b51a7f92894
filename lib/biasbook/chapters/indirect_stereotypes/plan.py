"""The indirect-stereotypes plan (:mod:`biasbook.plan`): corpus tokens, matrices, GloVe updates.

Notebook 01 counts the Original co-occurrence matrix (``window`` words each side of every token,
with BIRM's near-marker statistics) and derives BIRM's; 02 counts the CDS matrix on the
substituted corpus and trains GloVe for each method and seed: ``epochs`` passes over the
matrix's non-zeros. The non-zeros are not known before the corpus is counted; the plan takes
the share of distinct pairs among all windowed pairs that the book's corpus has (28M non-zeros of
about 14.5M tokens x 30 pairs: 6.4%), so it is a rough figure. Notebooks 03 and 04 evaluate
vectors (WEAT permutations, benchmarks): CPU work in seconds to minutes, not estimated.

>>> P = {"01-cooccurrence-and-birm": {"corpus": {"source": "un+imdb", "un_speeches": 10,
...      "imdb_reviews": 0, "seed": 0}, "matrix": {"window": 15, "max_vocab": None}}}
>>> [(w.what, w.count) for w in work(P)]
[('Original matrix (with BIRM statistics)', 33000)]
"""

from __future__ import annotations

from biasbook import flops, plan

METHODS = ("original", "birm", "cds")
UN_SPEECHES, UN_TOKENS_PER_SPEECH = 10_952, 3_300  # the UN General Debates: about 3,300 a speech
IMDB_TOKENS_PER_REVIEW = 280  # IMDB: about 280 tokens a review (50,000 reviews)
IMDB_REVIEWS = 50_000
UMBC_TOKENS_PER_SENTENCE = 23  # UMBC WebBase: 3 billion words in about 130 million sentences
DISTINCT_PAIR_SHARE = 0.064  # non-zeros / windowed pairs on the book's corpus (docstring)
MATRIX_BYTES_PER_NONZERO = 12 * 3  # an int32 row, column and float32 value; counts, total, BIRM


def corpus_tokens(corpus: dict) -> int:
    """Tokens of the corpus a profile describes (estimated from its documents' mean length).

    Used in: biasbook plan.
    """
    if corpus["source"] == "umbc":
        if corpus.get("max_sentences") is None:
            return 3_000_000_000
        return corpus["max_sentences"] * UMBC_TOKENS_PER_SENTENCE
    un = UN_SPEECHES if corpus["un_speeches"] is None else corpus["un_speeches"]
    imdb = IMDB_REVIEWS if corpus["imdb_reviews"] is None else corpus["imdb_reviews"]
    return un * UN_TOKENS_PER_SPEECH + imdb * IMDB_TOKENS_PER_REVIEW


def _nonzeros(tokens: int, matrix: dict) -> int:
    pairs = 2 * matrix["window"] * tokens
    nonzeros = round(DISTINCT_PAIR_SHARE * pairs)
    if matrix.get("max_vocab"):
        nonzeros = min(nonzeros, matrix["max_vocab"] ** 2)
    return nonzeros


def _counting(notebook: str, what: str, tokens: int, matrix: dict) -> plan.Work:
    return plan.Work(notebook, what, tokens, "tokens counted", tokens=tokens,
                     flops=flops.counting_flops(tokens, matrix["window"]), engine="counting",
                     cache_bytes=MATRIX_BYTES_PER_NONZERO * _nonzeros(tokens, matrix))


def work(params: dict[str, dict]) -> list[plan.Work]:
    """Every notebook's loops (module docstring).

    Used in: biasbook plan.
    """
    out: list[plan.Work] = []
    if (p := params.get("01-cooccurrence-and-birm")) is not None:
        out.append(_counting("01", "Original matrix (with BIRM statistics)",
                             corpus_tokens(p["corpus"]), p["matrix"]))
    if (p := params.get("02-training")) is not None:
        tokens = corpus_tokens(p["corpus"])
        out.append(_counting("02", "CDS matrix (substituted corpus)", tokens, p["matrix"]))
        nonzeros, glove = _nonzeros(tokens, p["matrix"]), p["glove"]
        runs = [(f"GloVe {m} seed {s}", glove["epochs"]) for m in METHODS for s in p["seeds"]]
        if sweep := p.get("lr_sweep"):  # Original, first seed, at each learning rate
            runs += [(f"GloVe original lr {lr}", sweep["epochs"]) for lr in sweep["lrs"]]
        for what, epochs in runs:
            out.append(plan.Work(
                "02", f"{what}: {epochs} epochs, {glove['dim']}d", nonzeros * epochs,
                "GloVe updates", flops=flops.glove_flops(nonzeros, glove["dim"], epochs),
                engine="glove", note=f"about {plan.number(nonzeros)} non-zeros"))
    return out


# ------------------------------------------------------------------------------------ cap

def cap(params: dict[str, dict], n: int) -> dict[str, dict]:
    """Every loop bounded by ``n``: ``2,000 n`` UMBC sentences or ``5 n`` UN speeches and
    ``200 n`` IMDB reviews, a vocabulary of at most ``2,000 n`` words, GloVe of ``10 n``
    dimensions for ``n`` epochs, ``n`` seeds (and ``n`` learning rates of ``n`` epochs where
    02 compares them), ``100 n`` WEAT samples, ``10 n`` bootstrap resamples. The corpus source,
    BIRM's options, the benchmarks and the external vectors are kept.

    Used in: biasbook plan.
    """
    out = {}
    for stem, p in params.items():
        p = dict(p)
        if "corpus" in p:
            corpus = dict(p["corpus"])
            if corpus["source"] == "umbc":
                corpus["max_sentences"] = plan.at_most(corpus.get("max_sentences"), 2_000 * n)
            else:
                corpus.update(un_speeches=plan.at_most(corpus["un_speeches"], 5 * n),
                              imdb_reviews=plan.at_most(corpus["imdb_reviews"], 200 * n))
            p["corpus"] = corpus
        if "matrix" in p:
            vocab = plan.at_most(p["matrix"]["max_vocab"], 2_000 * n)
            p["matrix"] = {**p["matrix"], "max_vocab": vocab}
        if "glove" in p:
            p["glove"] = {**p["glove"], "dim": min(p["glove"]["dim"], 10 * n),
                          "epochs": min(p["glove"]["epochs"], n)}
        if "seeds" in p:
            p["seeds"] = p["seeds"][:n]
        limits = {"weat_samples": 100 * n, "interval_resamples": 10 * n}
        p.update({k: plan.at_most(p[k], v) for k, v in limits.items() if k in p})
        if p.get("lr_sweep"):
            p["lr_sweep"] = {"lrs": p["lr_sweep"]["lrs"][:n],
                             "epochs": min(p["lr_sweep"]["epochs"], n)}
        out[stem] = p
    return out
