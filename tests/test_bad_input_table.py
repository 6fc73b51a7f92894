"""The bad-input table of the book's "Re-running" page is generated from the tests themselves.

Every test marked ``@pytest.mark.bad_input(what, outcome)`` is a row: what a user does, and what
then happens, which the test checks. This test fails when the page is out of date; regenerate it
with ``python tests/test_bad_input_table.py``.
"""

import ast
import sys
from pathlib import Path

TESTS = Path(__file__).parent
PAGE = TESTS.parent / "book" / "rerun.md"
START, END = "<!-- bad-input-table: start -->", "<!-- bad-input-table: end -->"


def rows() -> list[tuple[str, str, str]]:
    """``(what, outcome, test)`` of every marked test, in file and line order."""
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith(
                        "mark.bad_input"):
                    what, outcome = (ast.literal_eval(a) for a in deco.args)
                    found.append((what, outcome, f"{path.name}::{node.name}"))
    return found


def table() -> str:
    lines = ["| you give | what happens | checked by |", "|---|---|---|"]
    lines += [f"| {what} | {outcome} | `{test}` |" for what, outcome, test in rows()]
    return "\n".join(lines)


def rendered(page: str) -> str:
    before, _, rest = page.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{table()}\n{END}{after}"


def test_the_books_bad_input_table_is_generated_from_the_tests():
    assert len(rows()) >= 10
    page = PAGE.read_text()
    assert START in page and END in page, f"{PAGE} lacks the table's markers"
    assert page == rendered(page), \
        "book/rerun.md's bad-input table is out of date: run python tests/test_bad_input_table.py"


if __name__ == "__main__":
    PAGE.write_text(rendered(PAGE.read_text()))
    sys.exit(0)
