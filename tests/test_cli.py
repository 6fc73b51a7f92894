import pytest

from biasbook import cli, profiles


def test_list_shows_chapters_models_and_datasets(capsys):
    cli.main(["list"])
    out = capsys.readouterr().out
    for expected in ("demo", "smoke, book, paper", "smollm2-135m", "gemma-3-270m", "ptb", "imdb"):
        assert expected in out


def test_bad_parameters_fail_before_anything_runs(tmp_path):
    with pytest.raises(profiles.ProfileError, match="reads a parameter"):
        cli.run_chapter("demo", "smoke", {"modelz": ["x"]}, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())
    with pytest.raises(SystemExit, match="key=value"):
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
