"""The ethnic-bias notebooks record their tests as the trust page and the atlas read them: every
``<test>_p_holm`` with the labels of the pair's first side and ``versus=`` the other
(:mod:`biasbook.chapters.trust.records`), read back with the labels the notebooks use."""

import ast
import contextlib
import json

import pytest
from test_ethnic_bias_uncertainty import lang_result, outcome

from biasbook import paths, results
from biasbook.chapters.ethnic_bias import uncertainty_jsd, uncertainty_mitigation
from biasbook.chapters.trust import records as R

NOTEBOOKS = sorted((paths.PROJECT_ROOT / "notebooks" / "ethnic-bias").glob("0*.ipynb"))


def recorded_tests(path) -> list[tuple[str, str, object, object]]:
    """(key, value column, labels, ci) of every ``rec.metrics`` call of a notebook with a literal
    key, its labels evaluated (a literal or a name assigned a literal in the same cell)."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        names = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                with contextlib.suppress(ValueError):
                    names[node.targets[0].id] = ast.literal_eval(node.value)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "metrics"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            labels = kw.get("labels")
            labels = names.get(labels.id) if isinstance(labels, ast.Name) else \
                ast.literal_eval(labels) if labels is not None else ()
            ci = ast.literal_eval(kw["ci"]) if "ci" in kw else False
            found.append((node.args[0].value, ast.literal_eval(kw["value"]), labels, ci))
    return found


def p_holm_labels(path) -> dict[str, object]:
    return {key: labels for key, _, labels, _ in recorded_tests(path) if key.endswith("_p_holm")}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_recorded_test_names_the_other_side_with_versus(path):
    recorded = {key: labels for key, _, labels, _ in recorded_tests(path)}
    for key, labels in p_holm_labels(path).items():
        assert "versus" in labels, f"{path.name}: {key} lacks a versus label"
        difference = key.removesuffix("_p_holm")
        if difference in recorded:  # the difference itself, under the same labels
            assert recorded[difference] == labels, f"{path.name}: {difference}"


def test_the_notebooks_tests_are_the_ones_expected():
    by_notebook = {p.name: set(p_holm_labels(p)) for p in NOTEBOOKS}
    assert by_notebook["02-cb-across-languages.ipynb"] == {"cb_difference_p_holm",
                                                          "cb_rewording_change_p_holm"}
    assert by_notebook["03-distributions.ipynb"] == {"jsd_difference_p_holm"}
    assert by_notebook["04-mitigation.ipynb"] == {"mitigation_cb_change_p_holm",
                                                 "jsd_to_english_change_p_holm"}


def test_the_trust_page_reads_notebook_03s_and_04s_tests_as_pairs(tmp_path):
    nb03, nb04 = (next(p for p in NOTEBOOKS if p.name.startswith(n)) for n in ("03", "04"))
    results_03 = {c: lang_result(c, s) for c, s in (("en", 1), ("de", 2), ("ko", 3))}
    (jsd_tests,) = uncertainty_jsd_family(results_03)
    rows = [outcome("base", 1), outcome("ft", 2, per_token=-2.5), outcome("align", 3),
            outcome("base", 4, role="multilingual"),
            outcome("base", 5, direction="en->x", language="en"),
            outcome("ft", 6, direction="en->x", language="en"),
            outcome("align", 7, direction="en->x", language="en", aligned_to="ko")]
    compared, table9_tests = uncertainty_mitigation.notebook_tests(rows, comparable=False,
                                                                   n_resamples=99)
    compared["usable within interval"] = uncertainty_mitigation.usable_stability(compared)
    frames = {"jsd_difference": jsd_tests, "mitigation_cb_change": compared,
              "jsd_to_english_change": table9_tests}
    for path, notebook in ((nb03, "03-distributions"), (nb04, "04-mitigation")):
        rec = results.Recorder("ethnic-bias", notebook, {"profile": "smoke"},
                               run_dir=tmp_path / "default")
        for key, value, labels, ci in recorded_tests(path):  # as the notebook records them
            test = key.removesuffix("_p_holm")
            if test in frames:
                rec.metrics(key, frames[test], value=value, labels=labels, ci=ci)
    tidy = R.book_records("default", "smoke", runs_dir=tmp_path)
    read = R.differences(tidy)
    assert set(read["test"]) == set(frames)
    assert len(read) == sum(len(f) for f in frames.values())
    assert read["pair"].str.contains(" vs ").all()  # every test names its two sides
    assert read["difference"].notna().all()  # and finds its difference under the same labels
    mitigation = read[read["test"] == "mitigation_cb_change"]
    assert sorted(mitigation["pair"].unique()) == ["align vs base", "align vs ft",
                                                   "base vs monolingual base", "ft vs base"]
    assert set(read.loc[read["test"] == "jsd_to_english_change", "pair"]) == {"align vs ft"}
    assert sorted(mitigation["p_holm"]) == pytest.approx(sorted(compared["p_holm"]))
    assert sorted(mitigation["difference"]) == pytest.approx(sorted(compared["cb_change"]))
    jsd = read[read["test"] == "jsd_difference"].iloc[0]  # en-de against en-ko, of model m
    assert jsd["pair"].endswith(" vs en-ko") and "en-de" in jsd["pair"] + jsd["setting"]
    assert jsd["p_holm"] == pytest.approx(jsd_tests["p_holm"].iloc[0])


def uncertainty_jsd_family(results_03):
    from biasbook.chapters.ethnic_bias import uncertainty

    return uncertainty.family([uncertainty_jsd.jsd_differences(
        {("multilingual", "m"): results_03}, n_resamples=99)])
