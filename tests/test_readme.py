"""The README as a newcomer reads it: every file its commands and its repository paths name exists.

Commands are the ```` ```bash ```` blocks, read top to bottom: a path an earlier command creates
(``--output-dir out/quickstart``, ``--out``, ``python -m venv .venv``) may be used by a later one
(``autorater report out/quickstart``). Absolute paths, URLs and shell variables are the reader's own.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

_FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)
_CREATES = {"--output-dir", "--out", "--output", "venv"}
"""An argument after one of these is created by the command."""
_FILE_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".py", ".sh", ".ipynb", ".toml", ".lock", ".md", ".csv")
_REPO_DIRS = ("examples/", "tests/", "src/", ".ci/", "requirements/", "benchmarks/", "compiled/", "components/")


def _blocks(lang: str) -> list[str]:
    return [m["body"] for m in _FENCE.finditer(README.read_text(encoding="utf-8")) if m["lang"] == lang]


def _commands(block: str) -> list[list[str]]:
    """Each shell command of a block as words: continuation lines joined, comments dropped, split at && ; |."""
    commands: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        commands.append([])
        for word in shlex.split(line, comments=True):
            if word in {"&&", ";", "|", "||"}:
                commands.append([])
            else:
                commands[-1].append(word)
    return [c for c in commands if c]


_NOT_A_PATH = ("$", "…", "://", "*", "@", "=", "[", "]")
"""Marks of shell variables, placeholders, URLs, patterns, options and usage synopses."""


def _is_path(word: str) -> bool:
    if any(mark in word for mark in _NOT_A_PATH) or word.startswith(("-", "/", "{", "'")):
        return False
    return "/" in word or word.endswith(_FILE_SUFFIXES)


def _command_paths() -> list[tuple[str, list[str], set[str]]]:
    """(path, command, paths created by earlier commands) for every path-like argument, in README order."""
    created: set[str] = set()
    found = []
    for block in _blocks("bash"):
        for command in _commands(block):
            for before, word in zip(["", *command], command, strict=False):
                if before in _CREATES:
                    created.add(word.rstrip("/"))
                elif _is_path(word):
                    found.append((word, command, set(created)))
    return found


def test_the_readme_has_command_blocks_with_repository_files():
    paths = [p for p, _, _ in _command_paths()]
    # The quickstarts and the submit check name the example parameter files: the extraction sees them.
    assert "examples/quickstart/params.json" in paths and "examples/gecko_quickstart/params.json" in paths
    assert "cloudbuild.yaml" in paths


@pytest.mark.parametrize("path, command, created", _command_paths(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_file_a_readme_command_names_exists(path, command, created):
    if any(path == c or path.startswith(c + "/") for c in created):
        return  # made by an earlier command of the README
    if path.startswith("../"):  # the shared data beside the repository (tests skip without it)
        if not (REPO.parent / "shared").is_dir():
            pytest.skip("no ../shared beside the repository")
    assert (REPO / path).exists(), f"README command `{shlex.join(command)}` names {path!r}, which does not exist"


def test_every_repository_path_in_the_readme_text_exists():
    text = README.read_text(encoding="utf-8")
    spans = {s.split("::")[0].rstrip("/") for s in re.findall(r"`([^`\s]+)`", text) if s.startswith(_REPO_DIRS)}
    spans = {s for s in spans if not re.search(r"[<>*…{$]", s)}  # patterns such as compiled/<pipeline>.yaml
    assert len(spans) > 10
    missing = sorted(s for s in spans if not (REPO / s).exists())
    assert missing == [], f"README names files that do not exist: {missing}"


def test_the_readme_shows_the_quickstart_parameter_file_as_it_is():
    shown = [json.loads(b) for b in _blocks("json") if b.lstrip().startswith("{")]
    assert json.loads((REPO / "examples" / "quickstart" / "params.json").read_text()) in shown
