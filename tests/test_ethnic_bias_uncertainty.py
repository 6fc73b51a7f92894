"""CB intervals and model tests against a brute-force computation on hand-built results."""

from itertools import product

import numpy as np
import pandas as pd
import pytest

from biasbook.chapters.ethnic_bias import (
    data,
    uncertainty,
    uncertainty_cb,
    uncertainty_jsd,
    uncertainty_mitigation,
)
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
    row = uncertainty_cb.cb_intervals([("multilingual", r)], n_resamples=999).iloc[0]
    assert row["value"] == r.cb and row["value"] == pytest.approx(cells(r).mean())
    assert row["ci_units"] == 6 and row["ci_unit"] == uncertainty.UNIT
    assert cells(r).min() < row["ci_low"] < row["value"] < row["ci_high"] < cells(r).max()


def test_two_models_in_a_language_get_the_exact_paired_permutation_p():
    a, b = result("a", 1), result("b", 2)
    d = uncertainty_cb.cb_differences([("g", a), ("g", b), ("g", result("c", 3, "ko"))]).iloc[0]
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
    assert uncertainty_cb.against_paper(ci, paper, comparable=True).tolist() == [
        "inside", "inside", "no paper value"]
    assert uncertainty_cb.against_paper(ci.assign(ci_high=0.15), paper, True)[0] == "outside"
    assert uncertainty_cb.against_paper(ci, paper, comparable=False)[0] == \
        "not comparable: another model"


def test_with_paper_takes_table_4s_value_for_the_language_and_group():
    from biasbook.chapters.ethnic_bias.tables import paper_table4

    theirs = paper_table4().set_index(["language", "group"])["cb"][("en", "monolingual")]
    ci = pd.DataFrame({"language": ["en"], "group": ["monolingual"],
                       "ci_low": [theirs - 0.01], "ci_high": [theirs + 0.01]})
    row = uncertainty_cb.with_paper(ci, comparable=True).iloc[0]
    assert row["paper"] == theirs and row["paper vs ours"] == "inside"


# --- notebook 03: JSD intervals and tests, Table 7 ---

def lang_result(language: str, seed: int, templates=(1, 2), model: str = "m",
                kind: str = "causal") -> CBResult:
    rng = np.random.default_rng(seed)
    targets = TARGETS + tuple(data.target_keys(extra=True)[-1:])  # one added country too
    shape = (len(templates), len(ATTRIBUTES), len(targets))
    return CBResult(language=language, model=model, kind=kind, mode="paper", ddof=1,
                    templates=tuple(templates), attributes=ATTRIBUTES, targets=targets,
                    terms=tuple(targets for _ in templates),
                    log_p_target=rng.normal(-5, 1, shape),
                    masked_prior=rng.normal(-5, 0.1, shape) if kind == "masked" else None)


def brute_jsd(a: CBResult, b: CBResult, template: int, attribute: str,
              base_only: bool = True) -> float:
    """JSD of one cell with scipy's own implementation (its distance is the divergence's root),
    over the 30 countries of A.2 (``base_only``, as notebook 03) or every one scored (04)."""
    from scipy.spatial.distance import jensenshannon

    base_targets = [t for t in a.targets if t in data.target_keys() or not base_only]
    p, q = (r.subset(targets=base_targets).distribution(attribute, template) for r in (a, b))
    return float(jensenshannon(p.to_numpy(), q.to_numpy()) ** 2)


def signflip_p(diff: np.ndarray) -> float:
    """The exact two-sided paired permutation p, every sign flip enumerated."""
    flips = np.array([np.mean(np.array(s) * diff) for s in product([1, -1], repeat=diff.size)])
    return float(np.mean(np.abs(flips) >= abs(diff.mean()) - 1e-12))


def test_jsd_cells_are_scipys_divergences_and_average_to_mean_jsd():
    from biasbook.chapters.ethnic_bias import tables

    en, zh = lang_result("en", 1, (2, 5, 7)), lang_result("zh", 2, (2, 5, 1))
    cells = tables.jsd_cells(tables.base(en), tables.base(zh))
    # Chinese's 1 reads as English 7, but ids are compared as such: 2 and 5 only (as mean_jsd)
    assert sorted(set(cells["template"])) == [2, 5] and len(cells) == 2 * len(ATTRIBUTES)
    for row in cells.itertuples():
        assert row.jsd == pytest.approx(brute_jsd(en, zh, row.template, row.attribute))
    assert cells["jsd"].mean() == pytest.approx(tables.mean_jsd(tables.base(en), tables.base(zh)))


