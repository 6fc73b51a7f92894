import json
import math

import pandas as pd
import pytest

from biasbook import models, paths, results, testing


def test_round_trip_with_provenance(tmp_path):
    tok = testing.tiny_tokenizer()
    lm = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    rec = results.Recorder("demo", "nb", params={"profile": "smoke", "k": 3}, run_dir=tmp_path)
    scored = type("Scores", (), {"name": "tiny-bert", "kind": "masked", "fingerprint": "f00"})()
    rec.model(lm, scored)  # a model, and a chapter's scores that name theirs
    rec.data("ptb")
    rec.metric("mu", 0.5, paper=0.83, corpus="ptb")
    rec.metric("mu", 0.75, paper=0.83, corpus="ptb")  # re-recorded: replaces, not duplicates
    rec.table("words", pd.DataFrame({"w": ["a"], "bias": [0.1]}))
    record = json.loads((tmp_path / "demo" / "nb.json").read_text())
    prov = record["provenance"]
    assert prov["models"]["tiny-gpt2"]["fingerprint"] == lm.fingerprint
    assert prov["models"]["tiny-bert"] == {"kind": "masked", "fingerprint": "f00"}
    assert prov["data"]["ptb"]["ptb.train.txt"].startswith("fcea919f")
    assert prov["git_commit"] and prov["biasbook"] and prov["wall_time_s"] >= 0
    assert record["params"] == {"profile": "smoke", "k": 3}
    table = results.load(tmp_path)
    assert table[["key", "value", "paper", "corpus", "profile"]].values.tolist() == [
        ["mu", 0.75, 0.83, "ptb", "smoke"]]
    assert (tmp_path / "demo" / "nb.words.csv").exists()


def test_non_finite_values_are_refused(tmp_path):
    rec = results.Recorder("demo", "nb", params={}, run_dir=tmp_path)
    with pytest.raises(ValueError, match="non-finite"):
        rec.metric("x", math.nan)


def test_compare_puts_runs_side_by_side(tmp_path):
    for run, value in [("r1", 1.0), ("r2", 2.0)]:
        rec = results.Recorder("demo", "nb", params={"profile": "smoke"}, run_dir=tmp_path / run)
        rec.metric("score", value, paper=3.0, model="m")
    table = results.compare([tmp_path / "r1", tmp_path / "r2"])
    row = table.iloc[0]
    assert (row["r1 [smoke]"], row["r2 [smoke]"], row["paper"], row["key"]) == \
        (1.0, 2.0, 3.0, "score")


def test_a_missing_paper_value_is_recorded_as_absent_with_its_reason(tmp_path):
    rec = results.Recorder("demo", "nb", params={}, run_dir=tmp_path)
    rec.metric("cb", 0.4, paper=math.nan, note="the paper has no Greek row", language="el")
    rec.metric("cb", 0.5, paper=None, language="ar")
    table = results.load(tmp_path).set_index("language")
    assert table["paper"].isna().all()  # absent, not a number
    assert table.loc["el", "note"] == "the paper has no Greek row"


def test_a_table_is_recorded_row_by_row_and_uncomputable_rows_are_listed(tmp_path):
    rec = results.Recorder("demo", "nb", params={}, run_dir=tmp_path)
    frame = pd.DataFrame({"corpus": ["ptb", "wiki", "ptb"], "λ": [0.0, 0.0, 1.0],
                          "mu": [0.5, math.nan, 0.25], "paper mu": [0.6, 0.7, math.nan]})
    n = rec.metrics("mu", frame, value="mu", paper="paper mu", labels={"corpus": "corpus",
                                                                      "lam": "λ"})
    assert n == 2
    recorded = [(m["corpus"], m["lam"], m["value"], m["paper"]) for m in rec.record["metrics"]]
    assert recorded == [("ptb", 0.0, 0.5, 0.6), ("ptb", 1.0, 0.25, None)]
    assert rec.record["skipped"] == [{"key": "mu", "corpus": "wiki", "lam": 0.0,
                                      "reason": "value not computable (NaN)"}]


def test_an_interval_is_part_of_the_row_not_of_its_identity(tmp_path):
    rec = results.Recorder("demo", "nb", params={}, run_dir=tmp_path)
    ci = {"ci_low": 0.1, "ci_high": 0.3, "ci_level": 0.95, "ci_unit": "cells",
          "ci_units": 40, "ci_method": "percentile"}
    rec.metric("cb", 0.2, ci=ci, model="m")
    rec.metric("cb", 0.25, ci={**ci, "ci_high": 0.4}, model="m")  # the same number, re-recorded
    assert rec.record["metrics"] == [{"key": "cb", "value": 0.25, "paper": None, **ci,
                                      "ci_high": 0.4, "model": "m"}]
    with pytest.raises(ValueError, match="'cb' lacks ci_level, ci_unit, ci_units, ci_method"):
        rec.metric("cb", 0.2, ci={"ci_low": 0.1, "ci_high": 0.3}, model="m")
    table = results.compare([tmp_path])
    assert list(table.columns) == ["chapter", "notebook", "key", "model",
                                   f"{tmp_path.name} [None]", "paper"]


def test_a_run_folder_says_whether_it_finished(tmp_path):
    assert results.run_status(tmp_path) == "book"  # the book's own build writes no status
    results.mark_run(tmp_path, "failed", notebook="04.ipynb")
    assert results.run_status(tmp_path) == "failed"
    (tmp_path / "run.json").write_text("{")
    with pytest.raises(results.RecordError, match="run.json is malformed"):
        results.run_status(tmp_path)


def test_a_table_of_several_statistics_records_each_with_its_own_interval(tmp_path):
    rec = results.Recorder("demo", "nb", params={}, run_dir=tmp_path)
    frame = pd.DataFrame({"corpus": ["ptb", "wiki"], "μ": [0.5, 0.7], "μ ci_low": [0.4, math.nan],
                          "μ ci_high": [0.6, math.nan], "μ ci_level": 0.95, "μ ci_unit": "words",
                          "μ ci_units": [40, 1], "μ ci_method": "percentile"})
    assert rec.metrics("mu", frame, value="μ", labels=["corpus"], ci="μ ") == 2
    ptb, wiki = rec.record["metrics"]
    assert (ptb["ci_low"], ptb["ci_high"], ptb["ci_units"]) == (0.4, 0.6, 40)
    assert "ci_low" not in wiki  # one word: no interval, the value alone


def test_default_run_dir_is_in_the_checkout_or_else_the_current_directory(tmp_path, monkeypatch):
    """An installed wheel's PROJECT_ROOT is a folder of the Python environment (lib/python3.11):
    a notebook run there records into ./runs/default, not into the environment."""
    monkeypatch.delenv("BIASBOOK_RUN_DIR", raising=False)
    assert results.default_run_dir() == results.PROJECT_ROOT / "runs" / "default"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    assert results.default_run_dir() == tmp_path / "runs" / "default"
    monkeypatch.setenv("BIASBOOK_RUN_DIR", str(tmp_path / "mine"))
    assert results.default_run_dir() == tmp_path / "mine"
