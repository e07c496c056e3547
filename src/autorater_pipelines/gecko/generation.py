"""Rubric generation: an LLM turns each generation prompt into keywords and one question per keyword.

Method: Gecko (Wiles et al., arXiv 2404.16820): the prompt is copied with its visual content marked
``{1}[...]``; each keyword gets one question — yes/no with a question type for images, multiple
choice a–d for videos. The wording of our prompts is our own (:mod:`autorater_pipelines.gecko.prompts`).

Replay key of a rubric-generation request: the ``id_columns`` values (docs/gecko.md "Gecko replay files").
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from autorater_pipelines.evaluation.json_extraction import (
    AmbiguousJSONError,
    JSONExtractionError,
    extract_json,
    salvage_truncated_object,
)
from autorater_pipelines.evaluation.values import is_blank
from autorater_pipelines.gecko import prompts, templates
from autorater_pipelines.gecko._common import (
    StageResult,
    call_model,
    check_media_type,
    check_rows,
    error_row,
    id_values,
    question_types_for,
)
from autorater_pipelines.gecko.params import RubricGenerator
from autorater_pipelines.gecko.rubrics import (
    RubricError,
    normalize_generated_rubric,
    parse_supplied_rubrics,
    rubric_row,
)
from autorater_pipelines.models import ModelRequest

__all__ = [
    "SUPPLIED_RUBRICS",
    "generate_rubrics",
    "generator_template",
    "make_rubrics",
    "parse_generated_rubric",
    "prompt_version",
]

logger = logging.getLogger(__name__)


def parse_generated_rubric(text: str | None, *, media_type: str) -> dict[str, Any]:
    """Parse the rubric generator's raw reply into a normalized rubric.

    Tolerates prose around the JSON, Markdown code fences and trailing commas
    (:func:`autorater_pipelines.evaluation.json_extraction.extract_json`).

    Args:
        text: The raw model output.
        media_type: ``image`` or ``video``.

    Returns:
        ``{"keywords", "qas", "rubric_warnings"}`` (see :mod:`autorater_pipelines.gecko.rubrics`).

    A reply cut off inside its JSON (stopped at ``max_output_tokens``) keeps its complete questions, with a
    warning in ``rubric_warnings`` saying the unfinished one was dropped.

    Raises:
        RubricError: no JSON object in the reply (kind ``unparseable_rubric``; the message says when the reply
            was cut off), or no usable question.

    """
    media_type = check_media_type(media_type)
    try:
        cut = salvage_truncated_object(text)  # None unless the reply stops inside its first JSON object
        data = extract_json(text, expect=dict) if cut is None else None
    except AmbiguousJSONError as exc:
        raise RubricError("unparseable_rubric", str(exc)) from None
    except JSONExtractionError as exc:
        raise RubricError("unparseable_rubric", str(exc)) from None
    if cut is None:
        return normalize_generated_rubric(data, media_type=media_type)
    questions = cut.value.get("qas")
    if not isinstance(questions, list) or not questions:
        raise RubricError(
            "unparseable_rubric",
            "the reply was cut off before its JSON ended (e.g. at max_output_tokens; raise it) and holds no "
            f"complete question: {(text or '').strip()[:160]!r}",
        )
    rubric = normalize_generated_rubric(cut.value, media_type=media_type)
    lost = "dropped the unfinished one" if cut.cut_member == "qas" else "the list of questions was complete"
    rubric["rubric_warnings"].append(
        f"the reply was cut off before its JSON ended (e.g. at max_output_tokens): kept its {len(questions)} "
        f"complete question(s); {lost}"
    )
    return rubric


def generator_template(
    generator: RubricGenerator, *, media_type: str, prompt_column: str = ""
) -> templates.GeckoTemplate:
    """Compile the rubric-generation prompt: the stage's ``prompt_template`` (Jinja2 or Vertex SDK) or the built-in.

    Variables: ``prompt`` (required; ``{<prompt_column>}`` too in Vertex syntax), ``question_types``, ``media_type``,
    ``guidelines`` (``rubric_generation_parameters.guidelines``, "" when unset).

    Raises:
        InputError: the template does not compile, uses a variable it does not get, or never shows the prompt.

    """
    text = generator.prompt_template
    return templates.compile_template(
        text or prompts.RUBRIC_TEMPLATES[media_type],
        source="rubric_generation_prompt_template",
        variables={"prompt", "question_types", "media_type", "guidelines"},
        required=[("prompt",)],
        needs="the prompt to write questions for",
        builtin=not text,
        aliases={prompt_column: "prompt"} if prompt_column else None,
    )


SUPPLIED_RUBRICS = "supplied"
"""``rubric_prompt_version`` of a run whose rubrics were given in the data (no rubric prompt)."""


def prompt_version(generator: RubricGenerator | None, *, media_type: str) -> str:
    """Which rubric-generation prompt made a run's rubrics (``rubric_prompt_version`` in metrics.json).

    Returns:
        ``supplied`` (no generator: rubrics given), ``custom-<first 12 hex of the template's SHA-256>`` for a
        ``rubric_generation_prompt_template``, :data:`~autorater_pipelines.gecko.prompts.TEXT_RUBRIC_PROMPT_VERSION`
        (``text-rubrics-v1``) for the built-in text prompt, ``<media_type>-rubrics-builtin`` for the image/video one.
    """
    if generator is None:
        return SUPPLIED_RUBRICS
    if generator.prompt_template:
        return "custom-" + hashlib.sha256(generator.prompt_template.encode("utf-8")).hexdigest()[:12]
    media_type = check_media_type(media_type)
    return prompts.TEXT_RUBRIC_PROMPT_VERSION if media_type == "text" else f"{media_type}-rubrics-builtin"


def generate_rubrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    prompt_column: str,
    media_type: str,
    generator: RubricGenerator,
) -> StageResult:
    """Generate a rubric for every row's prompt.

    Args:
        rows: Dataset rows (JSON-compatible dicts).
        id_columns: Columns that identify a row (and key replay recordings).
        prompt_column: Column holding the text-to-image/video prompt.
        media_type: ``image`` (yes/no questions), ``video`` (multiple choice a–d) or ``text`` (pass/fail
            rubrics for a text response, :data:`autorater_pipelines.gecko.prompts.RUBRIC_TEXT_TEMPLATE`).
        generator: The stage (:class:`~autorater_pipelines.gecko.params.RubricGenerator`, e.g.
            ``RubricGenerator.of("gemini-2.5-flash", {"temperature": 0})``): model spec (docs/models.md "Model specs"),
            ``rubric_generation_parameters`` (any :class:`GenerateConfig` field: ``temperature``, ``base_url``,
            ``max_concurrency`` …), project, location, and the prompt-template override, in Jinja2 (variables
            ``prompt``, ``question_types``, ``media_type``) or Vertex AI SDK syntax (``{prompt}``; see
            :mod:`autorater_pipelines.gecko.templates`); the structured-output schema is still requested.

    Returns:
        ``StageResult(rows, errors)``: rubric rows are the input rows plus ``keywords``, ``qas`` and
        ``rubric_warnings``; rows whose prompt is empty (kind ``missing_prompt``), whose call failed
        (kind = the model error kind) or whose reply yields no usable rubric (``unparseable_rubric``,
        ``invalid_rubric``, ``empty_rubric``, with the raw reply) are error rows of stage
        ``rubric_generation``. A row never gets an empty rubric. When the model calls stop early, the rows
        not called are error rows of kind ``budget`` whose message starts ``not called:`` with the reason.

    Raises:
        InputError: bad parameters, template, prompt column or id columns.
        ModelCallError: the process got SIGTERM.

    """
    media_type = check_media_type(media_type)
    check_rows(rows, id_columns=id_columns, required={"prompt_column": prompt_column})
    generator.generate_config()  # a refused setting fails before the template is compiled, as before any call
    template = generator_template(generator, media_type=media_type, prompt_column=prompt_column)
    errors: list[dict[str, Any]] = []
    pending: list[Mapping[str, Any]] = []
    requests: list[ModelRequest] = []
    for row in rows:
        prompt = row.get(prompt_column)
        if is_blank(prompt) or not isinstance(prompt, str):
            errors.append(
                error_row(
                    row,
                    id_columns,
                    stage="rubric_generation",
                    kind="missing_prompt",
                    message=f"column {prompt_column!r} has no prompt text, got {prompt!r}",
                )
            )
            continue
        parts = template.render(
            prompt=prompt,
            question_types=list(question_types_for(media_type)),
            media_type=media_type,
            guidelines=generator.options.guidelines,
        )
        pending.append(row)
        requests.append(
            ModelRequest(
                parts=parts,
                key=id_values(row, id_columns),
                response_schema=prompts.RUBRIC_SCHEMAS[media_type],
            )
        )
    outputs = call_model(generator.get_model(), requests, desc="gecko rubrics") if requests else []
    out: list[dict[str, Any]] = []
    for row, output in zip(pending, outputs, strict=True):
        if not output.ok:
            kind = output.error.kind.value if output.error else "blocked"
            message = output.error.message if output.error else "the model returned no text"
            errors.append(error_row(row, id_columns, stage="rubric_generation", kind=kind, message=message))
            continue
        try:
            rubric = parse_generated_rubric(output.text, media_type=media_type)
        except RubricError as exc:
            errors.append(
                error_row(
                    row,
                    id_columns,
                    stage="rubric_generation",
                    kind=exc.kind,
                    message=str(exc),
                    raw=output.text,
                )
            )
            continue
        if rubric["rubric_warnings"]:
            logger.warning("rubric of %s: %s", id_values(row, id_columns), "; ".join(rubric["rubric_warnings"]))
        out.append(rubric_row(row, rubric))
    return StageResult(out, errors)


def make_rubrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    id_columns: Sequence[str],
    media_type: str,
    prompt_column: str,
    rubrics_column: str,
    generator: RubricGenerator | None,
    rubric_group: str = "",
) -> StageResult:
    """Give every loaded row a rubric: parsed from ``rubrics_column`` when it is set, else generated.

    The rubric stage of the pipeline's rubric step (:func:`autorater_pipelines.gecko.steps.rubrics_for_rows`) and
    of the DataFrame API.

    Args:
        rows: Dataset rows.
        id_columns: Columns that identify a row.
        media_type: ``image`` or ``video``.
        prompt_column: Column with the generation prompt (rubrics generated).
        rubrics_column: Column with supplied rubrics; empty = generate them with ``generator``.
        generator: The rubric-generation stage; needed (and only used) when ``rubrics_column`` is empty.
        rubric_group: The group of a Vertex ``rubric_groups`` column to use ("" = the only group).

    Returns:
        ``StageResult(rubric rows, error rows)`` (:func:`generate_rubrics`,
        :func:`~autorater_pipelines.gecko.rubrics.parse_supplied_rubrics`).
    """
    if rubrics_column:
        return parse_supplied_rubrics(
            rows, id_columns=id_columns, rubrics_column=rubrics_column, rubric_group=rubric_group
        )
    if generator is None:
        raise ValueError("make_rubrics: no rubrics_column and no generator; give one of them")
    return generate_rubrics(
        rows, id_columns=id_columns, prompt_column=prompt_column, media_type=media_type, generator=generator
    )
