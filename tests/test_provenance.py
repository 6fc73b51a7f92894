"""Provenance stamps: every public name of ``biasbook.chapters.*`` says which notebooks use it.

As d2l's "Defined in" notes, but from the library's side: each public function or class of a
chapter package has a paragraph ``Used in: herb/01, book/trust.`` in its docstring, naming the
notebooks (``notebooks/<chapter>/<NN>-...`` as ``<chapter>/<NN>``, pages of ``book/`` as
``book/<name>``) that use it, directly or through other chapter code they call; the chapter plan
modules' ``work`` and ``cap`` (and what they call) are used by ``biasbook plan``. The uses are
read from the code (imports, ``module.name`` and bare names; in notebooks also a call shown in a
comment for the reader to run by hand), not from the stamps.

The tests fail when a stamp names a notebook that does not use the name or misses one that does,
and when a public name is used by no notebook (dead code: delete it, or make it private if only
tests use it). Regenerate the stamps with ``python tests/test_provenance.py``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
CHAPTERS = "biasbook.chapters"
STAMP = re.compile(r"^\s*Used in: (?P<uses>[^\n]*(?:\n[ \t]+[^\n]+)*?)\.\s*$", re.M)
#: The command-line use of chapter code: the plan modules' interface (``biasbook.plan``).
CLI_ROOTS = {"work": "biasbook plan", "cap": "biasbook plan"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(LIB).with_suffix("").parts).removesuffix(".__init__")


def _absolute(module: str | None, node: ast.ImportFrom, is_package: bool) -> str | None:
    if not node.level:
        return node.module
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _aliases(tree: ast.AST, module: str | None = None, is_package: bool = False) -> dict:
    """Local name -> (module, name or None) for every import of ``biasbook`` code."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            if source and source.startswith("biasbook"):
                for a in node.names:
                    found[a.asname or a.name] = (source, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("biasbook"):
                    found[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0], None)
    return found