def test_jsd_intervals_cover_every_pair_with_the_paper_value_only_where_comparable():
    by_model = {("multilingual", "m"): {"en": lang_result("en", 1), "de": lang_result("de", 2),
                                        "ko": lang_result("ko", 3)},
                ("monolingual", "e"): {"en": lang_result("en", 4)}}  # one language: no pair
    got = uncertainty_jsd.jsd_intervals(by_model, comparable=False, n_resamples=999)
    assert got["pair"].tolist() == ["en-de", "en-ko", "de-ko"]
    en, de = by_model[("multilingual", "m")]["en"], by_model[("multilingual", "m")]["de"]
    cells = [brute_jsd(en, de, t, a) for t in (1, 2) for a in ATTRIBUTES]
    row = got.iloc[0]
    assert row["value"] == pytest.approx(np.mean(cells)) and row["ci_units"] == 6
    assert min(cells) <= row["ci_low"] <= row["value"] <= row["ci_high"] <= max(cells)
    assert row["paper"] == 0.13 and row["paper vs ours"] == "not comparable: another model"
    inside = uncertainty_jsd.jsd_intervals(by_model, comparable=True, n_resamples=999)
    assert inside.loc[0, "paper vs ours"] == ("inside" if row["ci_low"] <= 0.13 <= row["ci_high"]
                                              else "outside")


def test_a_pair_with_one_shared_cell_gets_its_value_without_an_interval():
    one = {("multilingual", "m"): {"en": lang_result("en", 1, (2,), kind="masked").subset(
        attributes=ATTRIBUTES[:1]), "de": lang_result("de", 2, (2,), kind="masked")}}
    row = uncertainty_jsd.jsd_intervals(one, comparable=True).iloc[0]
    assert np.isfinite(row["value"]) and np.isnan(row["ci_low"]) and row["ci_units"] == 1
    assert row["paper vs ours"] == "no interval"


def test_the_papers_claim_is_tested_cell_by_cell_with_the_exact_permutation_p():
    results = {c: lang_result(c, s) for c, s in (("en", 1), ("de", 2), ("ko", 3))}
    got = uncertainty_jsd.jsd_differences({("multilingual", "m"): results})
    assert got[["pair", "other_pair"]].values.tolist() == [["en-de", "en-ko"]]  # no tr, zh
    diff = np.array([brute_jsd(results["en"], results["de"], t, a) -
                     brute_jsd(results["en"], results["ko"], t, a)
                     for t in (1, 2) for a in ATTRIBUTES])
    row = got.iloc[0]
    assert row["value"] == pytest.approx(diff.mean())
    assert row["p_value"] == pytest.approx(signflip_p(diff))
    assert row["ci_low"] <= row["value"] <= row["ci_high"]


def test_a_chinese_claim_compares_the_cells_all_three_languages_share():
    results = {"en": lang_result("en", 1, (2, 5, 7)), "de": lang_result("de", 2, (2, 5, 7)),
               "zh": lang_result("zh", 3, (2, 5, 1))}
    row = uncertainty_jsd.jsd_differences({("multilingual", "m"): results},
                                      claims=[(("en", "de"), ("en", "zh"))]).iloc[0]
    diff = np.array([brute_jsd(results["en"], results["de"], t, a) -
                     brute_jsd(results["en"], results["zh"], t, a)
                     for t in (2, 5) for a in ATTRIBUTES])
    assert row["ci_units"] == 6 and row["value"] == pytest.approx(diff.mean())


def test_drawn_spearman_is_scipys_on_each_resamples_pair_means():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    jsd = rng.uniform(0, 0.6, size=(4, 5))
    jsd[3, :2] = np.nan                      # a pair without the first two cells
    theirs = np.array([0.3, 0.1, 0.5, 0.2])
    draws = np.array([[0, 1, 2, 3, 4], [4, 4, 2, 0, 1], [2, 2, 3, 3, 0]])
    got = uncertainty_jsd.drawn_spearman(jsd, theirs, draws)
    for k, draw in enumerate(draws):
        means = [np.nanmean(jsd[i, draw]) for i in range(4)]
        assert got[k] == pytest.approx(spearmanr(means, theirs).statistic)


