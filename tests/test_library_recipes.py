"""The recipes of book/library.md ("Use biasbook without the book") run as they are written.

Every ``python`` code block of the page is a recipe. The fast tests run each one on tiny inputs:
a line ``name = ...  # <- yours`` gets the test's value for ``name`` (tiny vectors, a folder
holding a tiny random-init model), the rest of the block runs unchanged. The slow tests run the
blocks exactly as printed, with the offline GGUF model and GloVe, in this checkout and in a fresh
virtual environment that installs the wheel built from the repository.

The reference pages (book/reference/) are checked here too: every public package's submodule is
documented on its package's page, and no chapter package is.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from biasbook.paths import PROJECT_ROOT, mirror_dir

PAGE = PROJECT_ROOT / "book" / "library.md"
REFERENCE = PROJECT_ROOT / "book" / "reference"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
YOURS = re.compile(r"^(\w+) = .*# <- yours.*$", re.M)
RECIPES = ("weat", "scores", "cb", "herb", "results")
PUBLIC = ("scoring", "metrics", "embeddings", "mitigation", "text", "training", "stats",
          "models", "resources", "results", "profiles")
#: Submodules that are internal to their package and left out of its reference page on purpose.
INTERNAL = {"biasbook.scoring.batching", "biasbook.scoring.masked", "biasbook.scoring.causal",
            "biasbook.scoring.seq2seq", "biasbook.embeddings.glove_steps"}


def recipes() -> dict[str, str]:
    """The page's code blocks, named in page order."""
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == len(RECIPES), f"{PAGE.name} has {len(blocks)} python blocks"
    return dict(zip(RECIPES, blocks, strict=True))


def with_inputs(code: str, given: dict) -> str:
    """``code`` with each ``name = ...  # <- yours`` line whose name is in ``given`` replaced by
    the test's value; every given name must have such a line."""
    found = set(YOURS.findall(code))
    assert set(given) <= found, f"no '# <- yours' line for {set(given) - found}"
    return YOURS.sub(lambda m: f"{m[1]} = _given[{m[1]!r}]" if m[1] in given else m[0], code)


def run_recipe(name: str, given: dict | None = None) -> dict:
    namespace = {"__name__": f"recipe_{name}", "_given": given or {}}
    exec(compile(with_inputs(recipes()[name], given or {}), f"{PAGE.name}:{name}", "exec"),
         namespace)
    return namespace


