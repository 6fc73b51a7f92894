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
