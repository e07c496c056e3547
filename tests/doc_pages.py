"""The documentation as a reader meets it: README.md, then the docs site's pages in the order of mkdocs.yml's nav.

Shared by the tests of the documentation (tests/test_readme.py, tests/test_docs_snippets.py,
tests/commands/test_documented_commands.py): fenced blocks by language, shell commands as words.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"

FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def nav_pages() -> list[Path]:
    """The docs pages of mkdocs.yml's nav, in order."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    return [DOCS / name for name in _nav_files(config["nav"])]


def pages() -> list[Path]:
    """README.md, then every docs page: those of the nav in its order, then any other ``docs/**/*.md``."""
    listed = nav_pages()
    others = sorted(p for p in DOCS.rglob("*.md") if p not in listed)
    return [README, *listed, *others]


def page_id(path: Path) -> str:
    """``README.md``, ``docs/autosxs.md`` …: a page as the tests name it."""
    return str(path.relative_to(REPO))


def fenced(path: Path) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of a page, in order."""
    return [(m["lang"], m["body"]) for m in FENCE.finditer(path.read_text(encoding="utf-8"))]


def blocks(path: Path, lang: str) -> list[str]:
    """The bodies of a page's blocks fenced as ``lang``."""
    return [body for block_lang, body in fenced(path) if block_lang == lang]


def commands(block: str) -> list[list[str]]:
    """Each shell command of a block as words: continuation lines joined, comments dropped, split at && ; | &."""
    found: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        found.append([])
        for word in shlex.split(line, comments=True):
            if word in {"&&", ";", "|", "||", "&"}:
                found.append([])
            else:
                found[-1].append(word)
    return [c for c in found if c]


def without_env(command: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split ``VAR=value … program args`` into the environment assignments and the command."""
    env: dict[str, str] = {}
    rest = list(command)
    while rest and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    return env, rest
