"""Prompt parameters: GCPC's ``{name: {"column": col} | {"template": "... {{ col }} ..."} | "col"}`` mappings.

A bare string names a column (``{"content": "content"}`` = ``{"content": {"column": "content"}}``), as in
Google's AutoSxS sample notebooks.

Used for ``autorater_prompt_parameters``, ``model_a_prompt_parameters`` and ``model_b_prompt_parameters``.
:func:`compile_prompt_parameters` validates a mapping once, up front, against the dataset's columns;
:meth:`PromptParameters.render` then turns each row into ``{name: text}``.

Templates are Jinja2, rendered in the shared bounded sandbox
(:class:`autorater_pipelines.evaluation.templates.BoundedEnvironment`: no Python internals, limits on render
time, output size and loop iterations) with :class:`jinja2.StrictUndefined`: variables are the dataset's
columns plus ``extra_variables`` (such as a task's ``default_instruction``; a column of the same name wins).
Row values are data: they are inserted as text and never evaluated, so a value containing ``{{ 7*7 }}`` is
rendered literally. Access to underscore attributes (``''.__class__``) is refused when the template is
compiled, and anything else the sandbox refuses at render time becomes an :class:`InputError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2 import meta, nodes

from autorater_pipelines.errors import InputError, did_you_mean
from autorater_pipelines.evaluation.templates import BoundedEnvironment, SecurityError
from autorater_pipelines.evaluation.values import is_missing
from autorater_pipelines.io import to_jsonable

__all__ = ["PromptParameter", "PromptParameters", "compile_prompt_parameters", "format_value"]

_VALID_KEYS = ("column", "template")


def format_value(value: Any) -> str:
    """Render one row value as prompt text: strings as is, lists/dicts as JSON, anything else ``str()``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(to_jsonable(value), ensure_ascii=False)
    return str(value)


def _finalize(value: Any) -> Any:
    # Applied to every {{ expression }} output: lists/dicts print as JSON, not as Python reprs.
    return format_value(value) if isinstance(value, (list, tuple, dict)) else value


_ENV = BoundedEnvironment(finalize=_finalize)


