"""Declared dependencies match what the code imports (pyproject.toml against an AST scan of the sources).

- every third-party distribution the library imports is declared (in ``dependencies`` or an extra), and
  every declared runtime dependency is imported, except :data:`NOT_IMPORTED`;
- what a library module imports at module level is a core dependency: extras are imported lazily, inside
  the function that needs them, so a missing extra fails only the feature that needs it (with a message
  naming the extra);
- the ``test`` extra, with what it pulls in, installs everything the tests and benchmarks import.

A module name is mapped to its distribution through the installed distributions' file lists
(``importlib.metadata``), so namespace packages (``google.genai``, ``google.cloud.storage``) resolve to the
distribution that ships them.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIBRARY = [REPO / "src" / "autorater_pipelines"]  # components/ and pipelines/ included
TESTS = [REPO / "tests", REPO / "benchmarks"]
NOT_IMPORTED = {"aiohttp": "google-genai's async transport, used when installed"}
"""Declared runtime dependencies that no module imports by name, and why they are declared."""
LOCAL = {"autorater_pipelines"} | {p.stem for root in TESTS for p in root.rglob("*.py")}
"""First-party modules: the package and the helper modules next to the tests and benchmarks."""
VENV = {"pip", "setuptools"}
"""Distributions every virtual environment has (a test imports pip's vendored tomli on Python 3.10)."""

tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _requirement_name(requirement: str) -> str:
    return _name(re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0])


@functools.cache
def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _declared(*groups: str) -> set[str]:
    """Distribution names in ``dependencies`` (group ``""``) and the named extras."""
    project = _pyproject()["project"]
    names = set()
    for group in groups:
        requirements = project["dependencies"] if group == "" else project["optional-dependencies"][group]
        names |= {_requirement_name(r) for r in requirements}
    return names - {"autorater-pipelines"}


def _runtime_groups() -> tuple[str, ...]:
    # test and docs are tool extras (pytest, mkdocs …), not features of the library
    return ("", *(g for g in _pyproject()["project"]["optional-dependencies"] if g not in {"test", "docs"}))


def _imports(paths: list[Path], *, top_level_only: bool = False) -> dict[str, set[str]]:
    """Absolute imports of third-party modules in ``paths`` → the files importing them.

    With ``top_level_only``, only imports in a module's body (not in functions, classes or
    ``if TYPE_CHECKING:`` blocks) count.
    """
    found: dict[str, set[str]] = {}
    for root in paths:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            nodes = _body_imports(tree.body) if top_level_only else list(ast.walk(tree))
            for node in nodes:
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [f"{node.module}.{alias.name}" for alias in node.names]
                else:
                    continue
                for name in names:
                    if name.split(".")[0] not in sys.stdlib_module_names | LOCAL:
                        found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def _body_imports(body: list[ast.stmt]) -> list[ast.stmt]:
    nodes: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            nodes.append(node)
        elif isinstance(node, ast.Try):
            nodes += _body_imports(node.body)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            nodes += _body_imports(node.body) + _body_imports(node.orelse)
    return nodes


@functools.cache
def _module_owners() -> dict[str, str]:
    """Installed module path (``google/genai``, ``yaml``, ``_re2`` …, relative to site-packages) → distribution."""
    owners = {}
    for distribution in metadata.distributions():
        name = _name(distribution.metadata["Name"])
        for file in distribution.files or []:
            path = str(file)
            if path.endswith("/__init__.py"):
                module = path[: -len("/__init__.py")]
            elif path.endswith(".py"):
                module = path[: -len(".py")]
            elif path.endswith((".so", ".pyd")):
                module = path.split(".")[0]  # re2.cpython-311-x86_64-linux-gnu.so → re2
            else:
                continue
            owners.setdefault(module, name)
    return owners


def distribution_of(module: str) -> str | None:
    """The installed distribution that ships ``module`` (its most specific package or module file)."""
    owners = _module_owners()
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        found = owners.get("/".join(parts[:end]))
        if found:
            return found
    return None


def _distributions(imports: dict[str, set[str]]) -> dict[str, set[str]]:
    """Distribution → importing files; a module no installed distribution ships is an error."""
    found: dict[str, set[str]] = {}
    for module, files in imports.items():
        distribution = distribution_of(module)
        assert distribution is not None, f"{module} (imported in {sorted(files)}) is not installed"
        found.setdefault(distribution, set()).update(files)
    return found


def _closure(names: set[str]) -> set[str]:
    """``names`` and every distribution they require, transitively (with the extras they ask for)."""
    from packaging.requirements import Requirement

    environment = {"python_version": f"{sys.version_info[0]}.{sys.version_info[1]}", "sys_platform": sys.platform}
    seen: set[str] = set()
    todo = [(Requirement(n), "") for n in names]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({**environment, "extra": extra}):
            continue
        name = _name(requirement.name)
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen.update({key, name})
        try:
            needs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for wanted in ["", *sorted(requirement.extras)]:
            todo += [(Requirement(r), wanted) for r in needs]
    return {n for n in seen if "[" not in n}


def test_distribution_lookup_handles_namespace_packages() -> None:
    assert distribution_of("google.genai.types") == "google-genai"
    assert distribution_of("google.cloud.storage") == "google-cloud-storage"
    assert distribution_of("yaml") == "pyyaml"
    assert distribution_of("re2") == "google-re2"


def test_every_library_import_is_declared() -> None:
    used = _distributions(_imports(LIBRARY))
    undeclared = {d: sorted(files) for d, files in used.items() if d not in _declared(*_runtime_groups())}
    assert undeclared == {}, "imported but not declared in pyproject.toml"


def test_every_declared_runtime_dependency_is_imported() -> None:
    used = set(_distributions(_imports(LIBRARY)))
    unused = _declared(*_runtime_groups()) - used - set(NOT_IMPORTED)
    assert unused == set(), "declared in pyproject.toml but imported nowhere in the library"
    assert not set(NOT_IMPORTED) & used, "imported now: remove it from NOT_IMPORTED"


def test_extras_are_imported_lazily() -> None:
    top_level = _distributions(_imports(LIBRARY, top_level_only=True))
    optional = {d: sorted(files) for d, files in top_level.items() if d not in _declared("")}
    assert optional == {}, "packages of an extra imported at module level (import them inside the function)"


def test_the_test_extra_installs_what_tests_and_benchmarks_import() -> None:
    used = _distributions(_imports(TESTS))
    installed = _closure(_declared(*_pyproject()["project"]["optional-dependencies"], ""))
    missing = {d: sorted(files)[:3] for d, files in used.items() if d not in installed | VENV}
    assert missing == {}, "imported by tests or benchmarks but not installed by .[test]"
