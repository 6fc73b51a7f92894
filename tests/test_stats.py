"""biasbook.stats against closed forms, brute force, hand-worked examples and simulations."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from biasbook import stats
from biasbook.stats import holm, holm_significant, interval, paired_difference, seed_spread

Z975 = 1.959964  # standard normal 97.5% quantile (table value)


def _median_no_axis(x: np.ndarray) -> float:
    return float(np.median(x))


# --- closed forms -------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_interval_of_a_normal_mean_is_mean_pm_196_se(method):
    x = np.random.default_rng(1).normal(3.0, 2.0, size=2000)
    half = Z975 * x.std(ddof=1) / math.sqrt(x.size)
    ci = interval(x, method=method, seed=2)
    assert ci.value == pytest.approx(x.mean(), abs=1e-12)
    # 9999 resamples put about 1.4% Monte Carlo error on each half-width.
    assert ci.value - ci.low == pytest.approx(half, rel=0.05)
    assert ci.high - ci.value == pytest.approx(half, rel=0.05)
    assert (ci.level, ci.method, ci.n_units) == (0.95, method, 2000)


def test_paired_arrays_are_resampled_together():
    rng = np.random.default_rng(3)
    base = rng.normal(0, 5, size=1000)  # shared item effect, large next to the paired noise
    a, b = base + 0.2 + rng.normal(0, 0.5, 1000), base + rng.normal(0, 0.5, 1000)
    d = a - b
    half = Z975 * d.std(ddof=1) / math.sqrt(d.size)
    gap = interval((a, b), lambda x, y, axis=-1: np.mean(x, axis) - np.mean(y, axis),
                   method="percentile", seed=4)
    diff = paired_difference(a, b, method="percentile", seed=4)
    for ci in (gap, diff.interval):
        assert ci.value == pytest.approx(d.mean(), abs=1e-12)
        assert ci.high - ci.low == pytest.approx(2 * half, rel=0.05)
    # Resampling a and b independently would give a ten times wider interval.
    unpaired_width = 2 * Z975 * math.hypot(a.std(), b.std()) / math.sqrt(d.size)
    assert gap.high - gap.low < unpaired_width / 5
    assert diff.p_value < 1e-3 and not diff.exact


def test_seed_spread_matches_the_textbook_t_interval():
    s = seed_spread([1.2, 1.5, 0.9])
    # mean 1.2; sd = sqrt((0 + 0.09 + 0.09) / 2) = 0.3; t(0.975, 2 df) = 4.303 from a t table.
    half = 4.3027 * 0.3 / math.sqrt(3)
    assert (s.mean, s.min, s.max, s.n_seeds) == (pytest.approx(1.2), 0.9, 1.5, 3)
    assert s.sd == pytest.approx(0.3)
    assert (s.interval.low, s.interval.high) == (pytest.approx(1.2 - half, abs=1e-4),
                                                 pytest.approx(1.2 + half, abs=1e-4))
    s90 = seed_spread({"a": 1.2, "b": 1.5, "c": 0.9}, level=0.90)  # t(0.95, 2 df) = 2.920
    assert s90.interval.high - s90.mean == pytest.approx(2.9200 * 0.3 / math.sqrt(3), abs=1e-4)
    assert s.row() == {"value": s.mean, "ci_low": s.interval.low, "ci_high": s.interval.high,
                       "ci_level": 0.95, "ci_unit": "seeds", "ci_units": 3, "ci_method": "t"}


def test_holm_on_a_hand_worked_example():
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    assert holm_significant([0.01, 0.04, 0.03, 0.005]).tolist() == [True, False, False, True]
    assert holm_significant([0.01, 0.04, 0.03, 0.005], alpha=0.1).tolist() == [True] * 4
    # 0.02*3 = 0.06, 0.5*2 = 1.0, 0.6*1 = 0.6 -> running max 1.0, capped at 1.
    np.testing.assert_allclose(holm([0.5, 0.6, 0.02]), [1.0, 1.0, 0.06])
    np.testing.assert_allclose(holm([0.01, 0.01]), [0.02, 0.02])
    np.testing.assert_allclose(holm([0.9]), [0.9])


# --- brute-force permutation p-values -----------------------------------------------------------

def _brute_force(a, b, statistic, alternative):
    """All 2**n within-pair swaps (sign flips of the paired differences for the mean)."""
    obs = statistic(a) - statistic(b)
    null = np.array([statistic(np.where(s, b, a)) - statistic(np.where(s, a, b))
                     for s in itertools.product([False, True], repeat=len(a))])
    eps = 1e-12
    if alternative == "greater":
        return np.mean(null >= obs - eps)
    return np.mean(np.abs(null) >= abs(obs) - eps)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
@pytest.mark.parametrize("statistic", [np.mean, np.median, _median_no_axis])
def test_exact_permutation_p_value_equals_brute_force(statistic, alternative):
    a = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0])
    b = np.array([2.0, 1.5, 2.5, 1.0, 3.0, 5.0, 2.5])
    expected = _brute_force(a, b, statistic, alternative)
    d = paired_difference(a, b, statistic, alternative=alternative, n_resamples=999)
    assert d.exact and d.alternative == alternative
    assert d.p_value == pytest.approx(expected, abs=1e-12)
    assert d.value == pytest.approx(statistic(a) - statistic(b))
    assert 0 < expected < 1


# --- coverage and calibration by simulation -----------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_95_percent_interval_covers_the_true_mean_93_to_97_percent(method):
    # 2000 sets: binomial SE 0.5 points, so the 93-97 band is about 4 SE wide on each side.
    # 100 items: the percentile interval's own shortfall (z and sd with ddof=0 instead of t)
    # is then 0.4 points; with 40 items it is 1 point, too near the band's edge.
    rng = np.random.default_rng(2024)
    sets = rng.normal(1.0, 2.0, size=(2000, 100))
    covered = [interval(x, method=method, n_resamples=1000, seed=rng).contains(1.0)
               for x in sets]
    assert 0.93 <= np.mean(covered) <= 0.97


def test_permutation_p_value_under_the_null_rejects_5_percent():
    rng = np.random.default_rng(11)
    base = rng.normal(0, 1, size=(1000, 60))  # item effects shared by both "models"
    rejected = [paired_difference(x + rng.normal(0, 0.3, 60), x + rng.normal(0, 0.3, 60),
                                  n_resamples=499, seed=rng).p_value <= 0.05 for x in base]
    # 1000 sets: binomial SE 0.7 points around 5%.
    assert 0.03 <= np.mean(rejected) <= 0.07


# --- degenerate data and the record schema ------------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_all_equal_items_give_a_zero_width_interval_without_warnings(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = interval([0.25] * 6, method=method)
        d = paired_difference([2.0] * 5, [2.0] * 5, method=method)
        s = seed_spread([0.7, 0.7, 0.7])
    assert (ci.value, ci.low, ci.high) == (0.25, 0.25, 0.25)
    assert (d.value, d.interval.low, d.interval.high, d.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert (s.interval.low, s.interval.high) == (pytest.approx(0.7), pytest.approx(0.7))


def test_heavy_ties_refuse_bca_with_a_reason_and_percentile_works():
    items = [0.0] * 39 + [1.0]  # every bootstrap median is 0: BCa's bias correction is infinite
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="use method='percentile'"):
            interval(items, np.median, method="BCa")
        ci = interval(items, np.median, method="percentile")
    assert (ci.low, ci.high) == (0.0, 0.0)


def test_row_has_exactly_the_record_schema():
    ci = interval([0.1, 0.4, 0.3, 0.2], unit="words", n_resamples=200)
    row = ci.row()
    assert list(row) == ["value", "ci_low", "ci_high", "ci_level", "ci_unit", "ci_units",
                         "ci_method"]
    assert row["ci_unit"] == "words" and row["ci_units"] == 4 and row["ci_method"] == "BCa"
    assert all(type(row[k]) is float for k in ("value", "ci_low", "ci_high"))
    assert ci.contains(ci.low) and ci.contains(ci.high) and not ci.contains(ci.high + 1)
    assert ci.text(1) == f"0.2 [{ci.low:.1f}, {ci.high:.1f}]"
    d = paired_difference([1.0, 2.0, 3.0], [0.0, 2.5, 1.0], n_resamples=100)
    assert list(d.row()) == [*row, "p_value"]
    with pytest.raises(AttributeError):
        ci.value = 1.0  # frozen: a recorded interval is not edited in place


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_intervals_of_a_vector_statistic_are_each_entry_s_own_interval(method):
    x = np.random.default_rng(3).gamma(2.0, size=40)
    entries = [np.mean, np.median, lambda v: np.quantile(v, 0.9)]
    together = stats.intervals(x, lambda v: np.array([f(v) for f in entries]), method=method,
                               n_resamples=499, seed=5, unit="items")
    alone = [interval(x, f, method=method, n_resamples=499, seed=5, unit="items",
                      vectorized=False) for f in entries]
    for a, b in zip(together, alone, strict=True):  # BCa's jackknife may differ in the last bit
        assert (a.low, a.value, a.high) == pytest.approx((b.low, b.value, b.high), rel=1e-12)
        assert (a.n_units, a.unit, a.method) == (b.n_units, b.unit, b.method)
    with pytest.raises(ValueError, match="one-dimensional array"):
        stats.intervals(x, np.mean, n_resamples=99)


def test_seed_fixes_the_resamples():
    x = np.random.default_rng(5).exponential(size=30)
    assert interval(x, seed=9, n_resamples=500) == interval(x, seed=9, n_resamples=500)
    assert interval(x, seed=9, n_resamples=500) != interval(x, seed=10, n_resamples=500)


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("items, match", [
    ([1.0], "at least 2 items to resample, got 1"),
    ([], "at least 2 items to resample, got 0"),
    ([1.0, np.nan, 2.0, np.inf], r"items has NaN or inf at positions \[1, 3\]"),
    (([1.0, 2.0], [3.0, np.nan]), r"items\[1\] has NaN or inf at positions \[1\]"),
    (([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]), r"got lengths \[3, 4\]"),
    ([[1.0, 2.0], [3.0, 4.0]], r"one-dimensional .* shape \(2, 2\)"),
])
def test_interval_refuses_bad_items(items, match):
    with pytest.raises(ValueError, match=match):
        interval(items)


@pytest.mark.parametrize("kwargs, match", [
    ({"level": 0.0}, "level must lie strictly between 0 and 1, got 0.0"),
    ({"level": 1.0}, "level must lie strictly between 0 and 1, got 1.0"),
    ({"level": 95}, "level must lie strictly between 0 and 1, got 95"),
    ({"n_resamples": 0}, "n_resamples must be at least 1, got 0"),
    ({"method": "basic"}, "method must be 'percentile' or 'BCa', got 'basic'"),
    ({"statistic": lambda x, axis=-1: x}, r"one number, got shape \(3,\)"),
])
def test_interval_refuses_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        interval([1.0, 2.0, 3.0], **kwargs)


def test_paired_difference_refuses_bad_input():
    with pytest.raises(ValueError, match=r"b has NaN or inf at positions \[2\]"):
        paired_difference([1.0, 2.0, 3.0], [1.0, 2.0, np.nan])
    with pytest.raises(ValueError, match=r"paired arrays a, b .* got lengths \[3, 2\]"):
        paired_difference([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2 items to resample, got 1"):
        paired_difference([1.0], [2.0])


def test_seed_spread_refuses_bad_input():
    with pytest.raises(ValueError, match="at least 2 seeds, got 1"):
        seed_spread({0: 1.3})
    with pytest.raises(ValueError, match=r"NaN or inf at seeds \['s2'\]"):
        seed_spread({"s1": 1.0, "s2": float("nan"), "s3": 1.1})
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        seed_spread([1.0, 2.0], level=1.5)


def test_holm_refuses_bad_input():
    with pytest.raises(ValueError, match=r"not so at positions \[1, 2\]"):
        holm([0.01, 1.5, np.nan])
    with pytest.raises(ValueError, match="non-empty"):
        holm([])
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1, got 5"):
        holm_significant([0.01], alpha=5)


def test_separate_samples_are_resampled_apart_and_keep_their_sizes():
    # Y's resampled mean is 0, 5 or 10 with probabilities 1/4, 1/2, 1/4 (X is constant), so the
    # 95% percentile interval of mean(X) - mean(Y) is exactly [-10, 0].
    diff = lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis)  # noqa: E731
    ci = interval(([0.0] * 5, [0.0, 10.0]), diff, paired=False, method="percentile",
                  n_resamples=2000)
    assert (ci.low, ci.high, ci.n_units) == (-10.0, 0.0, 7)
    with pytest.raises(ValueError, match="must have one value per item each"):
        interval(([0.0] * 5, [0.0, 10.0]), diff)  # paired by default


def test_order_holds_only_for_the_same_ranking():
    frame = pd.DataFrame({
        "template_set": ["original"] * 3 + ["a"] * 3 + ["b"] * 3,
        "model": ["m1", "m2", "m3"] * 3,
        "value": [3.0, 2.0, 1.0, 30.0, 20.0, 10.0, 3.0, 1.0, 2.0]})
    order = stats.order_holds(frame).set_index("template_set")
    assert order["order"].to_dict() == {"original": "m1 > m2 > m3", "a": "m1 > m2 > m3",
                                        "b": "m1 > m3 > m2"}
    assert order["holds"].to_dict() == {"original": True, "a": True, "b": False}
    with pytest.raises(ValueError, match="original"):
        stats.order_holds(frame[frame["template_set"] != "original"])
    with pytest.raises(ValueError, match="same models"):
        stats.order_holds(frame.drop(index=8))


def test_holm_tested_corrects_over_the_tests_that_were_run_only():
    p = [0.01, np.nan, 0.04, 0.03]
    got = stats.holm_tested(p)
    assert np.isnan(got[1])
    np.testing.assert_allclose(got[[0, 2, 3]], holm([0.01, 0.04, 0.03]))  # a family of 3, not 4
    assert np.isnan(stats.holm_tested([np.nan, None])).all()
