"""Few-shot examples of a custom task: ``few_shot_examples_config``, read and checked before any model call.

Shape, as in Google's custom-task sample notebook::

    "few_shot_examples_config": {
      "dataset": "gs://bucket/few_shots.jsonl",          # or a local path; any format io.read_dataset reads
      "autorater_prompt_parameters": {"instruction": {"template": "..."}, "content": "content"},
      "response_a_column": "response_a",
      "response_b_column": "response_b",
      "choice_column": "winner",                          # A, B, SAME/TIE (Model A/Model B, model_a/model_b)
      "explanation_column": "explanation",
      "response_a_score_column": "response_a_score",      # with a pointwise score_rubric: both required
      "response_b_score_column": "response_b_score"
    }

Every row becomes one worked example of the judge prompt: the task (its prompt parameters rendered like the
evaluation dataset's), both responses and the expected answer in the judge's answer format. A bad row (missing
value, unknown choice, a score off the scale, a choice that contradicts the scores) is an
:class:`~autorater_pipelines.errors.InputError` naming the file, row and column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise import prompt_parameters as prompts
from autorater_pipelines.pairwise.verdicts import preference_label

__all__ = ["FewShotConfig", "FewShotExample", "load_few_shot_examples"]


class FewShotConfig(BaseModel):
    """``custom_task_definition.few_shot_examples_config``."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    dataset: str = Field(min_length=1)
    autorater_prompt_parameters: dict[str, Any] = Field(min_length=1)
    response_a_column: str = Field(min_length=1)
    response_b_column: str = Field(min_length=1)
    choice_column: str = Field(min_length=1)
    explanation_column: str = Field(min_length=1)
    response_a_score_column: str = ""
    response_b_score_column: str = ""


class FewShotExample(BaseModel):
    """One worked example shown to the judge."""

    model_config = ConfigDict(frozen=True)

    task_values: list[tuple[str, str]]
    """``(prompt parameter, text)`` pairs in the task's key order."""
    response_a: str
    response_b: str
    choice: str
    """``A``, ``B`` or ``SAME``."""
    explanation: str
    response_a_score: int | None = None
    response_b_score: int | None = None


def _text(value: Any, *, what: str, where: str, column: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or not str(value).strip():
        raise InputError(f"few-shot example has no {what}; every example needs one", source=where, column=column)
    return value if isinstance(value, str) else str(value)


def _score(value: Any, scale: Sequence[int], *, where: str, column: str) -> int:
    number: Any = value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    if isinstance(number, bool) or not isinstance(number, int) or number not in scale:
        raise InputError(
            f"few-shot score {value!r} is not on the score_rubric's scale {list(scale)}", source=where, column=column
        )
    return number


def _choice(value: Any, *, where: str, column: str) -> str:
    label = preference_label(value)
    if label is None:
        raise InputError(
            f"few-shot choice {value!r} is not one of A, B, SAME (TIE, Model A/Model B accepted)",
            source=where,
            column=column,
        )
    return "SAME" if label == "TIE" else label  # the rubric's tie label


def load_few_shot_examples(
    config: FewShotConfig,
    *,
    prompt_keys: Sequence[str],
    scale: Sequence[int],
    template_variables: Mapping[str, Any],
    source: str,
) -> list[FewShotExample]:
    """Read the few-shot dataset and build its worked examples.

    Args:
        config: The validated ``few_shot_examples_config``.
        prompt_keys: The task's ``autorater_prompt_parameter_keys``, in order; the config's
            ``autorater_prompt_parameters`` must map exactly these.
        scale: The pointwise score scale, or empty for an A/B/SAME rubric.
        template_variables: Extra template variables (``default_instruction``).
        source: Where the config sits, for messages (``experimental_args.custom_task_definition...``).

    Raises:
        InputError: unreadable or empty dataset, prompt parameters that do not match the task's keys, score
            columns that do not fit the rubric, or a bad row (naming file, row and column).
    """
    where_params = f"{source}.autorater_prompt_parameters"
    _check_config(config, prompt_keys=prompt_keys, scale=scale, source=source)
    dataset = io.read_dataset(config.dataset, source_name=f"{source}.dataset")
    columns = {
        "response_a_column": config.response_a_column,
        "response_b_column": config.response_b_column,
        "choice_column": config.choice_column,
        "explanation_column": config.explanation_column,
    }
    if scale:
        columns["response_a_score_column"] = config.response_a_score_column
        columns["response_b_score_column"] = config.response_b_score_column
    io.require_columns(dataset, columns)
    compiled = prompts.compile_prompt_parameters(
        config.autorater_prompt_parameters,
        available_columns=dataset.columns,
        source_name=where_params,
        extra_variables=template_variables,
    )
    examples = []
    for index, row in enumerate(dataset.rows):
        where = dataset.location(index)
        rendered = compiled.render(row, location=where)
        task_values = [(key, rendered[key]) for key in prompt_keys]
        examples.append(_example(row, task_values, config, scale, where=where))
    return examples


def _check_config(config: FewShotConfig, *, prompt_keys: Sequence[str], scale: Sequence[int], source: str) -> None:
    """Refuse prompt parameters that do not map the task's keys, and score columns that do not fit the rubric."""
    given = list(config.autorater_prompt_parameters)
    if sorted(given) != sorted(prompt_keys):
        raise InputError(
            f"must map exactly the task's autorater_prompt_parameter_keys {list(prompt_keys)}, got {given}",
            source=f"{source}.autorater_prompt_parameters",
        )
    score_columns = [c for c in (config.response_a_score_column, config.response_b_score_column) if c]
    if scale and len(score_columns) != 2:
        raise InputError(
            "a pointwise score_rubric needs response_a_score_column and response_b_score_column: the worked "
            "examples show the scores the judge must give",
            source=source,
        )
    if not scale and score_columns:
        raise InputError(
            f"score columns {score_columns} need a pointwise score_rubric (consecutive integer labels); this "
            "task's rubric is A/B/SAME",
            source=source,
        )


def _example(
    row: Mapping[str, Any],
    task_values: list[tuple[str, str]],
    config: FewShotConfig,
    scale: Sequence[int],
    *,
    where: str,
) -> FewShotExample:
    """One dataset row as a worked example; its scores (pointwise rubric) must agree with its choice."""
    example: dict[str, Any] = {
        "task_values": task_values,
        "response_a": _text(
            row.get(config.response_a_column), what="response A", where=where, column=config.response_a_column
        ),
        "response_b": _text(
            row.get(config.response_b_column), what="response B", where=where, column=config.response_b_column
        ),
        "choice": _choice(row.get(config.choice_column), where=where, column=config.choice_column),
        "explanation": _text(
            row.get(config.explanation_column), what="explanation", where=where, column=config.explanation_column
        ),
    }
    if scale:
        a = _score(row.get(config.response_a_score_column), scale, where=where, column=config.response_a_score_column)
        b = _score(row.get(config.response_b_score_column), scale, where=where, column=config.response_b_score_column)
        implied = "A" if a > b else "B" if b > a else "SAME"
        if implied != example["choice"]:
            raise InputError(
                f"few-shot choice {example['choice']!r} contradicts the scores (response A {a}, response B {b}: "
                f"{implied}); fix the choice or the scores",
                source=where,
                column=config.choice_column,
            )
        example.update(response_a_score=a, response_b_score=b)
    return FewShotExample(**example)
