"""The one check of a Gecko run, before any model call: :func:`validate_run`.

``autorater run gecko``, ``autorater submit``, the pipeline's first step
(:func:`autorater_pipelines.gecko.steps.check_run`) and the DataFrame API (:mod:`autorater_pipelines.gecko.dataframe`,
:func:`check_parameters`: everything but the dataset) call it. It parses the parameter model
(:class:`~autorater_pipelines.gecko.params.GeckoParams`), compiles and renders each prompt-template override, builds
(does not call) each model, and reads the dataset when it can.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autorater_pipelines import io
from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.parameters import ValidatedRun
from autorater_pipelines.evaluation.stages import ModelStage
from autorater_pipelines.gecko import templates
from autorater_pipelines.gecko._common import IMAGE_QUESTION_TYPES
from autorater_pipelines.gecko.dataset import load_dataset
from autorater_pipelines.gecko.generation import generator_template
from autorater_pipelines.gecko.params import GeckoParams
from autorater_pipelines.gecko.validation import validator_template
from autorater_pipelines.models import media_input

__all__ = [
    "check_logprob_weighting",
    "check_parameters",
    "check_templates",
    "check_validator_media",
    "validate_parameters",
    "validate_run",
]

_EXAMPLE_QUESTION = {
    "question_id": "q1",
    "question": "Is there a dog?",
    "choices": ["yes", "no"],
    "options": [{"label": "yes", "text": "yes"}, {"label": "no", "text": "no"}],
    "yes_no": True,
}


def check_templates(run: GeckoParams) -> None:
    """Compile each prompt-template override and render it once with example values, within the sandbox's limits.

    Raises:
        InputError: a template that does not compile, uses an unknown variable, never shows what its call needs,
            or is refused by the sandbox.
    """
    if run.rubric_generation_prompt_template:
        template = generator_template(run.rubric_generator, media_type=run.media_type, prompt_column=run.prompt_column)
        template.render(
            prompt="Two brown dogs on a blue sofa",
            question_types=list(IMAGE_QUESTION_TYPES),
            media_type=run.media_type,
            guidelines=run.rubric_generation_parameters.guidelines,
        )
    if run.validator_prompt_template:
        validator = run.validator
        template = validator_template(
            validator,
            prompt_column=run.prompt_column or None,
            media_column=run.media_column or None,
            media_type=run.media_type,
        )
        rubrics = templates.rubrics_text([_EXAMPLE_QUESTION])
        values: dict[str, Any] = {"media_type": run.media_type, "rubrics": rubrics, "prompt": "Two brown dogs"}
        if run.media_type == "text":
            values["response"] = "Two brown dogs sleep on a blue sofa."
        if validator.one_question_per_call:
            question = _EXAMPLE_QUESTION if template.syntax == "jinja" else _EXAMPLE_QUESTION["question"]
            template.render(question=question, **values)
        else:
            template.render(questions=[_EXAMPLE_QUESTION], **values)


def check_parameters(
    run: GeckoParams,
    *,
    readable: Callable[[str], bool] | None = None,
    project: str = "",
    notes: list[str],
    probe_endpoint: bool = False,
) -> None:
    """Every check of :func:`validate_run` that reads no dataset: templates, models (built, not called).

    With ``probe_endpoint``, each model's explicit endpoint is probed as AutoSxS's are
    (:func:`~autorater_pipelines.evaluation.model_checks.probe_model_endpoint`).
    """
    check_templates(run)
    stages: list[ModelStage] = [run.validator] if run.rubrics_column else [run.validator, run.rubric_generator]
    if run.responder is not None:
        stages.append(run.responder)
    for stage in stages:
        stage = stage.model_copy(update={"project": run.project or project})  # submit --project
        stage.check(readable=readable, notes=notes)
        if probe_endpoint:
            stage.probe()
    check_validator_media(run.validator.model, run.media_type)
    check_logprob_weighting(run)


def validate_parameters(params: Mapping[str, Any], *, probe_endpoint: bool = False) -> GeckoParams:
    """Check every run parameter without a dataset: :func:`validate_run` minus the data (the DataFrame API's check).

    Args:
        params: The pipeline parameters by name, without ``evaluation_dataset``.
        probe_endpoint: Probe each model's explicit endpoint (:func:`check_parameters`).

    Returns:
        The parameter model (``evaluation_dataset`` empty).

    Raises:
        InputError: naming the parameter (see :class:`~autorater_pipelines.gecko.params.GeckoParams`) — malformed
            ``id_columns``, no ``media_column``, a ``media_type`` other than ``image``/``video``, neither
            ``prompt_column`` nor ``rubrics_column``, a malformed model spec or a Vertex AI model with no project, an
            unknown or out-of-range key of ``rubric_generation_parameters``, ``validator_parameters`` or
            ``scoring``, a prompt template that does not render with the documented variables, an unsupported
            ``output_format``, a missing or invalid ``bigquery_destination_prefix`` with ``bigquery``.
    """
    run = GeckoParams.parse({"evaluation_dataset": "", **params}, source="parameters")
    check_parameters(run, notes=[], probe_endpoint=probe_endpoint)
    return run


def check_logprob_weighting(run: GeckoParams) -> None:
    """Refuse ``scoring.logprob_weighting`` when the validator is not asked for the probabilities it weighs.

    Without ``questions_per_call: 1`` and ``logprobs`` every question would silently be scored by exact match,
    and the run would look like a weighted one.

    Raises:
        InputError: naming ``scoring``, the values received and the two settings that fix it.
    """
    per_call = run.validator_parameters.questions_per_call
    logprobs = run.validator_parameters.settings().get("logprobs")
    if run.scoring.logprob_weighting and not (per_call == 1 and logprobs):
        raise InputError(
            "logprob_weighting weighs each answer by the validator's probability of it, which needs "
            "validator_parameters questions_per_call 1 and logprobs of at least 1 (received questions_per_call "
            f"{per_call!r}, logprobs {logprobs!r}); set both, e.g. "
            '{"questions_per_call": 1, "logprobs": 5}, or remove logprob_weighting to score by exact match',
            source="scoring",
        )


def check_validator_media(spec: str, media_type: str) -> None:
    """Refuse a validator the model registry knows cannot be given ``media_type`` (a text-only model).

    Raises:
        InputError: naming ``validator_model``, the model, why, and the fix.
    """
    if media_type == "text":  # every model reads text
        return
    known = media_input(spec)
    if media_type not in known.types:
        raise InputError(
            f"{spec!r} cannot be given the {media_type}s to validate: {known.note}. Use a model that takes "
            f"{media_type}s, e.g. 'gemini-2.5-flash'"
            + (" or a vision model on an OpenAI-compatible server" if media_type == "image" else ""),
            source="validator_model",
        )


def validate_run(
    params: Mapping[str, Any] | GeckoParams,
    *,
    readable: Callable[[str], bool] | None = None,
    project: str = "",
    probe_endpoint: bool = False,
) -> ValidatedRun:
    """Check a whole Gecko run before any model call: parameters, templates, models and the dataset.

    Media files and rubrics are not checked: a row whose media cannot be read or whose rubric is not valid
    becomes an error row of the run, and the other rows are still scored.

    Args:
        params: The pipeline parameters (names as in the template).
        readable: Which files and URIs to read from here (datasets, ``replay/`` recordings); None = all.
        project: The project the run will have when ``params`` leaves ``project`` empty (``submit --project``).
        probe_endpoint: Open a TCP connection (no request) to each model's explicit ``base_url``, so a wrong one
            fails at once (``autorater run``, where the run starts on this machine), as AutoSxS's ``validate_run``.

    Returns:
        The converted parameters, the dataset rows (:func:`autorater_pipelines.gecko.load_dataset`) when the
        dataset was read, and notes on what was not checked from here.

    Raises:
        InputError: the first problem found, naming the parameter (and file, row and column for data).
    """
    run = GeckoParams.parse(params, source="parameters")
    notes: list[str] = []
    check_parameters(run, readable=readable, project=project, notes=notes, probe_endpoint=probe_endpoint)
    sources = [p.strip() for p in run.evaluation_dataset.split(",") if p.strip()]
    unread = [p for p in sources if readable is not None and not readable(p)]
    if unread:
        io.check_sources(run.evaluation_dataset)  # not read from here, but a malformed URI is refused as a run does
        notes.append(
            f"evaluation_dataset {', '.join(unread)} not read from here: its columns and ids are checked by the "
            "pipeline's first step"
        )
        return ValidatedRun(run, None, notes)
    rows = load_dataset(
        run.evaluation_dataset,
        id_columns=run.id_columns,
        media_column=run.media_column,
        prompt_column=run.prompt_column or None,
        rubrics_column=run.rubrics_column or None,
        response_columns=run.response_columns,
        response_model=run.response_model,
        media_type=run.media_type,
    )
    _check_group_by(run.scoring.group_by, rows, run.evaluation_dataset)
    return ValidatedRun(run, rows, notes)


def _check_group_by(column: str, rows: list[dict[str, Any]], dataset: str) -> None:
    """Refuse a ``scoring.group_by`` column that some dataset row lacks (before any model call).

    Raises:
        InputError: naming the first row without the column and the columns it has.
    """
    if not column:
        return
    for i, row in enumerate(rows, start=1):
        if column not in row:
            raise InputError(
                f"scoring.group_by {column!r} is not a column of data row {i}; columns: {sorted(row)} "
                '(give a column every row has, or "" for no breakdown)',
                source=dataset,
            )


PARAMETERS = GeckoParams
"""This pipeline's parameter model, registered for ``autorater params`` (one per pipeline package)."""
