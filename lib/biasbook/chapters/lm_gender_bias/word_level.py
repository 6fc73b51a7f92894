"""Word-level views of the lambda sweep (notebook 02): the paper's Table 4 (generated text
around strongly gendered words, :func:`excerpts`), Tables 5-8 (word-level bias through the sweep,
:func:`word_table`, :func:`word_tables`, with :func:`scored_share`: how much of them our
generated texts score) and the words behind beta (:func:`regression_points`, the scatter
figure). The sweep's scores come from :func:`.sweep_tables.score_texts`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from biasbook.chapters.lm_gender_bias.corpora import corpus
from biasbook.chapters.lm_gender_bias.data import paper_word_bias
from biasbook.chapters.lm_gender_bias.sweep import LMCorpus
from biasbook.chapters.lm_gender_bias.sweep_tables import Runs, TextScores
from biasbook.metrics.cooccurrence_bias import BiasRegression, BiasScores, bias_regression
from biasbook.text.cooccurrence import count_cooccurrences, english_stop_words


def escape(token: str) -> str:
    """A token as Markdown text: ``<unk>`` visible, ``<eos>`` as ``/``, markup escaped (``$``
    too: the book renders Markdown outputs with math, and PTB writes amounts as ``$ N``).

    Used in: lm-gender-bias/02.

    >>> escape("<unk>"), escape("<eos>"), escape("a_b*"), escape("$")
    ('&lt;unk&gt;', '/', 'a\\\\_b\\\\*', '\\\\$')
    """
    token = token.replace("<unk>", "&lt;unk&gt;").replace("<eos>", "/")
    return re.sub(r"([\\`*_\[\]|#$])", r"\\\1", token)


def excerpt(text: Sequence[str], i: int, gender, width: int = 12) -> str:
    """``width`` tokens either side of ``text[i]`` (bold); gendered words in italics.

    Used in: lm-gender-bias/02.

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
    """(the first text containing ``word``, its index there), or ``(None, None)``.

    Used in: lm-gender-bias/02.
    """
    for text in texts:
        if word in text:
            return text, text.index(word)
    return None, None


def excerpts(data: dict[str, LMCorpus], runs: Runs, reference: dict, lambdas: dict,
             min_count: int = 100) -> pd.DataFrame:
    """Table 4's form: per corpus, the two most female- and male-leaning content words of the
    training text (seen ``min_count`` times, present in every lambda's text), each in the first
    generated text that holds it at the smallest, a middle and the largest lambda.

    Used in: lm-gender-bias/02.

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

    Used in: lm-gender-bias/02.

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

    Used in: lm-gender-bias/02.

    WikiText-2 follows the words of the paper's Tables 5-6, the UN speeches those of its
    CNN/Daily Mail Tables 7-8 (the paper's third corpus); PTB, which has no such table, the eight
    most female- and male-leaning content words seen 20 times in its training text.
    """
    sources = {"wikitext-2": "wikitext-2", "un-general-debates": "cnn-dailymail"}
    tables = {}
    for name in [n for n in ("wikitext-2", "un-general-debates", "ptb") if n in data]:
        train = scores.reference[name, "as-coded", "fixed"]
        generated = {lam: scores.generated[name, lam, "as-coded", "fixed"]
                     for lam in lambdas[name]}
        if name in sources:
            table = paper_word_bias(sources[name])
            words = [*table["male"], *table["female"]]
        elif name == "ptb" and train is not None:
            words = _leaning_words(data[name], train, n=8, min_count=20)
        else:
            continue
        tables[name] = word_table(words, lambdas[name], train, generated, sources.get(name))
    return tables


def scored_share(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per corpus of :func:`word_tables`: the share of its (word, lambda) cells that our generated
    texts score (``scored share``; NaN without a lambda).

    Used in: lm-gender-bias/02.
    """
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
    """(a Markdown caption, the words scored somewhere in our texts, i.e. the rows to show).

    Used in: lm-gender-bias/02.
    """
    ours = table.xs("ours", level="source")
    found = ours.drop(columns="train").notna()
    shown = list(ours.index[ours.notna().any(axis=1)])
    caption = (f"**{corpus(name).label}**: of {len(ours)} words, {len(shown)} are scored in our "
               f"training text or a generated text, {int(found.any(axis=1).sum())} in at least "
               f"one generated text (showing those {len(shown)})")
    return caption, shown


def regression_points(train: BiasScores, generated: BiasScores | None
                      ) -> tuple[pd.DataFrame, BiasRegression | None]:
    """(training and generated bias of every word scored in both; the beta fit, or ``None``).

    Used in: lm-gender-bias/02.
    """
    if generated is None:
        return pd.DataFrame({"train": [], "generated": []}), None
    x, y = train.to_series(), generated.to_series()
    shared = x.index.intersection(y.index)
    points = pd.DataFrame({"train": x[shared], "generated": y[shared]})
    try:
        return points, bias_regression(train, generated)
    except ValueError:
        return points, None
