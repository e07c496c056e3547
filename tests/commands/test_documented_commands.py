"""The commands of the README and the docs pages, run as written, print what the pages show.

Every ``autorater run`` of a page whose parameter file is in the repository and names only ``replay/`` models runs
offline: it is run from the repository root (its output folder moved under a temporary folder) and must exit 0;
when the page shows its output in the block right after, the printed summary must be that block (the page's
``/…/OUT`` standing for the output folder). ``autorater report`` and ``autorater rescore`` of a page's earlier
output folder run on that run's outputs. A ``$ ``-prompted ``text`` block shows a command with its output on a
run these tests cannot make from the repository (the LLMBar rescore of docs/reports.md, whose params file a script
writes; checked in tests/report/test_rescore.py).
"""

from __future__ import annotations

import json
import shlex

import pytest
from doc_pages import REPO, commands, fenced, page_id, pages, without_env

from autorater_pipelines.cli import main

_MODEL_PARAMETERS = ("autorater_model", "model_a", "model_b", "rubric_generation_model", "validator_model")


def _offline(params_file: str) -> bool:
    path = REPO / params_file
    if not path.is_file():
        return False
    params = json.loads(path.read_text(encoding="utf-8"))
    models = [params.get(name) for name in _MODEL_PARAMETERS if params.get(name)]
    return bool(models) and all(str(m).startswith("replay/") for m in models)


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def _documented_runs() -> list[tuple[str, list[list[str]], list[str | None]]]:
    """(page, the page's runnable autorater commands in order, the output shown after each or None).

    A ``report``/``rescore`` of an output folder made by an earlier page's run (the reader ran it there) is preceded
    by that run.
    """
    found = []
    earlier: dict[str, list[str]] = {}  # output folder -> the run that made it, over the pages read so far
    for page in pages():
        sequence = fenced(page)
        runnable: list[list[str]] = []
        shown: list[str | None] = []
        made: set[str] = set()
        for i, (lang, body) in enumerate(sequence):
            if lang != "bash":
                continue
            cmds = commands(body)
            after = sequence[i + 1] if i + 1 < len(sequence) else None
            for command in cmds:
                env, command = without_env(command)
                if env or command[:1] != ["autorater"] or any("$" in w or "…" in w for w in command):
                    continue
                args = command[1:]
                if args[:1] == ["run"] and _offline(_option(args, "--params") or ""):
                    out = _option(args, "--output-dir") or ""
                    made.add(out)
                    earlier[out] = args
                elif args[:1] in (["report"], ["rescore"]) and len(args) > 1 and args[1] in earlier:
                    if args[1] not in made:
                        runnable.append(earlier[args[1]])
                        shown.append(None)
                        made.add(args[1])
                else:
                    continue
                runnable.append(args)
                alone = len(cmds) == 1 and after is not None and after[0] == "text"
                shown.append(after[1] if alone and args[0] == "run" else None)
        if runnable:
            found.append((page_id(page), runnable, shown))
    return found


def test_the_quickstarts_are_among_the_documented_runs():
    runs = {page: [shlex.join(a) for a in args] for page, args, _ in _documented_runs()}
    quickstart = "run autosxs --params examples/quickstart/params.json --output-dir out/quickstart --quiet"
    gecko = "run gecko --params examples/gecko_quickstart/params.json --output-dir out/gecko --quiet"
    assert quickstart in runs["README.md"] and gecko in runs["README.md"]
    assert quickstart in runs["docs/autosxs.md"] and gecko in runs["docs/gecko.md"]
    assert "report out/quickstart" in runs["docs/reports.md"]


@pytest.mark.pipeline
@pytest.mark.parametrize("page, runs, shown", _documented_runs(), ids=[page for page, _, _ in _documented_runs()])
def test_documented_commands_print_what_the_page_shows(page, runs, shown, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # the pages run every command from the repository root
    monkeypatch.setenv("AUTORATER_CACHE_DIR", str(tmp_path / "cache"))
    moved: dict[str, str] = {}
    for args, expected in zip(runs, shown, strict=True):
        out = _option(args, "--output-dir") if args[0] == "run" else args[1]
        moved.setdefault(out, str(tmp_path / out))
        given = [
            moved[out] if (w == out and (i == 1 or prev == "--output-dir")) else w
            for i, (prev, w) in enumerate(zip(["", *args], args, strict=False))
        ]
        code = main(given)
        printed = capsys.readouterr().out
        assert code == 0, f"{page}: `autorater {shlex.join(args)}` exited {code}:\n{printed}"
        if expected is not None:  # the page writes the output folder as /…/OUT
            assert printed.replace(moved[out], f"/…/{out}") == expected, f"{page}: `autorater {shlex.join(args)}`"
