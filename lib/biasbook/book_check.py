"""Checks of the *built* book that the Sphinx build itself does not make.

MathJax typesets the book's equations in the reader's browser, so an equation MathJax cannot
typeset (``\\tag`` inside a ``split``, two ``\\tag`` in one display, a missing brace) builds without
a warning and shows up as a red error on the page. :func:`tex_errors` runs every equation of
every built page through the book's own MathJax copy, in Node.js, exactly as the browser would,
and :func:`stray_math` finds math delimiters left in plain text (math that never reached MathJax).
:func:`raw_tex` finds what is left of math that Markdown split before MathJax saw it: a formula
whose second line starts with ``- `` becomes a list item, and both halves show as raw TeX.

``python -m biasbook.book_check _build/html`` prints every problem and exits with status 1 if there
is one; ``make book`` runs it after the build.

``--browser`` (``make check-book``) also opens every page in headless Chromium (Debian's
``chromium`` package; nothing is downloaded) and checks the page *as a reader sees it*, after
MathJax and the theme's scripts ran (:func:`browser_problems`): MathJax errors, math left
unrendered, cells that show an error or a traceback, images and internal links that do not
resolve, and notebook pages that draw figures but show none. It saves a screenshot of every
chapter's first page under ``_build/screenshots/``.

>>> html = '<p>Fine: <span class="math">\\\\(x^2\\\\)</span>. Stray: $$y$$</p>'
>>> [m.tex for m in page_math(html)], stray_math(html)
(['x^2'], ['$$y$$'])
>>> raw_tex('with $s = \\\\operatorname{mean}_{a} a\\nIt costs $5.')
['with $s = \\\\operatorname{mean}_{a} a']
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from biasbook.paths import PROJECT_ROOT

MATHJAX_DIR = PROJECT_ROOT / ".cache" / "static" / "mathjax"  # fetched by the Makefile
TEX_CHECK_JS = Path(__file__).with_name("tex_check.js")
_DELIMITERS = ((r"\[", r"\]"), (r"\(", r"\)"), ("$$", "$$"))
_STRAY = re.compile(r"\$\$.+?\$\$|\\\(.+?\\\)|\\\[.+?\\\]", re.DOTALL)
_SKIP_TAGS = ("script", "style", "code", "pre", "textarea")
#: Tables a cell printed (data frames): their text is data (generated text, corpus tokens such as
#: PTB's ``$``), never typeset, so a ``$`` or a backslash there is not a formula.
_DATA_TABLES = ".cell_output table, .output table"
# A TeX command or bracket delimiter, a sub/superscript group, or a `$` that opens no amount
_TEX = re.compile(r"\\(?:[A-Za-z]+|[()[\]])|[_^]\{|\$(?!\d)")


@dataclass(frozen=True)
class Math:
    """One equation of a page: its TeX (delimiters removed) and whether it is displayed."""

    tex: str
    display: bool
    numbered: bool = False  # Sphinx printed its own number, e.g. "(3)", beside the equation


@dataclass(frozen=True)
class Problem:
    page: str
    kind: str  # "mathjax error", "unrendered math" or "two equation numbers"
    detail: str
    tex: str = ""

    def __str__(self) -> str:
        snippet = " ".join(self.tex.split())[:120]
        return f"{self.page}: {self.kind}: {self.detail}" + (f"  [{snippet}]" if snippet else "")


def _soup(html: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def page_math(html: str) -> list[Math]:
    """Every equation Sphinx wrote into a page (elements of class ``math``)."""
    found = []
    for element in _soup(html).select(".math"):
        numbers = element.select(".eqno")  # Sphinx's "(3)" and its permalink: HTML
        for number in numbers:
            number.decompose()
        tex = element.get_text().strip()
        for left, right in _DELIMITERS:
            if tex.startswith(left) and tex.endswith(right):
                tex = tex[len(left):len(tex) - len(right)].strip()
                break
        found.append(Math(tex, element.name == "div", bool(numbers)))
    return found


def _plain_text(html: str) -> str:
    """The page's text outside equations, code and scripts: what MathJax never typesets."""
    soup = _soup(html)
    for element in soup.select(".math"):
        element.decompose()
    for tag in [*soup.find_all(_SKIP_TAGS), *soup.select(_DATA_TABLES)]:
        tag.decompose()
    return soup.get_text()


