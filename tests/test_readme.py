"""The README and the docs pages as a newcomer reads them: every file their commands and repository paths name
exists, every link between them resolves, every ``autorater`` command they show is one the CLI accepts.

Commands are the ```` ```bash ```` blocks, read top to bottom, README first and then the docs pages in the order of
mkdocs.yml's nav: a path an earlier command creates (``--output-dir out/quickstart``, ``--out``,
``python -m venv .venv``) may be used by a later one (``autorater report out/quickstart``). Absolute paths, URLs
and shell variables are the reader's own.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shlex
from pathlib import Path

import pytest
from doc_pages import DOCS, README, REPO, blocks, commands, nav_pages, page_id, pages, without_env

from autorater_pipelines.cli import build_parser

_CREATES = {"--output-dir", "--out", "--output", "venv", ">"}
"""An argument after one of these is created by the command (``>``: a redirection)."""
_FILE_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".py", ".sh", ".ipynb", ".toml", ".lock", ".md", ".csv")
_REPO_DIRS = (
    "examples/",
    "tests/",
    "src/",
    ".ci/",
    "requirements/",
    "benchmarks/",
    "compiled/",
    "components/",
    "docs/",
)

_NOT_A_PATH = ("$", "…", "://", "*", "@", "=", "[", "]")
"""Marks of shell variables, placeholders, URLs, patterns, options and usage synopses."""


def _is_path(word: str) -> bool:
    if any(mark in word for mark in _NOT_A_PATH) or word.startswith(("-", "/", "{", "'")):
        return False
    return "/" in word or word.endswith(_FILE_SUFFIXES)


def _command_paths() -> list[tuple[str, str, list[str], set[str]]]:
    """(page, path, command, paths created by earlier commands) for every path-like argument, in reading order."""
    created: set[str] = set()
    found = []
    for page in pages():
        for block in blocks(page, "bash"):
            for command in commands(block):
                for before, word in zip(["", *command], command, strict=False):
                    if before in _CREATES:
                        created.add(word.rstrip("/"))
                    elif _is_path(word):
                        found.append((page_id(page), word, command, set(created)))
    return found


def test_the_docs_have_command_blocks_with_repository_files():
    paths = {(page, p) for page, p, _, _ in _command_paths()}
    # The quickstarts and the submit check name the example parameter files: the extraction sees them.
    assert ("README.md", "examples/quickstart/params.json") in paths
    assert ("README.md", "examples/gecko_quickstart/params.json") in paths
    assert ("docs/vertex-ai.md", "cloudbuild.yaml") in paths
    assert {page for page, _ in paths} >= {"README.md", "docs/autosxs.md", "docs/gecko.md", "docs/vertex-ai.md"}


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    listed = nav_pages()
    assert [p for p in listed if not p.is_file()] == []
    assert sorted(set(DOCS.rglob("*.md")) - set(listed)) == []


@pytest.mark.parametrize(
    "page, path, command, created", _command_paths(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_file_a_documented_command_names_exists(page, path, command, created):
    if any(path == c or path.startswith(c + "/") for c in created):
        return  # made by an earlier command of the docs
    if path.startswith("../"):  # the shared data beside the repository (tests skip without it)
        if not (REPO.parent / "shared").is_dir():
            pytest.skip("no ../shared beside the repository")
    assert (REPO / path).exists(), f"{page}: command `{shlex.join(command)}` names {path!r}, which does not exist"


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_every_repository_path_in_the_text_exists(page: Path):
    text = page.read_text(encoding="utf-8")
    spans = {s.split("::")[0].rstrip("/") for s in re.findall(r"`([^`\s]+)`", text) if s.startswith(_REPO_DIRS)}
    spans = {s for s in spans if not re.search(r"[<>*…{$]", s)}  # patterns such as compiled/<pipeline>.yaml
    missing = sorted(s for s in spans if not (REPO / s).exists())
    assert missing == [], f"{page_id(page)} names files that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    """``autorater_pipelines.a.b.C`` names an importable module, or an attribute of one."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_every_module_and_package_file_the_text_names_exists(page: Path):
    """Names like `autorater_pipelines.gecko.params.GeckoParams` and package paths like `gecko/rubrics.py` follow
    the code when modules move (the docs name them to say where a rule lives)."""
    text = page.read_text(encoding="utf-8")
    dotted = sorted(set(re.findall(r"`(autorater_pipelines(?:\.\w+)+)", text)))
    assert [d for d in dotted if not _resolves(d)] == [], f"{page_id(page)} names modules or objects that do not exist"
    package = REPO / "src" / "autorater_pipelines"
    files = {s for s in re.findall(r"`([\w/]+\.py)`", text) if "/" in s and not s.startswith(_REPO_DIRS)}
    missing = sorted(
        f for f in files if not (package / f).exists() and not (REPO / "src" / f).exists() and not (REPO / f).exists()
    )
    assert missing == [], f"{page_id(page)} names package files that do not exist: {missing}"


def test_the_readme_links_to_files_that_exist():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert "docs/index.md" in local and "CHANGELOG.md" in local
    assert [link for link in local if not (REPO / link).exists()] == []


def test_the_readme_stays_short():
    # issue 20: a README of install, test, the two quickstarts and where to go next; the rest is in docs/
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_shows_the_quickstart_parameter_file_as_it_is():
    shown = [json.loads(b) for b in blocks(README, "json") if b.lstrip().startswith("{")]
    assert json.loads((REPO / "examples" / "quickstart" / "params.json").read_text()) in shown


def _autorater_commands() -> list[tuple[str, list[str]]]:
    found = []
    for page in pages():
        for block in blocks(page, "bash"):
            for command in commands(block):
                _, command = without_env(command)
                if command[:1] == ["autorater"]:
                    redirect = next((i for i, w in enumerate(command) if w in {">", ">>", "<", "2>"}), len(command))
                    found.append((page_id(page), command[1:redirect]))
    return found


def test_the_docs_show_every_autorater_command():
    shown = {args[0] for _, args in _autorater_commands() if args}
    assert shown >= {"run", "submit", "compile", "publish", "report", "rescore"}


@pytest.mark.parametrize(
    "page, args", _autorater_commands(), ids=[f"{p}:{' '.join(a[:2])}" for p, a in _autorater_commands()]
)
def test_every_documented_autorater_command_parses(page, args):
    """Each ``autorater`` command of the docs uses a subcommand and options the CLI has (a synopsis with
    ``[optional]`` parts is checked with its optional parts included)."""
    args = [a for word in args for a in ([word.strip("[]")] if word.strip("[]") else [])]
    parser = build_parser()
    parser.exit_on_error = False
    try:
        parser.parse_args(args)
    except SystemExit as exc:  # --help, or argparse's own error exit
        assert exc.code == 0, f"{page}: `autorater {shlex.join(args)}` is refused by the CLI"
    except argparse.ArgumentError as exc:
        pytest.fail(f"{page}: `autorater {shlex.join(args)}`: {exc}")
