"""The pins: requirements.txt, environment.yml and constraints.txt must agree."""

import re

import yaml

from biasbook.paths import PROJECT_ROOT


def _lines(name):
    text = (PROJECT_ROOT / name).read_text().splitlines()
    return [line.strip() for line in text if line.strip() and not line.startswith("#")]


def test_every_requirement_is_pinned_exactly():
    for name in ("requirements.txt", "requirements-models.txt", "constraints.txt"):
        for line in _lines(name):
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.\-]+", line), (name, line)


def test_environment_yml_mirrors_requirements():
    env = yaml.safe_load((PROJECT_ROOT / "environment.yml").read_text())
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python == ["python=3.11"]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert sorted(pip) == sorted(_lines("requirements.txt"))


def test_requirements_agree_with_the_lock():
    lock = dict(line.lower().split("==") for line in _lines("constraints.txt"))
    for line in _lines("requirements.txt"):
        name, version = line.lower().split("==")
        assert lock.get(name.replace("_", "-"), lock.get(name)) == version, line


def test_torch_is_pinned_everywhere():
    for name in ("requirements.txt", "constraints.txt"):
        assert "torch==2.13.0" in _lines(name)
    assert "torch==2.13.0" in (PROJECT_ROOT / "Makefile").read_text()
    pyproject = (PROJECT_ROOT / "pyproject.toml").read_text()
    assert "torch" not in pyproject  # dependencies come from requirements.txt only
