"""``get_task``: parse GCPC's ``task`` parameter (``{name}@{version}``) into a :class:`TaskDefinition`.

A task without a version means its latest version, as in Google's documentation and sample notebooks
(``"task": "summarization"``): ``summarization`` = ``summarization@latest``. Pin a version
(``summarization@001``) to keep a run's meaning when a new version is published; the resolved version is
recorded in the task definition (``TaskDefinition.spec``). ``custom`` takes any version (``custom``,
``custom@001``): its definition comes with the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from autorater_pipelines.errors import InputError, did_you_mean
from autorater_pipelines.pairwise.tasks._builtin import BUILTIN_TASKS
from autorater_pipelines.pairwise.tasks._custom import SOURCE as CUSTOM_SOURCE
from autorater_pipelines.pairwise.tasks._custom import parse_custom_task
from autorater_pipelines.pairwise.tasks._definition import TaskDefinition

__all__ = ["available_tasks", "check_prompt_parameters", "get_task"]

_CUSTOM = "custom"
_VERSION = re.compile(r"^(\d{3}|latest)$")


def available_tasks() -> list[str]:
    """Every valid ``task`` value, e.g. ``["question_answering", "question_answering@001", ...]``.

    A built-in task name without a version (``question_answering``) means ``@latest``.
    """
    specs: list[str] = []
    for name, versions in sorted(BUILTIN_TASKS.items()):
        specs.append(name)
        specs.extend(f"{name}@{v}" for v in sorted(versions))
        specs.append(f"{name}@latest")
    return [*specs, _CUSTOM]


def _parse(task: Any) -> tuple[str, str | None]:
    if not isinstance(task, str) or not task.strip():
        raise InputError(
            f"expected '{{task}}@{{version}}' such as 'summarization@001', got {task!r}; valid "
            f"values: {available_tasks()}",
            source="task",
        )
    name, sep, version = task.strip().partition("@")
    name = name.strip().lower()
    version = version.strip().lower()
    if sep and not _VERSION.match(version):
        raise InputError(
            f"version {version!r} in {task!r} must be three digits (e.g. '001') or 'latest'", source="task"
        )
    return name, (version if sep else None)


def get_task(
    task: str, experimental_args: Mapping[str, Any] | None = None, *, readable: Callable[[str], bool] | None = None
) -> TaskDefinition:
    """Return the task definition named by GCPC's ``task`` parameter.

    Args:
        task: ``{name}[@{version}]``: ``summarization`` or ``question_answering`` with a 3-digit version or
            ``latest`` (e.g. ``summarization@001``, ``question_answering@latest``; no version = latest); or
            ``custom`` (optionally ``custom@...``), defined by ``experimental_args["custom_task_definition"]``.
            Surrounding whitespace and letter case are ignored.
        experimental_args: GCPC's ``experimental_args``; only ``custom_task_definition`` is read here.
        readable: Which files and URIs a custom task's few-shot dataset may be read from here; None = all
            (:func:`~autorater_pipelines.pairwise.tasks._custom.parse_custom_task`).

    Returns:
        A copy of the definition (callers may not change the registered one).

    Raises:
        InputError: Malformed ``task``, unknown name or version (the message lists the valid values),
            ``custom`` without a definition, a definition given for a
            built-in task, or a malformed custom definition.

    """
    name, version = _parse(task)
    args = experimental_args or {}
    if not isinstance(args, Mapping):
        raise InputError(f"expected an object, got {args!r}", source="experimental_args")
    custom = args.get("custom_task_definition")
    if name == _CUSTOM:
        if custom is None:
            raise InputError(
                f"task {task!r} needs experimental_args.custom_task_definition with "
                "evaluation_criteria, score_rubric and autorater_prompt_parameter_keys",
                source="task",
            )
        return parse_custom_task(custom, version=version or "latest", readable=readable)
    if name not in BUILTIN_TASKS:
        given = f"unknown task {name!r}" + ("" if name == task.strip().lower() else f" in {task!r}")
        raise InputError(
            f"{given}; valid values: {available_tasks()}.{did_you_mean(name, [*BUILTIN_TASKS, _CUSTOM])}",
            source="task",
        )
    versions = BUILTIN_TASKS[name]
    if custom is not None:
        raise InputError(
            f"is set but task is {task!r}; set task to 'custom' to use it, or remove it", source=CUSTOM_SOURCE
        )
    resolved = max(versions) if version in (None, "latest") else version
    if resolved not in versions:
        raise InputError(
            f"task {name!r} has no version {version!r}; valid versions: {sorted(versions)} or 'latest'", source="task"
        )
    return versions[resolved].model_copy(deep=True)


def check_prompt_parameters(task_def: TaskDefinition, task: str, given: Mapping[str, Any]) -> None:
    """Check that ``given`` autorater prompt parameters are exactly what task ``task`` takes.

    Raises:
        InputError: a required prompt parameter is missing (the message shows how to map it), or one the task does
            not know is given (listing the valid ones); source ``autorater_prompt_parameters``.
    """
    missing = [k for k in task_def.required_prompt_parameter_keys if k not in given]
    if missing:
        raise InputError(
            f"task {task!r} needs prompt parameters {missing}; map each to a column or template, e.g. "
            f'{{"{missing[0]}": {{"column": "question"}}}}',
            source="autorater_prompt_parameters",
        )
    known = set(task_def.required_prompt_parameter_keys) | set(task_def.optional_prompt_parameter_keys)
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(
            f"unknown prompt parameters {unknown} for task {task!r}; valid: {sorted(known)}",
            source="autorater_prompt_parameters",
        )