def stray_math(html: str) -> list[str]:
    """Math delimiters in the page's plain text, outside equations, code and scripts."""
    return _STRAY.findall(_plain_text(html))


def raw_tables(html: str) -> list[str]:
    """Markdown tables that a cell printed and the page shows as text: a paragraph of output
    made of ``|`` rows with a ``|:---|`` rule (the dashes typeset as em dashes), each quoted by
    its first line. A renderer without tables (MyST-NB's ``commonmark`` format) does this."""
    found = []
    for paragraph in _soup(html).select(".cell_output p, .output p"):
        lines = paragraph.get_text().strip().splitlines()
        if len(lines) > 1 and all(x.strip().startswith("|") for x in lines[:2]) \
                and re.match(r"^\|\s*:?[-\u2013\u2014]", lines[1].strip()):
            found.append(lines[0].strip()[:80])
    return found


def raw_tex(text: str) -> list[str]:
    """The lines of plain ``text`` that still hold TeX, each quoted from just before its TeX.

    TeX is a backslash followed by a letter or a bracket (``\\frac``, ``\\(``), ``_{`` or ``^{``,
    or a ``$`` that no digit follows. ``$5`` and ``$1.50`` are amounts; any other ``$`` outside an
    equation is a formula's delimiter that Markdown separated from its partner (``US$ 5`` is
    reported too: write ``$5``). Whole stray formulas (``$$z$$``, ``\\(z\\)``) are
    :func:`stray_math`'s and are not repeated here. Code, equations, scripts and styles are not
    scanned, but a Windows path in prose is: write it as code.
    """
    found = []
    for line in _STRAY.sub(" ", text).splitlines():
        hit = _TEX.search(line)
        if hit:
            start = max(0, hit.start() - 40)
            found.append(line[start:start + 120].strip())
    return found


def tex_errors(equations: list[Math], mathjax_dir: Path = MATHJAX_DIR) -> list[str | None]:
    """MathJax's error message for each equation (``None`` where it typesets), via Node.js."""
    if not equations:
        return []
    node = shutil.which("node")
    if node is None or not (mathjax_dir / "node-main.js").exists():
        raise RuntimeError(f"the equation check needs Node.js and MathJax in {mathjax_dir} "
                           "(run `make book` or `make test`, which fetch it)")
    lines = "\n".join(json.dumps({"tex": m.tex, "display": m.display}) for m in equations)
    out = subprocess.run([node, str(TEX_CHECK_JS), str(mathjax_dir)], input=lines, text=True,
                         capture_output=True, check=True).stdout
    errors = [json.loads(line)["error"] for line in out.splitlines() if line.startswith("{")]
    return [None if e is None else html.unescape(e) for e in errors]


def check_pages(html_dir: str | Path) -> list[Problem]:
    """Every MathJax error, stray math delimiter and line of TeX outside an equation in the pages
    under ``html_dir``."""
    html_dir = Path(html_dir)
    pages = sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.parts)
    problems, equations, owners = [], [], []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        name = str(page.relative_to(html_dir))
        plain = _plain_text(text)
        problems += [Problem(name, "unrendered math", s) for s in _STRAY.findall(plain)]
        problems += [Problem(name, "TeX outside math", s) for s in raw_tex(plain)]
        problems += [Problem(name, "unrendered table", s) for s in raw_tables(text)]
        for m in page_math(text):
            equations.append(m)
            owners.append(name)
    for name, m, error in zip(owners, equations, tex_errors(equations), strict=True):
        if error:
            problems.append(Problem(name, "mathjax error", error, m.tex))
        elif m.numbered and r"\tag" in m.tex:  # MyST numbers {equation}: use {equation*}
            problems.append(Problem(name, "two equation numbers",
                                    "Sphinx's number and the \\tag both show", m.tex))
    return problems


CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars")
PLOT_CALLS = re.compile(r"\b(plt\.|sns\.|\.plot\(|world_choropleth|fig, ax|heatmap\()")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("the browser check needs Chromium: apt-get install chromium")
    return found


def rendered_dom(page: Path, budget_ms: int = 15000) -> str:
    """The page's DOM once its scripts (MathJax) ran, from headless Chromium."""
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--virtual-time-budget={budget_ms}",
                           "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120, check=True).stdout


