"""The atlas gathers every run's headline numbers and picks up a re-run with a new model."""

from biasbook import atlas, cli, results
from biasbook.results import Recorder


def record(runs, run, model, value, started, profile="book"):
    rec = Recorder("demo", "01-offline-models", {"profile": profile}, run_dir=runs / run)
    rec.record["provenance"]["started"] = started
    rec.metric("grammatical_wins", value, model=model)
    rec.metric("mean_gap_nats_per_token", 0.5, model=model)  # not a headline number
    return rec


def test_a_rerun_with_a_new_model_appears_beside_the_books(tmp_path, capsys):
    record(tmp_path, "default", "smollm2-135m", 0.5, "2026-01-01T00:00:00+00:00")
    record(tmp_path, "20260102-demo", "gpt2", 1.0, "2026-01-02T00:00:00+00:00")
    record(tmp_path, "20260103-demo", "smollm2-135m", 0.75, "2026-01-03T00:00:00+00:00")
    tidy = atlas.collect(tmp_path)
    assert len(tidy) == 6 and set(tidy["page"]) == {"notebooks/demo/01-offline-models.html"}
    wide = atlas.models_by_metrics(atlas.latest(atlas.headline(tidy)))
    assert list(wide.columns) == ["demo · grammatical_wins"]  # the profile's headline list
    assert wide["demo · grammatical_wins"].to_dict() == {"gpt2": 1.0, "smollm2-135m": 0.75}
    cli.main(["atlas", "--runs", str(tmp_path)])
    out = capsys.readouterr().out
    assert "gpt2" in out and "20260103-demo" in out and "mean_gap" not in out


def test_a_failed_smoke_run_never_replaces_the_books_number(tmp_path, capsys):
    # The observed case: a smoke run that failed later recorded another value for the same model.
    record(tmp_path, "default", "gemma-3-270m", 0.854, "2026-01-01T00:00:00+00:00")
    record(tmp_path, "20260102-demo", "gemma-3-270m", 0.282, "2026-01-02T00:00:00+00:00",
           profile="smoke")
    results.mark_run(tmp_path / "20260102-demo", "failed", notebook="04.ipynb")
    numbers = atlas.latest(atlas.headline(atlas.collect(tmp_path)))
    assert numbers[["profile", "value"]].values.tolist() == [["book", 0.854]]
    results.mark_run(tmp_path / "20260102-demo", "finished")
    numbers = atlas.latest(atlas.headline(atlas.collect(tmp_path)))
    assert sorted(numbers[["profile", "value"]].values.tolist()) == [["book", 0.854],
                                                                     ["smoke", 0.282]]
    wide = atlas.models_by_metrics(numbers)
    assert wide.loc["gemma-3-270m"].to_dict() == {"demo · grammatical_wins (book)": 0.854,
                                                  "demo · grammatical_wins (smoke)": 0.282}
    cli.main(["compare", str(tmp_path / "default"), str(tmp_path / "20260102-demo")])
    out = capsys.readouterr().out
    assert "default [book]" in out and "20260102-demo [smoke]" in out


def test_an_empty_runs_folder_says_what_to_do(tmp_path, capsys):
    assert atlas.collect(tmp_path).empty
    cli.main(["atlas", "--runs", str(tmp_path)])
    assert "build the book or run a chapter first" in capsys.readouterr().out


def test_class_runs_every_chapter_and_prints_what_students_should_see(tmp_path, monkeypatch,
                                                                     capsys):
    from biasbook import profiles

    ran = []

    def fake_run(chapter, profile, params=None, runs_dir=None):
        ran.append((chapter, profile))
        if chapter == "demo":
            record(runs_dir, "demo-run", "smollm2-135m", 0.5, "2026-01-01T00:00:00+00:00")

    monkeypatch.setattr(cli, "run_chapter", fake_run)
    cli.main(["class", "--runs", str(tmp_path)])
    assert ran == [(c, "smoke") for c in profiles.chapters()]
    assert "grammatical_wins smollm2-135m: 0.5" in capsys.readouterr().out


def test_an_interval_is_printed_beside_its_value(tmp_path, capsys):
    rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=tmp_path / "default")
    rec.metric("grammatical_wins", 0.75, model="smollm2-135m",
               ci={"ci_low": 0.5, "ci_high": 1.0, "ci_level": 0.9,
                   "ci_unit": "sentences", "ci_units": 8, "ci_method": "percentile"})
    cli.main(["atlas", "--runs", str(tmp_path)])
    assert "0.75 [0.5, 1] (90% over 8 sentences)" in capsys.readouterr().out


# --- marks on pairs: what a recorded test supports ---------------------------------------------

CI = {"ci_level": 0.95, "ci_unit": "cells", "ci_units": 40, "ci_method": "BCa"}


def with_ci(value, half=0.1):
    return {**CI, "ci_low": value - half, "ci_high": value + half}


