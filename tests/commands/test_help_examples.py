"""``run``/``submit --help`` show examples that exist; ``compile --help`` names its placeholder image as such.

Found by the newcomer trial: ``run``/``submit --help`` had no example, and ``compile --image`` called its default
"the release image" although it is a placeholder no registry serves (``submit`` refuses it).
"""

import re
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.components import IMAGE

REPO = Path(__file__).resolve().parents[2]


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines to the terminal width


@pytest.mark.parametrize("command", ["run", "submit"])
def test_run_and_submit_help_end_with_examples_whose_files_exist(command, capsys):
    text = _help(capsys, command)
    examples = text.split("examples:", 1)
    assert len(examples) == 2, text
    lines = re.findall(rf"autorater {command} (?:autosxs|gecko) --params (\S+)", examples[1])
    assert lines, examples[1]
    for params in lines:
        if params.startswith("examples/"):
            assert (REPO / params).is_file(), params
    assert "autorater params" in examples[1]
    if command == "submit":
        assert "--dry-run" in examples[1]


def test_compile_help_says_the_default_image_is_a_placeholder(capsys):
    text = _help(capsys, "compile")
    assert "release image" not in text
    assert f"default: the placeholder {IMAGE}" in text.replace("- ", "-")
    assert "`autorater submit` refuses" in text
