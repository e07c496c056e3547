"""``autorater params PIPELINE``: every parameter of a pipeline, with its type, default and description.

Derived, never listed by hand: the pipeline parameters (name, KFP type, default, description) are the
``root.inputDefinitions`` of its compiled template, the one users submit; the keys of a dict parameter whose value
is checked by a parameter model (``autorater_parameters``, ``scoring``, ``validator_parameters`` …) come from that
model's JSON schema, with the field docstrings as descriptions, and — for the ``*_parameters`` dicts of a model —
every :class:`~autorater_pipelines.models.GenerateConfig` field.

The pipelines are those of the registry of evaluations (:mod:`autorater_pipelines.registry`, the ones
``autorater compile`` writes); a pipeline's parameter model is its spec's ``parameters`` reference, so a new
pipeline (``arena``) is listed once registered, without a change here.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import textwrap
from typing import Any

__all__ = ["parameter_table", "register"]


def register(sub: Any) -> None:
    """Add the ``params`` subcommand."""
    from autorater_pipelines import registry

    p = sub.add_parser(
        "params",
        help="list a pipeline's parameters with types, defaults and descriptions",
        description="List every parameter of a pipeline's compiled template (the keys of PARAMS.json) with its "
        "type, default and description, and the keys each dict parameter accepts.",
        epilog="examples:\n  autorater params autosxs\n  autorater params gecko --json > gecko_params.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("pipeline", choices=sorted(registry.names()), help="which pipeline")
    p.add_argument("--template", default=None, help="compiled YAML to read (default: compiled/<pipeline>.yaml)")
    p.add_argument("--json", action="store_true", help="print the table as JSON (one object per parameter)")
    p.set_defaults(func=run)


def _parameter_model(pipeline: str) -> Any:
    """The pipeline's parameter model (its spec's ``parameters`` reference)."""
    from autorater_pipelines import registry

    return registry.get(pipeline).load("parameters")


def _nested_model(model: Any, name: str) -> Any:
    """The parameter model that checks the dict parameter ``name``, or None."""
    from autorater_pipelines.evaluation.parameters import ParameterModel

    field = getattr(model, "model_fields", {}).get(name)
    annotation = getattr(field, "annotation", None)
    return annotation if isinstance(annotation, type) and issubclass(annotation, ParameterModel) else None


def _schema_type(prop: dict[str, Any]) -> str:
    """A JSON schema property as a short type: ``boolean``, ``"a" | "b"``, ``integer | null``, and so on."""
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:  # a one-value Literal
        return json.dumps(prop["const"])
    if "anyOf" in prop:
        return " | ".join(_schema_type(p) for p in prop["anyOf"])
    if prop.get("type") == "array":
        return f"array of {_schema_type(prop.get('items') or {})}"
    return str(prop.get("type") or prop.get("$ref", "any").rsplit("/", 1)[-1] or "any")


def _lenient_schema() -> Any:
    """A JSON schema generator that gives ``{}`` for a type without a JSON schema (e.g. a compiled pattern)."""
    from pydantic.json_schema import GenerateJsonSchema

    class Lenient(GenerateJsonSchema):
        def handle_invalid_for_json_schema(self, schema: Any, error_info: str) -> dict[str, Any]:
            return {}

    return Lenient


def _annotation(field: Any) -> str:
    """A field's type as written, for the few whose schema says nothing (``VerdictPattern | None``)."""
    text = getattr(getattr(field, "annotation", None), "__name__", None) or str(getattr(field, "annotation", "any"))
    return re.sub(r"\b[\w.]+\.(\w+)", r"\1", text.replace("typing.", ""))


