"""The CB score and normalised probabilities against values worked out by hand."""

import math

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from biasbook.metrics import cb


def sample_variance(values):
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def test_cb_of_a_hand_worked_example():
    # Two templates x two attributes x three targets; P' written out directly.
    ratios = [[[2.0, 1.0, 0.5], [1.0, 1.0, 1.0]],
              [[4.0, 1.0, 1.0], [0.5, 0.5, 2.0]]]
    log_prior = np.log(np.full((2, 2, 3), 0.1))
    log_target = np.log(np.array(ratios) * 0.1)
    # variances of log P' per (template, attribute), by the textbook formula
    want = [sample_variance([math.log(r) for r in row]) for t in ratios for row in t]
    assert want[1] == 0.0
    log_norm = cb.normalized_log_probability(log_target, log_prior)
    np.testing.assert_allclose(cb.target_variances(log_norm).ravel(), want, atol=1e-12)
    assert cb.categorical_bias(log_norm) == pytest.approx(sum(want) / 4, abs=1e-12)
    # Var(log 2, 0, log .5) = (2 (log 2)^2) / 2 with ddof=1; ddof=0 divides by 3 instead
    assert want[0] == pytest.approx(math.log(2) ** 2)
    assert cb.target_variances(log_norm, ddof=0)[0, 0] == pytest.approx(2 * math.log(2) ** 2 / 3)


def test_cb_is_zero_when_every_target_gets_the_same_normalised_probability():
    rng = np.random.default_rng(0)
    log_prior = rng.normal(size=(3, 4, 6))
    scale = rng.normal(size=(3, 4, 1))  # each (template, attribute) scales all targets alike
    log_norm = cb.normalized_log_probability(log_prior + scale, log_prior)
    assert cb.categorical_bias(log_norm) == pytest.approx(0.0, abs=1e-20)


def test_cb_does_not_depend_on_the_order_of_targets():
    rng = np.random.default_rng(1)
    log_target, log_prior = rng.normal(size=(2, 2, 3, 7))
    order = rng.permutation(7)
    plain = cb.categorical_bias(cb.normalized_log_probability(log_target, log_prior))
    permuted = cb.categorical_bias(cb.normalized_log_probability(log_target[..., order],
                                                                 log_prior[..., order]))
    assert permuted == pytest.approx(plain, rel=1e-12)
    np.testing.assert_allclose(cb.attribute_mean_prior(log_target)[..., order],
                               cb.attribute_mean_prior(log_target[..., order]), atol=1e-12)


def test_attribute_mean_prior_by_hand():
    # attribute rows given with arbitrary offsets: normalised they are (.5, .5) and (.9, .1)
    log_target = np.log([[5.0, 5.0], [0.09, 0.01]])
    prior = np.exp(cb.attribute_mean_prior(log_target))
    np.testing.assert_allclose(prior, [[0.7, 0.3]])
    # P' = p(n|a) / prior: (.5/.7, .5/.3) and (.9/.7, .1/.3); their mean over attributes is 1
    normalised = log_target - np.log([[10.0], [0.1]])
    ratio = np.exp(cb.normalized_log_probability(normalised, cb.attribute_mean_prior(log_target)))
    np.testing.assert_allclose(ratio, [[0.5 / 0.7, 0.5 / 0.3], [0.9 / 0.7, 0.1 / 0.3]])
    np.testing.assert_allclose(ratio.mean(axis=0), [1.0, 1.0])


def test_attribute_mean_prior_gives_zero_cb_when_the_attribute_changes_nothing():
    rng = np.random.default_rng(2)
    same = np.broadcast_to(rng.normal(size=(2, 1, 5)), (2, 4, 5)) + rng.normal(size=(2, 4, 1))
    log_norm = cb.normalized_log_probability(same, cb.attribute_mean_prior(same))
    assert cb.categorical_bias(log_norm) == pytest.approx(0.0, abs=1e-20)


def test_scaled_probabilities_sum_to_one_and_keep_ratios():
    scaled = cb.scaled_probabilities(np.log([[2.0, 1.0, 1.0]]))
    np.testing.assert_allclose(scaled, [[0.5, 0.25, 0.25]])


def test_jensen_shannon_against_scipy_and_its_bounds():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(30)), rng.dirichlet(np.ones(30))
    # scipy returns the Jensen-Shannon *distance*, the square root of the divergence
    assert cb.jensen_shannon(p, q) == pytest.approx(jensenshannon(p, q) ** 2, rel=1e-10)
    assert cb.jensen_shannon(p, q) == pytest.approx(cb.jensen_shannon(q, p))
    assert cb.jensen_shannon([1, 0, 0], [0, 0.5, 0.5]) == pytest.approx(math.log(2))
    assert cb.jensen_shannon(p, p) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("call, match", [
    (lambda: cb.normalized_log_probability([0.0, -np.inf], [0.0, 0.0]), "non-finite"),
    (lambda: cb.normalized_log_probability([0.0, np.nan], [0.0, 0.0]), "non-finite"),
    (lambda: cb.categorical_bias([[0.3]]), "more than 1 target"),
    (lambda: cb.attribute_mean_prior([0.1, 0.2]), "attribute axis"),
    (lambda: cb.attribute_mean_prior([[0.1, 0.2]]), "at least 2 attributes"),
    (lambda: cb.jensen_shannon([0.5, 0.5], [1.0]), "same shape"),
    (lambda: cb.jensen_shannon([1.5, -0.5], [0.5, 0.5]), "non-negative"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.bad_input("CB of an empty score array, a negative ddof, or a JSD of an all-zero "
                       "distribution", "a ValueError saying what is empty or impossible "
                       "(not NaN, not 0)")
def test_empty_cells_and_all_zero_distributions_are_refused():
    with pytest.raises(ValueError, match="no \\(template, attribute\\) cell to average"):
        cb.categorical_bias(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="ddof must be 0 or more"):
        cb.categorical_bias(np.zeros((2, 3)), ddof=-1)
    with pytest.raises(ValueError,
                       match=r"q has no weight to normalise \(all zero\) at \[\(1,\)\]"):
        cb.jensen_shannon([[0.5, 0.5], [0.2, 0.8]], [[0.5, 0.5], [0.0, 0.0]])