@dataclass(frozen=True)
class PromptParameter:
    """One compiled prompt parameter.

    Attributes:
        name: The parameter name (e.g. ``inference_instruction``).
        column: The column whose value is used as is, or ``None`` for a template parameter.
        template: The Jinja2 template source, or ``None`` for a column parameter.
        variables: Names the template reads (columns or extra variables); ``{column}`` for a column.
        columns: The dataset columns among ``variables``.

    """

    name: str
    column: str | None
    template: str | None
    variables: frozenset[str]
    columns: frozenset[str]
    compiled: jinja2.Template | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PromptParameters:
    """A validated prompt-parameter mapping, ready to render rows.

    Attributes:
        parameters: Compiled parameters in the order given.
        source_name: The pipeline parameter they came from, for error messages.
        extra_variables: Template variables that are not columns (e.g. ``default_instruction``).

    """

    parameters: tuple[PromptParameter, ...]
    source_name: str
    extra_variables: Mapping[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The parameter names, in the order given."""
        return [p.name for p in self.parameters]

    @property
    def columns(self) -> set[str]:
        """The dataset columns read by any parameter (extra variables excluded)."""
        return {c for p in self.parameters for c in p.columns}

    def __len__(self) -> int:
        return len(self.parameters)

    def render(self, row: Mapping[str, Any], *, location: str) -> dict[str, str]:
        """Render every parameter for one row.

        Args:
            row: One dataset row.
            location: Where the row came from (``Dataset.location(i)``), e.g. ``"data.jsonl line 7"``.

        Returns:
            ``{parameter name: text}`` in parameter order.

        Raises:
            InputError: A column read by a parameter is missing, null or NaN in this row, or a template
                fails (including sandbox refusals); names the row, the column and the parameter.

        """
        return {p.name: self._render_one(p, row, location) for p in self.parameters}

    def _value(self, param: PromptParameter, row: Mapping[str, Any], name: str, location: str) -> Any:
        if name in row and not is_missing(row[name]):
            return row[name]
        if name not in row and name in self.extra_variables:
            return self.extra_variables[name]
        state = "missing" if name not in row else f"null ({row[name]!r})"
        raise InputError(
            f"{self.source_name}.{param.name} reads this column but the value is {state}; fill it in, drop "
            "the row, or change the prompt parameter",
            source=location,
            column=name,
        )

    def _render_one(self, param: PromptParameter, row: Mapping[str, Any], location: str) -> str:
        if param.column is not None:
            return format_value(self._value(param, row, param.column, location))
        assert param.compiled is not None
        context = {name: self._value(param, row, name, location) for name in param.variables}
        try:
            return param.compiled.render(context)
        except SecurityError as exc:
            raise InputError(
                f"the template of {self.source_name}.{param.name} was refused by the sandbox ({exc}); "
                f"templates may only insert and format column values: {param.template!r}",
                source=location,
            ) from exc
        except (jinja2.TemplateError, ArithmeticError, TypeError, ValueError, LookupError) as exc:
            raise InputError(
                f"the template of {self.source_name}.{param.name} failed on this row "
                f"({type(exc).__name__}: {exc}): {param.template!r}",
                source=location,
            ) from exc


def _refuse_private_access(ast: nodes.Template, where: str, source: str) -> None:
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr):
            attr: Any = node.attr
        else:
            attr = getattr(getattr(node, "arg", None), "value", None)
        if isinstance(attr, str) and attr.startswith("_"):
            raise InputError(
                f"the template accesses the private attribute {attr!r}, which is not allowed; "
                f"templates may only insert and format column values: {source!r}",
                source=where,
            )


def _compile_one(
    name: str, spec: Any, columns: list[str], extra: Mapping[str, Any], source_name: str
) -> PromptParameter:
    where = f"{source_name}.{name}"
    example = '{"column": "my_column"}, {"template": "... {{ my_column }} ..."} or "my_column"'
    if isinstance(spec, str):  # a bare string names a column (Google's sample notebooks)
        spec = {"column": spec}
    if not isinstance(spec, Mapping):
        raise InputError(f"expected {example}, got {spec!r}", source=where)
    unknown = [k for k in spec if k not in _VALID_KEYS]
    if unknown:
        raise InputError(
            f"unknown key(s) {unknown} in {dict(spec)!r}; valid keys are 'column' and 'template' (exactly one)",
            source=where,
        )
    if len(spec) != 1:
        raise InputError(
            f"expected exactly one of 'column' or 'template', got {dict(spec)!r}; write {example}", source=where
        )
    ((kind, value),) = spec.items()
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{kind!r} must be a non-empty string, got {value!r}", source=where)
    if kind == "column":
        if value not in columns:
            raise InputError(
                f"column {value!r} is not in the dataset; available columns: {columns}.{did_you_mean(value, columns)}",
                source=where,
                column=value,
            )
        cols = frozenset({value})
        return PromptParameter(name=name, column=value, template=None, variables=cols, columns=cols)
    try:
        ast = _ENV.parse(value)
        compiled = _ENV.from_string(ast)
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(
            f"template syntax error on line {exc.lineno}: {exc.message}; template: {value!r}", source=where
        ) from exc
    _refuse_private_access(ast, where, value)
    variables = frozenset(meta.find_undeclared_variables(ast))
    known = set(columns) | set(extra)
    for variable in sorted(variables - known):
        extras = f"; other variables: {sorted(extra)}" if extra else ""
        raise InputError(
            f"template variable {variable!r} is not a column of the dataset; available columns: {columns}"
            f"{extras}.{did_you_mean(variable, known)} (Columns whose names are not Python identifiers "
            'cannot be used in templates: use {"column": ...} instead.)',
            source=where,
            column=variable,
        )
    return PromptParameter(
        name=name,
        column=None,
        template=value,
        variables=variables,
        columns=variables & frozenset(columns),
        compiled=compiled,
    )


def compile_prompt_parameters(
    params: Mapping[str, Any] | None,
    *,
    available_columns: Iterable[str],
    source_name: str,
    extra_variables: Mapping[str, Any] | None = None,
) -> PromptParameters:
    """Validate a prompt-parameter mapping against the dataset's columns and compile its templates.

    Args:
        params: ``{parameter name: {"column": column} | {"template": jinja2 source} | column}``; ``None`` or
            ``{}`` gives no parameters.
        available_columns: The dataset's columns (``Dataset.columns``).
        source_name: The pipeline parameter name (e.g. ``"autorater_prompt_parameters"``) for messages.
        extra_variables: Template variables that are not columns, e.g. ``{"default_instruction": ...}``
            from the task. A dataset column of the same name takes precedence in rows that have it.

    Returns:
        The compiled parameters.

    Raises:
        InputError: ``params`` is not a mapping; an entry is not a dict with exactly one of
            ``column``/``template`` (unknown keys are listed); a column does not exist; a template has a
            syntax error, reads a private attribute, or uses a variable that is neither a column nor an
            extra variable (the message names the parameter and variable and lists the columns).

    """
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise InputError(
            f"expected a mapping of parameter name to {{'column': ...}} or {{'template': ...}}, got {params!r}",
            source=source_name,
        )
    columns = list(available_columns)
    extra = dict(extra_variables or {})
    compiled = []
    for name, spec in params.items():
        if not isinstance(name, str) or not name:
            raise InputError(f"parameter names must be non-empty strings, got {name!r}", source=source_name)
        compiled.append(_compile_one(name, spec, columns, extra, source_name))
    return PromptParameters(parameters=tuple(compiled), source_name=source_name, extra_variables=extra)