def _references(node: ast.AST, aliases: dict, module: str, local: set[str]) -> set[tuple]:
    """The (module, name) pairs ``node`` refers to: ``alias.a.b``, imported and local names."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            chain, base = [], n
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                where, name = aliases[base.id]
                for part in ([name] if name else []) + chain[::-1]:
                    out.add((where, part))
                    where = f"{where}.{part}"
        elif isinstance(n, ast.Name):
            if n.id in aliases and aliases[n.id][1]:
                out.add(aliases[n.id])
            elif n.id in local:
                out.add((module, n.id))
    return out


def library() -> tuple[dict, dict]:
    """``(definitions, graph)``: the module-level functions and classes of ``biasbook`` by
    (module, name), and what each refers to (module-level assignments and re-exports too)."""
    definitions, graph = {}, defaultdict(set)
    for path in sorted((LIB / "biasbook").rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text())
        aliases = _aliases(tree, module, path.name == "__init__.py")
        local = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        local |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                  if isinstance(t, ast.Name)}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                definitions[(module, node.name)] = (path, node)
                graph[(module, node.name)] |= _references(node, aliases, module, local)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        graph[(module, target.id)] |= _references(node.value, aliases, module,
                                                                  local)
        for name, origin in aliases.items():
            if origin[1]:
                graph[(module, name)].add(origin)
    return definitions, graph


def notebook_label(path: Path) -> str:
    """``herb/01`` for ``notebooks/herb/01-...ipynb``, ``book/trust`` for ``book/trust.ipynb``."""
    relative = path.relative_to(ROOT)
    if relative.parts[0] == "notebooks":
        return f"{relative.parts[1]}/{relative.stem.split('-')[0]}"
    return str(relative.with_suffix(""))


def _notebook_code(path: Path) -> str:
    """The code cells' Python, with the commented-out lines that are code themselves: a call a
    notebook shows for the reader to run by hand (``# responses = iat.run_in_terminal(plan)``)
    is a use too."""
    cells = json.loads(path.read_text())["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    lines, shown = [], []
    for line in source.splitlines():
        if line.lstrip().startswith(("%", "!")):
            continue
        lines.append(line)
        code = line.strip().removeprefix("#").strip()
        if line.lstrip().startswith("#") and "(" in code:
            try:
                ast.parse(code)
            except SyntaxError:
                continue
            shown.append(code)
    return "\n".join(lines + shown)  # shown lines last: outside any indented block


def uses() -> tuple[dict, dict]:
    """``(definitions, users)``: the public chapter names, and the notebooks (or ``biasbook
    plan``) that reach each through the graph of :func:`library`."""
    definitions, graph = library()
    roots = []
    for path in sorted([*ROOT.glob("notebooks/**/*.ipynb"), *ROOT.glob("book/**/*.ipynb")]):
        tree = ast.parse(_notebook_code(path))
        roots.append((notebook_label(path), _references(tree, _aliases(tree), "", set())))
    for (module, name) in definitions:
        if module.startswith(CHAPTERS) and module.endswith(".plan") and name in CLI_ROOTS:
            roots.append((CLI_ROOTS[name], {(module, name)}))
    users = defaultdict(set)
    for label, start in roots:
        stack, seen = list(start), set()
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            users[key].add(label)
            stack.extend(graph.get(key, ()))
    public = {k: v for k, v in definitions.items()
              if k[0].startswith(CHAPTERS) and not k[1].startswith("_")}
    return public, {k: sorted(users[k], key=_order) for k in public}


def _order(label: str) -> tuple:
    return (label.startswith(("book", "biasbook")), label)


def stamp_of(node: ast.AST) -> list[str] | None:
    """The notebooks a docstring's ``Used in:`` paragraph names, or ``None`` without one."""
    match = STAMP.search(ast.get_docstring(node, clean=False) or "")
    return None if match is None else [u.strip() for u in " ".join(
        match["uses"].split()).split(",")]


def test_every_public_chapter_name_is_used_by_a_notebook():
    public, users = uses()
    dead = sorted(f"{m}.{n}" for (m, n) in public if not users[(m, n)])
    assert not dead, f"used by no notebook (dead code: delete, or make private): {dead}"


def test_every_stamp_names_exactly_the_notebooks_that_use_its_name():
    public, users = uses()
    wrong = {f"{m}.{n}": (stamp_of(node), users[(m, n)])
             for (m, n), (_, node) in public.items() if stamp_of(node) != users[(m, n)]}
    assert not wrong, ("stamps (stamp, uses) out of date; regenerate with `python "
                       f"tests/test_provenance.py`: {dict(list(wrong.items())[:10])}")


# --- regenerating the stamps ---------------------------------------------------------------------

def _stamp_lines(labels: list[str], indent: str) -> list[str]:
    return textwrap.wrap(f"Used in: {', '.join(labels)}.", width=100, initial_indent=indent,
                         subsequent_indent=indent + "    ", break_on_hyphens=False)


def restamp(path: Path, users: dict) -> bool:
    """Write the stamps of ``path``'s public names; whether the file changed."""
    module = _module(path)
    lines = path.read_text().split("\n")
    nodes = [n for n in ast.parse(path.read_text()).body
             if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
    for node in sorted(nodes, key=lambda n: n.lineno, reverse=True):  # bottom up: lines shift
        labels = users.get((module, node.name))
        doc = node.body[0] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(
            node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str) \
            else None
        if not labels or doc is None:
            continue
        indent = " " * (node.col_offset + 4)
        first, last = doc.lineno - 1, doc.end_lineno - 1
        body = lines[first:last + 1]
        stamp = _stamp_lines(labels, indent)
        old = [i for i, line in enumerate(body) if line.strip().startswith("Used in:")]
        if old:
            start = old[0]
            end = start + 1
            while end < len(body) and body[end].strip() and not body[end].strip().startswith(
                    ('"""', "'''")) and body[end].startswith(indent + "    "):
                end += 1
            body[start:end] = stamp
        elif len(body) == 1:  # """One line."""
            text = body[0]
            cut = text.rindex('"""')
            body = [text[:cut], "", *stamp, indent + '"""']
        else:
            blank = next((i for i, line in enumerate(body) if not line.strip()), None)
            if blank is not None:
                body[blank:blank] = ["", *stamp]
            elif body[-1].strip() in ('"""', "'''"):
                body[-1:-1] = ["", *stamp]
            else:  # the closing quotes end the paragraph's last line
                cut = body[-1].rindex('"""')
                body[-1:] = [body[-1][:cut], "", *stamp, indent + '"""']
        lines[first:last + 1] = body
    text = "\n".join(lines)
    if text != path.read_text():
        path.write_text(text)
        return True
    return False


if __name__ == "__main__":
    _, found = uses()
    changed = [p for p in sorted((LIB / "biasbook" / "chapters").rglob("*.py"))
               if restamp(p, found)]
    print(f"restamped {len(changed)} files", file=sys.stderr)
