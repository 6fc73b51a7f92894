"""Corpora as token lists: PTB/WikiText files, CNN/Daily Mail articles, UN General Debate speeches.

Penn Treebank and WikiText-2 ship tokenized (read them with :func:`read_tokens`); the other
corpora are raw text and are tokenized with :func:`tokenize`, in the style of the CNN/Daily Mail
text of Bordia & Bowman (2019, Table 4): lowercased, apostrophes split off (``mother 's`` becomes
``mother s``), every punctuation mark its own token.

- :func:`cnn_dailymail_articles`: the 100-article CNN/Daily Mail training sample of the offline
  mirror (``cnn-dailymail-sample``), one token list per article.
- :func:`un_debate_speeches`: a seeded random sample of the 10,952 speeches of the UN General
  Debate Corpus 1946-2024 (``un-general-debates``), one token list per speech, keyed by the
  speech id ``ISO_SESSION_YEAR``. A sample of ``n`` speeches contains every smaller sample drawn
  with the same seed, so a language model can train on a subset of a corpus measured in full.
- :func:`imdb_reviews`: the 50,000 labelled IMDB movie reviews (``imdb``), HTML line breaks
  removed, one token list per review, in a seeded random order.
- :func:`split_sentences`: a token list cut after each ``.``, ``!`` or ``?`` (for
  sentence-bounded co-occurrence windows).
- :func:`take_tokens`: the leading documents of a corpus, up to a token budget (the smoke profile
  runs on such prefixes).

>>> tokenize("The Secretary-General's report, 2023: women's rights.")
['the', 'secretary', '-', 'general', 's', 'report', ',', '2023', ':', 'women', 's', 'rights', '.']
>>> take_tokens([["a", "b"], ["c", "d", "e"], ["f"]], 4)
[['a', 'b'], ['c', 'd']]
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from biasbook import resources

EOS = "<eos>"
_TOKEN = re.compile(r"[^\W_]+|[^\w\s'’]|_+")
_APOSTROPHE = re.compile(r"['’]")
_SPEECH_ID = re.compile(r"[A-Z]{2,4}_\d{2}_\d{4}")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
SENTENCE_ENDS = frozenset({".", "!", "?"})


def tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """Words (runs of letters and digits) and single punctuation marks; apostrophes dropped.

    >>> tokenize("He said: it's over — for now.", lowercase=False)
    ['He', 'said', ':', 'it', 's', 'over', '—', 'for', 'now', '.']
    """
    text = _APOSTROPHE.sub(" ", text.lower() if lowercase else text)
    return _TOKEN.findall(text)


def tokenize_lines(text: str, *, lowercase: bool = True, eos: bool = False) -> list[str]:
    """:func:`tokenize` line by line; with ``eos`` an ``<eos>`` ends every non-empty line.

    >>> tokenize_lines("One line.\\n\\nAnother one\\n", eos=True)
    ['one', 'line', '.', '<eos>', 'another', 'one', '<eos>']
    """
    end = [EOS] if eos else []
    lines = (tokenize(line, lowercase=lowercase) for line in text.splitlines())
    return [token for words in lines if words for token in words + end]


def cnn_dailymail_articles(
    *, limit: int | None = None, lowercase: bool = True, eos: bool = False
) -> list[list[str]]:
    """Token lists of the offline CNN/Daily Mail sample (100 training articles), in file order.

    The paper used the whole training set (219,506 Daily Mail articles, sentences subsampled by a
    factor of 100); offline only this sample exists. ``eos`` appends ``<eos>`` to each article.
    """
    import pandas as pd

    frame = pd.read_csv(resources.path("cnn-dailymail-sample", "train_sample.csv"))
    articles = frame["article"].head(limit) if limit is not None else frame["article"]
    docs = [tokenize(str(a), lowercase=lowercase) for a in articles]
    return [d + [EOS] for d in docs] if eos else docs


def un_debate_files() -> list[Path]:
    """Every speech file of the UN General Debate Corpus (10,952), sorted by speech id.

    Files are named ``ISO_SESSION_YEAR.txt`` (e.g. ``USA_75_2020.txt``; ``EU`` for the European
    Union) in one folder per session; the archive is unpacked into the cache on first use. The
    archive's 10,953rd ``.txt`` file, ``.DS_Store-to-UTF-8.txt``, is a macOS leftover, not a speech.
    """
    root = resources.unpacked("un-general-debates")
    files = [p for p in root.rglob("*.txt") if _SPEECH_ID.fullmatch(p.stem)]
    files.sort(key=lambda p: p.stem)
    if not files:
        raise resources.ResourceError(f"no speech files under {root}")
    return files


def sample_un_speeches(n: int | None, *, seed: int = 0, skip: int = 0) -> list[Path]:
    """``n`` speech files drawn without replacement (all if ``None``), sorted by speech id.

    The draw takes positions ``skip .. skip + n - 1`` of one seeded permutation of all speeches,
    so samples with the same seed nest (a smaller ``n`` gives a subset) and ``skip`` gives a
    disjoint one: ``sample_un_speeches(100)`` and ``sample_un_speeches(10, skip=100)`` make a
    training and a held-out set that never share a speech.
    """
    files = un_debate_files()
    if n is None:
        n = len(files) - skip
    if skip < 0 or not 0 < n <= len(files) - skip:
        raise ValueError(
            f"need skip >= 0 and 1 <= n <= {len(files)} - skip, got n={n}, skip={skip}"
        )
    order = np.random.default_rng(seed).permutation(len(files))[skip : skip + n]
    return [files[i] for i in sorted(order)]


def un_debate_speeches(
    n: int | None = None,
    *,
    seed: int = 0,
    skip: int = 0,
    lowercase: bool = True,
    eos: bool = False,
) -> dict[str, list[str]]:
    """Token lists of ``n`` UN General Debate speeches (see :func:`sample_un_speeches`).

    Keys are speech ids (``ISO_SESSION_YEAR``), in sorted order. With ``eos``, every paragraph
    (non-empty line) ends with ``<eos>``, as the lines of PTB and WikiText-2 do.
    """
    return {
        p.stem: tokenize_lines(p.read_text(encoding="utf-8"), lowercase=lowercase, eos=eos)
        for p in sample_un_speeches(n, seed=seed, skip=skip)
    }


def imdb_reviews(
    n: int | None = None, *, seed: int = 0, lowercase: bool = True
) -> dict[str, list[str]]:
    """Token lists of ``n`` IMDB reviews (all 50,000 train and test reviews if ``None``).

    Keys are ``split/label/file`` paths; the draw is a seeded permutation (samples with the same
    seed nest). ``<br />`` tags become spaces and HTML entities are decoded before
    :func:`tokenize`.
    """
    root = resources.unpacked("imdb") / "aclImdb"
    files = sorted(p for split in ("train", "test") for label in ("neg", "pos")
                   for p in (root / split / label).glob("*.txt"))
    if not files:
        raise resources.ResourceError(f"no review files under {root}")
    if n is not None and not 0 < n <= len(files):
        raise ValueError(f"need 1 <= n <= {len(files)}, got n={n}")
    order = np.random.default_rng(seed).permutation(len(files))[:n]
    picked = [files[i] for i in sorted(order)]
    return {str(p.relative_to(root).with_suffix("")): tokenize(
        html.unescape(_BR.sub(" ", p.read_text(encoding="utf-8"))), lowercase=lowercase)
        for p in picked}


def split_sentences(tokens: Sequence[str], ends: frozenset[str] = SENTENCE_ENDS) -> list[list[str]]:
    """Cut a token list after every sentence-final mark; the mark stays with its sentence.

    >>> split_sentences(["hi", ".", "who", "?", "me"])
    [['hi', '.'], ['who', '?'], ['me']]
    """
    out, start = [], 0
    for i, token in enumerate(tokens):
        if token in ends:
            out.append(list(tokens[start : i + 1]))
            start = i + 1
    if start < len(tokens):
        out.append(list(tokens[start:]))
    return out


def take_tokens(docs: Sequence[Sequence[str]], max_tokens: int | None) -> list[list[str]]:
    """The leading documents holding ``max_tokens`` tokens in all (the last one cut short).

    ``None`` keeps everything. Empty documents are dropped.

    >>> take_tokens([["a"], [], ["b", "c"]], None)
    [['a'], ['b', 'c']]
    """
    out, left = [], float("inf") if max_tokens is None else max_tokens
    if left < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    for doc in docs:
        if left <= 0:
            break
        part = list(doc[: int(min(len(doc), left))])
        if part:
            out.append(part)
            left -= len(part)
    return out


def n_tokens(docs: Sequence[Sequence[str]]) -> int:
    """Total number of tokens over documents.

    >>> n_tokens([["a", "b"], ["c"]])
    3
    """
    return sum(len(d) for d in docs)


def read_tokens(path: str | Path, *, lowercase: bool = False, eos: bool = False) -> list[str]:
    """Whitespace tokens of a pre-tokenized text file (PTB, WikiText-2), as one stream.

    With ``eos`` every line ends in ``<eos>`` (the language-modelling convention of PTB and
    WikiText); without it, lines are not boundaries (the co-occurrence counts of Bordia & Bowman).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write(" The <unk> \\n \\n")
    >>> read_tokens(f.name, lowercase=True), read_tokens(f.name, eos=True); os.unlink(f.name)
    (['the', '<unk>'], ['The', '<unk>', '<eos>', '<eos>'])
    """
    with open(path, encoding="utf-8") as fh:
        lines = [(line.lower() if lowercase else line).split() for line in fh]
    return [tok for line in lines for tok in (*line, *([EOS] if eos else []))]
