"""evalframe's modules import each other without a cycle, and the core never imports a renderer.

The graph is read from the source (every ``import`` statement, at module level or inside a function,
except those under ``if TYPE_CHECKING:``, which never run): an import inside a function is still an
import, so a cycle cannot hide in one. A package's ``__init__`` gathering its own submodules (the
importers' registry, the report package re-exporting its renderers) is containment, not a dependency:
those edges are left out, and a submodule must not import its package's ``__init__`` back for anything
but names the ``__init__`` defines itself. ``.ci/run`` checks the same rules with import-linter
(``lint-imports``, the contracts in pyproject.toml), from the same source.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "evalframe"
#: Modules above the core: the core (the steps of the audit) never imports them.
ABOVE_THE_CORE = ("evalframe.cli", "evalframe.importers", "evalframe.read", "evalframe.report")
#: Of the report package, what the core may build on: the data object and what it stands on.
REPORT_FOR_THE_CORE = ("evalframe.report.model", "evalframe.report.output", "evalframe.report.descriptions")
#: The renderers the report and the comparison import inside the methods that render themselves, and only
#: there (the ``ignore_imports`` of the import contract in pyproject.toml).
RENDERED_ON_REQUEST = {
    "evalframe.report.model": {
        "evalframe.report.view",
        "evalframe.report.markdown",
        "evalframe.report.jsondoc",
        "evalframe.report.html",
        "evalframe.report.notebook",
    },
    "evalframe.compare": {"evalframe.report.markdown", "evalframe.report.notebook"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
    return False


def imports_of(path: Path, modules: set[str], here: str | None = None, *, in_functions: bool = True) -> set[str]:
    """The evalframe modules ``path`` imports; with ``in_functions=False``, those imported when it is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    here = module_name(path) if here is None else here
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if _type_checking_only(node, parents) or (not in_functions and _in_function(node, parents)):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], *([base] if base else [])]
                )
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        for name in names:
            # the deepest evalframe module the statement names (a submodule, or the package that holds the name)
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != here and not (path.name == "__init__.py" and name.startswith(f"{here}.")):
                found.add(name)
    return found


def import_graph(*, in_functions: bool = True) -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules, in_functions=in_functions) for p in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walker_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x.hidden\ndef f():\n    from x import y\n"
    )
    assert sorted(imports_of(module, {"x", "x.y", "x.hidden"}, here="m")) == ["x", "x.y"]


def test_evalframe_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_compare_and_report_model_import_renderers_only_inside_the_methods_that_render() -> None:
    graph, loaded = import_graph(), import_graph(in_functions=False)
    renderers = {m for m in graph if m.startswith("evalframe.report.") and m not in REPORT_FOR_THE_CORE}
    assert {m: graph[m] & renderers for m in RENDERED_ON_REQUEST} == RENDERED_ON_REQUEST
    assert {m: loaded[m] & renderers for m in RENDERED_ON_REQUEST} == {m: set() for m in RENDERED_ON_REQUEST}
    assert "evalframe.report" not in graph["evalframe.compare"]


def test_core_steps_never_import_renderers_importers_or_the_cli() -> None:
    graph = import_graph()
    core = [m for m in graph if not m.startswith(ABOVE_THE_CORE) and m != "evalframe"]
    offenders = {
        m: sorted(
            target
            for target in graph[m] - RENDERED_ON_REQUEST.get(m, set())
            if target.startswith(ABOVE_THE_CORE) and target not in REPORT_FOR_THE_CORE
        )
        for m in core
    }
    assert {m: t for m, t in offenders.items() if t} == {}


def test_nothing_in_the_library_imports_the_cli() -> None:
    # The CLI holds the process state (signal handlers, the collector's freeze): no library module reaches it.
    graph = import_graph()
    in_cli = {m for m in graph if m == "evalframe.cli" or m.startswith("evalframe.cli.")}
    assert in_cli >= {"evalframe.cli", "evalframe.cli.app", "evalframe.cli.signals"}
    assert {m: sorted(graph[m] & in_cli) for m in graph if m not in in_cli and graph[m] & in_cli} == {}