@pytest.fixture
def workdir(tmp_path, monkeypatch, private_cache):
    """Recipes write run folders relative to the current directory; keep them in tmp."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def tiny_folder(path: Path, arch: str) -> str:
    """A tiny random-init model and a tokenizer that spells any text, saved like a user's."""
    from biasbook.testing import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(spell=True)
    tiny_model(arch, len(tok)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


# ---- the fast tests: every recipe on tiny inputs -------------------------------------------

def test_the_page_marks_what_a_reader_changes():
    for name, code in recipes().items():
        assert "# <- yours" in code, f"recipe {name} has no '# <- yours' line"


def test_weat_recipe_reports_the_words_the_vectors_lack(workdir, capsys):
    from biasbook.embeddings import vectors, wordsets

    test = wordsets.load("caliskan", lowercase=True)["flowers-insects"]
    lost = test.x[0]
    words = [w for side in test.sets().values() for w in side if w != lost]
    words += ["executive", "salary", "office", "business", "home", "parents", "children",
              "family", "john", "paul", "mike", "kevin", "amy", "joan", "lisa", "sarah"]
    words = list(dict.fromkeys(words))
    kv = vectors.from_arrays(words, np.random.default_rng(0).normal(size=(len(words), 8)))
    ns = run_recipe("weat", {"kv": kv})
    assert ns["result"].computable and ns["result"].oov["x"] == [lost]
    assert ns["result"].dropped["y"]  # X lost a word, so Y was cut to its size
    assert lost in capsys.readouterr().out


@pytest.mark.parametrize("arch", ["bert", "gpt2", "bart"])
def test_scores_recipe_takes_a_local_model_folder(workdir, arch, one_torch_thread):
    ns = run_recipe("scores", {"model": tiny_folder(workdir / arch, arch)})
    frame = ns["scores"].to_frame()
    assert ns["scores"].method == {"bert": "aul", "gpt2": "clm", "bart": "infill"}[arch]
    assert len(frame) == 3 and (frame["mean"] < 0).all()


@pytest.mark.parametrize("arch", ["bert", "gpt2"])
def test_cb_recipe_scores_the_authors_templates(workdir, arch, one_torch_thread):
    ns = run_recipe("cb", {"model": tiny_folder(workdir / arch, arch)})
    result = ns["result"]
    assert result.log_p_norm.shape == (2, 3, 5) and result.cb > 0


def test_herb_recipe_gives_a_bias_per_region(workdir):
    ns = run_recipe("herb")
    assert len(ns["result"].bias) == 14 and ns["result"].overall > 0


def test_results_recipe_compares_two_runs(workdir):
    ns = run_recipe("results")
    table = ns["compare"](list(ns["runs"]))
    assert [c for c in table.columns if c.startswith("model-")] == ["model-a [custom]",
                                                                   "model-b [custom]"]
    assert table["paper"].tolist() == [0.25]


# ---- the reference pages ------------------------------------------------------------------

def test_reference_has_a_page_per_public_package_and_documents_every_submodule():
    pages = {p.stem for p in REFERENCE.glob("*.md")} - {"index"}
    assert pages == set(PUBLIC)
    for name in PUBLIC:
        text = (REFERENCE / f"{name}.md").read_text(encoding="utf-8")
        assert re.search(rf"automodule:: biasbook\.{name}\s*$", text, re.M), name
        module = importlib.import_module(f"biasbook.{name}")
        for sub in pkgutil.iter_modules(getattr(module, "__path__", [])):
            full = f"biasbook.{name}.{sub.name}"
            if full not in INTERNAL:
                assert re.search(rf"automodule:: {re.escape(full)}\s*$", text, re.M), full
    every = "".join(p.read_text(encoding="utf-8") for p in REFERENCE.glob("*.md"))
    assert "biasbook.chapters" not in every.replace("`biasbook.chapters.<chapter>`", "")


def test_the_book_lists_the_reference_and_recipes():
    toc = (PROJECT_ROOT / "_toc.yml").read_text(encoding="utf-8")
    for name in ("book/library", "book/reference/index", *(f"book/reference/{p}" for p in PUBLIC)):
        assert f"file: {name}\n" in toc, name
    assert toc.index("book/reference/index") < toc.index("book/references")


# ---- the slow tests: the recipes as printed ------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", RECIPES)
def test_recipes_run_as_printed(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_recipe(name)


RUNNER = """
import json, os, sys, traceback
import biasbook
print("biasbook from", biasbook.__file__, flush=True)
failed = []
for name, code in json.loads(open(sys.argv[1]).read()).items():
    try:
        exec(compile(code, name, "exec"), {"__name__": "recipe_" + name})
        print("ok", name, flush=True)
    except Exception:
        traceback.print_exc()
        failed.append(name)
print("FAILED", " ".join(failed)) if failed else print("ALL OK")
"""


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """The wheel built from the repository, installed in a fresh venv.

    The wheel is built with ``pip wheel --no-deps --no-build-isolation`` (the ``build`` package is
    not in the pinned environment, and isolation would need the index) from a copy of the files
    it is made of, so that no ``build/`` or ``egg-info`` lands in the work tree. The new venv gets
    the wheel alone (``--no-deps --no-index``); its dependencies (torch, transformers, ...) come
    from this environment's site-packages through a ``.pth`` file rather than a second install:
    ``--system-site-packages`` would not see them, as they live in ``.venv``, not in the system
    Python. The editable install of this checkout is not visible there: ``.pth`` files inside an
    added directory are not processed.
    """
    import shutil
    import sysconfig

    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    for name in ("pyproject.toml", "requirements.txt", "README.md", "LICENSE"):
        shutil.copy(PROJECT_ROOT / name, src / name)
    shutil.copytree(PROJECT_ROOT / "lib", src / "lib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-w", str(root / "dist"), str(src)], check=True, capture_output=True)
    (wheel,) = (root / "dist").glob("biasbook-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], check=True, capture_output=True,
                               text=True).stdout.strip())
    (site / "_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                    str(wheel)], check=True, capture_output=True)
    return {"wheel": wheel, "python": python, "site": site, "root": root}


def _run_in(venv: dict, names, env_extra: dict) -> subprocess.CompletedProcess:
    work = venv["root"] / "work"
    work.mkdir(exist_ok=True)
    script = work / "run_recipes.py"
    script.write_text(RUNNER)
    chosen = work / "recipes.json"
    chosen.write_text(json.dumps({n: recipes()[n] for n in names}))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "BIASBOOK_PROJECT_DATA", "VIRTUAL_ENV")}
    env |= {"HF_HUB_OFFLINE": "1", **env_extra}
    return subprocess.run([venv["python"], str(script), str(chosen)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1200)


@pytest.mark.slow
def test_wheel_carries_the_registry(wheel_venv):
    names = zipfile.ZipFile(wheel_venv["wheel"]).namelist()
    assert {"biasbook/registry.yml", "biasbook/tex_check.js"} <= set(names)
    assert "biasbook/chapters/ethnic_bias/pipeline.py" in names  # the CB recipe imports it
    assert {"biasbook/data/word-sets/caliskan.yml", "biasbook/data/ethnic-bias/en.yml",
            "biasbook/data/profiles/herb.yml"} <= set(names)  # data/, through the package's link


@pytest.mark.slow
def test_recipes_run_from_the_installed_wheel(wheel_venv):
    """The five recipes as printed, in the fresh venv, outside the checkout: the word lists and
    templates come from the wheel's own ``biasbook/data``; ``BIASBOOK_DATA`` points at the
    mirror, whose default location is taken relative to a checkout."""
    done = _run_in(wheel_venv, RECIPES, {"BIASBOOK_DATA": str(mirror_dir())})
    assert f"biasbook from {wheel_venv['site']}" in done.stdout, done.stdout + done.stderr
    assert "ALL OK" in done.stdout, done.stdout + done.stderr[-4000:]


@pytest.mark.slow
def test_a_chapter_notebook_runs_in_plain_jupyter_from_the_installed_wheel(wheel_venv, tmp_path):
    """The demo chapter's notebook, smoke profile, top to bottom in a plain Jupyter kernel of the
    fresh venv (papermill, no Makefile, no checkout on the path): the library is the wheel's, its
    numbers are recorded in ./runs/default, and nothing is written into the environment."""
    notebook = PROJECT_ROOT / "notebooks" / "demo" / "01-offline-models.ipynb"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "BIASBOOK_PROJECT_DATA", "BIASBOOK_RUN_DIR", "VIRTUAL_ENV")}
    env |= {"HF_HUB_OFFLINE": "1", "BIASBOOK_DATA": str(mirror_dir())}
    kernel = subprocess.run([wheel_venv["python"], "-c", "import jupyter_client.kernelspec as k;"
                             "print(k.KernelSpecManager().get_kernel_spec('python3').argv[0])"],
                            env=env, capture_output=True, text=True, check=True)
    assert kernel.stdout.strip() == str(wheel_venv["python"]), kernel.stdout
    done = subprocess.run([wheel_venv["python"], "-m", "papermill", str(notebook),
                           str(tmp_path / "out.ipynb"), "-p", "profile", "smoke",
                           "--cwd", str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    record = json.loads((tmp_path / "runs" / "default" / "demo" / "01-offline-models.json")
                        .read_text())
    assert record["metrics"], "the notebook recorded its headline numbers"
    assert not (wheel_venv["site"].parent / "runs").exists()


@pytest.mark.slow
@pytest.mark.bad_input(
    '`biasbook run`, `atlas` or the trust page from an installed wheel (no checkout)',
    'run folders are written to and read from `./runs`, never inside the Python environment')
def test_the_cli_and_atlas_of_the_installed_wheel_keep_runs_in_the_current_directory(
        wheel_venv, tmp_path):
    """``biasbook run``, ``atlas`` and the trust page read and write ``./runs`` outside a
    checkout, not a folder inside the Python environment."""
    code = ("from biasbook import atlas, cli; from biasbook.chapters.trust import records;"
            "print(cli.RUNS_DIR, atlas.RUNS_DIR, records.RUNS_DIR, sep='\\n')")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([wheel_venv["python"], "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(tmp_path / "runs")] * 3, done.stdout