def three_models(runs, tests, profile="book", run="default"):
    """Models a, b, c with values 0.4, 0.5, 0.45 (intervals +-0.1) and the given tests
    (``{(a, b): p_holm}``), recorded as a chapter does (``<metric>_difference[_p_holm]``)."""
    rec = Recorder("demo", "01-offline-models", {"profile": profile}, run_dir=runs / run)
    for model, value in [("a", 0.4), ("b", 0.5), ("c", 0.45)]:
        rec.metric("grammatical_wins", value, model=model, ci=with_ci(value))
    for (a, b), p in tests.items():
        rec.metric("grammatical_wins_difference", -0.1, model=a, versus=b, ci=with_ci(-0.1, 0.05))
        rec.metric("grammatical_wins_difference_p_holm", p, model=a, versus=b)
    return rec


def marks(runs):
    tidy = atlas.collect(runs)
    pairs = atlas.comparisons(atlas.latest(atlas.headline(tidy)), atlas.latest(tidy))
    return {(p.a, p.b): p.mark for p in pairs.itertuples()}


def test_a_pair_is_supported_only_where_its_recorded_test_holds(tmp_path):
    three_models(tmp_path, {("a", "b"): 0.2, ("a", "c"): 0.01})
    assert marks(tmp_path) == {
        ("a", "b"): "not supported (Holm p = 0.2 ≥ 0.05)",
        ("a", "c"): "supported (Holm p = 0.01 < 0.05)",
        ("b", "c"): "no test recorded (intervals overlap: a hint, not a test)"}
    tidy = atlas.collect(tmp_path)
    pairs = atlas.comparisons(atlas.latest(atlas.headline(tidy)), atlas.latest(tidy))
    assert pairs["supported"].tolist() == [False, True, None]
    assert pairs["difference"].tolist() == ["-0.1 [-0.15, -0.05]"] * 2 + [""]
    assert pairs.loc[0, ["value_a", "value_b"]].tolist() == ["0.4 [0.3, 0.5]", "0.5 [0.4, 0.6]"]


def test_the_tests_are_found_among_all_numbers_not_only_the_headline_ones(tmp_path):
    three_models(tmp_path, {("a", "c"): 0.01})
    numbers = atlas.latest(atlas.headline(atlas.collect(tmp_path)))
    alone = {(p.a, p.b): p.supported for p in atlas.comparisons(numbers).itertuples()}
    assert alone[("a", "c")] is None  # the test rows are not headline numbers
    assert marks(tmp_path)[("a", "c")].startswith("supported")


def test_a_small_p_with_an_interval_that_includes_zero_is_not_supported(tmp_path):
    rec = three_models(tmp_path, {("a", "c"): 0.01})
    rec.metric("grammatical_wins_difference", -0.05, model="a", versus="c",
               ci=with_ci(-0.05, 0.1))  # [-0.15, 0.05]
    assert marks(tmp_path)[("a", "c")] == ("not supported (Holm p = 0.01 < 0.05, but the "
                                           "difference's interval includes 0)")


def test_a_recorded_verdict_decides_over_the_threshold(tmp_path):
    rec = three_models(tmp_path, {("a", "b"): 0.04})
    rec.metric("grammatical_wins_difference_holds", 0, model="a", versus="b")
    assert marks(tmp_path)[("a", "b")] == "not supported (recorded verdict; Holm p = 0.04)"


def test_untested_pairs_get_no_significance_claim(tmp_path):
    rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=tmp_path / "default")
    rec.metric("grammatical_wins", 0.2, model="a", ci=with_ci(0.2, 0.05))
    rec.metric("grammatical_wins", 0.8, model="b", ci=with_ci(0.8, 0.05))
    rec.metric("grammatical_wins", 0.5, model="c")  # no interval: nothing to say about its pairs
    assert marks(tmp_path) == {
        ("a", "b"): "no test recorded (intervals do not overlap: a hint, not a test)"}


def test_a_test_covers_values_recorded_under_more_labels_in_the_same_run_only(tmp_path):
    # ethnic-bias' shape: CB per (group, language, model); its test per (language, model, versus)
    rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=tmp_path / "default")
    rec.metric("grammatical_wins", 0.6, model="mono", group="monolingual", language="en",
               ci=with_ci(0.6))
    rec.metric("grammatical_wins", 0.4, model="multi", group="multilingual", language="en",
               ci=with_ci(0.4))
    rec.metric("grammatical_wins", 0.3, model="multi", group="multilingual", language="ko",
               ci=with_ci(0.3))
    rec.metric("grammatical_wins_difference_p_holm", 0.003, model="mono", versus="multi",
               language="en")
    three_models(tmp_path, {("a", "b"): 0.001}, profile="smoke", run="20260102-demo")
    results.mark_run(tmp_path / "20260102-demo", "finished")
    tidy = atlas.collect(tmp_path)
    pairs = atlas.comparisons(atlas.latest(atlas.headline(tidy)), atlas.latest(tidy))
    book = pairs[pairs["profile"] == "book"]
    assert book[["setting", "a", "b", "mark"]].values.tolist() == [
        ["language=en", "mono", "multi", "supported (Holm p = 0.003 < 0.05)"]]
    smoke = pairs[pairs["profile"] == "smoke"].set_index(["a", "b"])["mark"]
    assert smoke[("a", "b")].startswith("supported") and smoke[("b", "c")].startswith("no test")


