"""Generated responses of a pairwise evaluation: the model stage, its prompt forms and the generation call.

AutoSxS's models A/B (``model_a`` / ``model_b``) and the arena's ``models`` generate the responses a dataset does
not hold through this one module: :class:`ResponseModel` (the model spec, its ``*_parameters`` as
:class:`ModelParameters`, project and region), :func:`compile_model_prompt` (the documented prompt forms,
:data:`MODEL_PROMPT_FORMS`) and :func:`generate_responses` (one call per example through the model-call layer,
:mod:`autorater_pipelines.models`: online, or Vertex AI batch prediction with ``mode: batch``; cache, retries,
rate limits).

A response a dataset holds is read by :func:`given_response`: text, or a number written as its text; an empty
cell, an object, a list or a boolean refuses the run (naming the file, row and column), never judged as its repr.

A failed generation keeps ``response_<side>`` = None and sets ``inference_error_<side>`` = ``"<kind>: <message>"``;
the judge step records such an example as an ``ERROR`` judgment and in ``error_messages`` (stage ``inference``).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, ClassVar

import pydantic

from autorater_pipelines.errors import InputError, ModelCallError
from autorater_pipelines.evaluation.parameters import ModelCallOptions
from autorater_pipelines.evaluation.stages import ModelStage
from autorater_pipelines.evaluation.values import is_missing
from autorater_pipelines.models import ModelOutput, ModelRequest
from autorater_pipelines.pairwise import prompt_parameters as prompts

__all__ = [
    "MODEL_PROMPT_FORMS",
    "ModelParameters",
    "ResponseModel",
    "check_prompt_form",
    "compile_model_prompt",
    "generate_responses",
    "given_response",
]

logger = logging.getLogger(__name__)

MODEL_PROMPT_FORMS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"prompt"}), '{"prompt": ...} (text models)'),
    (frozenset({"contents"}), '{"contents": ...} (Gemini request body)'),
    (frozenset({"contents", "system_instruction"}), '{"contents": ..., "system_instruction": ...} (Gemini)'),
)
"""The accepted key sets of a model's prompt parameters, with how to write them (for messages)."""


class ModelParameters(ModelCallOptions):
    """``model_a_parameters`` / ``model_b_parameters`` / an arena model's ``parameters``: model-call settings.

    GCPC's Vertex names are accepted (``maxOutputTokens``, ``max_tokens``, ``topP``).
    """

    ALIASES: ClassVar[dict[str, str]] = {
        "maxOutputTokens": "max_output_tokens",
        "max_tokens": "max_output_tokens",
        "topP": "top_p",
    }


class ResponseModel(ModelStage):
    """A generating model's stage: AutoSxS's ``model_<side>`` with ``model_<side>_parameters`` and prompt."""

    side: str
    """``a`` or ``b`` (AutoSxS), or an arena model's name: the examples' field suffix and the replay key ``model``."""
    options: ModelParameters = pydantic.Field(default_factory=ModelParameters)
    prompt_parameters: Any = pydantic.Field(default_factory=dict)
    """``model_<side>_prompt_parameters`` (see :mod:`autorater_pipelines.autosxs.sides`)."""

    @classmethod
    def of(
        cls, side: str, model: str, parameters: Any = None, *, project: str = "", location: str = ""
    ) -> ResponseModel:
        """The stage from its pipeline parameters as a step receives them (``parameters`` a dict, None or parsed).

        Raises:
            InputError: an unknown key or a bad value of ``model_<side>_parameters``.
        """
        options = ModelParameters.parse(parameters, source=f"model_{side}_parameters")
        return cls(side=side, model=model, options=options, project=project or "", location=location or "")

    @property
    def options_source(self) -> str:
        """``model_<side>_parameters``."""
        return f"model_{self.side}_parameters"

    @property
    def model_source(self) -> str:
        """``model_<side>``."""
        return f"model_{self.side}"


def given_response(value: Any, *, subject: str, parameter: str, column: str, where: str, empty: str) -> str:
    """The response text of one dataset cell: a string as is, a number (not a boolean) as its text.

    Args:
        value: The cell as read.
        subject: Whose response it is, for the message (``model A``, ``model 'x'``).
        parameter: The parameter naming the column (``response_column_a``, ``response_columns['x']``).
        column: The dataset column.
        where: The row's location (``data.jsonl line 7``).
        empty: What every row needs, said when the cell is empty.

    Raises:
        InputError: an empty cell (None or NaN), or a value that is not text: an object, a list, a boolean or
            any other non-number (its value given with ``!r``).
    """
    if is_missing(value):
        raise InputError(f"{subject}'s response is empty; {empty}", source=where, column=column)
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        return str(value)
    kind = (
        "an object"
        if isinstance(value, Mapping)
        else "a list"
        if isinstance(value, list | tuple)
        else "a boolean"
        if type(value).__name__ in {"bool", "bool_"}
        else f"a {type(value).__name__}"
    )
    raise InputError(
        f"{parameter} {column!r} holds {value!r} ({kind}), expected text: {subject}'s response is judged as "
        "written, so write it as a string in that column",
        source=where,
        column=column,
    )


