"""Notebook 02's results: bias of the generated text, the paper's Tables 1-8 in our numbers.

Every function takes the prepared corpora (:class:`.sweep.LMCorpus`) and the sweep's runs
(:class:`.sweep.LambdaRun`) and returns a table; a table names a corpus by its id (``corpus``:
``ptb``, ...) and holds the paper's numbers beside ours, so the notebook records its columns with
:meth:`biasbook.results.Recorder.metrics` (labels :data:`LABELS`).

- :func:`training_data`, :func:`perplexity_table`: what each model was trained on, and how well
  it predicts held-out text.
- :func:`score_texts`: mu, sigma, beta of the training text ("train"), of a same-size sample of it
  ("sample", a control the paper does not have) and of each lambda's generated text, in both
  countings and contexts, with bootstrap standard errors of mu (``as-coded``, fixed context).
- :func:`table_1_to_3`: ours and the paper's in the layout of Tables 1-3 (the first seed).
- :func:`seed_scores`, :func:`seed_summary`: mu, beta, perplexity of every training seed
  (``as-coded``, fixed context), and their mean and spread over seeds, with the change from
  lambda = 0 taken within each seed.
- :func:`tying_table`: tied vs untied input/output/both debiasing (:func:`.sweep.tying_runs`).
- :func:`prose_numbers`: the numbers the notebook's text quotes, by name (for myst-nb ``glue``).
- :func:`tradeoff_frame`: mu, beta, perplexity and the gender projection against lambda, ours and
  the paper's, each also relative to its lambda = 0 value (the trade-off figures).
- :func:`excerpts`: Table 4's form, generated text around strongly gendered words.
- :func:`word_table`, :func:`word_tables`: Tables 5-8's form, word-level bias through the sweep;
  :func:`scored_share`: how much of them our generated texts score.
- :func:`regression_points`: the words behind beta, for the scatter figure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook.chapters.lm_gender_bias import bias
from biasbook.chapters.lm_gender_bias.corpora import corpus
from biasbook.chapters.lm_gender_bias.data import paper_sweep, paper_word_bias
from biasbook.chapters.lm_gender_bias.sweep import LambdaRun, LMCorpus
from biasbook.metrics.cooccurrence_bias import BiasRegression, BiasScores, bias_regression
from biasbook.text.cooccurrence import count_cooccurrences, english_stop_words
from biasbook.training.lstm import EOS, UNK

SETTINGS = [(counting, context) for counting in ("as-coded", "paper")
            for context in bias.CONTEXTS]
N_BOOT = 30  # bootstrap resamples of the texts for the standard error of mu
Runs = dict[tuple[str, float], LambdaRun]
LABELS = {"corpus": "corpus", "lam": "λ"}  # record label -> column, for a table of runs
# record key -> label of seed_summary's columns ("μ mean", "μ sd", "paper μ", ...)
SEED_STATS = {"mu": "μ", "delta_mu": "Δμ", "beta": "β", "perplexity": "ppl"}


@dataclass
class TextScores:
    """Scores of the training texts (``reference[corpus, counting, context]``) and generated
    texts (``generated[corpus, lam, counting, context]``; ``None``: nothing scored), and the
    summary table ``long`` (one row per corpus, lambda or "train"/"sample", counting, context).
    """

    reference: dict[tuple, BiasScores | None]
    generated: dict[tuple, BiasScores | None]
    long: pd.DataFrame


def training_data(data: dict[str, LMCorpus]) -> pd.DataFrame:
    """Per corpus: training and held-out tokens, vocabulary, ``<unk>`` share, pairs in vocabulary.
    """
    rows = []
    for name, d in data.items():
        unk = d.vocab.stoi[UNK]
        rows.append({"corpus": corpus(name).label, "training tokens": len(d.ids),
                     "held-out tokens": len(d.held_ids), "vocabulary": len(d.vocab),
                     "<unk> share of training": float((d.ids == unk).float().mean()),
                     "defining pairs in vocabulary": len(d.pairs)})
    return pd.DataFrame(rows)


def perplexity_table(runs: Runs) -> pd.DataFrame:
    """Perplexity (with the paper's), final training loss and mean cos^2 of every run."""
    rows = []
    for (name, lam), run in runs.items():
        rows.append({"corpus": name, "λ": lam, "perplexity": run.ppl,
                     "paper perplexity": paper_sweep(name).get(lam, {}).get("ppl"),
                     "final training loss": run.lm.history[-1]["train_loss"],
                     "mean cos² with gender direction": run.cos2})
    return pd.DataFrame(rows)


def score_texts(data: dict[str, LMCorpus], runs: Runs, n_seeds: int, gen_length: int, *,
                progress: bool = True) -> TextScores:
    """Bias of the training texts, of a same-size sample of them and of every generated text.

    The sample is ``n_seeds`` random stretches of ``gen_length`` tokens of the training text
    (:func:`.bias.training_sample`); each generated text is one document, ``<eos>`` removed.
    ``long`` holds mu, sigma, beta, scored ``words``, ``mu_se`` (NaN where not computed or
    undefined) and the paper's ``paper mu``, ``paper sigma``, ``paper beta`` in the row's context.
    """
    reference, generated, rows = {}, {}, []
    jobs = [(name, c, x) for name in data for c, x in SETTINGS]
    for name, counting, context in tqdm(jobs, desc="training-text bias", disable=not progress):
        d, labels = data[name], {"counting": counting, "context": context}
        s, _ = bias.score(d.bias_docs, d.gender, counting, context)
        reference[name, counting, context] = s
        rows.append({"corpus": name, "lam": "train", **labels, **bias.summary(s)})
        docs = bias.training_sample(d.bias_docs, n_seeds, gen_length)
        sample, _ = bias.score(docs, d.gender, counting, context)
        rows.append({"corpus": name, "lam": "sample", **labels, **bias.summary(sample, s),
                     "mu_se": _mu_se(docs, d.gender, counting, context)})
    jobs = [(key, c, x) for key in runs for c, x in SETTINGS]
    for (name, lam), counting, context in tqdm(jobs, desc="generated-text bias",
                                               disable=not progress):
        docs = [[t for t in text if t != EOS] for text in runs[name, lam].texts]
        s, _ = bias.score(docs, data[name].gender, counting, context)
        generated[name, lam, counting, context] = s
        rows.append({"corpus": name, "lam": lam, "counting": counting, "context": context,
                     **bias.summary(s, reference[name, counting, context]),
                     "mu_se": _mu_se(docs, data[name].gender, counting, context)})
    long = pd.DataFrame(rows)
    for stat in ("mu", "sigma", "beta"):
        long[f"paper {stat}"] = [paper_sweep(name).get(lam, {}).get(f"{context}_{stat}")
                                 for name, lam, context in zip(long.corpus, long.lam,
                                                               long.context, strict=True)]
    return TextScores(reference, generated, long)


def seed_scores(data: dict[str, LMCorpus], by_seed: dict[int, Runs], *,
                progress: bool = True) -> pd.DataFrame:
    """One row per corpus, lambda and training seed (``as-coded``, fixed context): mu, sigma,
    beta, scored words, perplexity, mean cos^2, and ``delta mu`` = mu - mu(lambda = 0) of the
    same seed (NaN without a lambda = 0 run)."""
    reference = {name: bias.score(d.bias_docs, d.gender, "as-coded", "fixed")[0]
                 for name, d in data.items()}
    rows = []
    jobs = [(seed, key) for seed, runs in by_seed.items() for key in runs]
    for seed, (name, lam) in tqdm(jobs, desc="bias per seed", disable=not progress):
        run = by_seed[seed][name, lam]
        docs = [[t for t in text if t != EOS] for text in run.texts]
        s, _ = bias.score(docs, data[name].gender, "as-coded", "fixed")
        rows.append({"corpus": name, "lam": float(lam), "seed": seed, "ppl": run.ppl,
                     "cos2": run.cos2, **bias.summary(s, reference[name])})
    frame = pd.DataFrame(rows)
    if len(frame):
        at_zero = frame[frame.lam == 0].set_index(["corpus", "seed"])["mu"]
        index = pd.MultiIndex.from_frame(frame[["corpus", "seed"]])
        frame["delta mu"] = frame["mu"].to_numpy() - at_zero.reindex(index).to_numpy()
    return frame


def seed_summary(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and lambda: mean, standard deviation (``sd``, ddof 1) and range over the
    training seeds of mu, delta mu, beta and perplexity (the labels of :data:`SEED_STATS`),
    beside the paper's mu, beta and perplexity (fixed context); NaN where undefined.

    >>> per_seed = pd.DataFrame({"corpus": "ptb", "lam": [0.0, 0.0, 1.0, 1.0],
    ...     "seed": [0, 1, 0, 1], "mu": [0.8, 0.9, 0.7, 0.9], "delta mu": [0, 0, -0.1, 0.0],
    ...     "beta": 0.1, "ppl": 300.0})
    >>> seed_summary(per_seed).loc[1, ["μ mean", "μ sd", "Δμ mean", "seeds"]].round(3).tolist()
    [0.8, 0.141, -0.05, 2.0]
    """
    rows = []
    for (name, lam), g in per_seed.groupby(["corpus", "lam"], sort=False):
        paper = paper_sweep(name).get(lam, {})
        row = {"corpus": name, "λ": lam, "seeds": len(g)}
        for col, label, paper_key in (("mu", "μ", "fixed_mu"), ("delta mu", "Δμ", None),
                                      ("beta", "β", "fixed_beta"), ("ppl", "ppl", "ppl")):
            values = g[col].dropna().to_numpy(dtype=float)
            mean = float(values.mean()) if len(values) else np.nan
            sd = float(values.std(ddof=1)) if len(values) > 1 else np.nan
            row.update({f"{label} mean": mean, f"{label} sd": sd,
                        f"{label} min": values.min() if len(values) else np.nan,
                        f"{label} max": values.max() if len(values) else np.nan})
            if paper_key:
                row[f"paper {label}"] = paper.get(paper_key)
        rows.append(row)
    return pd.DataFrame(rows)


def tying_table(data: dict[str, LMCorpus],
                runs: dict[tuple[str, float], LambdaRun]) -> pd.DataFrame:
    """:func:`.sweep.tying_runs` as a table: per variant and lambda, perplexity, mean cos^2 of
    the input and output embeddings, mu and beta of the generated text (``as-coded``, fixed),
    and perplexity and mu relative to lambda = 0 with the same tying."""
    rows = []
    for (variant, lam), run in runs.items():
        d = data[run.corpus]
        ref, _ = bias.score(d.bias_docs, d.gender, "as-coded", "fixed")
        docs = [[t for t in text if t != EOS] for text in run.texts]
        s, _ = bias.score(docs, d.gender, "as-coded", "fixed")
        stats = bias.summary(s, ref)
        rows.append({"corpus": run.corpus, "variant": variant, "λ": lam,
                     "perplexity": run.ppl, "cos² input": run.cos2, "cos² output": run.cos2_out,
                     "μ": stats["mu"], "β": stats["beta"]})
    frame = pd.DataFrame(rows)
    if len(frame):
        tying = frame["variant"].str.split(",").str[0]
        base = frame[frame["λ"] == 0].assign(tying=tying).set_index("tying")
        frame["ppl / ppl(λ=0)"] = frame["perplexity"] / base["perplexity"].reindex(tying).values
        frame["μ − μ(λ=0)"] = frame["μ"] - base["μ"].reindex(tying).values
    return frame


PROSE_CORPORA = ("ptb", "wikitext-2")
TYING_VARIANTS = {"tied": "tied", "input": "untied, input", "output": "untied, output",
                  "both": "untied, both"}


def prose_numbers(per_seed: pd.DataFrame, long: pd.DataFrame,
                  tying: pd.DataFrame) -> dict[str, float]:
    """The numbers notebook 02's text quotes, under fixed names (NaN when a run lacks them):
    per corpus of :data:`PROSE_CORPORA` (``ptb_...``, ``wikitext_2_...``) the seeds, the
    smallest and largest lambda > 0, mu at lambda = 0 (mean, sd over seeds), the change of mu to
    those lambdas (mean, sd), relative perplexity at the largest, the range of beta's seed means,
    beta of the same-size training sample, mean cos^2 at lambda = 0 and the largest lambda; and
    per tying variant (``tying_tied_...``, ``tying_input_...``) relative perplexity, change of
    mu, cos^2 of the input and output embeddings."""
    out: dict[str, float] = {}
    for name in PROSE_CORPORA:
        p = name.replace("-", "_")
        g = per_seed[per_seed.corpus == name] if len(per_seed) else per_seed
        lams = sorted(lam for lam in g["lam"].unique() if lam > 0) if len(g) else []
        low, high = (float(lams[0]), float(lams[-1])) if lams else (np.nan, np.nan)

        def at(lam, col, how="mean", g=g):
            values = g.loc[g["lam"] == lam, col].dropna() if len(g) else pd.Series(dtype=float)
            if how == "sd":
                return float(values.std(ddof=1)) if len(values) > 1 else np.nan
            return float(values.mean()) if len(values) else np.nan

        beta = g.groupby("lam")["beta"].mean() if len(g) else pd.Series(dtype=float)
        sample = long[(long.corpus == name) & (long.lam == "sample")
                      & (long.counting == "as-coded") & (long.context == "fixed")]
        out.update({
            f"{p}_seeds": float(g["seed"].nunique()) if len(g) else np.nan,
            f"{p}_lam_low": low, f"{p}_lam_high": high,
            f"{p}_mu0_mean": at(0.0, "mu"), f"{p}_mu0_sd": at(0.0, "mu", "sd"),
            f"{p}_dmu_low_mean": at(low, "delta mu"), f"{p}_dmu_low_sd": at(low, "delta mu", "sd"),
            f"{p}_dmu_high_mean": at(high, "delta mu"),
            f"{p}_dmu_high_sd": at(high, "delta mu", "sd"),
            f"{p}_ppl_high_rel": at(high, "ppl") / at(0.0, "ppl"),
            f"{p}_beta_min": float(beta.min()) if len(beta) else np.nan,
            f"{p}_beta_max": float(beta.max()) if len(beta) else np.nan,
            f"{p}_sample_beta": float(sample["beta"].iloc[0]) if len(sample) else np.nan,
            f"{p}_cos2_0": at(0.0, "cos2"), f"{p}_cos2_high": at(high, "cos2"),
        })
    for short, variant in TYING_VARIANTS.items():
        row = tying[(tying["variant"] == variant) & (tying["λ"] > 0)] if len(tying) else tying
        for key, col in (("ppl_rel", "ppl / ppl(λ=0)"), ("dmu", "μ − μ(λ=0)"),
                         ("cos2_in", "cos² input"), ("cos2_out", "cos² output")):
            out[f"tying_{short}_{key}"] = float(row[col].iloc[0]) if len(row) else np.nan
    out["tying_lam"] = float(tying.loc[tying["λ"] > 0, "λ"].iloc[0]) if len(tying) else np.nan
    return {k: float(v) for k, v in out.items()}  # plain floats: glue's text must parse


def _mu_se(docs, gender, counting: str, context: str) -> float:
    if (counting, context) != ("as-coded", "fixed"):  # the headline setting only
        return np.nan
    return bias.bootstrap_se(docs, gender, counting, context, n_boot=N_BOOT)


def table_1_to_3(long: pd.DataFrame, runs: Runs, name: str,
                 counting: str = "as-coded") -> pd.DataFrame:
    """Ours and the paper's in the layout of Tables 1-3: rows train, sample, then each lambda.
    """
    mine = long[(long.corpus == name) & (long.counting == counting)]
    ours = mine.pivot_table(index="lam", columns="context", values=["mu", "sigma", "beta"],
                            sort=False, dropna=False)
    ours.columns = [f"{ctx} {stat}" for stat, ctx in ours.columns]
    cols = [f"{ctx} {stat}" for ctx in bias.CONTEXTS for stat in ("mu", "sigma", "beta")]
    ours = ours.reindex(columns=cols)
    fixed = mine[mine.context == "fixed"].set_index("lam")
    ours.insert(1, "fixed mu se", fixed["mu_se"].reindex(ours.index))
    ours["words"] = fixed["words"].reindex(ours.index)
    ours["ppl"] = [runs[name, lam].ppl if (name, lam) in runs else np.nan for lam in ours.index]
    paper = pd.DataFrame({lam: {c: r.get(c.replace(" ", "_")) for c in ours.columns}
                          for lam, r in paper_sweep(name).items()}).T
    frames = {"ours": ours}
    if len(paper):
        frames["paper"] = paper.astype(float)
    both = pd.concat(frames, names=["source", "λ"]).swaplevel()
    order = ["train", "sample", *sorted(lam for lam in set(both.index.get_level_values(0))
                                        if lam not in ("train", "sample"))]
    return both.reindex(pd.MultiIndex.from_tuples(
        [(lam, src) for lam in order for src in frames if (lam, src) in both.index],
        names=["λ", "source"]))


def tradeoff_frame(long: pd.DataFrame, runs: Runs, corpora: Sequence[str]) -> pd.DataFrame:
    """One row per corpus, lambda, context and source (ours, paper; ``as-coded`` counting): mu,
    its SE, beta, perplexity, mean cos^2, and ``ppl / ppl(λ=0)``, ``μ / μ(λ=0)`` (NaN without a
    lambda = 0 row)."""
    rows = []
    generated = long[(long.counting == "as-coded") & ~long.lam.isin(["train", "sample"])]
    for row in generated.itertuples():
        run = runs[row.corpus, row.lam]
        rows.append({"corpus": corpus(row.corpus).label, "λ": float(row.lam),
                     "context": row.context, "μ": row.mu, "μ se": row.mu_se, "β": row.beta,
                     "source": "ours", "perplexity": run.ppl, "mean cos²": run.cos2})
    for name in corpora:
        for lam, r in paper_sweep(name).items():
            if lam == "train":
                continue
            for context in bias.CONTEXTS:
                rows.append({"corpus": corpus(name).label, "λ": float(lam), "context": context,
                             "μ": r[f"{context}_mu"], "β": r[f"{context}_beta"],
                             "source": "paper", "perplexity": r["ppl"], "mean cos²": np.nan})
    frame = pd.DataFrame(rows)
    group = ["corpus", "source", "context"]
    base = frame[frame["λ"] == 0].drop_duplicates(group).set_index(group)
    at_zero = base.reindex(pd.MultiIndex.from_frame(frame[group]))
    frame["ppl / ppl(λ=0)"] = frame["perplexity"].to_numpy() / at_zero["perplexity"].to_numpy()
    frame["μ / μ(λ=0)"] = frame["μ"].to_numpy() / at_zero["μ"].to_numpy()
    return frame


def sample_control(long: pd.DataFrame) -> pd.DataFrame:
    """The "sample" rows (``as-coded``, fixed context), with the corpus label: the dashed lines.
    """
    rows = long[(long.lam == "sample") & (long.counting == "as-coded")
                & (long.context == "fixed")]
    return rows.assign(corpus=[corpus(n).label for n in rows.corpus]).rename(
        columns={"mu": "μ", "beta": "β"})


def escape(token: str) -> str:
    """A token as Markdown text: ``<unk>`` visible, ``<eos>`` as ``/``, markup escaped.

    >>> escape("<unk>"), escape("<eos>"), escape("a_b*")
    ('&lt;unk&gt;', '/', 'a\\\\_b\\\\*')
    """
    token = token.replace("<unk>", "&lt;unk&gt;").replace("<eos>", "/")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", token)


def excerpt(text: Sequence[str], i: int, gender, width: int = 12) -> str:
    """``width`` tokens either side of ``text[i]`` (bold); gendered words in italics.

    >>> excerpt(["the", "king", "sat", "down"], 2, ({"king"}, {"queen"}), width=1)
    '*king* **sat** down'
    """
    male, female = gender
    out = []
    for j in range(max(0, i - width), min(len(text), i + width + 1)):
        t = escape(text[j])
        if j == i:
            t = f"**{t}**"
        elif text[j] in male or text[j] in female:
            t = f"*{t}*"
        out.append(t)
    return " ".join(out)


def first_occurrence(texts: Sequence[Sequence[str]], word: str):
    """(the first text containing ``word``, its index there), or ``(None, None)``."""
    for text in texts:
        if word in text:
            return text, text.index(word)
    return None, None


def excerpts(data: dict[str, LMCorpus], runs: Runs, reference: dict, lambdas: dict,
             min_count: int = 100) -> pd.DataFrame:
    """Table 4's form: per corpus, the two most female- and male-leaning content words of the
    training text (seen ``min_count`` times, present in every lambda's text), each in the first
    generated text that holds it at the smallest, a middle and the largest lambda.

    ``lambdas`` maps each corpus to its lambdas.
    """
    rows = []
    for name, d in data.items():
        lams = sorted(lambdas[name])
        shown = sorted({lams[0], lams[len(lams) // 2], lams[-1]})
        train_bias = reference[name, "as-coded", "fixed"]
        if train_bias is None:
            continue
        counts = Counter(t for doc in d.bias_docs for t in doc)
        male, female = d.gender
        present = set.intersection(*({t for text in runs[name, lam].texts for t in text}
                                     for lam in lams))
        ser = train_bias.to_series()
        ok = [w for w in ser.index if counts[w] >= min_count and w in present and w not in male
              and w not in female and w.isalpha() and w.lower() not in english_stop_words()]
        ser = ser[ok]
        for word in [*ser[ser > 0].nlargest(2).index, *ser[ser < 0].nsmallest(2).index]:
            for lam in shown:
                text, i = first_occurrence(runs[name, lam].texts, word)
                rows.append({"corpus": corpus(name).label, "target": f"**{escape(word)}**",
                             "training bias": f"{ser[word]:+.2f}", "λ": f"{lam:g}",
                             "generated text": excerpt(text, i, d.gender) if text else "–"})
    return pd.DataFrame(rows)


def word_table(words: Sequence[str], lambdas: Sequence[float], train: BiasScores | None,
               generated: dict[float, BiasScores | None],
               paper_source: str | None = None) -> pd.DataFrame:
    """Word-level bias (rows: word, then "ours"/"paper"; columns: train, then each lambda).

    ``generated`` maps each lambda to the generated text's scores; ``paper_source`` names the
    paper's table (``wikitext-2``, ``cnn-dailymail``) to show beside ours.
    """
    words = list(words)
    cols = ["train", *sorted(lambdas)]
    ours = {}
    for col in cols:
        s = train if col == "train" else generated[col]
        ours[col] = s.to_series().reindex(words) if s is not None else pd.Series(np.nan, words)
    frames = {"ours": pd.DataFrame(ours)}
    if paper_source:
        table = paper_word_bias(paper_source)
        values = {**table["male"], **table["female"]}
        paper = pd.DataFrame([values.get(w, [None] * len(table["columns"])) for w in words],
                             index=words, columns=table["columns"]).astype(float)
        frames["paper"] = paper.reindex(columns=cols)
    both = pd.concat(frames, names=["source", "word"]).swaplevel()
    both = both.reindex(pd.MultiIndex.from_product([words, list(frames)],
                                                   names=["word", "source"]))
    both.columns = [c if c == "train" else f"λ={c:g}" for c in both.columns]
    return both


def word_tables(data: dict[str, LMCorpus], scores: TextScores,
                lambdas: dict) -> dict[str, pd.DataFrame]:
    """Tables 5-8's form for every corpus of ``data`` (``as-coded``, fixed context).

    WikiText-2 follows the words of the paper's Tables 5-6, the UN speeches those of its
    CNN/Daily Mail Tables 7-8 (the paper's third corpus); PTB, which has no such table, the eight
    most female- and male-leaning content words seen 20 times in its training text.
    """
    sources = {"wikitext-2": "wikitext-2", "un-general-debates": "cnn-dailymail"}
    tables = {}
    for name in [n for n in ("wikitext-2", "un-general-debates", "ptb") if n in data]:
        d = data[name]
        train = scores.reference[name, "as-coded", "fixed"]
        generated = {lam: scores.generated[name, lam, "as-coded", "fixed"]
                     for lam in lambdas[name]}
        if name in sources:
            table = paper_word_bias(sources[name])
            words = [*table["male"], *table["female"]]
        elif name == "ptb" and train is not None:
            words = _leaning_words(d, train, n=8, min_count=20)
        else:
            continue
        tables[name] = word_table(words, lambdas[name], train, generated, sources.get(name))
    return tables


def scored_share(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per corpus of :func:`word_tables`: the share of its (word, lambda) cells that our generated
    texts score (``scored share``; NaN without a lambda)."""
    return pd.DataFrame([{"corpus": name, "scored share": float(
        table.xs("ours", level="source").drop(columns="train").notna().to_numpy().mean())}
        for name, table in tables.items()], columns=["corpus", "scored share"])


def _leaning_words(d: LMCorpus, train: BiasScores, n: int, min_count: int) -> list[str]:
    """The ``n`` most female- and ``n`` most male-leaning content words seen ``min_count`` times.
    """
    counts = Counter(t for doc in d.bias_docs for t in doc)
    ser = train.to_series()
    content = set(count_cooccurrences(d.bias_docs, *d.gender).words)  # no stop/gendered words
    ser = ser[[w for w in ser.index if counts[w] >= min_count and w in content]]
    return [*ser[ser > 0].nlargest(n).index, *ser[ser < 0].nsmallest(n).index]


def word_table_caption(name: str, table: pd.DataFrame) -> tuple[str, list[str]]:
    """(a Markdown caption, the words scored somewhere in our texts, i.e. the rows to show)."""
    ours = table.xs("ours", level="source")
    found = ours.drop(columns="train").notna()
    shown = list(ours.index[ours.notna().any(axis=1)])
    caption = (f"**{corpus(name).label}**: of {len(ours)} words, {len(shown)} are scored in our "
               f"training text or a generated text, {int(found.any(axis=1).sum())} in at least "
               f"one generated text (showing those {len(shown)})")
    return caption, shown


def regression_points(train: BiasScores, generated: BiasScores | None
                      ) -> tuple[pd.DataFrame, BiasRegression | None]:
    """(training and generated bias of every word scored in both; the beta fit, or ``None``)."""
    if generated is None:
        return pd.DataFrame({"train": [], "generated": []}), None
    x, y = train.to_series(), generated.to_series()
    shared = x.index.intersection(y.index)
    points = pd.DataFrame({"train": x[shared], "generated": y[shared]})
    try:
        return points, bias_regression(train, generated)
    except ValueError:
        return points, None
