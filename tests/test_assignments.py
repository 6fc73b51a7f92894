"""The autograded exercises: one otter-grader master notebook per chapter in book/class/.

The fast tests check that every master is a well-formed Otter master (assignment config, every
question with exception-based tests that take what they check as arguments), committed without
outputs, and outside the book (the book must not execute them). The slow test does what a teacher
does: ``otter assign`` on each master, then Otter's local grading (``otter run``: no Docker, the
current environment) of the solution notebook, which must get full marks, and of the student
notebook (solutions stripped), which must get none, with the masters' own ``smoke`` profile.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from biasbook import profiles
from biasbook.paths import PROJECT_ROOT

CLASS = PROJECT_ROOT / "book" / "class"
CHAPTERS = ("herb", "region-aware", "ethnic-bias", "lm-gender-bias", "indirect-stereotypes")
OTTER = Path(sys.executable).parent / "otter"


def master(chapter: str) -> nbformat.NotebookNode:
    return nbformat.read(CLASS / f"{chapter}.ipynb", as_version=4)


def raw_blocks(nb) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == "raw"]


def test_one_master_per_chapter():
    assert sorted(p.stem for p in CLASS.glob("*.ipynb")) == sorted(CHAPTERS)
    assert set(CHAPTERS) <= set(profiles.chapters())


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_master_is_an_otter_master(chapter):
    nb = master(chapter)
    first = nb.cells[0]
    assert first.cell_type == "raw" and first.source.startswith("# ASSIGNMENT CONFIG")
    config = yaml.safe_load(first.source)
    assert config["name"] == chapter
    assert config["tests"] == {"files": False, "ok_format": False}  # exception-based tests
    assert config["export_cell"] is False and config["generate"]["pdf"] is False
    blocks = raw_blocks(nb)
    questions = [b for b in blocks if b.startswith("# BEGIN QUESTION")]
    assert 2 <= len(questions) <= 4, "two to four graded questions per chapter"
    names = [yaml.safe_load(b.split("\n", 1)[1])["name"] for b in questions]
    assert len(set(names)) == len(names)
    for marker in ("QUESTION", "SOLUTION", "TESTS"):
        assert blocks.count(f"# END {marker}") == sum(b.startswith(f"# BEGIN {marker}")
                                                      for b in blocks), marker


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_question_has_tests_that_read_the_answer(chapter):
    """Each question's tests are single ``test_*`` functions (what an exception-based Otter test
    cell may hold) whose arguments name the variables they check."""
    nb = master(chapter)
    question, block, tested = None, None, {}
    for cell in nb.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw" and text.startswith("# BEGIN QUESTION"):
            question = yaml.safe_load(text.split("\n", 1)[1])["name"]
            tested[question] = 0
        elif cell.cell_type == "raw" and text.startswith("# BEGIN TESTS"):
            block = "tests"
        elif cell.cell_type == "raw" and text.startswith("# END TESTS"):
            block = None
        elif block == "tests":
            tree = ast.parse(cell.source)
            assert len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef), cell.source
            assert tree.body[0].name.startswith("test_") and tree.body[0].args.args
            tested[question] += 1
    assert tested and all(tested.values()), tested


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_masters_that_read_a_profile_read_smoke(chapter):
    nb = master(chapter)
    parameters = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    for cell in parameters:
        assert cell.source.startswith('profile = "smoke"'), cell.source
    uses_profile = any("profiles.resolve(" in c.source for c in nb.cells)
    assert uses_profile == bool(parameters)


def test_the_book_does_not_build_the_masters():
    """Jupyter Book builds only the files of _toc.yml (only_build_toc_files), and the masters
    are not in it: their solutions would be executed and published in the book."""
    config = yaml.safe_load((PROJECT_ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert "book/class" not in (PROJECT_ROOT / "_toc.yml").read_text()


def test_make_assignments_runs_otter_assign_on_every_master():
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    target = makefile.split("\nassignments:", 1)[1].split("\n\n", 1)[0]
    assert "otter assign book/class/$$name.ipynb" in target
    assert "_build/assignments/$$name" in target
    assert "$(wildcard book/class/*.ipynb)" in makefile


def _otter(*args: str | Path) -> subprocess.Popen:
    """Start ``otter`` with this environment's executables first on PATH."""
    env = {**os.environ, "PATH": f"{OTTER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.Popen([str(OTTER), *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _wait(process: subprocess.Popen, timeout: int = 600) -> None:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-4000:]


def _score(results: Path) -> tuple[float, float, list[str]]:
    tests = [t for t in json.loads(results.read_text())["tests"] if "max_score" in t]
    failed = [t["output"] for t in tests if t["score"] < t["max_score"]]
    return (sum(t["score"] for t in tests), sum(t["max_score"] for t in tests), failed)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_otter_grades_the_solution_full_and_the_student_notebook_zero(chapter, tmp_path):
    out = tmp_path / "dist"
    _wait(_otter("assign", "--no-run-tests", CLASS / f"{chapter}.ipynb", out))
    (bundle,) = (out / "autograder").glob(f"{chapter}-autograder_*.zip")
    assert (out / "student" / f"{chapter}.ipynb").exists()
    # one grading after the other: two kernels started at the same moment can race for the same
    # ports (a first CI run failed here once, and passed when run again)
    start = time.perf_counter()
    for who, notebook in (("solution", out / "autograder" / f"{chapter}.ipynb"),
                          ("student", out / "student" / f"{chapter}.ipynb")):
        (tmp_path / who).mkdir()
        _wait(_otter("run", "--no-logo", "-a", bundle, "-o", tmp_path / who, notebook))
    seconds = time.perf_counter() - start
    got, possible, failed = _score(tmp_path / "solution" / "results.json")
    assert possible > 0 and got == possible, "\n".join(failed)
    got, possible, _ = _score(tmp_path / "student" / "results.json")
    assert got == 0, f"the blank student notebook scored {got} of {possible}"
    print(f"{chapter}: otter run of the solution, then the student notebook: {seconds:.0f} s")
