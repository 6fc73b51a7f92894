"""Tokenizer and readers of the raw-text corpora (CNN/Daily Mail sample, UN General Debates)."""

import pytest

from biasbook.resources import ResourceError
from biasbook.text import corpora


def _offline(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except ResourceError as err:  # a checkout without the offline mirror
        pytest.skip(str(err))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Her mother's car.", ["her", "mother", "s", "car", "."]),
        ("  \n\t ", []),
        ("U.N. 75th, 1946-2024!", ["u", ".", "n", ".", "75th", ",", "1946", "-", "2024", "!"]),
        ("Président—élu", ["président", "—", "élu"]),
        ("snake_case", ["snake", "_", "case"]),
        ("don’t", ["don", "t"]),
    ],
)
def test_tokenize(text, tokens):
    assert corpora.tokenize(text) == tokens


def test_tokenize_keeps_case_on_request():
    assert corpora.tokenize("She and He", lowercase=False) == ["She", "and", "He"]


def test_tokenize_lines_eos():
    text = "First paragraph.\n\n2.\tSecond one\n"
    assert corpora.tokenize_lines(text) == ["first", "paragraph", ".", "2", ".", "second", "one"]
    assert corpora.tokenize_lines(text, eos=True).count("<eos>") == 2


def test_take_tokens_budget():
    docs = [["a", "b", "c"], ["d", "e"], ["f"]]
    assert corpora.take_tokens(docs, 1) == [["a"]]
    assert corpora.take_tokens(docs, 3) == [["a", "b", "c"]]
    assert corpora.take_tokens(docs, 5) == [["a", "b", "c"], ["d", "e"]]
    assert corpora.take_tokens(docs, 100) == docs
    assert corpora.n_tokens(corpora.take_tokens(docs, 4)) == 4
    with pytest.raises(ValueError):
        corpora.take_tokens(docs, 0)


def test_cnn_dailymail_sample():
    docs = _offline(corpora.cnn_dailymail_articles)
    assert len(docs) == 100
    assert all(doc and all(t == t.lower() for t in doc) for doc in docs)
    assert docs[0][:4] == ["by", ".", "associated", "press"]
    assert corpora.cnn_dailymail_articles(limit=2, eos=True)[1][-1] == "<eos>"


def test_un_samples_are_seeded_nested_and_sorted():
    files = _offline(corpora.un_debate_files)
    assert len(files) == 10952  # the archive's 10,953rd .txt is .DS_Store-to-UTF-8.txt
    assert all(len(p.stem.split("_")) == 3 for p in files)
    assert len({p.stem for p in files}) == len(files)
    small, large = corpora.sample_un_speeches(5), corpora.sample_un_speeches(40)
    assert set(small) <= set(large)
    assert small == sorted(small, key=lambda p: p.stem)
    assert corpora.sample_un_speeches(5, seed=1) != small
    held_out = corpora.sample_un_speeches(10, skip=40)
    assert not set(held_out) & set(large)
    assert set(held_out) <= set(corpora.sample_un_speeches(50))
    assert len(corpora.sample_un_speeches(None, skip=10950)) == 2
    for bad in ({"n": 0}, {"n": 5, "skip": -1}, {"n": 5, "skip": 10950}):
        with pytest.raises(ValueError):
            corpora.sample_un_speeches(**bad)


def test_un_speeches_tokens():
    speeches = _offline(corpora.un_debate_speeches, 3, eos=True)
    assert len(speeches) == 3
    for speech_id, tokens in speeches.items():
        iso, session, year = speech_id.split("_")
        assert len(iso) == 3 and 1946 <= int(year) <= 2024 and int(session) == int(year) - 1945
        assert len(tokens) > 100 and tokens[-1] == "<eos>"
