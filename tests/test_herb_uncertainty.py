"""HERB's intervals and model tests against values computed independently of biasbook.stats."""

from itertools import product

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.herb import uncertainty
from biasbook.chapters.herb.regions import region_tree
from biasbook.metrics.herb import hierarchical_bias

TABLE = pd.DataFrame({"name": ["EU", "FR", "DE", "AS", "JP", "IN"],
                      "parent": [-1, 0, 0, -1, 3, 3]})


def test_the_point_estimate_is_the_metric_and_equal_descriptors_give_no_spread():
    tree = region_tree(TABLE)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 8))
    row = uncertainty.overall_intervals(tree, {"m": x}, n_resamples=99).iloc[0]
    assert row["value"] == pytest.approx(hierarchical_bias(tree, x).overall, rel=1e-12)
    assert row["ci_low"] < row["value"] < row["ci_high"] and row["ci_units"] == 8
    # Every descriptor the same column: any resample is that column repeated, so C_w is fixed.
    same = np.repeat(rng.normal(size=(6, 1)), 5, axis=1)
    row = uncertainty.overall_intervals(tree, {"m": same}, n_resamples=99).iloc[0]
    assert row["ci_low"] == pytest.approx(row["ci_high"], abs=1e-12)


def test_the_permutation_p_swaps_descriptor_columns_between_models():
    tree = region_tree(TABLE)
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(6, 4)), 3 * rng.normal(size=(6, 4))
    d = uncertainty.model_differences(tree, {"a": a, "b": b}, n_resamples=999).iloc[0]
    # Brute force: all 2**4 ways of swapping columns between the two models.
    observed = hierarchical_bias(tree, a).overall - hierarchical_bias(tree, b).overall
    swapped = []
    for swap in product([False, True], repeat=4):
        s = np.array(swap)
        x, y = np.where(s, b, a), np.where(s, a, b)
        swapped.append(hierarchical_bias(tree, x).overall - hierarchical_bias(tree, y).overall)
    exact = np.mean(np.abs(swapped) >= abs(observed) - 1e-12)
    assert d["value"] == pytest.approx(observed, rel=1e-12)
    assert d["p_value"] == pytest.approx(exact)
    assert d["p_holm"] == d["p_value"]  # one comparison: nothing to correct


def test_models_scored_on_other_regions_are_refused():
    tree = region_tree(TABLE)
    with pytest.raises(ValueError, match="'a' and 'b' were scored on different regions"):
        uncertainty.model_differences(tree, {"a": np.zeros((6, 4)), "b": np.zeros((6, 5))})


def test_table1_overall_is_scaled_as_table1_prints_and_carries_the_papers_value():
    tree = region_tree(TABLE)
    rng = np.random.default_rng(3)
    scores = {"m": rng.normal(size=(6, 6)), "n": rng.normal(size=(6, 6))}
    ours = pd.DataFrame({"table": "table1", "mode": "paper", "metric": "C_w",
                         "region": "overall", "model": ["m"], "paper": [0.0042]})
    spread, diffs = uncertainty.table1_overall(tree, scores, ours, n_resamples=49)
    raw = uncertainty.overall_intervals(tree, scores, n_resamples=49)
    assert spread["value"].tolist() == pytest.approx((raw["value"] * 1e3).tolist())
    assert spread["paper"].iloc[0] == pytest.approx(4.2) and np.isnan(spread["paper"].iloc[1])
    assert diffs["value"].iloc[0] == pytest.approx(1e3 * (raw["value"][0] - raw["value"][1]))


def test_table1_intervals_are_table1_with_the_overall_interval_of_c_w():
    from biasbook.chapters.herb import tables
    from biasbook.chapters.herb.model_scores import ModelScores
    from biasbook.chapters.herb.regions import herb_regions

    table = herb_regions(countries=["FR", "DE", "JP", "IN", "KE", "NG"], cities_per_country=1)
    rng = np.random.default_rng(4)
    scored = {"m": ModelScores("causal", rng.uniform(-9, -1, size=(len(table), 10)),
                               region_scores=rng.uniform(-9, -1, size=len(table)))}
    cis = uncertainty.table1_intervals(table, scored, n_resamples=199)
    # the values are Table 1's own (herb_tables), x 1e3, every printed cell of both modes
    topics = ["occupation", "intelligence", "appearance", "strength", "morality"] * 2
    ours = tables.herb_tables(table, scored, topics).query("table == 'table1'")
    merged = cis.merge(ours.drop(columns="paper"), on=["model", "mode", "metric", "region"],
                       suffixes=("", "_t1"))
    assert len(merged) == len(ours) == len(cis) == 2 * 2 * 4  # modes x metrics x (3 + overall)
    assert np.allclose(merged["value"], merged["value_t1"] * 1e3, rtol=1e-12)
    assert (merged["ci_low"] <= merged["value"]).all()
    assert (merged["value"] <= merged["ci_high"]).all()
    # the root's C_w: the same resamples as overall_intervals (a separate code path)
    alone = uncertainty.overall_intervals(region_tree(table), {"m": scored["m"].scores},
                                          n_resamples=199).iloc[0]
    root = cis.query("mode == 'paper' and metric == 'C_w' and region == 'overall'").iloc[0]
    assert (root["ci_low"], root["ci_high"]) == pytest.approx(
        (alone["ci_low"] * 1e3, alone["ci_high"] * 1e3), rel=1e-12)
    assert set(cis["ci_unit"]) == {"descriptors"} and set(cis["ci_units"]) == {10}


def test_table4_intervals_resample_test_samples_as_a_hand_written_bootstrap():
    from biasbook.chapters.herb import downstream, uncertainty_downstream

    rng = np.random.default_rng(6)
    p0 = rng.uniform(size=30)
    p = np.clip(p0 + rng.normal(0, 0.1, size=(2, 30)), 0, 1)
    table4 = pd.DataFrame([{"task": "t", "model": "m", "region": "B", "share_up": 0.0,
                            "avg_up": 0.0, "share_down": 0.0, "avg_down": 0.0,
                            **{f"paper {s}": 1.0 for s in ("share_up", "avg_up", "share_down",
                                                          "avg_down")}}]
                          ).set_index(["task", "model", "region"])
    out = uncertainty_downstream.table4_intervals(table4, {("t", "m"): (p0, p)}, ["A", "B"],
                                                  n_resamples=999, seed=1)
    assert list(out["stat"]) == ["share_up", "avg_up", "share_down", "avg_down"]
    # by hand: 999 resamples of the 30 samples, the share of rises behind region B's prefix
    draws = np.random.default_rng(9).integers(0, 30, size=(999, 30))
    shares = [(p[1][d] > p0[d]).mean() for d in draws]
    lo, hi = np.percentile(shares, [2.5, 97.5])
    row = out.set_index("stat").loc["share_up"]
    assert row["ci_low"] == pytest.approx(lo, abs=0.05) and row["ci_high"] == pytest.approx(
        hi, abs=0.05)
    full = downstream.change_counts(p0, p[1])
    assert row["ci_low"] <= full["n_up"] / 30 <= row["ci_high"]
    assert set(out["ci_units"]) == {30} and set(out["paper"]) == {1.0}