def test_a_test_of_one_setting_does_not_mark_another(tmp_path):
    rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=tmp_path / "default")
    for language in ("en", "ko"):
        rec.metric("grammatical_wins", 0.6, model="x", language=language, ci=with_ci(0.6))
        rec.metric("grammatical_wins", 0.4, model="y", language=language, ci=with_ci(0.4))
    rec.metric("grammatical_wins_difference_p_holm", 0.003, model="x", versus="y",
               language="en")
    tidy = atlas.collect(tmp_path)
    pairs = atlas.comparisons(atlas.latest(atlas.headline(tidy)), atlas.latest(tidy))
    assert pairs[["setting", "mark"]].values.tolist() == [
        ["language=en", "supported (Holm p = 0.003 < 0.05)"],
        ["language=ko", "no test recorded (intervals overlap: a hint, not a test)"]]


def test_method_pairs_and_a_declared_metric(tmp_path, monkeypatch):
    # indirect-stereotypes' shape: methods, not models, and a test named method_difference
    monkeypatch.setattr(atlas, "DIFFERENCE_OF",
                        {("demo", "method_difference"): "grammatical_wins"})
    rec = Recorder("demo", "01-offline-models", {"profile": "book"}, run_dir=tmp_path / "default")
    for method, value in [("Original", 1.3), ("BIRM", 0.8), ("CDS", 1.1)]:
        rec.metric("grammatical_wins", value, method=method, test="names", ci=with_ci(value))
    rec.metric("method_difference_p_holm", 0.3, method="BIRM", versus="Original", test="names")
    rec.metric("method_difference_p_holm", 0.02, method="CDS", versus="Original", test="ripa")
    pairs = {(p.metric, p.setting, p.a, p.b): p.mark for p in atlas.comparisons(
        atlas.latest(atlas.headline(atlas.collect(tmp_path))),
        atlas.latest(atlas.collect(tmp_path))).itertuples()}
    assert pairs == {
        ("grammatical_wins", "test=names", "BIRM", "Original"):
            "not supported (Holm p = 0.3 ≥ 0.05)",
        ("grammatical_wins", "test=names", "BIRM", "CDS"):  # [0.7, 0.9] and [1, 1.2]
            "no test recorded (intervals do not overlap: a hint, not a test)",
        ("grammatical_wins", "test=names", "CDS", "Original"):
            "no test recorded (intervals overlap: a hint, not a test)",
        # a test of a setting no shown value has: listed under its own name, without values
        ("method_difference", "test=ripa", "CDS", "Original"): "supported (Holm p = 0.02 < 0.05)"}


def test_the_cli_prints_intervals_and_marks(tmp_path, capsys):
    three_models(tmp_path, {("a", "b"): 0.2, ("a", "c"): 0.01})
    cli.main(["atlas", "--runs", str(tmp_path)])
    out = capsys.readouterr().out
    assert "0.4 [0.3, 0.5] (95% over 40 cells)" in out  # the interval beside the value
    assert "demo (book) · grammatical_wins\n" in out
    lines = out.splitlines()
    assert ("  a 0.4 [0.3, 0.5] vs b 0.5 [0.4, 0.6]: difference -0.1 [-0.15, -0.05]: "
            "not supported (Holm p = 0.2 ≥ 0.05)") in lines
    assert ("  a 0.4 [0.3, 0.5] vs c 0.45 [0.35, 0.55]: difference -0.1 [-0.15, -0.05]: "
            "supported (Holm p = 0.01 < 0.05)") in lines
    assert ("  b 0.5 [0.4, 0.6] vs c 0.45 [0.35, 0.55]: "
            "no test recorded (intervals overlap: a hint, not a test)") in lines
    assert "grammatical_wins_difference_p_holm" not in out  # not a headline number
    cli.main(["atlas", "--all", "--runs", str(tmp_path)])
    out = capsys.readouterr().out
    assert "grammatical_wins_difference_p_holm" in out and "supported (Holm p = 0.01" in out


def test_the_cli_says_when_no_pair_can_be_marked(tmp_path, capsys):
    record(tmp_path, "default", "smollm2-135m", 0.5, "2026-01-01T00:00:00+00:00")
    cli.main(["atlas", "--runs", str(tmp_path)])
    assert "(no pair of these values has a recorded test" in capsys.readouterr().out
