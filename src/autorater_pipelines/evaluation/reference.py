"""The parameter reference of a pipeline, derived from its compiled template and its parameter model.

Nothing here is a hand-kept list: the pipeline parameters (name, type, default, description) are the compiled
template's ``root.inputDefinitions`` (whose descriptions are the pipeline docstring's ``Args``), and the keys of
each nested options dict (``autorater_parameters``, ``validator_parameters``, ``scoring`` …) are the fields of
the parameter model's option classes with their attribute docstrings, the model-call settings those classes
take from :class:`~autorater_pipelines.models.GenerateConfig`, and their ranges from
:data:`~autorater_pipelines.evaluation.parameters.BOUNDS`. The docs site renders it at build time
(``docs/hooks.py``: an MkDocs hook), so the reference cannot fall behind the code.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
import textwrap
import types
import typing
from typing import Any

import pydantic

__all__ = [
    "OptionDoc",
    "ParameterDoc",
    "docstring_markdown",
    "option_docs",
    "parameter_docs",
    "render_bounds_markdown",
    "render_markdown",
]


@dataclasses.dataclass(frozen=True)
class OptionDoc:
    """One key of a nested options dict.

    Attributes:
        name: The key.
        type: Its type in words (``integer``, ``number``, ``true/false``, ``text``, one of the allowed values …).
        default: The default as JSON text (``""`` when there is none to show).
        description: What it does (the field's attribute docstring, markdown).
        bound: The allowed range from ``BOUNDS`` (``""`` when the key has none).
    """

    name: str
    type: str
    default: str
    description: str
    bound: str = ""


@dataclasses.dataclass(frozen=True)
class ParameterDoc:
    """One pipeline parameter of a compiled template.

    Attributes:
        name: The parameter name.
        type: The template's parameter type (``STRING``, ``LIST``, ``STRUCT`` …).
        required: No default: a run must give it.
        default: The default as JSON text (``""`` when required).
        description: The template's description (the pipeline docstring's ``Args`` line).
        options: The keys of its value when it is an options dict with a model, else empty.
    """

    name: str
    type: str
    required: bool
    default: str
    description: str
    options: tuple[OptionDoc, ...] = ()


def docstring_markdown(text: str) -> str:
    """Sphinx markup of a docstring as markdown: ````x```` → ```x```, ``:class:`~a.B``` → ```B```."""
    text = re.sub(r":\w+:`~?([^`]+)`", lambda m: f"`{m[1].rsplit('.', 1)[-1]}`", text)
    text = text.replace("``", "`")
    return " ".join(textwrap.dedent(text).split())


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of the string literals written right after each annotated field, over the MRO."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not issubclass(klass, pydantic.BaseModel) or klass is pydantic.BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = docstring_markdown(after.value.value)
    return docs


def _type_words(field: Any) -> str:
    """A field's type in words: ``integer``, ``one of `a`, `b```, ``object`` …; optional (None) left out."""
    kinds = {bool: "true/false", int: "integer", float: "number", str: "text", dict: "object", list: "list"}
    annotation = field.annotation
    candidates = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        candidates = [a for a in typing.get_args(annotation) if a is not type(None)]
    for candidate in candidates:
        if typing.get_origin(candidate) is typing.Annotated:
            candidate = typing.get_args(candidate)[0]
        origin = typing.get_origin(candidate)
        if origin is typing.Literal:
            return "one of " + ", ".join(f"`{a}`" for a in typing.get_args(candidate))
        if (origin or candidate) in kinds:
            return kinds[origin or candidate]
    return "any"


def _default_text(field: Any) -> str:
    if field.is_required():
        return ""
    default = field.get_default(call_default_factory=True)
    if isinstance(default, pydantic.BaseModel):
        return "{}"
    try:
        return json.dumps(default)
    except TypeError:
        return repr(default)