def test_jsd_spearman_value_and_interval():
    from scipy.stats import spearmanr

    from biasbook.chapters.ethnic_bias import tables

    results = {c: lang_result(c, s) for c, s in (("en", 1), ("de", 2), ("ko", 3), ("tr", 4))}
    paper = tables.paper_table3("multilingual")
    ci = uncertainty_jsd.jsd_spearman(results, paper, n_resamples=999)
    pairs = [("en", "de"), ("en", "ko"), ("en", "tr"), ("de", "ko"), ("de", "tr"), ("ko", "tr")]
    ours = [tables.mean_jsd(tables.base(results[a]), tables.base(results[b])) for a, b in pairs]
    assert ci.value == pytest.approx(spearmanr(ours, [paper.loc[p] for p in pairs]).statistic)
    assert -1 <= ci.low <= ci.high <= 1 and ci.n_units == 6
    assert uncertainty_jsd.jsd_spearman({c: results[c] for c in ("en", "de")}, paper) is None


def test_jsd_spearman_without_an_interval_where_a_resample_leaves_a_pair_without_cells():
    from biasbook.chapters.ethnic_bias import tables

    results = {c: lang_result(c, s) for c, s in (("en", 1), ("de", 2), ("ko", 3))}
    results["tr"] = lang_result("tr", 4, templates=(2,))  # its pairs lack template 1's cells
    ci = uncertainty_jsd.jsd_spearman(results, tables.paper_table3("multilingual"), n_resamples=999)
    assert np.isfinite(ci.value) and np.isnan(ci.low) and np.isnan(ci.high)  # not an error
    assert ci.text() == f"{ci.value:.2f}"  # the value alone


def test_table7_intervals_are_over_each_conditions_own_cells():
    from biasbook.chapters.ethnic_bias import tables

    r = lang_result("en", 5)
    r = r.subset(attributes=list(ATTRIBUTES[:2]) + data.attribute_keys(extra=True)[-1:]) \
        if data.attribute_keys(extra=True)[-1] in r.attributes else r
    got = uncertainty_cb.sensitivity_intervals([("monolingual", r)], n_resamples=999)
    want = tables.sensitivity(r, "monolingual")
    assert got["condition"].tolist() == want["condition"].tolist()
    assert got["value"].tolist() == pytest.approx(want["cb"].tolist())
    base = tables.base(r)
    assert got.loc[0, "ci_units"] == len(base.templates) * len(base.attributes)


# --- notebook 04: mitigation rows, changes, Table 9 ---

def heldout(per_token: float, tokens=(3, 5, 2, 4)) -> pd.DataFrame:
    """Held-out scores with the same log-likelihood per token in every sentence."""
    t = np.array(tokens)
    return pd.DataFrame({"sentence": [f"s{i}" for i in range(len(t))],
                         "log_likelihood": per_token * t, "tokens": t})


def outcome(variant, seed, *, direction="x->en", language="ko", role="monolingual",
            aligned_to=None, per_token=-2.0, text=True, paper_cb=None):
    from biasbook.chapters.ethnic_bias import mitigation as m

    r = lang_result(language, seed, (2, 7))
    ppl = float(np.exp(-per_token)) if text else np.nan
    row = {"direction": direction, "language": language, "model": "m", "role": role,
           "variant": variant, "aligned_to": aligned_to, "cb": r.cb, "perplexity": ppl,
           "paper_cb": paper_cb}
    return m.Outcome(row, r, {}, heldout(per_token) if text else None)


def test_perplexity_of_the_kept_scores_is_the_perplexity():
    from biasbook.chapters.ethnic_bias import mitigation as m

    h = heldout(-2.0)
    assert m.perplexity_of(h) == pytest.approx(np.exp(2.0))
    h.loc[0, "log_likelihood"] = -12.0  # 3 tokens: total -40 + (-12 + 6) over 14 tokens
    assert m.perplexity_of(h) == pytest.approx(np.exp(34 / 14))


