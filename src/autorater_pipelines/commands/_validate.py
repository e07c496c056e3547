"""Check pipeline parameter values against the types a compiled template declares.

Vertex AI's ``PipelineJob`` rejects unknown parameter names but accepts values of the wrong type and
missing required parameters (NOTES.md, "Vertex / Artifact Registry"): the job is created and fails
minutes later, or a number silently arrives as a float. ``autorater run`` and ``autorater submit``
therefore check every value here first, against the template that will run.

Template types are KFP's: the IR names of a compiled YAML (``STRING``, ``NUMBER_INTEGER``,
``NUMBER_DOUBLE``, ``BOOLEAN``, ``LIST``, ``STRUCT``) or the names ``kfp.components`` reports for them
(``String``, ``Integer``, ``Float``, ``Boolean``, ``List``, ``Dict``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from autorater_pipelines.errors import InputError

__all__ = ["check_param_types", "parameter_type", "type_problem"]

_KFP_TO_IR = {
    "String": "STRING",
    "Integer": "NUMBER_INTEGER",
    "Float": "NUMBER_DOUBLE",
    "Boolean": "BOOLEAN",
    "List": "LIST",
    "Dict": "STRUCT",
}
_EXPECTED = {
    "STRING": "a JSON string",
    "NUMBER_INTEGER": "a JSON integer",
    "NUMBER_DOUBLE": "a JSON number",
    "BOOLEAN": "true or false",
    "LIST": "a JSON array",
    "STRUCT": "a JSON object",
}
_MAX_REPR = 80


def parameter_type(spec: Any) -> str | None:
    """IR type name (``STRING`` …) of a template input, or None for an artifact or unknown type.

    Args:
        spec: A ``kfp`` ``InputSpec`` (has ``.type``), or an IR type name or KFP type name string.
    """
    name = spec if isinstance(spec, str) else getattr(spec, "type", None)
    if not isinstance(name, str):
        return None
    if name in _EXPECTED:
        return name
    return _KFP_TO_IR.get(name)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _matches(value: Any, ir_type: str) -> bool:
    if ir_type == "STRING":
        return isinstance(value, str)
    if ir_type == "NUMBER_INTEGER":
        return isinstance(value, int) and not isinstance(value, bool)
    if ir_type == "NUMBER_DOUBLE":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if ir_type == "BOOLEAN":
        return isinstance(value, bool)
    if ir_type == "LIST":
        return isinstance(value, list)
    if ir_type == "STRUCT":
        return isinstance(value, dict)
    return True


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _hint(value: Any, ir_type: str) -> str:
    """A fix for the usual mistakes: JSON text inside a string, numbers or booleans written as strings."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if decoded is not None and not isinstance(decoded, str) and _matches(decoded, ir_type):
            return " (it holds JSON text: write the value itself, without the quotes)"
        if ir_type == "LIST":
            return f' (a single column is still a list: ["{value}"])' if value and "," not in value else ""
    if ir_type == "NUMBER_INTEGER" and isinstance(value, float) and value.is_integer():
        return f" (write {int(value)})"
    return ""


def type_problem(name: str, value: Any, spec: Any) -> str | None:
    """Describe why ``value`` does not fit the template input ``name``; None when it fits.

    Args:
        name: The pipeline parameter name.
        value: The value as decoded from JSON.
        spec: The template's ``InputSpec`` for ``name`` (or its type name).

    Returns:
        One sentence naming the parameter, the expected type and the value received, or None.
    """
    ir_type = parameter_type(spec)
    if ir_type is None:
        kind = spec if isinstance(spec, str) else getattr(spec, "type", "?")
        if isinstance(kind, str) and "." in kind:  # system.Dataset@0.0.1 …
            return f"parameter {name!r} is an input artifact ({kind}) and cannot be given a value in the parameters"
        return None
    if value is None:
        optional = getattr(spec, "optional", False)
        fix = "; omit it to use the template's default" if optional else ""
        return f"parameter {name!r} expects {ir_type} ({_EXPECTED[ir_type]}), received null{fix}"
    if _matches(value, ir_type):
        return None
    return (
        f"parameter {name!r} expects {ir_type} ({_EXPECTED[ir_type]}), received {_json_kind(value)}: "
        f"{_shown(value)}{_hint(value, ir_type)}"
    )


def check_param_types(params: Mapping[str, Any], inputs: Mapping[str, Any], source: str | None = None) -> None:
    """Check every value in ``params`` against the type of the template input of the same name.

    Names that are not template inputs are skipped (checking names is the caller's job). An integer is
    accepted for ``NUMBER_DOUBLE``; a boolean is never accepted as a number.

    Args:
        params: Pipeline parameter names to values (decoded JSON).
        inputs: The template's ``{name: InputSpec}`` (``kfp.components`` ``component_spec.inputs``).
        source: Where the parameters came from (a file name), for the message.

    Raises:
        InputError: one or more values of the wrong type; the message lists each parameter with the
            type expected and the value received.
    """
    problems = [
        problem
        for name in sorted(params)
        if name in inputs and (problem := type_problem(name, params[name], inputs[name])) is not None
    ]
    if problems:
        raise InputError("; ".join(problems), source=source)
