"""Helpers shared by CLI subcommands: parameter files, templates, output staging."""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

from autorater_pipelines.commands._validate import check_param_types, parameter_type
from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.io._jsondup import DuplicateKeyError, duplicate_key_line, duplicate_key_message, unique_keys

__all__ = [
    "DEFAULT_COMPILED_DIR",
    "absolutize_local_paths",
    "check_param_names",
    "local_inputs",
    "load_params",
    "template_path",
    "validate_run",
]

DEFAULT_COMPILED_DIR = "compiled"


def template_path(name: str, template: str | None) -> str:
    """Path of the compiled template ``name`` (``--template`` wins; else the packaged ``compiled/<name>.yaml``).

    Raises:
        InputError: the file does not exist.
    """
    if template:
        path = template
    else:  # the templates ship inside the package (compiled/ in a source checkout)
        path = str(resources.files("autorater_pipelines.compiled") / f"{name}.yaml")
    if not os.path.exists(path):
        raise InputError(
            f"compiled template not found: {path!r}; run `autorater compile` or pass --template", source="--template"
        )
    return path


def load_params(path: str) -> dict[str, Any]:
    """Read a PARAMS.json file: a JSON object of pipeline parameter names to values.

    Raises:
        InputError: missing file, invalid JSON, a key written twice in one object (naming its line), or not an
            object.
    """
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a byte order mark is skipped, as in datasets
            text = fh.read()
        params = json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        raise InputError(
            duplicate_key_message(exc.key), source=path, row=duplicate_key_line(text, exc.key), unit="line"
        ) from None
    except FileNotFoundError:
        raise InputError("file not found", source=path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source=path) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8 JSON", source=path
        ) from None
    except IsADirectoryError:
        raise InputError("is a directory; pass the PARAMS.json file", source=path) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror}", source=path) from None
    except RecursionError:
        raise InputError("is nested too deeply to be a parameters file", source=path) from None
    if not isinstance(params, dict):
        raise InputError(
            f"must be a JSON object mapping pipeline parameter names to values, got {type(params).__name__}",
            source=path,
        )
    return params


def check_param_names(params: dict[str, Any], template: str, source: str) -> dict[str, Any]:
    """Check names, required parameters and value types against the template; return its ``{name: InputSpec}``.

    Raises:
        InputError: an unknown name (listing the valid ones), a missing required parameter, or a value
            of the wrong type (:func:`autorater_pipelines.commands._validate.check_param_types`).
    """
    from autorater_pipelines.pipelines._local import template_inputs

    try:
        inputs = template_inputs(template)
    except Exception as exc:  # noqa: BLE001 - any parse failure means "not a template"
        raise InputError(
            f"is not a compiled pipeline template ({type(exc).__name__}: {str(exc)[:200]})", source=template
        ) from None
    unknown = sorted(set(params) - set(inputs))
    if unknown:
        other = _other_pipeline(unknown, inputs)
        if other:
            raise InputError(
                f"unknown pipeline parameters {unknown}; these look like {other} parameters: "
                f"autorater run {other} --params {source}",
                source=source,
            )
        raise InputError(unknown_names("pipeline parameters", unknown, sorted(inputs)), source=source)
    missing = sorted(n for n, spec in inputs.items() if not getattr(spec, "optional", False) and n not in params)
    if missing:
        types = ", ".join(f"{n}: {parameter_type(inputs[n]) or getattr(inputs[n], 'type', '?')}" for n in missing)
        raise InputError(f"missing required pipeline parameters {missing} ({types})", source=source)
    check_param_types(params, inputs, source)
    return inputs


