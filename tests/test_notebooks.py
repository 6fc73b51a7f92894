"""Notebook hygiene (fast) and the smoke run of every chapter (slow)."""

import json
from pathlib import Path

import pytest

from biasbook import cli, profiles, results
from biasbook.paths import PROJECT_ROOT

ALL_NOTEBOOKS = sorted(p for d in ("notebooks", "book")
                       for p in (PROJECT_ROOT / d).rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
CHAPTER_NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").rglob("*.ipynb"))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_committed_notebooks_have_no_outputs(path):
    nb = json.loads(path.read_text())
    dirty = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"cells {dirty} have outputs: clear them before committing"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_cell_ids_are_unique(path):
    """A repeated id is renamed by nbformat on every read, with a warning (and a moved anchor)."""
    ids = [c["id"] for c in json.loads(path.read_text())["cells"] if "id" in c]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"repeated cell ids: {repeated}"


@pytest.mark.parametrize("path", CHAPTER_NOTEBOOKS,
                         ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_chapter_notebooks_are_parameterised_and_listed(path):
    nb = json.loads(path.read_text())
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert "parameters" in first_code.get("metadata", {}).get("tags", [])
    assert "profile = " in "".join(first_code["source"])
    chapter = path.parent.name
    assert path.name in profiles.chapter_spec(chapter)["notebooks"], \
        f"{path.name} is not listed in data/profiles/{chapter}.yml, so no profile runs it"
    header = f'P = profiles.from_notebook("{chapter}", "{path.stem}", globals())'
    assert any(header in "".join(c["source"]) for c in nb["cells"]), \
        "the header reads its parameters cell through profiles.from_notebook"


@pytest.mark.parametrize("path", CHAPTER_NOTEBOOKS,
                         ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_declared_parameter_is_one_the_profiles_give_the_notebook(path):
    """from_notebook reads only the names a profile gives the notebook: a declared name that no
    profile knows would be read by nobody."""
    for profile in profiles.PROFILES:
        known = profiles.notebook_params(path.parent.name, profile, path.name)
        unknown = sorted(set(profiles.declared_params(path)) - set(known))
        assert not unknown, f"profile {profile!r} gives {path.name} no {unknown}"


@pytest.mark.parametrize("path", CHAPTER_NOTEBOOKS,
                         ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_papermill_sees_every_declared_parameter(path):
    """papermill skips a line it cannot parse (``a = b = None``), so ``-p a=...`` would not
    reach the notebook: it must read the same names as the profiles do."""
    import papermill

    assert list(papermill.inspect_notebook(path)) == ["profile", *profiles.declared_params(path)]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", profiles.chapters())
def test_every_chapter_runs_in_the_smoke_profile(chapter, tmp_path):
    run_dir = cli.run_chapter(chapter, "smoke", runs_dir=tmp_path)
    for name in profiles.chapter_spec(chapter)["notebooks"]:
        assert (run_dir / name).exists()
    assert not results.load(run_dir).empty, "a chapter records its headline numbers"


def test_every_chapter_folder_has_a_profile():
    folders = {p.parent.name for p in CHAPTER_NOTEBOOKS}
    assert folders <= set(profiles.chapters())
    for chapter in profiles.chapters():
        for name in profiles.chapter_spec(chapter)["notebooks"]:
            assert (Path(cli.NOTEBOOKS_DIR) / chapter / name).exists()


def test_threads_are_a_profile_setting_applied_by_resolve():
    """No notebook sets torch's threads itself; ``resolve`` applies ``torch_threads`` (here the
    region-aware profile's 1, then a user's override)."""
    import torch

    setters = [p.name for p in CHAPTER_NOTEBOOKS if "set_num_threads" in p.read_text()]
    assert not setters, f"{setters} set torch threads: give the profile a torch_threads key"
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        profiles.resolve("region-aware", "smoke", "04-topic-pairs", torch_threads=None)
        assert torch.get_num_threads() == 1
        profiles.resolve("region-aware", "smoke", "04-topic-pairs", torch_threads=2)
        assert torch.get_num_threads() == 2
        with pytest.raises(profiles.ProfileError, match="positive integer"):
            profiles.resolve("region-aware", "smoke", "04-topic-pairs", torch_threads=-1)
    finally:
        torch.set_num_threads(before)
