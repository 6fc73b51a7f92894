"""The chapter's tables on synthetic results, against values computed directly."""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from biasbook.chapters.ethnic_bias import data, tables
from biasbook.chapters.ethnic_bias.pipeline import CBResult


def fake(language, templates, attributes, targets, seed, masked=True):
    rng = np.random.default_rng(seed)
    shape = (len(templates), len(attributes), len(targets))
    return CBResult(language=language, model="fake", kind="masked" if masked else "causal",
                    mode="paper", ddof=1, templates=tuple(templates),
                    attributes=tuple(attributes), targets=tuple(targets),
                    terms=tuple(tuple(targets) for _ in templates),
                    log_p_target=rng.normal(size=shape),
                    masked_prior=rng.normal(size=shape) if masked else None)


def test_mean_jsd_averages_over_common_templates_and_attributes():
    a = fake("en", [1, 2, 3], ["Enemy", "Pirate"], ["Iraq", "Japan", "Cuba"], 0)
    b = fake("zh", [2, 3, 5], ["Pirate", "Enemy"], ["Cuba", "Iraq", "Japan"], 1)
    want = []
    for t in (2, 3):
        for attr in ("Enemy", "Pirate"):
            p = a.distribution(attr, t)
            q = b.distribution(attr, t).reindex(p.index)
            want.append(jensenshannon(p, q) ** 2)
    assert tables.mean_jsd(a, b) == pytest.approx(np.mean(want), rel=1e-9)
    matrix = tables.jsd_matrix({"en": a, "zh": b})
    assert matrix.loc["en", "zh"] == matrix.loc["zh", "en"] == pytest.approx(np.mean(want))
    assert matrix.loc["en", "en"] == 0


def test_averaged_jsd_is_the_divergence_of_the_mean_distributions():
    a = fake("en", [1, 2], ["Enemy", "Pirate"], ["Iraq", "Japan", "Cuba"], 4)
    b = fake("ko", [2, 1], ["Pirate", "Enemy"], ["Cuba", "Japan", "Iraq"], 5)
    pairs = [(t, attr) for t in (1, 2) for attr in ("Enemy", "Pirate")]
    p = np.mean([a.distribution(attr, t) for t, attr in pairs], axis=0)
    q = np.mean([b.distribution(attr, t).reindex(a.targets) for t, attr in pairs], axis=0)
    averaged = tables.mean_jsd(a, b, averaged=True)
    assert averaged == pytest.approx(jensenshannon(p, q) ** 2, rel=1e-9)
    assert averaged <= tables.mean_jsd(a, b)  # joint convexity
    assert tables.jsd_matrix({"en": a, "ko": b}, averaged=True).loc["ko", "en"] == averaged


def test_word_lists_table_sets_two_lists_side_by_side():
    a = fake("en", [2], ["Enemy", "Pirate"], data.target_keys(), 6)
    b = CBResult(**{**a.__dict__, "word_lists": "book",
                    "log_p_target": a.log_p_target * 2, "masked_prior": a.masked_prior * 2})
    row = tables.word_lists_table([("monolingual", a)], [("monolingual", b)]).iloc[0]
    assert row["cb authors"] == pytest.approx(a.cb) and row["cb book"] == pytest.approx(4 * a.cb)
    assert row["change"] == pytest.approx(3.0)  # log P' doubled: variance x4
    with pytest.raises(KeyError, match="one list only"):
        tables.word_lists_table([("multilingual", a)], [("monolingual", b)])


def test_mean_jsd_refuses_results_with_nothing_in_common():
    a = fake("en", [1], ["Enemy"], ["Iraq", "Japan"], 0)
    b = fake("zh", [2], ["Enemy"], ["Iraq", "Japan"], 1)
    with pytest.raises(ValueError, match="no common"):
        tables.mean_jsd(a, b)


@pytest.mark.parametrize("masked", [True, False])
def test_sensitivity_scores_each_condition_on_its_own_lists(masked):
    targets = data.target_keys(extra=True)
    attributes = ["Enemy", "Pirate", "Doctor", "Terrorist", "Slave"]
    r = fake("en", [2], attributes, targets, 2, masked=masked)
    table = tables.sensitivity(r, "monolingual").set_index("condition")
    assert table.loc["base", "cb"] == pytest.approx(
        r.subset(targets=targets[:30], attributes=attributes[:3]).cb)
    assert table.loc["+5 targets", "targets"] == 35
    assert table.loc["+5 attributes", "attributes"] == 5
    assert table.loc["+5 attributes & 5 targets", "cb"] == pytest.approx(r.cb)


def test_sensitivity_leaves_out_conditions_that_add_nothing():
    r = fake("en", [2], ["Enemy", "Pirate"], data.target_keys(), 3)
    assert tables.sensitivity(r, "monolingual")["condition"].tolist() == ["base"]


def test_relative_change_keeps_one_model_in_two_groups_apart():
    frame = pd.DataFrame({"condition": ["base", "+5 targets"] * 2,
                          "group": ["monolingual"] * 2 + ["multilingual"] * 2,
                          "model": ["m"] * 4, "language": ["en"] * 4,
                          "cb": [2.0, 3.0, 4.0, 5.0]})
    assert tables.relative_change(frame)["change"].tolist() == [0.0, 0.5, 0.0, 0.25]


def test_top_targets_are_the_largest_scaled_probabilities():
    r = fake("en", [2], ["Enemy"], ["Iraq", "Japan", "Cuba", "Syria"], 4)
    top = tables.top_targets(r, "Enemy", 2, k=2)
    dist = r.distribution("Enemy", 2)
    assert top["target"].tolist() == dist.sort_values(ascending=False).index[:2].tolist()
    assert dist.sum() == pytest.approx(1.0)


def test_cb_table_uses_the_base_lists_and_the_papers_value():
    r = fake("ko", [2], ["Enemy", "Terrorist"], data.target_keys(extra=True), 5)
    row = tables.cb_table([("multilingual", r)]).iloc[0]
    assert row["targets"] == 30 and row["attributes"] == 1
    assert row["cb"] == pytest.approx(r.subset(targets=data.target_keys(),
                                               attributes=["Enemy"]).cb)
    assert row["paper"] == 392.89


def test_paper_tables_read_back_as_printed():
    assert tables.paper_table3("monolingual").loc["zh", "es"] == 0.595
    assert tables.paper_table3("monolingual").loc["es", "zh"] == 0.595
    t7 = tables.paper_table7()
    assert len(t7) == 8 * 5
    assert t7.query("condition == '+5 targets' and model == 'BERT' and language == 'es'")[
        "cb"].item() == 33.212