def test_row_intervals_cb_over_cells_perplexity_over_sentences():
    rows = [outcome("base", 1, paper_cb=5.0), outcome("ft", 2, per_token=-3.0),
            outcome("base", 3, language="ar", text=False)]
    got = uncertainty_mitigation.mitigation_intervals(rows, comparable=False, n_resamples=999)
    cells = rows[0].result.variances["variance"].to_numpy()
    assert got.loc[0, "value"] == rows[0].row["cb"] and got.loc[0, "ci_units"] == 6
    assert cells.min() < got.loc[0, "ci_low"] < got.loc[0, "ci_high"] < cells.max()
    # the same loss per token in every sentence: every resample has the same perplexity
    assert got.loc[1, "perplexity ci_low"] == pytest.approx(np.exp(3.0))
    assert got.loc[1, "perplexity ci_high"] == pytest.approx(np.exp(3.0))
    assert got.loc[1, "perplexity ci_unit"] == uncertainty.SENTENCES
    assert np.isnan(got.loc[2, "perplexity ci_low"])
    assert got["paper vs ours"].tolist() == ["not comparable: another model and scale",
                                             "no paper value", "no paper value"]


def test_changes_are_tested_cell_by_cell_against_the_reference_row():
    rows = [outcome("base", 1), outcome("ft", 2, per_token=-2.5), outcome("align", 3),
            outcome("base", 4, direction="en->x", language="en"),
            outcome("align", 5, direction="en->x", language="en", aligned_to="ko"),
            outcome("align", 6, direction="en->x", language="en", aligned_to="tr")]
    got = uncertainty_mitigation.change_tests(rows, "base", comparable=False, n_resamples=9999)
    assert got[["direction", "variant"]].values.tolist() == [
        ["x->en", "ft"], ["x->en", "align"], ["en->x", "align"], ["en->x", "align"]]
    assert got["aligned_to"].tolist()[2:] == ["ko", "tr"]  # the two EN→X align rows stay apart
    a, b = (o.result.variances["variance"].to_numpy() for o in (rows[1], rows[0]))
    ft = got.iloc[0]
    assert ft["value"] == pytest.approx(a.mean() / b.mean() - 1) == ft["cb_change"]
    assert ft["cb_difference"] == pytest.approx(a.mean() - b.mean())
    assert ft["p_value"] == pytest.approx(signflip_p(a - b))
    assert ft["ci_low"] <= ft["value"] <= ft["ci_high"]
    # perplexity e^2.5 against e^2 in every sentence: the ratio e^0.5 on every resample
    assert ft["perplexity_ratio ci_low"] == pytest.approx(np.exp(0.5))
    assert ft["perplexity_ratio ci_high"] == pytest.approx(np.exp(0.5))
    versus_ft = uncertainty_mitigation.change_tests(rows, "ft", comparable=False)
    assert versus_ft["variant"].tolist() == ["align"]  # EN→X has no ft row here


def test_the_familys_holm_correction_spans_every_frame():
    cb = pd.DataFrame({"p_value": [0.01, 0.2, np.nan]})
    jsd = pd.DataFrame({"p_value": [0.02]})
    a, b = uncertainty.family([cb, jsd])
    # by hand: sorted 0.01, 0.02, 0.2 times 3, 2, 1, kept monotone
    assert a["p_holm"].tolist()[:2] == pytest.approx([0.03, 0.2]) and np.isnan(a["p_holm"][2])
    assert b["p_holm"].tolist() == pytest.approx([0.04])
    assert a["holds"].tolist() == [True, False, False] and b["holds"].tolist() == [True]


@pytest.mark.parametrize("n", [3, 5])
def test_no_permutation_p_is_below_the_smallest_p_of_its_cells(n):
    from biasbook import stats

    same_sign = np.arange(1, n + 1, dtype=float)  # every cell lower after mitigation
    d = stats.paired_difference(same_sign, np.zeros(n), n_resamples=999)
    assert d.p_value == pytest.approx(uncertainty.smallest_p(n)) == pytest.approx(2 / 2 ** n)


