"""The component image: Dockerfile properties, its build context, and a wheel that holds every package."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ (reads pyproject.toml)")
REPO = Path(__file__).resolve().parents[1]


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _package_dirs() -> dict[str, Path]:
    """Installed package name → source directory: every package setuptools finds under pyproject's ``where``."""
    [where] = _pyproject()["tool"]["setuptools"]["packages"]["find"]["where"]
    root = REPO / where
    return {
        ".".join(init.parent.relative_to(root).parts): init.parent
        for init in sorted(root.glob("**/__init__.py"))
        if "__pycache__" not in init.parts
    } | {  # compiled/ is a link into the repository's compiled/ (glob does not follow it on every Python)
        "autorater_pipelines.compiled": root / "autorater_pipelines" / "compiled"
    }


def test_slim_python_base_as_an_argument_and_root_with_world_writable_caches():
    """Base: an ARG (CI builds a stand-in where python:3.11-slim cannot be pulled); both stages use it.

    User: root, as Vertex AI and the KFP launcher run steps (a non-root image user cannot write the artifact
    paths KFP creates, kubeflow/pipelines#5673); what steps write besides artifacts is world-writable, so any
    uid works too (tests/image runs the templates as uid 10001).
    """
    instructions = _instructions()
    assert ("ARG", "BASE_IMAGE=python:3.11-slim") in instructions
    bases = [args.split()[0] for op, args in instructions if op == "FROM"]
    assert bases == ["${BASE_IMAGE}", "deps", "${BASE_IMAGE}"], "build stages and the runtime stage on one base"
    assert not [args for op, args in instructions if op == "USER" and args not in ("root", "0")]
    env = " ".join(args for op, args in instructions if op == "ENV")
    cache_dir = re.search(r"AUTORATER_CACHE_DIR=(\S+)", env).group(1)
    xdg_dir = re.search(r"XDG_CACHE_HOME=(\S+)", env).group(1)
    last_run = [args for op, args in instructions if op == "RUN"][-1]
    for directory in (cache_dir, xdg_dir):
        assert directory.startswith("/var/cache/autorater-pipelines/") and directory in last_run
    assert "chmod 1777 /var/cache/autorater-pipelines/*" in last_run


def test_installs_the_locked_runtime_dependencies_then_this_package_without_its_dependencies():
    runs = [args for op, args in _instructions() if op == "RUN"]
    assert any(re.search(r"pip install .*-r /tmp/image\.lock", run) for run in runs)
    assert any(re.search(r"pip --python /opt/autorater/bin/python install .*--no-deps \.(\s|$)", run) for run in runs)
    assert any("pip --python /opt/autorater/bin/python check" in run for run in runs)
    assert ("COPY", "requirements/image.lock /tmp/image.lock") in _instructions()
    assert "kfp==2.17.3" in _pyproject()["project"]["dependencies"], "kfp must stay pinned (compiled YAML ↔ image)"


def _root(module: str) -> str:
    """``numpy.linalg`` → ``numpy``; Google's namespace packages keep their package: ``google.cloud.storage``."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[:2] == ["google", "cloud"] else parts[:2] if parts[0] == "google" else parts[:1])


def _third_party_imports() -> set[str]:
    """Third-party packages the library imports, anywhere (lazy imports included)."""
    import ast

    names = set()
    for path in (REPO / "src" / "autorater_pipelines").rglob("*.py"):
        if "testing" in path.parts or path.parent.name == "commands":  # test helpers; the CLI's own commands
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                namespace = node.module in ("google", "google.cloud")
                modules = [f"{node.module}.{a.name}" for a in node.names] if namespace else [node.module]
            names |= {_root(m) for m in modules}
    return {n for n in names if n.split(".")[0] not in sys.stdlib_module_names | {"autorater_pipelines", "__future__"}}


NOT_PRECOMPILED = {"google.cloud.aiplatform"}
"""Imported by one rare path only (Model Registry evaluations of registry models); the Dockerfile says why."""


def test_the_image_byte_compiles_every_third_party_module_the_library_imports():
    """The deps stage imports them once so their .pyc files ship (no step compiles them at start-up)."""
    [warm_up] = [args for op, args in _instructions() if op == "RUN" and "PYTHONDONTWRITEBYTECODE= " in args]
    imported = re.findall(r"\bimport ([\w.]+(?: as \w+)?(?:, [\w.]+(?: as \w+)?)*)", warm_up)
    warmed = {_root(name.split(" as ")[0]) for group in imported for name in group.split(", ")}
    missing = _third_party_imports() - warmed - NOT_PRECOMPILED
    assert not missing, f"add to the Dockerfile's byte-compiling imports: {sorted(missing)}"


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements" / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            package, version = line.split("==")
            pins[package.lower().replace("_", "-")] = version
    return pins


def _runtime_closure(requirements: list[str]) -> set[str]:
    """Names of the distributions the requirements need, transitively, from installed metadata (Linux, 3.11)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    environment = {"sys_platform": "linux", "platform_system": "Linux", "python_version": "3.11"}
    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({**environment, "extra": extra}):
            continue
        name = requirement.name.lower().replace("_", "-")
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen.update({key, name})
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        for wanted in [""] + sorted(requirement.extras):
            todo += [(Requirement(r), wanted) for r in needs]
    return {n for n in seen if "[" not in n}