def option_docs(model: type[pydantic.BaseModel]) -> tuple[OptionDoc, ...]:
    """The keys of an options dict parsed by ``model``: its own fields, then the model-call settings it accepts.

    Args:
        model: A nested options class of a parameter model (``AutoraterParameters``, ``ScoringOptions`` …). A
            :class:`~autorater_pipelines.evaluation.parameters.ModelCallOptions` subclass also takes every
            :class:`~autorater_pipelines.models.GenerateConfig` field (except ``project`` and ``location``, which
            come from the pipeline parameters), and its ``ALIASES`` are listed with the field they stand for.

    Returns:
        One :class:`OptionDoc` per key, own fields first, each group in declaration order.
    """
    from autorater_pipelines.evaluation.parameters import BOUNDS, ModelCallOptions

    groups: list[type[pydantic.BaseModel]] = [model]
    if issubclass(model, ModelCallOptions):
        from autorater_pipelines.models import GenerateConfig

        groups.append(GenerateConfig)
    aliases: dict[str, list[str]] = {}
    for alias, name in getattr(model, "ALIASES", {}).items():
        aliases.setdefault(name, []).append(alias)
    seen: set[str] = set()
    out = []
    for group in groups:
        docs = _attribute_docstrings(group)
        for name, field in group.model_fields.items():
            if name in seen or (group is not model and name in {"project", "location"}):
                continue
            seen.add(name)
            description = docs.get(name, "")
            if aliases.get(name):
                description += " Also accepted as " + ", ".join(f"`{a}`" for a in aliases[name]) + "."
            bound = BOUNDS[name].describe() if name in BOUNDS else ""
            out.append(OptionDoc(name, _type_words(field), _default_text(field), description.strip(), bound))
    return tuple(out)


def _load(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def parameter_docs(template_path: str, params_model: str | type[pydantic.BaseModel]) -> tuple[ParameterDoc, ...]:
    """Every pipeline parameter of a compiled template, with the options of each nested options dict.

    Args:
        template_path: A compiled pipeline YAML (``compiled/autosxs.yaml``).
        params_model: The pipeline's parameter model, or its dotted name
            (``autorater_pipelines.autosxs.params.AutosxsParams``): a field whose type is a parameter-model class
            gives that parameter's options.

    Returns:
        One :class:`ParameterDoc` per template input, required parameters first, then in template order.

    Raises:
        OSError, KeyError: not a readable compiled pipeline.
    """
    import yaml

    from autorater_pipelines.evaluation.parameters import ParameterModel

    model = _load(params_model) if isinstance(params_model, str) else params_model
    with open(template_path, encoding="utf-8") as fh:
        spec = next(yaml.safe_load_all(fh))
    parameters = spec["root"]["inputDefinitions"].get("parameters") or {}
    out = []
    for name, item in parameters.items():
        field = model.model_fields.get(name)
        annotation = getattr(field, "annotation", None)
        options = (
            option_docs(annotation) if isinstance(annotation, type) and issubclass(annotation, ParameterModel) else ()
        )
        required = "defaultValue" not in item and not item.get("isOptional")
        default = "" if required else json.dumps(item.get("defaultValue", ""))
        out.append(
            ParameterDoc(name, str(item["parameterType"]), required, default, item.get("description", ""), options)
        )
    return tuple(sorted(out, key=lambda p: not p.required))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(template_path: str, params_model: str | type[pydantic.BaseModel]) -> str:
    """The parameter reference of one pipeline as markdown: a table of parameters, then one table per options dict.

    Args:
        template_path: A compiled pipeline YAML.
        params_model: The pipeline's parameter model or its dotted name (see :func:`parameter_docs`).

    Returns:
        Markdown text (level-3 headings for the options dicts).
    """
    params = parameter_docs(template_path, params_model)
    lines = ["| parameter | type | default | description |", "|---|---|---|---|"]
    for p in params:
        default = "**required**" if p.required else f"`{_cell(p.default)}`"
        lines.append(f"| `{p.name}` | {p.type} | {default} | {_cell(p.description)} |")
    for p in params:
        if not p.options:
            continue
        lines += [
            "",
            f"### `{p.name}`",
            "",
            "| key | type | default | allowed | description |",
            "|---|---|---|---|---|",
        ]
        for o in p.options:
            default = f"`{_cell(o.default)}`" if o.default else ""
            lines.append(f"| `{o.name}` | {o.type} | {default} | {_cell(o.bound)} | {_cell(o.description)} |")
    return "\n".join(lines) + "\n"


def render_bounds_markdown() -> str:
    """The range of every numeric parameter as a markdown table, in the words of the error messages.

    Returns:
        One row per entry of :data:`~autorater_pipelines.evaluation.parameters.BOUNDS`, in its order.
    """
    from autorater_pipelines.evaluation.parameters import BOUNDS

    lines = ["| parameter | allowed |", "|---|---|"]
    lines += [f"| `{name}` | {bound.describe()} |" for name, bound in BOUNDS.items()]
    return "\n".join(lines) + "\n"