def _keys(model: Any) -> list[dict[str, Any]]:
    """The keys of a nested parameter model: its fields, and GenerateConfig's for model-call options."""
    from autorater_pipelines.evaluation.parameters import ModelCallOptions

    sources = [model]
    if issubclass(model, ModelCallOptions):
        from autorater_pipelines.models import GenerateConfig

        sources.append(GenerateConfig)
    keys: dict[str, dict[str, Any]] = {}
    for source in sources:
        schema = source.model_json_schema(mode="validation", schema_generator=_lenient_schema())
        for name, prop in schema.get("properties", {}).items():
            if name in keys:
                continue
            field = source.model_fields.get(name)
            typed = {k: v for k, v in prop.items() if k in ("type", "enum", "anyOf", "$ref", "items")}
            keys[name] = {
                "name": name,
                "type": _schema_type(prop) if typed else _annotation(field),
                "default": prop.get("default") if "default" in prop else _default(field),
                "description": " ".join(str(prop.get("description") or "").split()),
            }
    return list(keys.values())


def _default(field: Any) -> Any:
    if field is None or field.default_factory is None:
        return None
    try:
        value = field.default_factory()
    except TypeError:  # a factory that needs the validated data
        return None
    return value.model_dump() if hasattr(value, "model_dump") else value


def parameter_table(pipeline: str, template: str | None = None) -> list[dict[str, Any]]:
    """Every parameter of ``pipeline``'s compiled template, in template order.

    Returns:
        Per parameter, in the order of the pipeline's parameter model (template order otherwise): ``name``,
        ``type`` (KFP: ``STRING``, ``LIST``, ``STRUCT`` …), ``required`` (bool), ``default`` (absent when
        required), ``description``, and ``keys`` (for a dict parameter checked by a parameter model: ``name``,
        ``type``, ``default``, ``description`` of each key it accepts).

    Raises:
        InputError: the template cannot be found or read.
    """
    import yaml

    from autorater_pipelines.commands._common import template_path
    from autorater_pipelines.commands._registry import read_template

    path = template_path(pipeline, template)
    read_template(path)  # a compiled KFP pipeline, or a clear error
    with open(path, encoding="utf-8") as fh:
        parameters = ((yaml.safe_load(fh)["root"].get("inputDefinitions") or {}).get("parameters")) or {}
    model = _parameter_model(pipeline)
    order = list(getattr(model, "model_fields", {}))  # the parameter model's order: the pipeline's own
    names = sorted(parameters, key=lambda n: (order.index(n) if n in order else len(order), n))
    table = []
    for name in names:
        spec = parameters[name]
        entry: dict[str, Any] = {
            "name": name,
            "type": spec.get("parameterType", ""),
            "required": not spec.get("isOptional", False),
            "description": " ".join(str(spec.get("description") or "").split()),
        }
        if "defaultValue" in spec:  # KFP stores an integer default as a double (1.0)
            default = spec["defaultValue"]
            integral = isinstance(default, float) and default.is_integer()
            entry["default"] = int(default) if integral and spec.get("parameterType") == "NUMBER_INTEGER" else default
        nested = _nested_model(model, name) if model is not None else None
        if nested is not None:
            entry["keys"] = _keys(nested)
        table.append(entry)
    return table


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _print(pipeline: str, table: list[dict[str, Any]]) -> None:
    width = max(shutil.get_terminal_size((110, 20)).columns, 80)
    required = sum(e["required"] for e in table)
    print(f"{pipeline}: {len(table)} parameters ({required} required); PARAMS.json maps these names to values")
    for entry in table:
        default = "required" if entry["required"] else f"default {_shown(entry.get('default'))}"
        print(f"\n  {entry['name']}  ({entry['type']}, {default})")
        for line in textwrap.wrap(entry["description"], width - 6):
            print(f"      {line}")
        for key in entry.get("keys", []):
            print(f"      - {key['name']}  ({key['type']}, default {_shown(key['default'])})")
            for line in textwrap.wrap(key["description"], width - 10):
                print(f"          {line}")


def run(args: argparse.Namespace) -> int:
    """Print the parameter table."""
    table = parameter_table(args.pipeline, args.template)
    if args.json:
        print(json.dumps(table, indent=2, ensure_ascii=False))
    else:
        _print(args.pipeline, table)
    return 0
