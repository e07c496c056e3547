"""What importing the library costs: heavy packages load only in the functions that use them.

Every KFP step is a fresh process, so import time is start-up time of every step (issue 9: ~86 % of a
small local run's CPU went to imports). Checked with ``python -X importtime`` in a fresh interpreter, which
lists every module the code imported, directly or not.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "scipy",
    "sklearn",
    "pandas",
    "numpy",
    "pyarrow",
    "matplotlib",
    "PIL",
    "google.cloud.",
    "google.genai",
    "openai",
    "aiohttp",
    "kubernetes",
    "kfp",
)
"""Packages that take 0.1-2 s to import and that a step, or the CLI, needs only for some work."""


def imported_modules(code: str) -> set[str]:
    """Names of the modules ``python -X importtime -c code`` imported."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    names = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def heavy(names: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    """The modules of ``names`` in :data:`HEAVY` packages that are not ``allowed``."""

    def match(name: str, package: str) -> bool:
        return name.startswith(package) if package.endswith(".") else name == package or name.startswith(package + ".")

    return sorted(n for n in names if any(match(n, p) for p in HEAVY) and not any(match(n, p) for p in allowed))


def test_the_check_sees_a_heavy_import() -> None:
    assert "scipy.special" in heavy(imported_modules("import scipy.special"))


@pytest.mark.parametrize(
    "module",
    [
        "autorater_pipelines.autosxs",
        "autorater_pipelines.autosxs.metrics",
        "autorater_pipelines.gecko",
        "autorater_pipelines.models",
        "autorater_pipelines.io",
        "autorater_pipelines.evaluation",
        "autorater_pipelines.report",
    ],
)
def test_library_packages_import_no_heavy_package(module: str) -> None:
    assert heavy(imported_modules(f"import {module}")) == []


def test_cli_starts_without_heavy_or_parsing_packages() -> None:
    names = imported_modules("from autorater_pipelines.cli import build_parser; build_parser()")
    assert heavy(names) == []
    assert not {"pydantic", "jinja2", "yaml"} & names


def test_local_runner_imports_kfp_without_its_kubernetes_client() -> None:
    code = "from autorater_pipelines.pipelines._local import _import_kfp_runner; _import_kfp_runner()"
    names = imported_modules(code)
    assert {"kfp.local", "kfp.components"} <= names
    assert not [n for n in names if n.startswith(("kubernetes", "kfp.client", "kfp_server_api"))]


def test_parameters_are_checked_against_the_template_without_kfp() -> None:
    """``autorater run`` reads the template's inputs in its own process; only the pipeline process imports kfp."""
    template = Path(__file__).resolve().parents[1] / "compiled" / "autosxs.yaml"
    code = (
        "from autorater_pipelines.pipelines._local import template_inputs\n"
        f"assert template_inputs({str(template)!r})['autorater_model'].type == 'STRING'\n"
    )
    assert heavy(imported_modules(code)) == []