def screenshot(page: Path, target: Path, size: str = "1280,1600") -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([chromium(), *CHROMIUM_FLAGS, "--virtual-time-budget=15000",
                    f"--window-size={size}", f"--screenshot={target.resolve()}",
                    page.resolve().as_uri()], capture_output=True, timeout=120, check=True)
    return target


def _missing(page: Path, href: str) -> bool:
    """A relative link or source of ``page`` (fragment and query dropped) names no built file."""
    path = href.split("#")[0].split("?")[0]
    return bool(path) and not (page.parent / path).resolve().exists()


def redirect_target(html_text: str) -> str | None:
    """Where a redirect stub (Jupyter Book's root ``index.html``) sends the reader, else None.

    >>> redirect_target('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    'book/intro.html'
    """
    meta = _soup(html_text).find("meta", attrs={"http-equiv": re.compile("^refresh$", re.I)})
    found = re.search(r"url=(\S+)", meta.get("content", ""), re.I) if meta else None
    return found.group(1).strip("'\"") if found else None


def browser_problems(page: Path, html_dir: Path, draws_figures: bool = False) -> list[Problem]:
    """What a reader of ``page`` would see go wrong (module docstring). A redirect stub is checked
    for its target only: the browser shows the target, whose links are relative to the target."""
    name = str(page.relative_to(html_dir))
    target = redirect_target(page.read_text(encoding="utf-8"))
    if target is not None:
        return [Problem(name, "broken redirect", target)] if _missing(page, target) else []
    soup = _soup(rendered_dom(page))
    problems = [Problem(name, "mathjax error", e.get("data-mjx-error", "?"), e.get_text())
                for e in soup.select("mjx-merror")]
    for output in soup.select(".cell_output, .output"):
        text = output.get_text()
        if "traceback" in " ".join(output.get("class", [])) or "Traceback (most recent" in text:
            problems.append(Problem(name, "error output", " ".join(text.split())[:160]))
            break
    sources = [img["src"].split("#")[0].split("?")[0] for img in soup.select("img[src]")]
    problems += [Problem(name, "missing image", src) for src in sources
                 if not src.startswith(("data:", "http:", "https:")) and _missing(page, src)]
    external = ("http:", "https:", "mailto:", "#", "javascript:")
    problems += [Problem(name, "broken link", link["href"]) for link in soup.select("a[href]")
                 if not link["href"].startswith(external) and _missing(page, link["href"])]
    skipped = f"mjx-container, script, style, pre, code, textarea, {_DATA_TABLES}"
    for container in soup.select(skipped):
        container.decompose()
    plain = soup.get_text()
    problems += [Problem(name, "unrendered math", s) for s in _STRAY.findall(plain)]
    problems += [Problem(name, "TeX outside math", s) for s in raw_tex(plain)]
    if draws_figures and not soup.select(".cell_output img, .output img"):
        problems.append(Problem(name, "no figure", "the notebook draws figures; the page has none"))
    return problems


def check_browser(html_dir: str | Path, screenshots: str | Path | None = None) -> list[Problem]:
    """:func:`browser_problems` of every page, and a screenshot of every chapter's first page."""
    html_dir = Path(html_dir)
    problems = []
    for page in sorted(p for p in html_dir.rglob("*.html") if "_static" not in p.parts
                       and p.name not in ("genindex.html", "search.html")):
        source = PROJECT_ROOT / page.relative_to(html_dir).with_suffix(".ipynb")
        draws = source.exists() and bool(PLOT_CALLS.search(source.read_text(encoding="utf-8")))
        problems += browser_problems(page, html_dir, draws_figures=draws)
    if screenshots is not None:
        for first in sorted(html_dir.glob("notebooks/*/index.html")):
            screenshot(first, Path(screenshots) / f"{first.parent.name}.png")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    browser = "--browser" in args
    args = [a for a in args if a != "--browser"]
    html_dir = Path(args[0] if args else PROJECT_ROOT / "_build" / "html")
    if not html_dir.is_dir():
        print(f"no built book in {html_dir}: run `make book` first")
        return 2
    problems = check_pages(html_dir)
    if browser:
        problems += check_browser(html_dir, html_dir.parent / "screenshots")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) in the built pages of {html_dir}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
