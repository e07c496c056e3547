"""The component image: Dockerfile properties, its build context, and a wheel that holds every package."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _package_dirs() -> dict[str, Path]:
    """Installed package name → source directory, from pyproject's setuptools configuration."""
    setuptools = _pyproject()["tool"]["setuptools"]
    roots = setuptools["package-dir"]
    dirs = {}
    for package in setuptools["packages"]:
        root = max((p for p in roots if package == p or package.startswith(p + ".")), key=len)
        dirs[package] = (
            REPO / roots[root] / Path(*package[len(root) :].lstrip(".").split(".") if package != root else ())
        )
    return dirs


def test_slim_python_base_and_a_non_root_user():
    instructions = _instructions()
    [base] = [args for op, args in instructions if op == "FROM"]
    assert base == "python:3.11-slim"
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1] not in ("root", "0"), "the image must end as a non-root user"
    runs = " ".join(args for op, args in instructions if op == "RUN")
    assert re.search(r"useradd .*\b" + re.escape(users[-1]) + r"\b", runs)
    run_ops = [i for i, (op, _) in enumerate(instructions) if op == "RUN"]
    user_op = max(i for i, (op, _) in enumerate(instructions) if op == "USER")
    assert user_op > max(run_ops), "install as root, then switch user"


def test_installs_this_package_with_pinned_kfp_and_no_pip_cache():
    runs = [args for op, args in _instructions() if op == "RUN"]
    assert any(re.search(r"pip install --no-cache-dir \.(\s|$)", run) for run in runs)
    assert "kfp==2.17.3" in _pyproject()["project"]["dependencies"], "kfp must stay pinned (compiled YAML ↔ image)"


def test_copies_every_source_root_and_the_build_context_allows_them():
    copied = set()
    for op, args in _instructions():
        if op == "COPY":
            copied.update(args.split()[:-1])
    roots = {Path(p).parts[0] for p in _pyproject()["tool"]["setuptools"]["package-dir"].values()}
    needed = roots | {"pyproject.toml", "README.md"}  # README: pyproject's readme
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
                missing.append(f"{prefix}/{path.name}/ (subpackage not listed in pyproject [tool.setuptools] packages)")
    assert not missing, f"files missing from the wheel: {missing}"
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "autorater = autorater_pipelines.cli:main" in entry_points