def check_prompt_form(parameters: Any, *, source: str, subject: str) -> None:
    """Refuse model prompt parameters in none of :data:`MODEL_PROMPT_FORMS` (no data needed).

    Args:
        parameters: The model's prompt parameters as received.
        source: The parameter named in the message (``model_a_prompt_parameters``, ``models['x'].prompt_parameters``).
        subject: Whose responses they generate, for the message (``model A``, ``model 'x'``).

    Raises:
        InputError: not a mapping, or its keys are not one of the documented forms.
    """
    keys = frozenset(parameters) if isinstance(parameters, Mapping) else None
    if keys not in {form for form, _ in MODEL_PROMPT_FORMS}:
        forms = "; or ".join(text for _, text in MODEL_PROMPT_FORMS)
        raise InputError(
            f"to generate {subject}'s responses, write the model's prompt parameters in one of the "
            f'documented forms: {forms}; each value a column name, {{"column": ...}} or '
            f'{{"template": "... {{{{ column }}}} ..."}}; got {parameters!r}',
            source=source,
        )


def compile_model_prompt(
    parameters: Any, columns: Sequence[str], variables: Mapping[str, Any], *, source: str, subject: str
) -> prompts.PromptParameters:
    """Check the form of a model's prompt parameters (:func:`check_prompt_form`) and compile them.

    Args:
        parameters: The model's prompt parameters.
        columns: The evaluation dataset's columns.
        variables: Extra template variables (the task's ``default_instruction``).
        source: The parameter named in messages.
        subject: Whose responses they generate, for messages.

    Raises:
        InputError: a form not documented, an unknown column or a template that does not compile.
    """
    check_prompt_form(parameters, source=source, subject=subject)
    return prompts.compile_prompt_parameters(
        dict(parameters), available_columns=columns, source_name=source, extra_variables=variables
    )


def generate_responses(
    examples: Sequence[MutableMapping[str, Any]], stage: ResponseModel, id_columns: Sequence[str]
) -> int:
    """Fill ``response_<side>`` of every example from its rendered ``model_<side>_prompt``.

    Args:
        examples: Examples; each holds ``model_<side>_prompt`` (the rendered ``prompt`` or ``contents`` prompt
            parameter) and, optionally, ``model_<side>_system_instruction`` (sent as the request's system
            instruction). Modified in place.
        stage: The generating model's stage (model spec, parameters, project, region).
        id_columns: Id columns (the replay key, with ``model`` = the stage's side).

    Returns:
        The number of examples whose generation failed (``inference_error_<side>`` set).

    Raises:
        InputError: bad parameters or model spec.
        ModelCallError: the process got SIGTERM. When the calls stop early for another reason (a wrong
            endpoint, no progress, the failure budget), the responses not generated carry the reason.
    """
    side, model = stage.side, stage.model
    backend = stage.get_model()
    prompt_key, system_key = f"model_{side}_prompt", f"model_{side}_system_instruction"
    requests = [
        ModelRequest(
            parts=(str(example[prompt_key]),),
            key={**{c: example[c] for c in id_columns}, "model": side},
            system_instruction=example.get(system_key) or None,
        )
        for example in examples
    ]
    label = f"model {side.upper()}" if len(side) == 1 else f"model {side!r}"
    outputs: list[ModelOutput] = []
    try:
        backend.generate_each(requests, lambda _request, output: outputs.append(output), desc=f"{label} responses")
    except ModelCallError as exc:
        if exc.interrupted:
            raise
        # Every request has an output (those not called fail with the reason): they become ERROR rows.
        logger.error("%s (%s): calls stopped early: %s", label, model, exc)
    failures = 0
    for example, output in zip(examples, outputs, strict=True):
        if output.ok:
            example[f"response_{side}"] = output.text
            example.pop(f"inference_error_{side}", None)
        else:
            failures += 1
            kind = output.error.kind.value if output.error else "blocked"
            message = output.error.message if output.error else f"no text (finish reason {output.finish_reason})"
            example[f"response_{side}"] = None
            example[f"inference_error_{side}"] = f"{kind}: {message}"
    logger.info("%s (%s): %d responses, %d failed", label, model, len(examples), failures)
    return failures
