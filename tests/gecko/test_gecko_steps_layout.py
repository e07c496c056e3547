"""The compiled template's embedded calls still resolve after the Gecko steps were split into modules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autorater_pipelines.gecko import score_step, steps

COMPILED = Path(__file__).resolve().parents[2] / "compiled" / "gecko.yaml"


def test_every_step_the_compiled_template_calls_is_in_gecko_steps():
    called = sorted(set(re.findall(r"gecko_steps\.([A-Za-z_]+)\(", COMPILED.read_text())))
    assert called == [
        "check_run",
        "console_metrics",
        "export_results",
        "rubrics_for_rows",
        "score_validations",
        "validate_media",
    ]
    assert all(callable(getattr(steps, name)) and name in steps.__all__ for name in called)


@pytest.mark.parametrize("name", ["score_rows", "score_validations", "console_metrics"])
def test_the_scoring_step_moved_to_score_step_is_the_same_object_under_the_old_path(name):
    assert getattr(steps, name) is getattr(score_step, name)
    assert getattr(score_step, name).__module__ == "autorater_pipelines.gecko.score_step"


def test_console_metrics_flattens_accuracy_by_question_type():
    flat = steps.console_metrics(
        {"mean_score": 0.5, "ok": True, "note": None, "accuracy_by_question_type": {"animal/human": 1}}
    )
    assert flat == {"mean_score": 0.5, "accuracy_animal_human": 1.0}
