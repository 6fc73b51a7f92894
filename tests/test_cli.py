import pytest

from biasbook import cli, profiles, results


def test_list_shows_chapters_models_and_datasets(capsys):
    cli.main(["list"])
    out = capsys.readouterr().out
    for expected in ("demo", "smoke, book, paper", "smollm2-135m", "gemma-3-270m", "ptb", "imdb"):
        assert expected in out


def test_bad_parameters_fail_before_anything_runs(tmp_path):
    with pytest.raises(profiles.ProfileError, match="reads a parameter"):
        cli.run_chapter("demo", "smoke", {"modelz": ["x"]}, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())
    with pytest.raises(cli.CLIError, match="key=value"):
        cli.parse_params(["models"])
    with pytest.raises(profiles.ProfileError, match="unknown chapter"):
        cli.run_chapter("no-such-chapter", "smoke", runs_dir=tmp_path)


@pytest.mark.slow
def test_run_twice_with_a_changed_parameter_then_compare(tmp_path, capsys):
    first = cli.run_chapter("demo", "smoke", runs_dir=tmp_path)
    second = cli.run_chapter("demo", "smoke",
                             {"sentences": ["The dog is kind.", "Kind is dog the."]},
                             runs_dir=tmp_path)
    capsys.readouterr()
    cli.main(["compare", str(first), str(second)])
    out = capsys.readouterr().out
    assert first.name in out and second.name in out and "grammatical_wins" in out


def test_parameters_reach_the_notebooks_that_declare_them():
    routed = profiles.split_user_params("demo", {"models": ["gpt2"], "01.sentences": ["A b."]})
    assert routed == {"01-offline-models": {"models": ["gpt2"], "sentences": ["A b."]}}
    with pytest.raises(profiles.ProfileError, match="valid: models, sentences"):
        profiles.split_user_params("demo", {"modelz": ["x"]})
    with pytest.raises(profiles.ProfileError, match="no notebook '07'"):
        profiles.split_user_params("demo", {"07.models": ["x"]})


def test_profiles_inherit(tmp_path, monkeypatch):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "toy.yml").write_text(
        "title: toy\nnotebooks: [01-a.ipynb, 02-b.ipynb]\n"
        "smoke: {models: [m], 01-a: {n: 1, k: 2}}\n"
        "book: {extends: smoke, 01-a: {n: 10}}\n"
        "paper: {extends: book, models: [big], 02-b: {models: [other]}}\n")
    monkeypatch.setenv("BIASBOOK_PROJECT_DATA", str(tmp_path))
    profiles.chapter_spec.cache_clear()
    try:
        assert profiles.notebook_params("toy", "book", "01-a") == {"models": ["m"], "n": 10, "k": 2}
        assert profiles.notebook_params("toy", "paper", "02-b") == {"models": ["other"]}
        assert profiles.notebook_params("toy", "paper", "01-a")["models"] == ["big"]
    finally:
        profiles.chapter_spec.cache_clear()


@pytest.mark.bad_input(
    'A malformed `-p` value, a value of the wrong type, an empty list, an unknown '
    'parameter or chapter, a missing run folder',
    'one line on stderr saying what to do, exit status 2 (`--debug` shows the '
    'traceback)')
@pytest.mark.parametrize("argv,message", [
    (["run", "demo", "-p", "models=["], "parameter 'models': '[' is not valid YAML"),
    (["run", "demo", "-p", "models=[]"], "'models' of demo/01-offline-models is an empty list"),
    (["run", "demo", "-p", "sentences=5"], "'sentences' of demo/01-offline-models takes list"),
    (["run", "demo", "-p", "modelz=x"], "no notebook of chapter 'demo' reads a parameter"),
    (["run", "no-such-chapter"], "unknown chapter 'no-such-chapter'"),
    (["compare", "/no/such/run"], "run folder /no/such/run does not exist"),
])
def test_errors_are_one_line_with_exit_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.bad_input(
    '`-p models=gemma-3-270m` where the profile has a list',
    'taken as the one-element list `[gemma-3-270m]`')
def test_a_scalar_is_a_one_element_list_where_the_profile_has_a_list():
    assert cli.check_types("demo", "01-offline-models", {"models": "gemma-3-270m"}) == {
        "models": ["gemma-3-270m"]}


@pytest.mark.bad_input(
    'A damaged result record under `runs/`',
    '`biasbook compare` names the file and says to delete it or re-run')
def test_a_malformed_record_is_named(tmp_path, capsys):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "01.json").write_text("{not json")
    with pytest.raises(SystemExit):
        cli.main(["compare", str(tmp_path)])
    assert "01.json is malformed" in capsys.readouterr().err