def test_table9_intervals_and_the_align_against_ft_test():
    from biasbook.chapters.ethnic_bias import mitigation_tables as mt

    english = outcome("base", 1, direction="en->x", language="en")
    rows = [outcome("ft", 2), outcome("align", 3, aligned_to="en"), english,
            outcome("ft", 4, direction="en->x", language="en"),
            outcome("align", 5, direction="en->x", language="en", aligned_to="ko")]
    table9 = uncertainty_mitigation.jsd_to_english_intervals(rows, comparable=False,
                                                             n_resamples=999)
    want = mt.jsd_to_english(rows)
    assert table9["value"].tolist() == want["jsd_to_english_base"].tolist()
    assert (table9["ci_units"] == 6).all()
    tests = uncertainty_mitigation.jsd_change_tests(rows)
    assert tests[["direction", "paper_expects"]].values.tolist() == [
        ["x->en", "closer"], ["en->x", "further"]]
    diff = np.array([brute_jsd(rows[1].result, english.result, t, a, base_only=False) -
                     brute_jsd(rows[0].result, english.result, t, a, base_only=False)
                     for t in (2, 7) for a in ATTRIBUTES])
    assert tests.loc[0, "value"] == pytest.approx(diff.mean())
    assert tests.loc[0, "p_value"] == pytest.approx(signflip_p(diff))
    (tested,) = uncertainty.family([tests])
    sentence = uncertainty_mitigation.jsd_change_sentence(next(tested.itertuples()))
    assert "not a change these cells support" in sentence or "English" in sentence


# --- notebook 03: the two readings of Table 3 summarised over the pairs, with intervals ---

def brute_readings(results: dict, draw: tuple, averaged: bool) -> list[float]:
    """Every pair's divergence over the drawn (template, attribute) cells (a cell drawn twice
    counts twice), by loops and scipy: the mean of the cells' divergences, or (``averaged``) the
    divergence of the two languages' distributions averaged over the drawn cells."""
    from scipy.spatial.distance import jensenshannon

    names, cells = list(results), [(t, a) for t in (2,) for a in ATTRIBUTES]
    values = []
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            drawn = [cells[k] for k in draw]
            if not averaged:
                values.append(np.mean([brute_jsd(results[x], results[y], t, a)
                                       for t, a in drawn]))
                continue
            keep = [t for t in results[x].targets if t in data.target_keys()]
            p, q = (np.mean([results[z].subset(targets=keep).distribution(a, t).to_numpy()
                             for t, a in drawn], axis=0) for z in (x, y))
            values.append(float(jensenshannon(p, q) ** 2))
    return values


def test_jsd_readings_intervals_are_the_extremes_of_the_exact_bootstrap():
    # 3 cells: all 27 resamples enumerated. Each has probability 1/27 > 2.5%, so the 2.5% and
    # 97.5% percentiles of 9999 random resamples are the smallest and largest exact values.
    results = {c: lang_result(c, s, (2,)) for c, s in (("en", 1), ("de", 2), ("ko", 3))}
    got = uncertainty_jsd.jsd_readings({("multilingual", "m"): results}, n_resamples=9999)
    ours = got[got["model"] == "m"].set_index("reading")
    for reading, averaged in uncertainty_jsd.READINGS:
        every = np.array([brute_readings(results, draw, averaged)
                          for draw in product(range(3), repeat=3)])  # resamples x pairs
        full = brute_readings(results, (0, 1, 2), averaged)
        for summary, reduce in (("mean", np.mean), ("max", np.max)):
            row = ours.loc[reading]
            exact = reduce(every, axis=1)
            assert row[summary] == pytest.approx(reduce(full), rel=1e-9)
            assert row[f"{summary} ci_low"] == pytest.approx(exact.min(), rel=1e-9)
            assert row[f"{summary} ci_high"] == pytest.approx(exact.max(), rel=1e-9)
            assert row[f"{summary} ci_units"] == 3 and row["pairs"] == 3


def test_jsd_readings_values_are_the_notebooks_and_the_papers_rows_have_no_interval():
    from biasbook.chapters.ethnic_bias import tables

    results = {c: lang_result(c, s) for c, s in (("en", 1), ("de", 2), ("ko", 3))}
    by_model = {("multilingual", "m"): results, ("monolingual", "e"): {"en": results["en"]}}
    got = uncertainty_jsd.jsd_readings(by_model, n_resamples=999)
    assert got["model"].tolist() == ["m", "m", "paper (monolingual)", "paper (multilingual)"]
    for row, averaged in zip(got.iloc[:2].itertuples(), (False, True), strict=True):
        m = tables.jsd_matrix({c: tables.base(r) for c, r in results.items()},
                              averaged=averaged).to_numpy()
        pairs = m[np.triu_indices(3, 1)]
        assert (row.mean, row.max) == (pairs.mean(), pairs.max())  # bit for bit
    printed = tables.paper_table3("multilingual").to_numpy()
    assert got.loc[3, "max"] == printed[np.triu_indices(len(printed), 1)].max()
    assert got.loc[2:, ["mean ci_low", "max ci_high"]].isna().all().all()
    assert uncertainty.text(got, "mean", "mean ").iloc[2] == f"{got.loc[2, 'mean']:.3f}"


