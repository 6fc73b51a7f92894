"""HERB chapter helpers added for teaching (issue 14): the toy walk-through of Eq. 2-9, the
paper-row mapping, the model-ranking test of Sec. 4.5 and the bar charts of Tables 3 and 6.
Values are worked out here with explicit loops or by hand."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from biasbook.chapters.herb import paper_comparison, propagation, tables, toy  # noqa: E402


def unit(x):
    return np.asarray(x, dtype=float) / np.linalg.norm(x)


def test_toy_walk_through_by_loops():
    scores, parents = toy.toy_example()
    walk = toy.walk_through(scores, parents)
    v = {name: unit(row) for name, row in scores.iterrows()}
    kids = ["Delta", "Epsilon", "Zeta"]
    pairs = [(a, b) for i, a in enumerate(kids) for b in kids[i + 1:]]
    # Eq. 3: mean pairwise distance
    c = np.mean([np.linalg.norm(v[a] - v[b]) for a, b in pairs])
    assert walk.clusters.loc["Sparsia", "c(R), Eq. 3"] == pytest.approx(c)
    # Eq. 8, l = 1: leaf distance to the centroid of its siblings
    centroid = np.mean([v[k] for k in kids], axis=0)
    leaf = {k: np.linalg.norm(v[k] - centroid) for k in kids}
    assert walk.regions.loc["Delta", "C_w, Eq. 8"] == pytest.approx(leaf["Delta"])
    # Eq. 9 weights and Eq. 8 (leaves: V = v)
    e = {p: np.exp(leaf[p[0]] + leaf[p[1]]) for p in pairs}
    total = sum(e.values())
    cw = 2 / (3 * 2) * sum(e[p] / total * np.linalg.norm(v[p[0]] - v[p[1]]) for p in pairs)
    assert walk.clusters.loc["Sparsia", "C_w, Eq. 8"] == pytest.approx(cw)
    weights = walk.clusters.loc["Sparsia", "pair weights w, Eq. 9"]
    assert weights["Delta-Zeta"] == pytest.approx(e["Delta", "Zeta"] / total, abs=1e-4)
    # Eq. 6-7 and Eq. 4 for Sparsia: alpha = softmax of mean |difference| per descriptor
    ci = np.array([np.mean([abs(v[a][i] - v[b][i]) for a, b in pairs]) for i in range(3)])
    alpha = np.exp(ci) / np.exp(ci).sum()
    assert walk.clusters.loc["Sparsia", "alpha rich, Eq. 7"] == pytest.approx(alpha[2])
    V = v["Sparsia"] + alpha * centroid
    got = walk.regions.loc["Sparsia", ["V kind", "V lazy", "V rich"]].to_numpy(dtype=float)
    np.testing.assert_allclose(got, V)
    # the picture of Fig. 2: the sparse cluster has the larger bias
    assert walk.clusters.loc["Sparsia", "C_w, Eq. 8"] > walk.clusters.loc["Compactia",
                                                                          "C_w, Eq. 8"]


def test_toy_edits_and_errors():
    scores, parents = toy.toy_example()
    scores.loc["Eta"] = [-5.0, -6.0, -5.45]  # a fourth, typical Compactian country
    walk = toy.walk_through(scores, {**parents, "Eta": "Compactia"})
    assert walk.clusters.loc["Compactia", "n"] == 4
    with pytest.raises(ValueError, match="every region needs"):
        toy.walk_through(scores, parents)  # Eta has no parent entry
    fig = toy.plot_walk_through(walk)
    assert len(fig.axes) == 2


def test_paper_rows_name_each_models_row():
    rows = paper_comparison.paper_rows(["bert-base-cased", "google-bert/bert-base-cased",
                            "bert-base-uncased", "facebook/bart-base", "smollm2-135m"])
    assert rows["paper row"].tolist() == ["BERT-base", "BERT-base", "no paper value",
                                          "BART-base", "no paper value"]
    assert "uncased" in rows.loc["bert-base-uncased", "why"]
    assert rows.loc["smollm2-135m", "why"] == "not in the paper"


def test_paper_model_ranking_by_hand():
    frame = propagation.paper_model_ranking()
    # Table 5 "Country-All": noHate->hate + hate->noHate
    assert frame.loc["ALBERT-base-v2", "labels flipped (%)"] == pytest.approx(1.7914 + 4.7296)
    assert frame.loc["BART-base", "labels flipped (%)"] == pytest.approx(1.0121 + 1.2959)
    assert frame["rank by HERB"].to_dict() == {"BERT-base": 3, "ALBERT-base-v2": 1,
                                               "RoBERTa-base": 2, "BART-base": 4}
    assert frame["rank by flips"].to_dict() == {"BERT-base": 4, "ALBERT-base-v2": 1,
                                                "RoBERTa-base": 2, "BART-base": 3}
    test = propagation.ranking_test(frame)
    # one swap of neighbours: 1 - 6 * (1 + 1) / (4 * 15) = 0.8; orderings with rho >= 0.8:
    # the identity and the three neighbour swaps, 4 of 24
    assert test["spearman"] == pytest.approx(0.8)
    assert test["p (exact, one-sided)"] == pytest.approx(4 / 24)
    two = propagation.ranking_test(frame.iloc[:2])
    assert two["models"] == 2 and np.isnan(two["spearman"])


def test_relative_change_bars():
    ours = pd.DataFrame({"table": "table6", "model": "m", "mode": "paper", "region": "overall",
                         "condition": ["full", "replace strength"], "value": [2.0, 2.2]})
    change = tables.relative_change(ours, "table6")
    ax = tables.plot_relative_change(change, title="Table 6")
    heights = [[p.get_height() for p in c] for c in ax.containers]
    assert heights[0] == [pytest.approx(10.0)]  # +10 %
    assert heights[1] == [pytest.approx((3.2607 / 3.3045 - 1) * 100)]
    assert ax.containers[1][0].get_hatch() == "//"
