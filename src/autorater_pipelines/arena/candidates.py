"""Arena models whose responses are generated: ``models`` (name → ``model``, ``prompt_parameters``, ``parameters``).

A model of ``models`` answers every prompt as AutoSxS's ``model_a`` does (the same stage, prompt forms and call:
:mod:`autorater_pipelines.pairwise.responses`; online, or Vertex AI batch prediction with ``parameters.mode:
batch``): its generated response is then that model's response on the prompt, judged like a response column's.

The prepare step renders each generated model's prompt into the pair examples it appears in
(``model_a_prompt`` / ``model_b_prompt``, and ``model_<side>_system_instruction``); :func:`generate_candidates`
asks each model once per prompt (replay key: the prompt's id columns and ``model`` = the model's name), fills
``response_a`` / ``response_b`` of every pair, and drops the prompts. A failed generation leaves the response None
with ``inference_error_<side>`` = ``"<kind>: model '<name>': <message>"``: the judge step makes every pair of that
model on that prompt an unjudged ``ERROR`` judgment with the reason in ``error_messages`` (stage ``inference``), and
the ranking step counts them (``unjudged_pair_count``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import pydantic

from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation.error_rows import split_error
from autorater_pipelines.evaluation.parameters import ParameterModel
from autorater_pipelines.pairwise.responses import ModelParameters, ResponseModel, check_prompt_form, generate_responses

__all__ = ["CandidateModel", "CandidateStage", "generate_candidates", "parse_models"]

logger = logging.getLogger(__name__)

_EXAMPLE = (
    '{"tuned-v2": {"model": "openai/tuned-v2", "prompt_parameters": {"prompt": {"column": "question"}}, '
    '"parameters": {"temperature": 0.2}}}'
)
_KEYS = ("model", "prompt_parameters", "parameters")


class CandidateModel(ParameterModel):
    """One entry of ``models``: the model spec, its prompt parameters and its generation settings."""

    model: str
    """Model spec (docs/models.md "Model specs"), as AutoSxS's ``model_a``."""
    prompt_parameters: dict[str, Any]
    """``{"prompt": ...}`` or ``{"contents": ..., "system_instruction": ...}``, as AutoSxS's
    ``model_a_prompt_parameters``; ``{{ default_instruction }}`` is the task's default instruction."""
    parameters: ModelParameters = pydantic.Field(default_factory=ModelParameters)
    """Generation settings, as AutoSxS's ``model_a_parameters`` (``temperature``, ``max_output_tokens``,
    ``base_url``, ``mode: batch`` …)."""


class CandidateStage(ResponseModel):
    """An arena model's generating stage: messages name ``models['<name>'].model`` / ``.parameters``."""

    @property
    def options_source(self) -> str:
        """``models['<name>'].parameters``."""
        return f"models[{self.side!r}].parameters"

    @property
    def model_source(self) -> str:
        """``models['<name>'].model``."""
        return f"models[{self.side!r}].model"

    @classmethod
    def for_model(
        cls, name: str, candidate: CandidateModel, *, project: str = "", location: str = ""
    ) -> CandidateStage:
        """The stage of the model ``name`` of ``models``."""
        return cls(
            side=name,
            model=candidate.model,
            options=candidate.parameters,
            prompt_parameters=candidate.prompt_parameters,
            project=project or "",
            location=location or "",
        )


