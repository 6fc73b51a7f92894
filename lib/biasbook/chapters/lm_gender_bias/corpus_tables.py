"""Notebook 01's results: the co-occurrence bias of the training corpora, as the paper reports it.

- :func:`score_corpora`: every corpus in both countings and both contexts (:mod:`.bias`).
- :func:`train_rows`, :func:`train_table`: mu and sigma with their 95% intervals over the scored
  words next to the "train" rows of the paper's Tables 1-3, and whether the paper's number lies
  in our interval where the two are the same quantity (:mod:`.uncertainty`).
- :func:`script_scores`: the authors' script's own per-word score m / (m + f), beside the book's
  reconstruction (the log-ratio without c(g)) that reproduces the paper's tables.
- :func:`corpus_statistics`: documents, tokens and gendered tokens c(m), c(f) per corpus.
- :func:`window_sweep`: the infinite context at several cut-offs and over the whole document.
- :func:`top_words`: the most female- and male-leaning frequent content words.
- :func:`table_words`: the training column of the paper's Tables 5-8 against ours.
- :func:`prose_numbers`: the numbers the notebook's text quotes, by name (for myst-nb ``glue``).

Every table names a corpus by its id (``corpus``: ``ptb``, ...), the id its numbers are recorded
under; ``measured`` is the label of what notebook 01 measures of it (:data:`.corpora.CORPORA`).
The notebook records the tables' columns with :meth:`biasbook.results.Recorder.metrics` (the
intervals' fields of :func:`.uncertainty.columns` with ``ci="mu "``); no table builder records.
Intervals are over the words a text scores (``n_resamples`` bootstrap resamples,
:mod:`.uncertainty`); counts (tokens, gendered tokens, words found) are exact counts of the text
measured and have none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from biasbook import reporting
from biasbook.chapters.lm_gender_bias import bias, uncertainty
from biasbook.chapters.lm_gender_bias.corpora import corpus
from biasbook.chapters.lm_gender_bias.data import paper_sweep, paper_word_bias
from biasbook.metrics.cooccurrence_bias import BiasScores, bias_scores, mean_abs_bias, std_bias
from biasbook.results import UNCERTAINTY
from biasbook.text.cooccurrence import Cooccurrence
from biasbook.text.corpora import n_tokens

Docs = Mapping[str, Sequence[Sequence[str]]]
Genders = Mapping[str, bias.Gender]
TABLE_CORPORA = ("wikitext-2", "cnn-dailymail")  # the corpora of the paper's Tables 5-8


@dataclass
class CorpusScores:
    """``scores[corpus, counting, context]`` (``None``: no word meets both genders) and the
    co-occurrence counts ``cooc[corpus, counting, context]`` they come from.

    Used in: lm-gender-bias/01.
    """

    scores: dict[tuple[str, str, str], BiasScores | None]
    cooc: dict[tuple[str, str, str], Cooccurrence]

    @property
    def corpora(self) -> list[str]:
        return list(dict.fromkeys(name for name, _, _ in self.scores))


def score_corpora(docs: Docs, genders: Genders, *, progress: bool = True) -> CorpusScores:
    """Score every corpus of ``docs`` in both countings and both contexts (default windows).

    Used in: lm-gender-bias/01.
    """
    scored = CorpusScores({}, {})
    jobs = [(n, cnt, ctx) for n in docs for cnt in bias.COUNTINGS for ctx in bias.CONTEXTS]
    for name, counting, context in tqdm(jobs, desc="scoring corpora", disable=not progress):
        s, co = bias.score(docs[name], genders[name], counting, context)
        scored.scores[name, counting, context], scored.cooc[name, counting, context] = s, co
    return scored


def train_rows(scored: CorpusScores, *, n_resamples: int,
               prefix_tokens: int | None = None) -> pd.DataFrame:
    """One row per corpus, counting and context: mu, sigma with their intervals over the scored
    words (``mu ci_low``, ..., ``sigma ci_method``), scored words, the paper's mu, sigma (NaN
    where undefined or not reported), and ``mu vs paper``, ``sigma vs paper``
    (:func:`biasbook.reporting.paper_verdict`; ``prefix_tokens``: the corpora were cut to that many
    tokens, so no row is the paper's quantity).

    Used in: lm-gender-bias/01.
    """
    rows = []
    for (name, counting, context), s in scored.scores.items():
        ref = paper_sweep(name).get("train", {})
        summary = bias.summary(s)
        row = {"corpus": name, "counting": counting, "context": context, "mu": summary["mu"],
               "sigma": summary["sigma"], "scored words": summary["words"],
               "paper mu": ref.get(f"{context}_mu"), "paper sigma": ref.get(f"{context}_sigma"),
               **uncertainty.word_columns(s, n_resamples=n_resamples)}
        reason = uncertainty.train_reason(name, counting, context, prefix_tokens=prefix_tokens)
        for stat in ("mu", "sigma"):
            row[f"{stat} vs paper"] = reporting.paper_verdict(
                row[f"paper {stat}"], row[f"{stat} ci_low"], row[f"{stat} ci_high"], reason=reason)
        rows.append(row)
    return pd.DataFrame(rows)


def train_table(long: pd.DataFrame) -> pd.DataFrame:
    """:func:`train_rows` as the reader compares them: one row per corpus, counting and context;
    ours as ``value [low, high]`` beside the paper's numbers, and whether they lie inside ours
    (``paper in our interval?``: ``μ inside, σ outside``, or why they are not comparable).

    Used in: lm-gender-bias/01.
    """
    rows = []
    for r in long.to_dict("records"):
        row = {"corpus": corpus(r["corpus"]).measured, "counting": r["counting"],
               "context": r["context"]}
        for stat, label in (("mu", "μ"), ("sigma", "σ")):
            row[f"{label} [95% CI over words]"] = reporting.interval_text(
                r[stat], r[f"{stat} ci_low"], r[f"{stat} ci_high"], missing="")
            paper = r[f"paper {stat}"]
            row[f"paper {label}"] = "" if pd.isna(paper) else f"{paper:.2f}"
        checks = {r["mu vs paper"], r["sigma vs paper"]} - {""}
        if len(checks) == 1 and next(iter(checks)).startswith("not comparable"):
            row["paper in our interval?"] = checks.pop()
        else:
            row["paper in our interval?"] = ", ".join(
                f"{label} {r[f'{stat} vs paper']}" for stat, label in (("mu", "μ"), ("sigma", "σ"))
                if r[f"{stat} vs paper"])
        rows.append(row)
    return pd.DataFrame(rows).set_index(["corpus", "counting", "context"])


def script_scores(scored: CorpusScores, *, n_resamples: int = 999) -> pd.DataFrame:
    """Per corpus (``as-coded`` counting, fixed context, the same words): mean and stdev of the
    authors' script's own score m / (m + f), the mean's interval over the words
    (``m/(m+f) mean ci_low``, ...), and mu, sigma of the book's reconstruction, the log-ratio
    without c(g) (:func:`.bias.score`), which reproduces the paper's Tables 1-3.

    Used in: lm-gender-bias/01.

    >>> doc = ["he", "a", "b", "she", "a", "b", "he", "a", "c"]  # a: m 2, f 1; b: m 1, f 1
    >>> s, co = bias.score([doc], ({"he"}, {"she"}), "as-coded", "fixed", window=1)
    >>> key = ("ptb", "as-coded", "fixed")
    >>> table = script_scores(CorpusScores({key: s}, {key: co}))
    >>> table[["m/(m+f) mean", "scored words", "reconstruction mu"]].round(3).to_dict("records")
    [{'m/(m+f) mean': 0.583, 'scored words': 2, 'reconstruction mu': 0.347}]
    """
    rows = []
    for name in scored.corpora:
        co = scored.cooc[name, "as-coded", "fixed"]
        try:
            share = bias_scores(co.words, co.male, co.female, co.n_male, co.n_female,
                                mode="as-coded")
        except ValueError:  # no word meets both genders
            continue
        recon = bias.summary(scored.scores.get((name, "as-coded", "fixed")))
        rows.append({"corpus": name, "measured": corpus(name).measured,
                     "m/(m+f) mean": float(np.mean(share.scores)),
                     "m/(m+f) stdev": float(np.std(share.scores, ddof=1))
                     if len(share.words) > 1 else np.nan, "scored words": len(share.words),
                     "reconstruction mu": recon["mu"], "reconstruction sigma": recon["sigma"],
                     **uncertainty.columns(uncertainty.over_words(
                         share.scores, "mean", n_resamples=n_resamples), "m/(m+f) mean ")})
    return pd.DataFrame(rows)


def corpus_statistics(docs: Docs, scored: CorpusScores) -> pd.DataFrame:
    """Documents, tokens, gendered tokens c(m), c(f) and their ratio per corpus.

    Used in: lm-gender-bias/01.
    """
    rows = []
    for name in scored.corpora:
        co = scored.cooc[name, "paper", "fixed"]
        ratio = co.n_male / co.n_female if co.n_female else np.nan
        rows.append({"corpus": name, "measured": corpus(name).measured,
                      "documents": len(docs[name]), "tokens": n_tokens(docs[name]),
                      "male tokens c(m)": co.n_male, "female tokens c(f)": co.n_female,
                      "c(m)/c(f)": ratio,
                      "log c(m)/c(f)": np.log(ratio) if ratio > 0 else np.nan})
    return pd.DataFrame(rows)


def score_frame(scored: CorpusScores, counting: str = "as-coded",
                context: str = "fixed") -> pd.DataFrame:
    """Every word score of every corpus (columns ``bias``, ``corpus``), for a histogram.

    Used in: lm-gender-bias/01.
    """
    frames = [pd.DataFrame({"bias": s.scores, "corpus": corpus(name).measured})
              for (name, cnt, ctx), s in scored.scores.items()
              if (cnt, ctx) == (counting, context) and s is not None]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {"bias": [], "corpus": []})


def window_sweep(docs: Docs, genders: Genders, windows: Sequence[int],
                 names: Sequence[str] = ("ptb", "wikitext-2"), *, n_resamples: int = 999,
                 progress: bool = True) -> pd.DataFrame:
    """mu and sigma of the infinite context cut at each window, and over the whole document
    (``window = inf``, printed counting only: the ``as-coded`` n-grams need a finite window),
    with their intervals over the scored words (``mu ci_low``, ...); ``cut-off`` names the
    window as it is recorded (its size, or ``whole document``).

    Used in: lm-gender-bias/01.

    Corpora of ``names`` missing from ``docs`` are skipped, as are texts that score < 2 words.
    """
    rows = []
    jobs = [(n, cnt, w) for n in names if n in docs for cnt in bias.COUNTINGS
            for w in [*windows, math.inf] if not (cnt == "as-coded" and w == math.inf)]
    for name, counting, window in tqdm(jobs, desc="window sweep", disable=not progress):
        s, _ = bias.score(docs[name], genders[name], counting, "infinite", window=window)
        if s is None or len(s.words) < 2:
            continue
        rows.append({"corpus": name, "counting": counting, "window": window,
                     "cut-off": "whole document" if window == math.inf else int(window),
                     "mu": mean_abs_bias(s), "sigma": std_bias(s), "scored words": len(s.words),
                     **uncertainty.word_columns(s, n_resamples=n_resamples)})
    ci = [f"{stat} {k}" for stat in ("mu", "sigma") for k in UNCERTAINTY]
    return pd.DataFrame(rows, columns=["corpus", "counting", "window", "cut-off", "mu", "sigma",
                                       "scored words", *ci])


def top_words(scored: CorpusScores, n: int = 10, min_count: int = 20) -> pd.DataFrame:
    """The ``n`` most female- and male-leaning content words (no stop, gendered or non-words)
    seen ``min_count`` times, with their ``as-coded`` fixed-context scores; a column per corpus.

    Used in: lm-gender-bias/01.
    """
    top = {}
    for name in scored.corpora:
        s, co = scored.scores[name, "as-coded", "fixed"], scored.cooc[name, "as-coded", "fixed"]
        if s is None:
            continue
        content = set(scored.cooc[name, "paper", "fixed"].words.tolist())
        counts = pd.Series(co.counts, index=co.words)
        ser = s.to_series()
        ser = ser[ser.index.isin(content) & (counts.reindex(ser.index) >= min_count).to_numpy()]
        female, male = ser[ser > 0].nlargest(n), ser[ser < 0].nsmallest(n)
        top[corpus(name).measured] = pd.Series(
            [f"{w} ({v:+.2f})" for w, v in female.items()] + [""] * (n - len(female))
            + [f"{w} ({v:+.2f})" for w, v in male.items()] + [""] * (n - len(male)),
            index=pd.MultiIndex.from_product([["female-leaning", "male-leaning"],
                                              range(1, n + 1)]))
    return pd.DataFrame(top)


def table_words(scored: CorpusScores, *,
                n_resamples: int = 999) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every word of the paper's Tables 5-8 with its training score, ours and our count;
    per corpus: words found, share with the paper's sign, Pearson r, the two with intervals over
    the words found: ``same sign ci_low``, ``pearson r ci_low``, ...), ``as-coded`` fixed.
    The share and r are NaN without words found (r: fewer than three), their intervals with
    fewer than three words.

    Used in: lm-gender-bias/01.
    """
    rows = []
    for name in TABLE_CORPORA:
        s = scored.scores.get((name, "as-coded", "fixed"))
        if s is None:
            continue
        ours = s.to_series()
        co = scored.cooc[name, "as-coded", "fixed"]
        counts = pd.Series(co.counts, index=co.words)
        for lean in ("male", "female"):
            for word, values in paper_word_bias(name)[lean].items():
                rows.append({"corpus": name, "paper lean": lean, "word": word,
                             "paper (train)": values[0], "ours": ours.get(word, np.nan),
                             "count in our text": int(counts.get(word, 0))})
    words = pd.DataFrame(rows, columns=["corpus", "paper lean", "word", "paper (train)", "ours",
                                        "count in our text"])
    summary = []
    for name, group in words.groupby("corpus", sort=False):
        found = group.dropna(subset=["ours"])
        same_sign = (np.sign(found["ours"]) == np.sign(found["paper (train)"])).mean()
        r = found["ours"].corr(found["paper (train)"]) if len(found) >= 3 else np.nan
        row = {"corpus": name, "measured": corpus(name).measured, "words listed": len(group),
               "found in our text": len(found), "same sign as the paper": same_sign,
               "Pearson r": r}
        for stat in uncertainty.PAIR_STATISTICS:  # "same sign ci_low", "pearson r ci_low", ...
            ci = uncertainty.over_word_pairs(found["ours"], found["paper (train)"], stat,
                                             n_resamples=n_resamples)
            row.update(uncertainty.columns(ci, f"{stat} "))
        summary.append(row)
    return words, pd.DataFrame(summary)


def prose_numbers(scored: CorpusScores, long: pd.DataFrame, by_window: pd.DataFrame,
                  words_summary: pd.DataFrame) -> dict[str, float]:
    """The numbers notebook 01's text quotes, under fixed names; NaN where this run lacks them.

    Used in: lm-gender-bias/01.

    Per corpus (``ptb_...``, ``wikitext_2_...``, ``cnn_dailymail_...``,
    ``un_general_debates_...``): mu and sigma (``as-coded`` fixed; ``mu_printed``: the printed
    counting) and their intervals' bounds (``mu_low``, ``mu_high``, ``sigma_low``,
    ``sigma_high``), scored words, c(m)/c(f) and its log. For PTB's infinite context with the
    printed counting (``ptb_inf_...``): the first cut-off where sigma reaches the paper's sigma
    and mu there, and the first where mu reaches the paper's mu and sigma there. For the corpora
    of Tables 5-8: words listed, found, share with the paper's sign, Pearson r.
    """
    out: dict[str, float] = {}
    for name in ("ptb", "wikitext-2", "cnn-dailymail", "un-general-debates"):
        p = name.replace("-", "_")

        def cell(counting, col, name=name):
            row = long[(long.corpus == name) & (long.counting == counting)
                       & (long.context == "fixed")]
            return float(row[col].iloc[0]) if len(row) and col in row else np.nan

        co = scored.cooc.get((name, "paper", "fixed"))
        ratio = co.n_male / co.n_female if co is not None and co.n_female else np.nan
        out.update({f"{p}_mu": cell("as-coded", "mu"), f"{p}_sigma": cell("as-coded", "sigma"),
                    **{f"{p}_{stat}_{end}": cell("as-coded", f"{stat} ci_{end}")
                       for stat in ("mu", "sigma") for end in ("low", "high")},
                    f"{p}_mu_printed": cell("paper", "mu"),
                    f"{p}_words": cell("as-coded", "scored words"),
                    f"{p}_ratio": ratio, f"{p}_log_ratio": float(np.log(ratio))})
    paper = paper_sweep("ptb")["train"]
    finite = by_window[(by_window.corpus == "ptb") & (by_window.counting == "paper")
                       & np.isfinite(by_window.window.astype(float))].sort_values("window")
    for stat, other in (("sigma", "mu"), ("mu", "sigma")):
        hit = finite[finite[stat] >= paper[f"infinite_{stat}"]]
        out[f"ptb_inf_{stat}_window"] = float(hit.window.iloc[0]) if len(hit) else np.nan
        out[f"ptb_inf_{other}_at_{stat}"] = float(hit[other].iloc[0]) if len(hit) else np.nan
    for name in TABLE_CORPORA:
        p = name.replace("-", "_")
        row = words_summary[words_summary.corpus == name]
        for key, col in (("listed", "words listed"), ("found", "found in our text"),
                         ("same_sign", "same sign as the paper"), ("r", "Pearson r")):
            out[f"{p}_table_{key}"] = float(row[col].iloc[0]) if len(row) else np.nan
    return {k: float(v) for k, v in out.items()}  # plain floats: glue's text must parse
