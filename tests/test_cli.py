import pytest

from biasbook import cli, profiles


def test_list_shows_chapters_models_and_datasets(capsys):
    cli.main(["list"])
    out = capsys.readouterr().out
    for expected in ("demo", "smoke, book, paper", "smollm2-135m", "gemma-3-270m", "ptb", "imdb"):
        assert expected in out


def test_bad_parameters_fail_before_anything_runs(tmp_path):
    with pytest.raises(profiles.ProfileError, match="no parameter"):
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
