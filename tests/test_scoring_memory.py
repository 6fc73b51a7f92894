"""Scoring as a stream (score_stream, HERB's descriptor_scores): at most one chunk is read ahead,
the scores are those of one call on the whole list, and the memory held does not grow with the
number of sentences (benchmarks/bench_memory_stream.py measures the resident memory at 200k and
1M sentences)."""

import tracemalloc

import numpy as np
import pytest

from biasbook import models, testing
from biasbook.chapters.herb import sentence_scores
from biasbook.scoring import score_sentences, score_stream, sentences

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORDS = ["kind", "lazy", "smart", "quick", "bad"]


@pytest.fixture(scope="module")
def spell():
    return testing.tiny_tokenizer(spell=True)


@pytest.fixture(scope="module")
def gpt(spell):
    return models.from_model(testing.tiny_model("gpt2", len(spell), positions=128), spell,
                             name="tiny-gpt2")


def regions(n):
    return [f"r{i}" for i in range(n)]


def texts(n):
    return (f"people in r{i} are {w} ." for i in range(n) for w in WORDS)  # made one by one


def test_a_stream_reads_at_most_one_chunk_ahead_and_scores_as_one_call(gpt):
    read = []

    def source():
        for text in texts(30):  # 150 sentences
            read.append(text)
            yield text

    given, means = 0, []
    for scores in score_stream(gpt, source(), chunk=40, cache=False):
        given += len(scores)
        assert len(read) - given <= 40 and len(scores) <= 40
        means.append(scores.mean)
    assert given == len(read) == 150
    whole = score_sentences(gpt, list(texts(30)), cache=False)
    np.testing.assert_allclose(np.concatenate(means), whole.mean, rtol=1e-6, atol=0)


def test_chunks_keep_aligned_groups_whole(gpt):
    sizes = [len(s) for s in score_stream(gpt, texts(9), chunk=12, align=5, cache=False)]
    assert sizes == [10, 10, 10, 10, 5]  # 12 rounded down to whole groups of 5
    assert [len(s) for s in score_stream(gpt, texts(2), chunk=3, align=5, cache=False)] == [5, 5]
    for bad in (dict(chunk=0), dict(chunk=1.5), dict(align=0)):
        with pytest.raises(ValueError, match="whole number"):
            next(score_stream(gpt, texts(1), cache=False, **bad))
    with pytest.raises(TypeError, match="bare string"):
        next(score_stream(gpt, "people in paris", cache=False))


def test_herb_descriptor_scores_stream_whole_regions(gpt, monkeypatch):
    calls = []
    score = sentences.score_sentences

    def recording(lm, chunk, *args, **kwargs):
        calls.append(len(chunk))
        return score(lm, chunk, *args, **kwargs)

    whole = score_sentences(gpt, list(sentence_scores.fill_template(regions(23), WORDS)),
                            cache=False)
    monkeypatch.setattr(sentences, "score_sentences", recording)
    matrix = sentence_scores.descriptor_scores(gpt, regions(23), WORDS, chunk=32, cache=False)
    assert calls == [30, 30, 30, 25]  # six regions of five words a chunk, never all 115
    np.testing.assert_allclose(matrix, whole.mean.reshape(23, len(WORDS)), rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="at least one region"):
        sentence_scores.descriptor_scores(gpt, [], WORDS, cache=False)


def traced_peak(lm, n_regions):
    """Peak of the Python and numpy memory (tracemalloc) while streaming, keeping the means."""
    means = np.empty(n_regions * len(WORDS))
    tracemalloc.start()
    try:
        done = 0
        for scores in score_stream(lm, texts(n_regions), chunk=250, cache=False):
            means[done: done + len(scores)] = scores.mean
            done += len(scores)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_held_does_not_grow_with_the_number_of_sentences(gpt):
    traced_peak(gpt, 20)  # first-call allocations (thread pools, caches) out of the way
    small, large = traced_peak(gpt, 200), traced_peak(gpt, 1200)  # 1,000 vs 6,000 sentences
    # holding the 6,000 sentences as a list alone would add ~330 kB
    assert large < small * 1.25 + 64 * 1024, (small, large)
