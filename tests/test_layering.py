"""The package's import structure: no import circle between files, and every import runs down the declared layers.

Module-level imports are read with ``ast`` (what runs when a module is imported): imports inside functions
(heavy optional dependencies, KFP component bodies) are left out, and so are ``if TYPE_CHECKING:`` blocks for the
layer order (types only); a second check keeps the type-only imports free of circles too. A failure prints the
offending chain of files. One rule reads every import, inside functions and ``if TYPE_CHECKING:`` too: no
evaluation imports a sibling evaluation (issue 20; what two evaluations share lives in ``pairwise``/``evaluation``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = "autorater_pipelines"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "redaction", "unencodable", "bounds"),  # what every layer uses: errors, redaction, text, bounds
    ("",),  # the package's __init__: its version
    ("io",),
    ("models",),
    ("evaluation",),
    ("pairwise",),
    ("autosxs", "gecko", "arena"),  # evaluations: siblings never import each other
    ("registry",),
    ("components",),
    ("pipelines",),
    ("report",),
    ("commands",),
    ("testing",),
    ("cli",),
)
"""The declared layer order, lowest first: a module imports only from its own package or a lower layer."""


def _modules() -> dict[str, Path]:
    """Every module of the package (name → file); ``compiled`` is data, its link is not followed."""
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt], type_checking: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """The import statements that run at import time (not inside functions), each with "only for types"."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_checking
        elif isinstance(node, ast.If):
            yield from _module_level(node.body, type_checking or _is_type_checking(node.test))
            yield from _module_level(node.orelse, type_checking)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _module_level(block, type_checking)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _module_level(node.body, type_checking)


def _targets(node: ast.Import | ast.ImportFrom, name: str, package: str, modules: dict[str, Path]) -> Iterator[str]:
    """The modules of the package one import statement of module ``name`` (in ``package``) imports."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*up, *([node.module] if node.module else [])])
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    for target in targets:
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in modules and target != name:
            yield target


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _imports(modules: dict[str, Path]) -> dict[str, dict[str, bool]]:
    """Module → {imported module of the package: only for types}; ``from a import b`` names ``a.b`` if a module."""
    graph: dict[str, dict[str, bool]] = {}
    for name, path in modules.items():
        package = _package_of(name, path)
        edges: dict[str, bool] = {}
        for node, types_only in _module_level(ast.parse(path.read_text(encoding="utf-8")).body, False):
            for target in _targets(node, name, package, modules):
                edges[target] = edges.get(target, True) and types_only
        graph[name] = edges
    return graph


def _every_import(name: str, source: str, modules: dict[str, Path], package: str) -> dict[str, int]:
    """Module of the package → first line importing it, over every import of ``source`` (functions included)."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in _targets(node, name, package, modules):
                found.setdefault(target, node.lineno)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle (strongly connected set of more than one module) as a chain ``a -> b -> … -> a``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                members.add(w)
                if w == v:
                    break
            if len(members) > 1:
                circles.append(_chain(graph, members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def _chain(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """One cycle through a strongly connected set: the shortest way back to its first member."""
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return sorted(members)


def _layer(module: str) -> tuple[int, str]:
    """(rank, top-level part) of a module of the package."""
    top = module.split(".")[1] if "." in module else ""
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank, top
    raise AssertionError(f"{module}: {top!r} has no declared layer; add it to LAYERS in {__file__}")


MODULES = _modules()
GRAPH = _imports(MODULES)
EVALUATIONS = LAYERS[[i for i, names in enumerate(LAYERS) if "autosxs" in names][0]]
"""The evaluation packages: siblings in one layer."""


def _sibling_evaluation_imports(name: str, source: str, package: str) -> list[str]:
    """``module:line -> target`` for each import of a sibling evaluation, anywhere in ``source``."""
    top = _layer(name)[1]
    if top not in EVALUATIONS:
        return []
    return [
        f"{name}:{line} -> {target}"
        for target, line in sorted(_every_import(name, source, MODULES, package).items())
        if _layer(target)[1] in EVALUATIONS and _layer(target)[1] != top
    ]


def test_the_graph_sees_the_package_and_its_imports() -> None:
    """The reading works: known modules and edges are there (else the checks below could pass on nothing)."""
    assert f"{PACKAGE}.components.gecko_score" in GRAPH and f"{PACKAGE}.pipelines.autosxs" in GRAPH
    assert f"{PACKAGE}.components.gecko_score" in GRAPH[f"{PACKAGE}.pipelines.gecko"]  # pipelines → components
    assert f"{PACKAGE}.registry" in GRAPH[f"{PACKAGE}.commands._run_spec"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_circle_between_files() -> None:
    runtime = {m: {t for t, types_only in edges.items() if not types_only} for m, edges in GRAPH.items()}
    circles = _circles(runtime)
    assert not circles, "import circles (module-level imports):\n" + "\n".join(" -> ".join(c) for c in circles)


def test_no_import_circle_even_through_type_only_imports() -> None:
    """``if TYPE_CHECKING:`` imports only name types, but a circle through them is still a knot in the structure."""
    circles = _circles({m: set(edges) for m, edges in GRAPH.items()})
    assert not circles, "import circles (with TYPE_CHECKING imports):\n" + "\n".join(" -> ".join(c) for c in circles)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_run_down_the_layers(module: str) -> None:
    rank, top = _layer(module)
    up = []
    for target, types_only in sorted(GRAPH[module].items()):
        target_rank, target_top = _layer(target)
        if types_only or target_top == top:
            continue
        if target_rank >= rank:
            up.append(f"{module} ({top or PACKAGE}) -> {target} ({target_top or PACKAGE})")
    assert not up, (
        "imports running up or sideways the layers " + " < ".join("/".join(n) for n in LAYERS) + ":\n" + ("\n".join(up))
    )


def test_the_sibling_rule_sees_imports_inside_functions() -> None:
    """The reading finds in-function and type-only imports (else the rule below could pass on nothing)."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from autorater_pipelines.gecko import params\n"
        "def evaluate():\n"
        "    from autorater_pipelines.autosxs.steps import judge_examples\n"
        "    from autorater_pipelines.pairwise import judge\n"
        "    from . import leaderboard\n"
    )
    found = _sibling_evaluation_imports(f"{PACKAGE}.arena.dataframe", source, f"{PACKAGE}.arena")
    assert found == [
        f"{PACKAGE}.arena.dataframe:5 -> {PACKAGE}.autosxs.steps",
        f"{PACKAGE}.arena.dataframe:3 -> {PACKAGE}.gecko.params",
    ]
    in_function = _every_import(
        f"{PACKAGE}.components.autosxs_report",
        MODULES[f"{PACKAGE}.components.autosxs_report"].read_text(encoding="utf-8"),
        MODULES,
        f"{PACKAGE}.components",
    )
    assert f"{PACKAGE}.report" in in_function  # the KFP component body's import, inside its function


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m)[1] in EVALUATIONS))
def test_no_evaluation_imports_a_sibling_evaluation(module: str) -> None:
    """Not at module level, not inside a function, not for types: shared code belongs in a lower layer."""
    path = MODULES[module]
    found = _sibling_evaluation_imports(module, path.read_text(encoding="utf-8"), _package_of(module, path))
    assert not found, (
        f"imports of a sibling evaluation ({', '.join(EVALUATIONS)}); move what they share to "
        "autorater_pipelines.pairwise or autorater_pipelines.evaluation:\n" + "\n".join(found)
    )
