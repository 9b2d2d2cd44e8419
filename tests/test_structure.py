"""No function in evalframe/ has a body over :data:`MOST_BODY_LINES` lines unless its docstring says why.

A function's body is counted from its first statement after the docstring (a nested definition from its
first decorator) to its last line, blank and comment lines included: the signature and the docstring are
not counted, since a long numpydoc docstring is what a public function should have. A function may stay
longer when a line of its docstring starts with :data:`REASON_MARKER` and goes on to give the reason.
"""

from __future__ import annotations

import ast

from tests.conftest import ROOT

PACKAGE = ROOT / "evalframe"
#: The longest body a function may have without a stated reason.
MOST_BODY_LINES = 80
#: How a docstring line starts that says why a longer body stays one function.
REASON_MARKER = "One function because"
#: Long functions another change is rewriting: the test fails as soon as one is split, so that its entry goes
#: with it.
AWAITING_SPLIT: set[str] = set()


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's end (0 for a docstring only)."""
    body = node.body
    if ast.get_docstring(node, clean=False) is not None:
        body = body[1:]
    if not body:
        return 0
    first = body[0]
    decorators = getattr(first, "decorator_list", [])
    start = min([first.lineno, *(d.lineno for d in decorators)])
    assert node.end_lineno is not None
    return node.end_lineno - start + 1


def states_a_reason(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A docstring line starts with the marker and gives a reason after it."""
    doc = ast.get_docstring(node) or ""
    return any(
        line.strip().startswith(REASON_MARKER) and len(line.strip()) > len(REASON_MARKER) + 5
        for line in doc.splitlines()
    )


def long_functions(source: str, where: str) -> dict[str, int]:
    """``{"where name": body lines}`` of the functions over the limit with no stated reason."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = body_lines(node)
            if lines > MOST_BODY_LINES and not states_a_reason(node):
                found[f"{where} {node.name}"] = lines
    return found


def test_the_count_leaves_out_the_signature_and_the_docstring() -> None:
    statements = "".join(f"    x{i} = {i}\n" for i in range(MOST_BODY_LINES))
    source = (
        "def short(\n    a,\n    b,\n):\n"
        '    """Doc.\n\n    Many lines.\n    """\n' + statements + "\n"
        "def long():\n"
        "    @decorated\n"
        "    def inner():\n"
        "        pass\n" + statements + "\n"
        "def excused():\n"
        '    """Doc.\n\n    One function because the steps share every local.\n    """\n' + statements + "    y = 1\n"
        "\n"
        "def marker_alone():\n"
        '    """One function because"""\n' + statements + "    y = 1\n"
    )
    tree = ast.parse(source)
    counts = {n.name: body_lines(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert counts == {"short": 80, "long": 83, "inner": 1, "excused": 81, "marker_alone": 81}
    assert long_functions(source, "m.py") == {"m.py long": 83, "m.py marker_alone": 81}


def test_no_function_body_over_the_limit_without_a_reason() -> None:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found.update(long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))))
    assert set(found) == AWAITING_SPLIT