def parse_models(value: Any) -> dict[str, CandidateModel]:
    """``models`` as received (a JSON object, None = none) → model name → :class:`CandidateModel`.

    Raises:
        InputError: not an object, an empty name, an entry that is not an object of ``model``,
            ``prompt_parameters`` and ``parameters``, an empty model spec, prompt parameters in no documented form,
            or a bad generation setting — naming ``models['<name>']`` and the key.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"must be an object of model name → model like {_EXAMPLE}, got {value!r}", source="models")
    parsed = {}
    for name, entry in value.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"model name {name!r} is empty; name every model", source="models")
        where = f"models[{name!r}]"
        if isinstance(entry, CandidateModel):
            parsed[name] = entry
            continue
        if not isinstance(entry, Mapping):
            raise InputError(f"must be an object like {_EXAMPLE}, got {entry!r}", source=where)
        unknown = sorted(str(k) for k in entry if k not in _KEYS)
        if unknown:
            raise InputError(unknown_names("keys", unknown, list(_KEYS)), source=where)
        spec = entry.get("model")
        if not isinstance(spec, str) or not spec.strip():
            raise InputError(
                f"needs the model spec whose responses are generated (e.g. 'gemini-2.5-flash', 'openai/my-model'), "
                f"got {spec!r}",
                source=f"{where}.model",
            )
        check_prompt_form(
            entry.get("prompt_parameters"), source=f"{where}.prompt_parameters", subject=f"model {name!r}"
        )
        parameters = ModelParameters.parse(entry.get("parameters"), source=f"{where}.parameters")
        parsed[name] = CandidateModel(
            model=spec.strip(), prompt_parameters=dict(entry["prompt_parameters"]), parameters=parameters
        )
    return parsed


def generate_candidates(
    examples: Sequence[MutableMapping[str, Any]],
    models: Mapping[str, CandidateModel],
    id_columns: Sequence[str],
    *,
    project: str = "",
    location: str = "",
) -> dict[str, int]:
    """Generate every ``models`` response the pair examples need, once per model and prompt (module docstring).

    Args:
        examples: The pair examples of the prepare step; modified in place (``response_<side>`` filled,
            ``model_<side>_prompt`` and ``model_<side>_system_instruction`` removed).
        models: The generated models (``models`` parsed, :func:`parse_models`).
        id_columns: The prompt's id columns (without ``model_a`` / ``model_b``).
        project: Google Cloud project of Vertex AI calls.
        location: Google Cloud region of Vertex AI calls.

    Returns:
        ``{"generated_count": n, "failed_count": m}``: responses requested (model × prompt) and failed.

    Raises:
        InputError: a pair example asks for a model not in ``models`` (not the prepare step's file), or a bad
            setting.
        ModelCallError: the process got SIGTERM (nothing is kept; a re-run resumes from the response cache).
    """
    wanted: dict[str, dict[str, dict[str, Any]]] = {}
    for example in examples:
        for side in ("a", "b"):
            if f"model_{side}_prompt" not in example:
                continue
            name = example[f"model_{side}"]
            if name not in models:
                raise InputError(
                    f"pair example asks for responses of {name!r}, which is not one of models {sorted(models)}",
                    source="prepared_examples",
                )
            key = json.dumps([example[c] for c in id_columns], ensure_ascii=False, default=str)
            wanted.setdefault(name, {}).setdefault(
                key,
                {
                    **{c: example[c] for c in id_columns},
                    f"model_{name}_prompt": example[f"model_{side}_prompt"],
                    f"model_{name}_system_instruction": example.get(f"model_{side}_system_instruction"),
                },
            )
    generated = failed = 0
    for name in sorted(wanted):
        rows = list(wanted[name].values())
        stage = CandidateStage.for_model(name, models[name], project=project, location=location)
        failed += generate_responses(rows, stage, id_columns)
        generated += len(rows)
    for example in examples:
        key = json.dumps([example[c] for c in id_columns], ensure_ascii=False, default=str)
        for side in ("a", "b"):
            if example.pop(f"model_{side}_prompt", None) is None:
                continue
            example.pop(f"model_{side}_system_instruction", None)
            name = example[f"model_{side}"]
            row = wanted[name][key]
            example[f"response_{side}"] = row[f"response_{name}"]
            if row.get(f"inference_error_{name}"):
                kind, message = split_error(row[f"inference_error_{name}"])
                example[f"inference_error_{side}"] = f"{kind}: model {name!r}: {message}"
    logger.info("generated %d responses of %d models, %d failed", generated, len(wanted), failed)
    return {"generated_count": generated, "failed_count": failed}
