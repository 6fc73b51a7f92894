"""CB intervals and model tests against a brute-force computation on hand-built results."""

from itertools import product

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.ethnic_bias import data, uncertainty
from biasbook.chapters.ethnic_bias.pipeline import CBResult

ATTRIBUTES = tuple(data.attribute_keys()[:3])
TARGETS = tuple(data.target_keys()[:4])


def result(model: str, seed: int, language: str = "en") -> CBResult:
    rng = np.random.default_rng(seed)
    shape = (2, len(ATTRIBUTES), len(TARGETS))
    return CBResult(language=language, model=model, kind="masked", mode="paper", ddof=1,
                    templates=(1, 2), attributes=ATTRIBUTES, targets=TARGETS,
                    terms=(TARGETS, TARGETS), log_p_target=rng.normal(-5, 1, shape),
                    masked_prior=rng.normal(-5, 0.1, shape))


def cells(r: CBResult) -> np.ndarray:
    """Var over targets of log P' per (template, attribute), computed here with numpy."""
    return np.var(r.log_p_target - r.masked_prior, axis=-1, ddof=1).ravel()


def test_the_interval_is_over_the_six_cells_and_centred_on_the_cb_score():
    r = result("m", 0)
    row = uncertainty.cb_intervals([("multilingual", r)], n_resamples=999).iloc[0]
    assert row["value"] == r.cb and row["value"] == pytest.approx(cells(r).mean())
    assert row["ci_units"] == 6 and row["ci_unit"] == uncertainty.UNIT
    assert cells(r).min() < row["ci_low"] < row["value"] < row["ci_high"] < cells(r).max()


def test_two_models_in_a_language_get_the_exact_paired_permutation_p():
    a, b = result("a", 1), result("b", 2)
    d = uncertainty.cb_differences([("g", a), ("g", b), ("g", result("c", 3, "ko"))]).iloc[0]
    diff = cells(a) - cells(b)
    flips = [abs(np.mean(np.array(s) * diff)) for s in product([1, -1], repeat=diff.size)]
    exact = np.mean(np.array(flips) >= abs(diff.mean()) - 1e-12)  # all 64 sign flips
    assert (d["language"], d["model"], d["versus"]) == ("en", "a", "b")
    assert d["value"] == pytest.approx(diff.mean()) and d["p_value"] == pytest.approx(exact)
    assert d["p_holm"] == d["p_value"]  # the Korean result has no partner: one comparison


def test_the_paper_value_is_only_compared_where_the_models_are_the_papers():
    ci = pd.DataFrame({"language": ["en", "en", "el"], "group": "multilingual",
                       "ci_low": [0.1, 0.1, 0.1], "ci_high": [0.3, 0.3, 0.3]})
    paper = pd.Series({("en", "multilingual"): 0.2})
    assert uncertainty.against_paper(ci, paper, comparable=True).tolist() == [
        "inside", "inside", "no paper value"]
    assert uncertainty.against_paper(ci.assign(ci_high=0.15), paper, True)[0] == "outside"
    assert uncertainty.against_paper(ci, paper, comparable=False)[0] == \
        "not comparable: another model"


def test_with_paper_takes_table_4s_value_for_the_language_and_group():
    from biasbook.chapters.ethnic_bias.tables import paper_table4

    theirs = paper_table4().set_index(["language", "group"])["cb"][("en", "monolingual")]
    ci = pd.DataFrame({"language": ["en"], "group": ["monolingual"],
                       "ci_low": [theirs - 0.01], "ci_high": [theirs + 0.01]})
    row = uncertainty.with_paper(ci, comparable=True).iloc[0]
    assert row["paper"] == theirs and row["paper vs ours"] == "inside"
