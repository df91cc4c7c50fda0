"""No new import circle: every import counts, at the top of a module or inside a function.

A function-level import hides a circle from Python (the module is half-initialised only if both
import at the top) but not from a reader: two modules that need each other are one module in two
files. Imports under ``if TYPE_CHECKING:`` are left out, since they never run.

The circles that existed when this test was written were held in a list and closed one by one
(issue 28: the last three by runner/workloads/registry.py, spec/properties.py with the whole spec's
estimate in sharing.py, and YugabyteDB's YSQL user in spec/yugabytedb.py); any circle fails now.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "benchwright"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def _imported_names(node: ast.AST, package: str, modules: Collection[str]) -> Iterator[str]:
    """The modules an import statement needs. ``from P import m`` where ``m`` is a module of its own
    needs ``P.m``, exactly as ``import P.m`` does (both run ``P``'s ``__init__`` first, as every
    import of a submodule does, which is not counted as an edge); ``from P import name`` where
    ``name`` is defined in ``P`` needs ``P``."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{anchor}.{base}" if base else anchor
        named = [f"{base}.{alias.name}" for alias in node.names]
        if not all(name in modules for name in named):
            yield base
        yield from named


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports at run time, wherever the import statement is."""
    files = module_files()

    def owner(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            for imported in _imported_names(node, package, files):
                target = owner(imported) if imported.startswith(PACKAGE) else None
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_finder_sees_a_circle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [frozenset({"a", "b", "c"})]
    assert circles({"a": {"b"}, "b": set()}) == []


def _edges(source: str, package: str = "p") -> list[str]:
    modules = {"p", "p.sub", "p.other"}
    return [name for node in ast.walk(ast.parse(source)) for name in _imported_names(node, package, modules)]


def test_an_import_of_a_submodule_by_from_needs_the_submodule_and_a_name_its_package() -> None:
    assert "p" not in _edges("from p import sub")  # as ``import p.sub``
    assert "p.sub" in _edges("from p import sub")
    assert "p" in _edges("from p import sub, helper")  # ``helper`` is defined in p's __init__
    assert "p" in _edges("from p import helper")
    assert "p.other" in _edges("from . import other", package="p")
    assert "p" not in _edges("from . import other", package="p")


def test_no_import_circle() -> None:
    found = [sorted(c) for c in circles(import_graph())]
    assert found == [], "an import circle (move the shared part into a module both can import)"


def test_the_graph_sees_the_packages_modules_and_their_edges() -> None:
    graph = import_graph()  # a broken walk would find no circle at all
    assert len(graph) > 300
    assert f"{PACKAGE}.runner.workloads.base" in graph[f"{PACKAGE}.runner.workloads.tpcb.workload"]
    assert f"{PACKAGE}.runner.workloads" in graph[f"{PACKAGE}.runner.workloads.registry"]
    # a function-level import counts (spec/properties.py asks the registry only when called)
    assert f"{PACKAGE}.runner.workloads.registry" in graph[f"{PACKAGE}.spec.properties"]