def test_the_lock_files_pin_every_dependency_within_pyproject_and_agree():
    """requirements/image.lock (the Dockerfile) and ci.lock (.ci/run, Cloud Build): regenerate with
    `bash requirements/update.sh` after changing dependencies."""
    from packaging.requirements import Requirement

    image, ci = _pins("image.lock"), _pins("ci.lock")
    assert {p: v for p, v in ci.items() if p in image} == image, "image.lock and ci.lock pin different versions"
    project = _pyproject()["project"]
    runtime = project["dependencies"] + project["optional-dependencies"]["cloud"]  # the image reads gs:// and bq://
    groups = {"image.lock": (image, runtime)}
    groups["ci.lock"] = (ci, [d for deps in project["optional-dependencies"].values() for d in deps])
    for lock, (pins, requirements) in groups.items():
        for requirement in map(Requirement, requirements):
            if requirement.name == "autorater-pipelines":
                continue
            name = requirement.name.lower().replace("_", "-")
            assert name in pins, f"{lock} does not pin {name}: run bash requirements/update.sh"
            assert pins[name] in requirement.specifier, f"{lock}: {name}=={pins[name]} outside {requirement}"
    stale = set(image) - _runtime_closure(runtime)
    assert not stale, (
        f"image.lock pins packages no runtime dependency needs: {sorted(stale)}; run bash requirements/update.sh"
    )
    assert "google-cloud-aiplatform" in image, "the Model Registry step (autosxs/model_registry.py) needs it"
    assert not {"pytest", "ruff", "mypy", "docker"} & set(image), "test-only packages in the component image"
    for sdk in ("google-genai", "openai"):
        [spec] = [Requirement(d).specifier for d in project["dependencies"] if Requirement(d).name == sdk]
        assert any(s.operator == "<" for s in spec), f"{sdk} needs an upper bound"


def test_copies_every_source_root_and_the_build_context_allows_them():
    copied = set()
    for op, args in _instructions():
        if op == "COPY":
            copied.update(args.split()[:-1])
    roots = set(_pyproject()["tool"]["setuptools"]["packages"]["find"]["where"])
    linked = {os.path.relpath(p.resolve(), REPO) for p in _package_dirs().values() if p.is_symlink()}
    needed = roots | linked | {"pyproject.toml", "README.md"}  # README: pyproject's readme; compiled/: linked
    assert needed <= copied, f"not copied into the image: {needed - copied}"
    patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()]
    patterns = [p for p in patterns if p and not p.startswith("#")]

    def included(path: str) -> bool:  # Docker semantics: the last matching pattern wins
        keep = True
        for pattern in patterns:
            negate = pattern.startswith("!")
            if fnmatch.fnmatch(path, pattern.lstrip("!").rstrip("/")):
                keep = negate
        return keep

    for name in needed:
        assert included(name), f".dockerignore excludes {name}"
    for name in (".git", ".venv", "build", "tests", "out"):
        assert not included(name), f".dockerignore lets {name} into the build context"


def test_the_wheel_holds_every_package_and_file(tmp_path):
    """`pip install .` in the image installs a wheel: every module and data file must be in it."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode and "Could not find a version that satisfies" in result.stderr:
        pytest.skip(f"build backend not installable here: {result.stderr.strip()[-300:]}")
    assert result.returncode == 0, result.stderr
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for package, source in _package_dirs().items():
        prefix = package.replace(".", "/")
        assert f"{prefix}/__init__.py" in names, f"package {package} is not in the wheel"
        for path in source.iterdir():
            if path.is_file() and path.suffix != ".pyc" and f"{prefix}/{path.name}" not in names:
                missing.append(f"{prefix}/{path.name}")
            elif path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").exists():
                missing += [
                    f"{prefix}/{p.relative_to(source)}"
                    for p in path.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and f"{prefix}/{p.relative_to(source)}" not in names
                ]
            elif path.is_dir() and (path / "__init__.py").exists() and f"{package}.{path.name}" not in _package_dirs():
                missing.append(
                    f"{prefix}/{path.name}/ (subpackage not found by pyproject [tool.setuptools.packages.find])"
                )
    assert not missing, f"files missing from the wheel: {missing}"
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "autorater = autorater_pipelines.cli:main" in entry_points


def test_ci_and_cloud_build_install_with_the_lock():
    import yaml

    [install] = [s for s in yaml.safe_load((REPO / "cloudbuild.yaml").read_text())["steps"] if s["id"] == "install"]
    assert "pip install --quiet -c requirements/ci.lock -e '.[test]'" in install["args"][1]
    assert 'pip" install --quiet -c requirements/ci.lock -e ".[test]"' in (REPO / ".ci" / "run").read_text()
