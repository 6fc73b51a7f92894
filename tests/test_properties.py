"""Invariants of the metrics and of the scoring engine, on random inputs (hypothesis).

Each property follows from the formula, not from an earlier output: reordering what a metric
averages over changes nothing, swapping the two groups flips the sign, a global change the
formula cancels (a scale for unit vectors, a per-attribute offset for CB) changes nothing, and
scoring a batch is scoring its sentences one by one.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from biasbook.metrics import cb, herb, weat
from biasbook.metrics.cooccurrence_bias import bias_scores, mean_abs_bias, std_bias

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


def vectors(n, dim=4):
    return arrays(np.float64, (n, dim), elements=st.floats(-1, 1)).filter(
        lambda v: (np.linalg.norm(v, axis=1) > 1e-3).all())


@FAST
@given(x=vectors(4), y=vectors(4), a=vectors(3), b=vectors(3), data=st.data())
def test_weat_is_order_free_and_antisymmetric(x, y, a, b, data):
    try:
        stat, effect, p, _, _ = weat.weat_arrays(x, y, a, b)
    except ValueError:  # no spread in the associations: reported, not a number
        return
    perm = data.draw(st.permutations(range(4)))
    assert weat.weat_arrays(x[perm], y[::-1], a[::-1], b)[1] == pytest.approx(effect, abs=1e-9)
    swapped_targets = weat.weat_arrays(y, x, a, b)
    swapped_attributes = weat.weat_arrays(x, y, b, a)
    for other in (swapped_targets, swapped_attributes):
        assert other[0] == pytest.approx(-stat, abs=1e-9)
        assert other[1] == pytest.approx(-effect, abs=1e-9)
    scaled = weat.weat_arrays(3 * x, y, 0.5 * a, b)  # cosines ignore each vector's length
    assert scaled[1] == pytest.approx(effect, abs=1e-9)


@FAST
@given(logp=arrays(np.float64, (2, 3, 5), elements=finite), data=st.data())
def test_cb_is_order_free_and_ignores_an_offset_per_template_and_attribute(logp, data):
    score = cb.categorical_bias(logp)
    order = data.draw(st.permutations(range(5)))
    assert cb.categorical_bias(logp[:, ::-1, order]) == pytest.approx(score, rel=1e-9, abs=1e-12)
    offset = data.draw(arrays(np.float64, (2, 3, 1), elements=finite))
    assert cb.categorical_bias(logp + offset) == pytest.approx(score, rel=1e-9, abs=1e-9)
    assert cb.categorical_bias(np.zeros_like(logp) + offset) == pytest.approx(0.0, abs=1e-12)


@FAST
@given(counts=arrays(np.float64, (2, 6), elements=st.floats(0.5, 50)),
       n=st.tuples(st.floats(1, 100), st.floats(1, 100)), data=st.data())
def test_cooccurrence_bias_swaps_sign_with_the_genders_and_ignores_order(counts, n, data):
    words = [f"w{i}" for i in range(6)]
    male, female = counts
    scores = bias_scores(words, male, female, n[0], n[1])
    swapped = bias_scores(words, female, male, n[1], n[0])
    np.testing.assert_allclose(swapped.scores, -scores.scores, atol=1e-9)
    order = data.draw(st.permutations(range(6)))
    shuffled = bias_scores([words[i] for i in order], male[order], female[order], n[0], n[1])
    assert mean_abs_bias(shuffled) == pytest.approx(mean_abs_bias(scores), rel=1e-9)
    assert std_bias(shuffled) == pytest.approx(std_bias(scores), rel=1e-9)


@FAST
@given(scores=arrays(np.float64, (7, 4), elements=st.floats(-8, -0.1)),
       scale=st.floats(0.1, 10), data=st.data())
def test_herb_ignores_a_global_scale_and_the_order_of_siblings(scores, scale, data):
    # Asia (Japan, Nepal, India) and Europe (France, Spain): two levels under the root
    names = ("Asia", "Japan", "Nepal", "India", "Europe", "France", "Spain")
    tree = herb.RegionTree(names, [-1, 0, 0, 0, -1, 4, 4])
    result = herb.hierarchical_bias(tree, scores)
    # Eq. 2 normalises every region's vector: a global scale of the scores changes nothing
    assert herb.hierarchical_bias(tree, scale * scores).overall == pytest.approx(result.overall)
    kids = data.draw(st.permutations([1, 2, 3]))
    order = [4, 5, 6, 0, *kids]  # Europe first, Asia's countries shuffled
    moved = herb.RegionTree(tuple(names[i] for i in order),
                            [-1, 0, 0, -1, 3, 3, 3])
    again = herb.hierarchical_bias(moved, scores[order])
    assert again.overall == pytest.approx(result.overall, rel=1e-9)
    np.testing.assert_allclose(again.bias, result.bias[order], rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def tiny_gpt():
    from biasbook.models import from_model
    from biasbook.testing import WORDS, tiny_model, tiny_tokenizer

    tok = tiny_tokenizer()
    lm = from_model(tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2", kind="causal")
    return lm, [w for w in WORDS if not w.startswith("##")]


@settings(max_examples=15, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_batch_scores_like_its_sentences_one_by_one(tiny_gpt, data, one_torch_thread):
    from biasbook.scoring import score_sentences

    lm, words = tiny_gpt
    sentence = st.lists(st.sampled_from(words), min_size=1, max_size=9).map(" ".join)
    batch = data.draw(st.lists(sentence, min_size=1, max_size=12))
    budget = data.draw(st.sampled_from([16, 64, 4096]))
    together = score_sentences(lm, batch, cache=False, batch_tokens=budget, progress=False)
    for i, text in enumerate(batch):
        alone = score_sentences(lm, [text], cache=False, progress=False)
        np.testing.assert_allclose(together.token_logprobs[i], alone.token_logprobs[0],
                                   atol=2e-5)
