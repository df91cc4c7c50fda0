"""No new import circle: every import counts, at the top of a module or inside a function.

A function-level import hides a circle from Python (the module is half-initialised only if both
import at the top) but not from a reader: two modules that need each other are one module in two
files. Imports under ``if TYPE_CHECKING:`` are left out, since they never run.

Circles that existed when this test was written are listed in ``KNOWN``, each to be closed (issue
28). The test fails on a circle that is not inside a known one, and on a known one that is gone, so
the list only ever shrinks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "benchwright"

KNOWN: tuple[frozenset[str], ...] = tuple(
    frozenset(f"{PACKAGE}.{name}" for name in names.split())
    for names in (
        "providers.aws providers.aws.launcher providers.aws.targets providers.aws.targets.ec2"
        " providers.aws.targets.node_replace",
        "experiments.capacity experiments.checks sharing spec spec.checks spec.duration spec.loading",
        "runner.workloads runner.workloads.base runner.workloads.oltp runner.workloads.oltp.workload"
        " runner.workloads.redisbench runner.workloads.redisbench.workload runner.workloads.sqlscript"
        " runner.workloads.sqlscript.workload runner.workloads.tpcb runner.workloads.tpcb.workload"
        " runner.workloads.tpcc runner.workloads.tpcc.workload runner.workloads.ycsb"
        " runner.workloads.ycsb.stream runner.workloads.ycsb.workload"
        " runner.workloads.pgscript.workload",  # a registered workload joins the registry's circle
    )
)


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


def _imported_names(node: ast.AST, package: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{anchor}.{base}" if base else anchor
        yield base
        yield from (f"{base}.{alias.name}" for alias in node.names)


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
            for imported in _imported_names(node, package):
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


def test_no_import_circle_beyond_the_known_ones() -> None:
    found = circles(import_graph())
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN)]
    assert new == [], "a new import circle (move the shared part into a module both can import)"


def test_every_known_circle_still_exists_so_the_list_only_shrinks() -> None:
    found = circles(import_graph())
    closed = [sorted(k) for k in KNOWN if not any(c & k for c in found)]
    assert closed == [], "closed: remove it from KNOWN"