def test_runs_started_in_the_same_second_get_their_own_folders(tmp_path, monkeypatch):
    class Frozen(cli.dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(2026, 1, 2, 3, 4, 5)

    monkeypatch.setattr(cli.dt, "datetime", Frozen)
    made = [cli.new_run_dir(tmp_path, "demo").name for _ in range(3)]
    assert made == ["20260102-030405-demo", "20260102-030405-demo-2", "20260102-030405-demo-3"]


@pytest.mark.bad_input("Ctrl-C during `biasbook run`",
                       "one line saying the run folder is marked failed and how to resume; "
                       "exit status 130")
def test_an_interrupted_run_is_marked_failed_in_one_line(tmp_path, monkeypatch, capsys):
    import papermill

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", interrupted)
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path)
    monkeypatch.setenv("BIASBOOK_RUN_DIR", "")
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "demo", "--profile", "smoke"])
    assert stop.value.code == 130
    (run,) = tmp_path.iterdir()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"biasbook: interrupted; {run} is marked failed. Results computed so far are "
                   "cached: the same command resumes from them"]
    assert results.run_status(run) == "failed"


@pytest.mark.bad_input(
    'A misspelt setting inside a mapping (`persona_settings={modelz: ...}`), a count below 1 '
    '(`runs: 0`), an unknown language key (`monolingual={xx: ...}`), a hub model id while '
    'the hub is off',
    'refused before any notebook runs, every problem on its own line (exit status 2)')
def test_every_parameter_problem_is_found_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path)
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "region-aware", "--profile", "smoke",
                  "-p", "persona_settings={modelz: [x], runs: 0, models: [no-such/model]}"])
    err = capsys.readouterr().err.strip().splitlines()
    where = "parameter 'persona_settings' of region-aware/06-personas"
    assert stop.value.code == 2 and len(err) == 3, err
    assert err[0] == (f"biasbook: error: {where} has no key 'modelz' "
                      "(known: max_new_tokens, models, runs)")
    assert err[1] == f"biasbook: error: {where}.runs must be 1 or more (every profile has a " \
        "count), got 0"
    assert err[2].startswith(f"biasbook: error: {where}.models: model 'no-such/model' is not "
                             "in the registry nor a local folder, and the Hugging Face hub is "
                             "switched off here")
    with pytest.raises(cli.CLIError, match=r"monolingual' of ethnic-bias/02-cb-across-languages "
                       r"has no key 'xx' \(known: .*en"):
        cli.check_types("ethnic-bias", "02-cb-across-languages",
                        {"monolingual": {"xx": "smollm2-135m"}})
    assert not any(tmp_path.iterdir())  # no run folder was made


@pytest.mark.bad_input("`-p sentences=hello` for the demo (no scrambled partner)",
                       "a ValueError saying sentences come in pairs and how to pass them")
def test_the_demo_refuses_an_unpaired_sentence():
    from biasbook.chapters import demo

    with pytest.raises(ValueError, match=r"pairs: got 1 sentence\(s\) \(\['hello'\]\); give an "
                       "even number"):
        demo.sentence_table({}, ["hello"])


def test_plan_prints_the_work_and_the_models_to_download(capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cli.main(["plan", "demo", "--profile", "book", "-p", "models=[bert-base-cased]",
              "--gpu-tflops", "50"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["nb", "model", "what", "count"]
    assert "bert-base-cased" in out[1] and "6 sent." in out[1]  # the book's six sentences
    assert out[-1].startswith("plan demo/book: 6 sentences;")
    assert "at an assumed 50 TFLOP/s" in out[-1]
    assert "download 1 model(s), 436 MB" in out[-1]
    assert any(line.startswith("to download from the Hugging Face hub: bert-base-cased")
               for line in out)


@pytest.mark.parametrize("stand_in,message", [
    ("bert-base-cased", "--stand-in 'bert-base-cased' is not of the form HUB_ID=FOLDER"),
    ("bert-base-cased=/no/such/folder", "--stand-in bert-base-cased: /no/such/folder is not a "
                                        "folder"),
    ("bert-base-cased={tmp}", "no parameter of chapter 'demo' (profile book) names "
                              "bert-base-cased: check the stand-in's hub id"),
])
def test_a_bad_stand_in_is_named_in_one_line(stand_in, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path / "runs")
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "demo", "--stand-in", stand_in.format(tmp=tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_stand_ins_and_a_cap_reach_the_notebooks_after_the_plan_line(tmp_path, monkeypatch,
                                                                      capsys):
    import papermill

    from biasbook.testing import stand_in

    folder = stand_in("bert-base-cased", tmp_path / "tiny")
    seen = {}
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda *a, parameters, **k: seen.update(parameters))
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path / "runs")
    cli.main(["run", "demo", "--profile", "book", "--stand-in", f"gemma-3-270m={folder}",
              "--cap", "1"])
    out = capsys.readouterr().out.splitlines()
    # the first pair, scored by both models
    assert out[0].startswith("plan demo/book: 4 sentences;") and "no downloads" in out[0]
    assert seen == {"profile": "book", "models": ["smollm2-135m", str(folder)],
                    "sentences": ["The cat sat on the mat.", "Mat the on sat cat the."]}
