"""The library's architecture, checked: chapters sit on top, notebooks narrate, profiles match."""

import ast
import json
from pathlib import Path

import pytest

from biasbook import profiles
from biasbook.paths import PROJECT_ROOT

LIB = PROJECT_ROOT / "lib" / "biasbook"
CHAPTER_DIRS = sorted(p for p in (PROJECT_ROOT / "notebooks").iterdir() if p.is_dir())
CHAPTER_NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").rglob("*.ipynb"))
MAX_LOGIC_LINES = 15  # per code cell; a cell that draws a figure may have twice as many
PLOT_MARKERS = ("plt.", "ax.", "axes", "sns.", "fig")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("path", sorted(p for p in LIB.rglob("*.py") if "chapters" not in p.parts),
                         ids=lambda p: str(p.relative_to(LIB)))
def test_nothing_outside_chapters_imports_a_chapter(path):
    bad = sorted(m for m in imported_modules(path) if m.startswith("biasbook.chapters"))
    assert not bad, f"{path.name} imports chapter code {bad}: move the shared part down a layer"


def module_name(path: Path) -> str:
    parts = path.relative_to(LIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_biasbook_modules(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports anywhere (inside functions too): for
    ``from package import name`` the submodule ``package.name`` where there is one."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                       else node.module for a in node.names)
    return out & modules


def test_no_import_cycles_not_even_through_imports_inside_functions():
    modules = {module_name(p): p for p in LIB.rglob("*.py")}
    # a module's own packages are imported before it anyway: no edge back to them
    graph = {name: sorted(m for m in imported_biasbook_modules(path, set(modules))
                          if not f"{name}.".startswith(f"{m}."))
             for name, path in modules.items()}
    done, path = set(), []

    def visit(name: str) -> None:  # depth first; a module met again on the path is a cycle
        assert name not in path, f"import cycle: {' -> '.join(path[path.index(name):])} -> {name}"
        if name not in done:
            path.append(name)
            for other in graph[name]:
                visit(other)
            path.pop()
            done.add(name)

    for name in graph:
        visit(name)


@pytest.mark.parametrize("path", sorted((PROJECT_ROOT / "benchmarks").glob("*.py")),
                         ids=lambda p: p.name)
def test_benchmarks_time_library_code_only(path):
    # a benchmark that needs a chapter's pipeline is timing code that belongs in the library
    bad = sorted(m for m in imported_modules(path) if m.startswith("biasbook.chapters"))
    assert not bad, f"{path.name} imports chapter code {bad}: benchmark the library function"


def dynamic_imports(path: Path) -> list[str]:
    """Calls that import a module by a name computed at run time."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith(("import_module", "__import__")):
                calls.append(name)
    return calls


@pytest.mark.parametrize("path", sorted(p for p in LIB.rglob("*.py") if "chapters" not in p.parts),
                         ids=lambda p: str(p.relative_to(LIB)))
def test_only_the_plan_looks_a_chapter_up_by_name(path):
    # biasbook.plan finds chapters/<c>/plan.py by the chapter's name (its docstring says why that
    # keeps the layering); no other infrastructure module may reach a chapter that way
    if path == LIB / "plan.py":
        return
    assert not dynamic_imports(path), f"{path.name} imports modules by name: only plan.py may"


@pytest.mark.parametrize("chapter", profiles.chapters())
def test_every_chapter_has_a_plan_module(chapter):
    plan = LIB / "chapters" / chapter.replace("-", "_") / "plan.py"
    assert plan.exists(), f"chapter {chapter} has no {plan.relative_to(LIB)}: biasbook plan " \
                          "and --cap need its work(params) and cap(params, n)"
    defined = {n.name for n in ast.parse(plan.read_text()).body if isinstance(n, ast.FunctionDef)}
    assert {"work", "cap"} <= defined, f"{plan} lacks {sorted({'work', 'cap'} - defined)}"


@pytest.mark.parametrize("folder", CHAPTER_DIRS, ids=lambda p: p.name)
def test_every_notebook_folder_has_its_chapter_package(folder):
    package = LIB / "chapters" / folder.name.replace("-", "_")
    assert (package / "__init__.py").exists(), f"notebooks/{folder.name} has no {package}"


def logic_lines(source: str) -> list[str]:
    return [line for line in source.splitlines()
            if line.strip() and not line.strip().startswith(("#", "%"))]


def assert_only_literal_assignments(source: str, index: int) -> None:
    for node in ast.parse(source).body:
        is_literal = isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Name)
        if is_literal:
            try:
                ast.literal_eval(node.value)
            except ValueError:
                is_literal = False
        assert is_literal, f"parameters cell {index} holds more than 'name = literal': " \
                           f"{ast.unparse(node)!r}"


@pytest.mark.parametrize("path", CHAPTER_NOTEBOOKS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_notebook_cells_narrate(path):
    nb = json.loads(path.read_text())
    long = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if "parameters" in cell["metadata"].get("tags", []):
            assert_only_literal_assignments(source, i)  # declarations, one per line: no logic
            continue
        limit = MAX_LOGIC_LINES * (2 if any(m in source for m in PLOT_MARKERS) else 1)
        if len(logic_lines(source)) > limit:
            long.append((i, len(logic_lines(source))))
    assert not long, f"cells (index, lines) {long} are over {MAX_LOGIC_LINES} lines of logic: " \
                     "move the pipeline into lib/biasbook/chapters/"


@pytest.mark.parametrize("chapter", profiles.chapters())
def test_profiles_give_every_notebook_exactly_what_it_declares(chapter):
    spec = profiles.chapter_spec(chapter)
    stems = [Path(n).stem for n in spec["notebooks"]]
    declared = {s: profiles.declared_params(profiles.NOTEBOOKS_DIR / chapter / f"{s}.ipynb")
                for s in stems}
    for profile in profiles.PROFILES:
        for stem in stems:
            given = profiles.notebook_params(chapter, profile, stem)
            missing = sorted(set(declared[stem]) - set(given))
            assert not missing, f"{profile}: {stem} declares {missing}, the profile lacks them"
        values = spec[profile]
        chapter_keys = {k for k in values if k not in stems}
        unread = sorted(k for k in chapter_keys if not any(k in d for d in declared.values()))
        assert not unread, f"{profile}: no notebook reads the chapter-level keys {unread}"
        for stem in stems:
            unread = sorted(set(values.get(stem) or {}) - set(declared[stem]))
            assert not unread, f"{profile}: {stem} does not read its keys {unread}"


CHAPTER_MODULES = sorted(p for p in (LIB / "chapters").rglob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", CHAPTER_MODULES, ids=lambda p: str(p.relative_to(LIB)))
def test_chapter_code_returns_results_and_never_records(path):
    """Chapters return frames and models; the notebooks record them (issue 23): no function of
    a chapter takes a Recorder."""
    takes = [node.name for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef)
             and {"rec", "recorder"} & {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}]
    assert not takes, f"{path.name}: {takes} take a recorder"
