"""The pipeline process of ``autorater run``: its output copied with user errors collapsed to one line."""

from __future__ import annotations

import io
import subprocess
import sys

from autorater_pipelines.commands._isolated import _forward


def _forwarded(code: str) -> str:
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sink = io.StringIO()
    _forward(child, sink)
    child.wait()
    return sink.getvalue()


def test_a_user_error_raised_in_a_step_is_one_error_line_not_a_traceback():
    out = _forwarded(
        "from autorater_pipelines.errors import InputError\n"
        "print('step started')\n"
        "def render():\n"
        "    raise InputError('undefined variable quesiton', source='validator_prompt_template')\n"
        "render()\n"
    )
    assert out == "step started\nerror: validator_prompt_template: undefined variable quesiton\n"


def test_the_failure_budget_stop_is_one_error_line():
    out = _forwarded(
        "from autorater_pipelines.errors import ModelCallError\n"
        "raise ModelCallError('stopped calling gemini-2.5-flash after 5 consecutive failed calls')\n"
    )
    assert out == "error: stopped calling gemini-2.5-flash after 5 consecutive failed calls\n"


def test_a_bug_keeps_its_traceback_and_secrets_are_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-forwarded-0123456789abcdefgh")
    out = _forwarded("import os\nprint(os.environ['OPENAI_API_KEY'])\nraise KeyError('bug')\n")
    assert out.startswith("[REDACTED]\nTraceback (most recent call last):\n")
    assert out.rstrip().endswith("KeyError: 'bug'")


def test_a_user_error_chained_to_another_exception_is_still_one_line():
    out = _forwarded(
        "from autorater_pipelines.errors import ModelCallError\n"
        "try:\n"
        "    raise RuntimeError('no running event loop')\n"
        "except RuntimeError:\n"
        "    raise ModelCallError('stopped calling the model')\n"
    )
    assert out == "error: stopped calling the model\n"
    out = _forwarded("try:\n    raise RuntimeError('inner')\nexcept RuntimeError:\n    raise ValueError('outer bug')\n")
    assert "RuntimeError: inner" in out and out.rstrip().endswith("ValueError: outer bug")