def integers_as_given(value: Any, given: Any) -> Any:
    """``value`` with each float equal to the int at the same place of ``given`` written as that int.

    A PipelineJob's ``parameterValues`` (protobuf ``Value``) and a compiled template's ``defaultValue`` hold every
    number as a double: ``"sampling_count": 2`` comes back as ``2.0``. Used where those are shown to the user.
    """
    if isinstance(value, float) and isinstance(given, int) and not isinstance(given, bool) and value == given:
        return given
    if isinstance(value, dict) and isinstance(given, dict):
        return {k: integers_as_given(v, given.get(k)) for k, v in value.items()}
    if isinstance(value, list) and isinstance(given, list) and len(value) == len(given):
        return [integers_as_given(v, g) for v, g in zip(value, given, strict=True)]
    return value


def _other_pipeline(unknown: list[str], inputs: dict[str, Any]) -> str:
    """The registered pipeline that takes every ``unknown`` name (a file meant for it), or ``""``."""
    from autorater_pipelines import registry

    for spec in registry.specs():
        fields = set(spec.load("parameters").model_fields)
        if fields != set(inputs) and set(unknown) <= fields:
            return spec.name
    return ""


def absolutize_local_paths(params: dict[str, Any]) -> None:
    """Make relative local dataset and replay paths absolute, so pipeline steps find them from any cwd.

    Covers ``evaluation_dataset``, ``replay/<path>`` model specs and a custom task's
    ``few_shot_examples_config.dataset``.
    """

    def absolute(path: str) -> str:
        path = path.strip()
        return path if "://" in path or os.path.isabs(path) or not path else os.path.abspath(path)

    if isinstance(params.get("evaluation_dataset"), str):
        params["evaluation_dataset"] = ",".join(absolute(p) for p in params["evaluation_dataset"].split(","))
    for key in ("autorater_model", "model_a", "model_b", "rubric_generation_model", "validator_model"):
        value = params.get(key)
        if isinstance(value, str) and value.startswith("replay/"):
            params[key] = "replay/" + absolute(value[len("replay/") :])
    args = params.get("experimental_args")
    task = args.get("custom_task_definition") if isinstance(args, dict) else None
    few_shot = task.get("few_shot_examples_config") if isinstance(task, dict) else None
    if isinstance(few_shot, dict) and isinstance(few_shot.get("dataset"), str):
        few_shot["dataset"] = ",".join(absolute(p) for p in few_shot["dataset"].split(","))


def validate_run(pipeline: str, params: dict[str, Any], *, readable: Any = None, project: str = "") -> list[str]:
    """Run the pipeline's one ``validate_run`` (the check its first step makes) and return its notes.

    Args:
        pipeline: A registered pipeline name (:func:`autorater_pipelines.registry.names`).
        params: The pipeline parameters.
        readable: Which files and URIs to read from here (``(uri) -> bool``); None = all.
        project: The job's project, used when ``params`` sets none.

    Raises:
        InputError: the first problem found.
        UnknownPipelineError: ``pipeline`` is not registered (the message lists the registered ones).
    """
    from autorater_pipelines import registry

    check = registry.get(pipeline).load("validate_run")
    return list(check(params, readable=readable, project=project).notes)


def local_inputs(params: Any, params_path: str) -> list[str]:
    """Absolute local paths of the existing files and folders a run reads.

    They are the params file and every absolute path or ``file://`` URI among the parameter values, at
    any depth and split at commas. Call it after :func:`absolutize_local_paths`, which makes
    ``evaluation_dataset``, ``replay/<path>`` model specs and few-shot datasets absolute; relative values
    of other parameters (column names...) are not paths.

    Media files named inside dataset rows are not listed here (the Gecko preflight lists them from the rows).
    """
    found = [os.path.abspath(params_path)] if params_path and os.path.exists(params_path) else []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, str) and 0 < len(value) < 4096:
            text = value[len("replay/") :] if value.startswith("replay/") else value
            for part in text.split(","):
                part = part.strip().removeprefix("file://")
                if os.path.isabs(part) and "://" not in part and "\n" not in part and os.path.exists(part):
                    found.append(os.path.abspath(part))

    visit(params)
    return sorted(set(found))
