"""The book's buttons: download on every page; repository and launch buttons behind one setting.

``repository.url`` in _config.yml is the one setting: empty (as committed), no repository button
and no launch buttons; set, the repository button and the launch buttons of ``launch_buttons``
(Binder, Colab, a JupyterHub) on every notebook page. Whether the launched services then run the
notebook cannot be tested offline; the slow test checks the links a reader would get, on a
two-page copy of the book's configuration built by Jupyter Book.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from biasbook.paths import PROJECT_ROOT

EXT = PROJECT_ROOT / "book" / "_ext" / "repository_buttons.py"


def extension():
    spec = importlib.util.spec_from_file_location("repository_buttons", EXT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "_config.yml").read_text())


def test_one_setting_switches_the_repository_and_launch_buttons():
    buttons = extension().buttons
    launch = {"binderhub_url": "https://mybinder.org", "colab_url": "https://colab.google"}
    off = buttons({"repository_url": "", "launch_buttons": launch, "use_download_button": False})
    assert off == {"repository_url": "", "use_repository_button": False,
                   "use_download_button": True}
    on = buttons({"repository_url": "https://github.com/o/r", "launch_buttons": launch})
    assert on["use_repository_button"] and on["use_download_button"]
    assert on["launch_buttons"] == launch
    assert buttons({})["use_repository_button"] is False  # no repository section at all


def test_config_declares_the_setting_and_loads_the_extension():
    c = config()
    assert set(c["repository"]) >= {"url", "branch"}
    # Jupyter Book refuses use_repository_button without a URL: the extension sets it instead
    assert c["html"]["use_repository_button"] is False
    assert {"binderhub_url", "colab_url", "jupyterhub_url"} <= set(c["launch_buttons"])
    assert c["sphinx"]["local_extensions"] == {"repository_buttons": "book/_ext"}
    assert EXT.exists()


def _mini_book(root: Path, url: str) -> Path:
    """The book's _config.yml (repository.url set to ``url``, nothing executed) on a markdown
    page and a notebook page."""
    c = config()
    c["repository"]["url"] = url
    c["execute"] = {"execute_notebooks": "off"}
    c["bibtex_bibfiles"] = ["refs.bib"]
    c["sphinx"]["config"]["html_static_path"] = []
    c["sphinx"]["config"].pop("html_css_files", None)
    c["sphinx"]["config"].pop("mathjax_path", None)
    c["exclude_patterns"] = ["_build/*"]
    (root / "book" / "_ext").mkdir(parents=True)
    shutil.copy(EXT, root / "book" / "_ext" / EXT.name)
    (root / "_config.yml").write_text(yaml.safe_dump(c))
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: nb\n")
    (root / "intro.md").write_text("# Intro\n\nA page.\n")
    (root / "refs.bib").write_text("")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook"), nbformat.v4.new_code_cell("1 + 1")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / "nb.ipynb")
    jb = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jb), "build", str(root)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root / "_build" / "html"


@pytest.mark.slow
def test_built_pages_have_the_buttons_the_setting_allows(tmp_path):
    html = _mini_book(tmp_path / "with", "https://github.com/example-owner/example-book")
    page = (html / "nb.html").read_text()
    # the download button of a notebook page offers its source, the .ipynb itself
    assert "download-source-button" in page and 'href="_sources/nb.ipynb"' in page
    assert "https://mybinder.org/v2/gh/example-owner/example-book/main?urlpath=tree/nb.ipynb" \
        in page
    assert "https://colab.research.google.com/github/example-owner/example-book/blob/main/" \
           "nb.ipynb" in page
    assert re.search(r'href="https://github.com/example-owner/example-book"', page)
    assert 'href="_sources/intro.md"' in (html / "intro.html").read_text()

    html = _mini_book(tmp_path / "without", "")
    page = (html / "nb.html").read_text()
    assert "download-source-button" in page and 'href="_sources/nb.ipynb"' in page
    assert "mybinder.org" not in page and "colab.research.google.com" not in page
    assert "example-owner" not in page