def test_drawn_jsd_readings_match_loops_where_a_pair_lacks_cells():
    from biasbook.chapters.ethnic_bias import tables

    results = {"en": lang_result("en", 1, (2, 5)), "de": lang_result("de", 2, (2, 5)),
               "zh": lang_result("zh", 3, (2,))}  # zh's pairs have template 2's cells only
    base = {c: tables.base(r) for c, r in results.items()}
    pairs, n_cells = uncertainty_jsd.reading_cells(base)
    grid = [(t, a) for t in (2, 5) for a in ATTRIBUTES]
    assert n_cells == len(grid) == 6
    draws = np.array([[0, 1, 2, 3, 4, 5], [3, 3, 4, 5, 5, 0], [4, 4, 4, 3, 5, 5]])
    for averaged in (False, True):
        got = uncertainty_jsd.drawn_jsd_readings(pairs, n_cells, draws, averaged)
        for k, draw in enumerate(draws):
            for i, (x, y) in enumerate([("en", "de"), ("en", "zh"), ("de", "zh")]):
                cells = [grid[j] for j in draw if grid[j][0] in base[x].templates
                         and grid[j][0] in base[y].templates]
                if not cells:  # the third draw has none of zh's cells
                    assert np.isnan(got[i, k])
                    continue
                if averaged:
                    p, q = (np.mean([base[z].distribution(a, t) for t, a in cells], axis=0)
                            for z in (x, y))
                    from scipy.spatial.distance import jensenshannon
                    want = jensenshannon(p, q) ** 2
                else:
                    want = np.mean([brute_jsd(results[x], results[y], t, a) for t, a in cells])
                assert got[i, k] == pytest.approx(want, rel=1e-9)


def test_jsd_readings_without_an_interval_where_a_resample_can_leave_a_pair_without_cells():
    results = {"en": lang_result("en", 1, (1, 2)), "de": lang_result("de", 2, (1, 2)),
               "tr": lang_result("tr", 3, (2,))}  # 3 of 6 cells: some resample misses them all
    row = uncertainty_jsd.jsd_readings({("multilingual", "m"): results},
                                       n_resamples=999).iloc[0]
    assert np.isfinite(row["mean"]) and np.isnan(row["mean ci_low"]) and row["mean ci_units"] == 6


# --- notebook 04: is the usable flag stable under the perplexity ratio's interval? ---

def test_usable_stability_by_hand_against_change_tests_ratio_interval():
    # the same loss per token in every sentence: the ratio's interval is one point, e^0.5 < 2
    rows = [outcome("base", 1), outcome("ft", 2, per_token=-2.5),
            outcome("rand", 3, per_token=-2.0 - np.log(2.0) - 1e-9)]  # a ratio just over 2
    got = uncertainty_mitigation.change_tests(rows, "base", comparable=False, n_resamples=999)
    assert got["perplexity_ratio ci_units"].tolist() == [4, 4]  # sentences
    assert got["perplexity_ratio ci_unit"].tolist() == [uncertainty.SENTENCES] * 2
    assert uncertainty_mitigation.usable_stability(got).tolist() == ["stable", "stable"]
    assert got["usable"].tolist() == [True, False]
    # by hand: a ratio of 1.9 whose interval reaches 2.1 would flip; one of 2.5 [2.1, 3] not
    frame = pd.DataFrame({"perplexity_ratio": [1.9, 2.5], "perplexity_ratio ci_low": [1.5, 2.1],
                          "perplexity_ratio ci_high": [2.1, 3.0]})
    assert uncertainty_mitigation.usable_stability(frame).tolist() == [
        "would flip inside the interval", "stable"]
    assert uncertainty_mitigation.usable_stability(frame, 3.0).tolist() == ["stable", "stable"]
