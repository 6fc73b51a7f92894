import json
import math

import pandas as pd
import pytest

from biasbook import models, results, testing


def test_round_trip_with_provenance(tmp_path):
    tok = testing.tiny_tokenizer()
    lm = models.from_model(testing.tiny_model("gpt2", len(tok)), tok, name="tiny-gpt2")
    rec = results.Recorder("demo", "nb", params={"profile": "smoke", "k": 3}, run_dir=tmp_path)
    rec.model(lm)
    rec.data("ptb")
    rec.metric("mu", 0.5, paper=0.83, corpus="ptb")
    rec.metric("mu", 0.75, paper=0.83, corpus="ptb")  # re-recorded: replaces, not duplicates
    rec.table("words", pd.DataFrame({"w": ["a"], "bias": [0.1]}))
    record = json.loads((tmp_path / "demo" / "nb.json").read_text())
    prov = record["provenance"]
    assert prov["models"]["tiny-gpt2"]["fingerprint"] == lm.fingerprint
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
    assert (row["r1"], row["r2"], row["paper"], row["key"]) == (1.0, 2.0, 3.0, "score")
