"""Bias of the text each model of the lambda sweep generates: the paper's Tables 1-3 and its
trade-off figures in our numbers (notebook 02).

Every function takes the prepared corpora (:class:`.sweep.LMCorpus`) and the sweep's runs
(:class:`.sweep.LambdaRun`) and returns a table; a table names a corpus by its id (``corpus``:
``ptb``, ...) and holds the paper's numbers beside ours, so the notebook records its columns with
:meth:`biasbook.results.Recorder.metrics` (labels :data:`LABELS`).

- :func:`training_data`, :func:`perplexity_table`: what each model was trained on, and how well
  it predicts held-out text.
- :func:`score_texts`: mu, sigma, beta of the training text ("train"), of a same-size sample of it
  ("sample", a control the paper does not have) and of each lambda's generated text, in both
  countings and contexts, each with its 95% interval over the text's words
  (:mod:`.uncertainty`: the first seed's texts; the interval does not cover training).
- :func:`table_1_to_3`: ours (``value [low, high]``) and the paper's in the layout of Tables 1-3
  (the first seed), and whether the paper's number lies in our interval where comparable.
- :func:`seed_scores`, :func:`seed_summary`, :func:`seed_table`: mu, beta, perplexity, cos^2 of
  every training seed (``as-coded``, fixed context), with the change and ratios from lambda = 0
  taken within each seed, and their mean, spread and t-interval over seeds (covering training
  and text sampling); the lambda test is :func:`.uncertainty.lambda_effects`.
- :func:`tying_table`: tied vs untied input/output/both debiasing (:func:`.sweep.tying_runs`).
- :func:`prose_numbers`: the numbers the notebook's text quotes, by name (for myst-nb ``glue``).
- :func:`tradeoff_frame`: mu, beta, relative perplexity and the gender projection against
  lambda, ours (means over seeds with their t-intervals) and the paper's (the trade-off figures).

Word-level tables (Tables 4-8) and the words behind beta are in :mod:`.word_level`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook import reporting
from biasbook.chapters.lm_gender_bias import bias, uncertainty
from biasbook.chapters.lm_gender_bias.corpora import corpus
from biasbook.chapters.lm_gender_bias.data import paper_sweep
from biasbook.chapters.lm_gender_bias.sweep import LambdaRun, LMCorpus
from biasbook.metrics.cooccurrence_bias import BiasScores
from biasbook.training.lstm import EOS, UNK

SETTINGS = [(counting, context) for counting in ("as-coded", "paper")
            for context in bias.CONTEXTS]
Runs = dict[tuple[str, float], LambdaRun]
LABELS = {"corpus": "corpus", "lam": "λ"}  # record label -> column, for a table of runs
# record key -> (column of seed_scores, label, the paper's Table 1-3 column or None)
SEED_STATS = {"mu": ("mu", "μ", "fixed_mu"), "delta_mu": ("delta mu", "Δμ", None),
              "beta": ("beta", "β", "fixed_beta"), "perplexity": ("ppl", "ppl", "ppl"),
              "cos2": ("cos2", "cos²", None),
              "perplexity_ratio": ("ppl ratio", "ppl / ppl(λ=0)", None),
              "mu_ratio": ("mu ratio", "μ / μ(λ=0)", None)}
RELATIVE = ("delta_mu", "perplexity_ratio", "mu_ratio")  # against lambda = 0: none at 0 itself


@dataclass
class TextScores:
    """Scores of the training texts (``reference[corpus, counting, context]``) and generated
    texts (``generated[corpus, lam, counting, context]``; ``None``: nothing scored), and the
    summary table ``long`` (one row per corpus, lambda or "train"/"sample", counting, context).

    Used in: lm-gender-bias/02.
    """

    reference: dict[tuple, BiasScores | None]
    generated: dict[tuple, BiasScores | None]
    long: pd.DataFrame


def training_data(data: dict[str, LMCorpus]) -> pd.DataFrame:
    """Per corpus: training and held-out tokens, vocabulary, ``<unk>`` share, pairs in vocabulary.

    Used in: lm-gender-bias/02.
    """
    return pd.DataFrame([{"corpus": corpus(name).label, "training tokens": len(d.ids),
                          "held-out tokens": len(d.held_ids), "vocabulary": len(d.vocab),
                          "<unk> share of training": float(
                              (d.ids == d.vocab.stoi[UNK]).float().mean()),
                          "defining pairs in vocabulary": len(d.pairs)}
                         for name, d in data.items()])


def perplexity_table(runs: Runs) -> pd.DataFrame:
    """Perplexity (with the paper's, which is not comparable: another model), final training
    loss and mean cos^2 of every run (single runs: their spread is in :func:`seed_summary`).

    Used in: lm-gender-bias/02.
    """
    rows = []
    for (name, lam), run in runs.items():
        paper = paper_sweep(name).get(lam, {}).get("ppl")
        rows.append({"corpus": name, "λ": lam, "perplexity": run.ppl, "paper perplexity": paper,
                     "vs paper": reporting.paper_verdict(
                         paper, np.nan, np.nan, reason=uncertainty.NOT_THE_PAPERS_MODEL),
                     "final training loss": run.lm.history[-1]["train_loss"],
                     "mean cos² with gender direction": run.cos2})
    return pd.DataFrame(rows)


def _generated_scores(run: LambdaRun, gender: bias.Gender, counting: str = "as-coded",
                      context: str = "fixed") -> BiasScores | None:
    """:func:`.bias.score` of the texts ``run`` generated, each one document, ``<eos>`` removed."""
    docs = [[t for t in text if t != EOS] for text in run.texts]
    return bias.score(docs, gender, counting, context)[0]


def score_texts(data: dict[str, LMCorpus], runs: Runs, n_seeds: int, gen_length: int, *,
                n_resamples: int, progress: bool = True) -> TextScores:
    """Bias of the training texts, of a same-size sample of them and of every generated text.

    Used in: lm-gender-bias/02.

    The sample is ``n_seeds`` random stretches of ``gen_length`` tokens of the training text
    (:func:`.bias.training_sample`); each generated text is one document, ``<eos>`` removed.
    ``long`` holds mu, sigma, beta, scored ``words``, their intervals over the words
    (``mu ci_low``, ..., ``beta ci_method``; ``n_resamples`` resamples; NaN where undefined) and
    the paper's ``paper mu``, ``paper sigma``, ``paper beta`` in the row's context.
    """
    reference, generated, rows = {}, {}, []
    jobs = [(name, c, x) for name in data for c, x in SETTINGS]
    for name, counting, context in tqdm(jobs, desc="training-text bias", disable=not progress):
        d, labels = data[name], {"counting": counting, "context": context}
        s, _ = bias.score(d.bias_docs, d.gender, counting, context)
        reference[name, counting, context] = s
        rows.append({"corpus": name, "lam": "train", **labels, **_statistics(None, s, n_resamples)})
        docs = bias.training_sample(d.bias_docs, n_seeds, gen_length)
        sample, _ = bias.score(docs, d.gender, counting, context)
        rows.append({"corpus": name, "lam": "sample", **labels,
                     **_statistics(s, sample, n_resamples)})
    jobs = [(key, c, x) for key in runs for c, x in SETTINGS]
    for (name, lam), counting, context in tqdm(jobs, desc="generated-text bias",
                                               disable=not progress):
        s = _generated_scores(runs[name, lam], data[name].gender, counting, context)
        generated[name, lam, counting, context] = s
        ref = reference[name, counting, context]
        rows.append({"corpus": name, "lam": lam, "counting": counting, "context": context,
                     **_statistics(ref, s, n_resamples)})
    long = pd.DataFrame(rows)
    for stat in ("mu", "sigma", "beta"):
        long[f"paper {stat}"] = [paper_sweep(name).get(lam, {}).get(f"{context}_{stat}")
                                 for name, lam, context in zip(long.corpus, long.lam,
                                                               long.context, strict=True)]
    return TextScores(reference, generated, long)


def _statistics(reference: BiasScores | None, s: BiasScores | None, n_resamples: int) -> dict:
    """:func:`.bias.summary` of ``s`` against ``reference``, then mu's and sigma's intervals over
    the words of ``s`` and beta's over the words shared with ``reference`` (NaN without one)."""
    beta = uncertainty.beta_interval(reference, s, n_resamples=n_resamples)
    return {**bias.summary(s, reference), **uncertainty.word_columns(s, n_resamples=n_resamples),
            **uncertainty.columns(beta, "beta ")}


def seed_scores(data: dict[str, LMCorpus], by_seed: dict[int, Runs], *,
                progress: bool = True) -> pd.DataFrame:
    """One row per corpus, lambda and training seed (``as-coded``, fixed context): mu, sigma,
    beta, scored words, perplexity, mean cos^2, and against lambda = 0 of the same seed
    ``delta mu`` = mu - mu(0), ``mu ratio`` = mu / mu(0) and ``ppl ratio`` = ppl / ppl(0)
    (NaN without a lambda = 0 run).

    Used in: lm-gender-bias/02.
    """
    reference = {name: bias.score(d.bias_docs, d.gender, "as-coded", "fixed")[0]
                 for name, d in data.items()}
    rows = []
    jobs = [(seed, key) for seed, runs in by_seed.items() for key in runs]
    for seed, (name, lam) in tqdm(jobs, desc="bias per seed", disable=not progress):
        run = by_seed[seed][name, lam]
        s = _generated_scores(run, data[name].gender)
        rows.append({"corpus": name, "lam": float(lam), "seed": seed, "ppl": run.ppl,
                     "cos2": run.cos2, **bias.summary(s, reference[name])})
    frame = pd.DataFrame(rows)
    if len(frame):
        at_zero = frame[frame.lam == 0].set_index(["corpus", "seed"])
        index = pd.MultiIndex.from_frame(frame[["corpus", "seed"]])
        mu0 = at_zero["mu"].reindex(index).to_numpy()
        frame["delta mu"] = frame["mu"].to_numpy() - mu0
        with np.errstate(divide="ignore", invalid="ignore"):  # mu(0) = 0: no ratio (NaN)
            frame["mu ratio"] = np.where(mu0 != 0, frame["mu"].to_numpy() / mu0, np.nan)
        frame["ppl ratio"] = frame["ppl"].to_numpy() / at_zero["ppl"].reindex(index).to_numpy()
    return frame


def seed_summary(per_seed: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus, lambda and statistic of :data:`SEED_STATS` (``stat``: its record key,
    ``label``): the number of ``seeds``, their ``mean``, ``sd`` (ddof 1), ``min``, ``max``, the
    t-interval of the mean over seeds (``ci_low``, ... :func:`biasbook.stats.seed_spread`; NaN
    with one seed), the paper's number (``paper``, fixed context) and ``vs paper`` (another
    model: not comparable). The statistics relative to lambda = 0 (:data:`RELATIVE`) have no
    row at lambda = 0.

    Used in: lm-gender-bias/02.

    >>> per_seed = pd.DataFrame({"corpus": "ptb", "lam": [0.0, 0.0, 1.0, 1.0],
    ...     "seed": [0, 1, 0, 1], "mu": [0.8, 0.9, 0.7, 0.9], "delta mu": [0, 0, -0.1, 0.0],
    ...     "beta": 0.1, "ppl": 300.0, "cos2": 0.01, "mu ratio": 1.0, "ppl ratio": 1.0})
    >>> row = seed_summary(per_seed).query("stat == 'mu' and `λ` == 1.0").iloc[0]
    >>> [round(float(row[k]), 3) for k in ("mean", "sd", "ci_low", "ci_high", "seeds")]
    [0.8, 0.141, -0.471, 2.071, 2.0]
    """
    rows = []
    for (name, lam), g in per_seed.groupby(["corpus", "lam"], sort=False):
        paper = paper_sweep(name).get(lam, {})
        for key, (col, label, paper_key) in SEED_STATS.items():
            if lam == 0 and key in RELATIVE:
                continue
            values = g[col].dropna().to_numpy(dtype=float)
            spread = uncertainty.over_seeds(values)
            ref = paper.get(paper_key) if paper_key else None
            rows.append({
                "corpus": name, "λ": lam, "stat": key, "label": label, "seeds": len(values),
                "mean": float(values.mean()) if len(values) else np.nan,
                "sd": float(values.std(ddof=1)) if len(values) > 1 else np.nan,
                "min": values.min() if len(values) else np.nan,
                "max": values.max() if len(values) else np.nan, **uncertainty.columns(spread),
                "paper": ref, "vs paper": reporting.paper_verdict(
                    ref, np.nan, np.nan, reason=uncertainty.NOT_THE_PAPERS_MODEL)})
    return pd.DataFrame(rows)


TABLE_STATS = {"mu": 3, "delta_mu": 3, "beta": 3, "perplexity": 1}  # seed_table: key -> digits


def seed_table(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`seed_summary` as the reader compares it: per corpus and lambda, for mu, delta mu,
    beta and perplexity the mean over seeds with its 95% t-interval (``value [low, high]``) and
    the sd, then the paper's mu, beta, perplexity and whether they can be held against ours.

    Used in: lm-gender-bias/02.
    """
    rows = {}
    for r in summary[summary["stat"].isin(list(TABLE_STATS))].to_dict("records"):
        row = rows.setdefault((corpus(r["corpus"]).label, r["λ"]), {"seeds": r["seeds"]})
        digits = TABLE_STATS[r["stat"]]
        row[f"{r['label']} mean [95% CI]"] = reporting.interval_text(
            r["mean"], r["ci_low"], r["ci_high"], digits=digits, missing="")
        row[f"{r['label']} sd"] = "" if pd.isna(r["sd"]) else f"{r['sd']:.{digits}f}"
        if not pd.isna(r["paper"]):
            row[f"paper {r['label']}"] = f"{r['paper']:.{digits if digits == 1 else 2}f}"
            row["vs paper"] = r["vs paper"]
    labels = [SEED_STATS[key][1] for key in TABLE_STATS]  # columns: ours, then the paper's
    order = ["seeds", *(f"{label} {end}" for label in labels for end in ("mean [95% CI]", "sd")),
             *(f"paper {label}" for label in labels), "vs paper"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    table = table.reindex(columns=[c for c in order if c in table]).fillna("")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["corpus", "λ"])
    return table


def tying_table(data: dict[str, LMCorpus], runs: dict[tuple[str, float], LambdaRun], *,
                n_resamples: int, reference: dict | None = None) -> pd.DataFrame:
    """:func:`.sweep.tying_runs` as a table: per variant and lambda, perplexity, mean cos^2 of
    the input and output embeddings, mu (with its interval over the words, ``μ ci_low``, ...:
    single runs, so it does not cover training) and beta of the generated text (``as-coded``,
    fixed), and perplexity and mu relative to lambda = 0 with the same tying. ``reference``:
    the training texts' scores of :class:`TextScores` (else they are scored here).

    Used in: lm-gender-bias/02.
    """
    rows = []
    for (variant, lam), run in runs.items():
        d = data[run.corpus]
        ref = (reference or {}).get((run.corpus, "as-coded", "fixed"))
        if ref is None:
            ref, _ = bias.score(d.bias_docs, d.gender, "as-coded", "fixed")
        s = _generated_scores(run, d.gender)
        summary = bias.summary(s, ref)
        mu = uncertainty.columns(uncertainty.over_words(s.scores, "mu", n_resamples=n_resamples)
                                 if s else None, "μ ")
        rows.append({"corpus": run.corpus, "variant": variant, "λ": lam,
                     "perplexity": run.ppl, "cos² input": run.cos2, "cos² output": run.cos2_out,
                     "μ": summary["mu"], "β": summary["beta"],
                     "μ [95% CI over words]": reporting.interval_text(
                         summary["mu"], mu["μ ci_low"], mu["μ ci_high"], digits=3, missing=""),
                     **mu})
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
    mu, cos^2 of the input and output embeddings.

    Used in: lm-gender-bias/02.
    """
    out: dict[str, float] = {}
    for name in PROSE_CORPORA:
        p = name.replace("-", "_")
        g = per_seed[per_seed.corpus == name] if len(per_seed) else per_seed
        lams = sorted(lam for lam in g["lam"].unique() if lam > 0) if len(g) else []
        low, high = (float(lams[0]), float(lams[-1])) if lams else (np.nan, np.nan)

        def at(lam, col, how="mean", g=g):
            values = g.loc[g["lam"] == lam, col].dropna() if len(g) else pd.Series(dtype=float)
            return float(values.std(ddof=1) if how == "sd" else values.mean())  # NaN if too few

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
            f"{p}_beta_min": float(beta.min()), f"{p}_beta_max": float(beta.max()),
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


STATS = (("mu", "μ"), ("sigma", "σ"), ("beta", "β"))  # Tables 1-3's columns per context


def table_1_to_3(long: pd.DataFrame, runs: Runs, name: str, counting: str = "as-coded", *,
                 prefix_tokens: int | None = None) -> pd.DataFrame:
    """Ours and the paper's in the layout of Tables 1-3: rows train, sample, then each lambda
    (ours, then the paper's where it has the row). Our cells read ``value [low, high]`` (95%
    over the words of the first seed's text); the paper's rows say in ``paper in our
    interval?`` whether each of its numbers lies inside ours, or why the two are not the same
    quantity (another model for every lambda; the training text's reasons in
    :func:`.uncertainty.train_reason`, ``prefix_tokens``: the training text was cut).

    Used in: lm-gender-bias/02.
    """
    mine = long[(long.corpus == name) & (long.counting == counting)]
    table = paper_sweep(name)
    lams = [lam for lam in mine["lam"].unique() if lam not in ("train", "sample")]
    rows, index = [], []
    for lam in ["train", "sample", *sorted(lams)]:
        by_ctx = mine[mine.lam == lam].set_index("context")
        if by_ctx.empty:
            continue
        cells = {f"{ctx} {sym}": reporting.interval_text(*(by_ctx.loc[ctx, f"{stat}{end}"]
                                                      for end in ("", " ci_low", " ci_high")),
                                                    missing="")
                 for ctx in bias.CONTEXTS if ctx in by_ctx.index for stat, sym in STATS}
        fixed = by_ctx.loc["fixed"] if "fixed" in by_ctx.index else {}
        cells["words"] = f"{fixed['words']:.0f}" if len(fixed) else ""
        cells["ppl"] = f"{runs[name, lam].ppl:.1f}" if (name, lam) in runs else ""
        rows.append(cells)
        index.append((lam, "ours"))
        if lam in table:
            rows.append(_paper_row(table[lam], by_ctx, name, lam, counting, prefix_tokens))
            index.append((lam, "paper"))
    frame = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["λ", "source"]))
    return frame.fillna("")


def _paper_row(paper: dict, ours: pd.DataFrame, name: str, lam, counting: str,
               prefix_tokens: int | None) -> dict:
    """The paper's numbers of one row of Tables 1-3 and where they lie against our intervals."""
    row, checks = {}, {}
    for ctx in bias.CONTEXTS:
        reason = (uncertainty.train_reason(name, counting, ctx, prefix_tokens=prefix_tokens)
                  if lam == "train" else uncertainty.NOT_THE_PAPERS_MODEL)
        found = []
        for stat, sym in STATS:
            value = paper.get(f"{ctx}_{stat}")
            if pd.isna(value):
                continue
            row[f"{ctx} {sym}"] = f"{value:.2f}"
            if not reason and ctx in ours.index:
                found.append(f"{sym} " + reporting.paper_verdict(
                    value, ours.loc[ctx, f"{stat} ci_low"], ours.loc[ctx, f"{stat} ci_high"]))
        checks[ctx] = f"not comparable ({reason})" if reason else ", ".join(found)
    if lam in ("train", "sample") or len(set(checks.values())) > 1:
        row["paper in our interval?"] = "; ".join(f"{c}: {v}" for c, v in checks.items() if v)
    else:
        row["paper in our interval?"] = next(iter(checks.values())).replace(
            "not comparable (", "not comparable: ").rstrip(")")
    row["ppl"] = f"{paper['ppl']:.2f}" if not pd.isna(paper.get("ppl")) else ""
    return row


def tradeoff_frame(summary: pd.DataFrame, corpora: Sequence[str]) -> pd.DataFrame:
    """The trade-off figures' points: one row per corpus (its label), lambda, source (``ours``:
    the mean over training seeds with its t-interval ``low``, ``high`` from
    :func:`seed_summary`; ``paper``: Tables 1-3, fixed context, no interval) and statistic
    (``stat``: μ, β, cos², ``ppl / ppl(λ=0)``, ``μ / μ(λ=0)``; the ratios are 1 at lambda = 0).

    Used in: lm-gender-bias/02.
    """
    shown = ("mu", "beta", "cos2", "perplexity_ratio", "mu_ratio")  # named by their labels
    rows = [{"corpus": corpus(r["corpus"]).label, "λ": float(r["λ"]), "source": "ours",
             "stat": r["label"], "value": r["mean"], "low": r["ci_low"], "high": r["ci_high"],
             "seeds": r["seeds"]} for r in summary[summary["stat"].isin(shown)].to_dict("records")]
    for name in summary["corpus"].unique():  # the ratios' anchor
        if (summary["corpus"].eq(name) & summary["λ"].eq(0)).any():
            rows += [{"corpus": corpus(name).label, "λ": 0.0, "source": "ours", "stat": stat,
                      "value": 1.0} for stat in ("ppl / ppl(λ=0)", "μ / μ(λ=0)")]
    for name in corpora:
        sweep = {lam: r for lam, r in paper_sweep(name).items() if lam != "train"}
        zero = sweep.get(0.0, {})
        for lam, r in sweep.items():
            values = {"μ": r["fixed_mu"], "β": r["fixed_beta"],
                      "ppl / ppl(λ=0)": r["ppl"] / zero["ppl"] if zero else np.nan,
                      "μ / μ(λ=0)": r["fixed_mu"] / zero["fixed_mu"] if zero else np.nan}
            rows += [{"corpus": corpus(name).label, "λ": float(lam), "source": "paper",
                      "stat": stat, "value": v} for stat, v in values.items()]
    return pd.DataFrame(rows, columns=["corpus", "λ", "source", "stat", "value", "low", "high",
                                       "seeds"])


def sample_control(long: pd.DataFrame) -> pd.DataFrame:
    """The "sample" rows (``as-coded``, fixed context), with the corpus label: the dashed lines.

    Used in: lm-gender-bias/02.
    """
    rows = long[(long.lam == "sample") & (long.counting == "as-coded")
                & (long.context == "fixed")]
    return rows.assign(corpus=[corpus(n).label for n in rows.corpus]).rename(
        columns={"mu": "μ", "beta": "β"})
