"""``tasks.check_prompt_parameters``: the one check of a task's autorater prompt parameters (AutoSxS and arena)."""

from __future__ import annotations

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import tasks


def test_a_missing_prompt_parameter_is_named_with_how_to_map_it() -> None:
    task = tasks.get_task("question_answering@001")
    with pytest.raises(InputError, match=r"task 'qa' needs prompt parameters \['inference_instruction'\]; map each"):
        tasks.check_prompt_parameters(task, "qa", {})


def test_an_unknown_prompt_parameter_lists_the_valid_ones() -> None:
    task = tasks.get_task("question_answering@001")
    given = {"inference_instruction": {"column": "q"}, "inference_contex": {"column": "c"}}
    with pytest.raises(InputError, match=r"unknown prompt parameters \['inference_contex'\] for task 'qa'; valid: \["):
        tasks.check_prompt_parameters(task, "qa", given)


def test_the_parameters_a_task_takes_pass() -> None:
    task = tasks.get_task("question_answering@001")
    tasks.check_prompt_parameters(task, "qa", {"inference_instruction": {"column": "q"}})
