"""``custom`` tasks: a task definition supplied in ``experimental_args["custom_task_definition"]``.

Shape (JSON)::

    {
      "evaluation_criteria": [
        {"name": "Politeness", "definition": "The response is courteous.",
         "evaluation_steps": ["Look for rude wording.", "..."]}          # or {"STEP 1": "...", ...}
      ],
      "score_rubric": {"A": "Response A is better.", "B": "Response B is better.",
                       "SAME": "Neither is better."},                     # or a pointwise scale, see below
      "autorater_prompt_parameter_keys": ["inference_instruction", "inference_context"],
      "default_instruction": "Reply to the customer.",                   # optional
      "few_shot_examples_config": {...}                                  # optional, see _few_shot.py
    }

The score rubric is either pairwise, exactly the labels ``A``, ``B`` and ``SAME`` (the judge answers in
:data:`JUDGMENT_SCHEMA`; only their descriptions are customisable), or pointwise, as in Google's custom-task
sample: labels that are consecutive integers (``{"5": "...", ..., "1": "..."}``, at least two levels). With a
pointwise rubric the judge scores each response on the scale (:func:`pointwise_schema`); the higher score wins,
equal scores are a tie, and both scores are kept in the judgment. Every listed prompt parameter key is
required in ``autorater_prompt_parameters``. ``evaluation_steps`` may be omitted, a list, or an object of
step label → step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.tasks._definition import Criterion, TaskDefinition
from autorater_pipelines.pairwise.tasks._few_shot import FewShotConfig, load_few_shot_examples
from autorater_pipelines.pairwise.tasks._judge_prompt import CHOICES

__all__ = ["SOURCE", "parse_custom_task"]

SOURCE = "experimental_args.custom_task_definition"
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _CustomCriterion(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    evaluation_steps: list[str] = Field(default_factory=list)

    @field_validator("evaluation_steps", mode="before")
    @classmethod
    def _steps(cls, value: Any) -> Any:
        if isinstance(value, dict):  # {"STEP 1": "...", ...}: keep the labels and their order
            return [f"{k}: {v}" if isinstance(v, str) else v for k, v in value.items()]
        if not isinstance(value, list):
            raise ValueError(f"must be a list of steps or an object of label -> step, got {value!r}")
        return value


class _CustomTask(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    evaluation_criteria: list[_CustomCriterion] = Field(min_length=1)
    score_rubric: dict[str, str]
    autorater_prompt_parameter_keys: list[str] = Field(min_length=1)
    default_instruction: str = ""
    few_shot_examples_config: FewShotConfig | None = None

    @field_validator("evaluation_criteria")
    @classmethod
    def _unique_names(cls, value: list[_CustomCriterion]) -> list[_CustomCriterion]:
        names = [c.name for c in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"criterion names must be unique, repeated: {dupes}")
        return value

    @field_validator("score_rubric", mode="before")
    @classmethod
    def _rubric_labels(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        value = {str(k).strip(): v for k, v in value.items()}
        empty = [k for k, v in value.items() if not isinstance(v, str) or not v.strip()]
        if empty:
            raise ValueError(f"descriptions must be non-empty, empty for {empty}")
        if sorted(value) == sorted(CHOICES):
            return {label: value[label] for label in CHOICES}
        if score_scale(value):
            return value
        raise ValueError(
            f"labels must be exactly {list(CHOICES)} (A = first response better, B = second, SAME = neither) "
            f"or a pointwise scale of consecutive integers such as 1 to 5, got {list(value)}"
        )

    @field_validator("autorater_prompt_parameter_keys")
    @classmethod
    def _keys(cls, value: list[str]) -> list[str]:
        bad = [k for k in value if not _KEY.match(k)]
        if bad:
            raise ValueError(f"keys must be identifiers such as 'inference_context', got {bad}")
        if len(set(value)) != len(value):
            raise ValueError(f"keys must be unique, got {value}")
        return value


def score_scale(rubric: dict[str, str]) -> list[int]:
    """The integers of a pointwise score rubric, ascending; empty when the labels are not consecutive integers."""
    try:
        levels = sorted(int(label) for label in rubric)
    except ValueError:
        return []
    consecutive = levels == list(range(levels[0], levels[0] + len(levels))) if levels else False
    return levels if consecutive and len(levels) >= 2 and len(set(levels)) == len(rubric) else []


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = error["loc"]
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            models: dict[str, type[BaseModel]] = {
                "evaluation_criteria": _CustomCriterion,
                "few_shot_examples_config": FewShotConfig,
            }
            model: type[BaseModel] = models.get(str(loc[0]), _CustomTask) if len(loc) > 1 else _CustomTask
            message = f"unknown key; valid keys: {list(model.model_fields)}"
        elif error["type"] not in ("missing", "value_error"):
            message += f" (got {error['input']!r})"
        parts.append(f"{path or '(top level)'}: {message}")
    return "; ".join(parts)


def parse_custom_task(
    definition: Any, *, version: str, readable: Callable[[str], bool] | None = None
) -> TaskDefinition:
    """Validate ``experimental_args["custom_task_definition"]`` and build its task.

    Args:
        definition: The decoded JSON object (see the module docstring for its shape).
        version: The version written in the ``task`` parameter (``"latest"`` when none was given).
        readable: Which files and URIs to read from here (``submit --dry-run`` reads no cloud data); None = all.
            A few-shot dataset it refuses is only checked for its form (:func:`autorater_pipelines.io.check_sources`)
            and named in the task's ``few_shot_unread``.

    Returns:
        A task named ``custom``.

    Raises:
        InputError: The definition is not an object or breaks the shape; every problem is listed with its
            path (e.g. ``evaluation_criteria[0].definition: Field required``). A few-shot dataset that cannot
            be read or has a bad row (see :mod:`._few_shot`).

    """
    if not isinstance(definition, dict):
        raise InputError(
            f"expected an object with evaluation_criteria, score_rubric and autorater_prompt_parameter_keys, "
            f"got {definition!r}",
            source=SOURCE,
        )
    try:
        parsed = _CustomTask.model_validate(definition)
    except ValidationError as exc:
        raise InputError(f"invalid custom task definition: {_format_errors(exc)}", source=SOURCE) from exc
    criteria = [
        Criterion(name=c.name, definition=c.definition, steps=c.evaluation_steps) for c in parsed.evaluation_criteria
    ]
    scale = score_scale(parsed.score_rubric)
    examples = []
    few_shot_unread = ""
    few_shot = parsed.few_shot_examples_config
    if few_shot is not None and readable is not None:
        if not all(readable(part.strip()) for part in few_shot.dataset.split(",") if part.strip()):
            io.check_sources(few_shot.dataset, source_name=f"{SOURCE}.few_shot_examples_config.dataset")
            few_shot_unread = few_shot.dataset
    if few_shot is not None and not few_shot_unread:
        examples = load_few_shot_examples(
            few_shot,
            prompt_keys=parsed.autorater_prompt_parameter_keys,
            scale=scale,
            template_variables={"default_instruction": parsed.default_instruction}
            if parsed.default_instruction
            else {},
            source=f"{SOURCE}.few_shot_examples_config",
        )
    return TaskDefinition(
        name="custom",
        version=version,
        criteria=criteria,
        score_rubric=parsed.score_rubric,
        score_scale=scale,
        few_shot_examples=examples,
        few_shot_unread=few_shot_unread,
        required_prompt_parameter_keys=parsed.autorater_prompt_parameter_keys,
        default_instruction=parsed.default_instruction,
    )
