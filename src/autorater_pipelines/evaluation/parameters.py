"""Pipeline parameters: KFP value coercion, the one table of numeric bounds, and the base of the parameter models.

KFP hands parameters over in forms users did not write: ``dict`` parameters travel as protobuf Structs, so
``{"sampling_count": 2}`` arrives as ``2.0``; GCPC's ``model_*_parameters`` are ``Dict[str, str]``, so
``{"temperature": "0.2"}``. Every parameter model of both pipelines (:mod:`autorater_pipelines.autosxs.params`,
:mod:`autorater_pipelines.gecko.params`) converts these here, in one place:

- integers: an int, an integral float (``2.0``) or a string of one (``"2"``, ``" 2 "``, ``"2.0"``); never a
  boolean, a fraction (``2.5``) or other text (``"x"``, ``"²"``, ``"1_0"``);
- numbers: an int, a finite float or a string of one (``"0.2"``); never a boolean, NaN or infinity;
- flags: ``true``/``false`` or the strings ``"true"``/``"false"`` (any case);
- choices (enum-like string options such as ``flip: "random"``, ``identical_responses: "tie"``): any case and
  surrounding whitespace (``" TIE "`` is ``"tie"``), through :func:`to_choice`.

Every numeric bound is written once, on its field (:class:`~autorater_pipelines.bounds.Bound` in the field's
annotation): the stage keys' on the field types here (:data:`SamplingCount`, :data:`Shards`,
:data:`QuestionsPerCall`), the model-call settings' on :class:`~autorater_pipelines.models.GenerateConfig`.
:data:`BOUNDS`, by name, is derived from them. A name means the same thing with the same range wherever it
appears (``sampling_count`` in AutoSxS's ``autorater_parameters`` and in Gecko's ``validator_parameters``), and a
value out of range gets the same message in both pipelines and in ``GenerateConfig(...)``:
``sampling_count must be an integer from 1 to 64, got 0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, NamedTuple, TypeVar

import pydantic

from autorater_pipelines.bounds import Bound, bounds_of
from autorater_pipelines.errors import InputError, unknown_names
from autorater_pipelines.evaluation.model_checks import check_model_spec
from autorater_pipelines.models._config import GenerateConfig, _reason

__all__ = [
    "BOUNDS",
    "Bound",
    "Flag",
    "ModelCallOptions",
    "ParameterModel",
    "QuestionsPerCall",
    "RunParameters",
    "SamplingCount",
    "Shards",
    "ValidatedRun",
    "check_model_spec",
    "from_struct",
    "nested",
    "to_bool",
    "to_bounded",
    "to_choice",
]

_Model = TypeVar("_Model", bound="ParameterModel")


SamplingCount = Annotated[int, Bound("integer", 1, 64)]
"""``sampling_count``: samples per example (AutoSxS's autorater) or answers per question (Gecko's validator)."""
Shards = Annotated[int, Bound("integer", 1, 1000)]
"""``shards``: judging tasks run in parallel."""
QuestionsPerCall = Annotated[
    int, Bound("integer", 0, 1, wording="0 (all questions of a row in one call) or 1 (one question per call)")
]
"""``questions_per_call``: how a validator is asked its questions."""

_STAGE_FIELDS: dict[str, Any] = {
    "sampling_count": SamplingCount,
    "shards": Shards,
    "questions_per_call": QuestionsPerCall,
}


def _bound(field_type: Any) -> Bound:
    return next(m for m in field_type.__metadata__ if isinstance(m, Bound))


BOUNDS: dict[str, Bound] = {
    **{name: _bound(field_type) for name, field_type in _STAGE_FIELDS.items()},
    **bounds_of(GenerateConfig),
}
"""Allowed range of every numeric parameter, by name — derived, never written here: the stage keys' from their
field types above (:data:`SamplingCount` …), the model-call settings' from
:class:`~autorater_pipelines.models.GenerateConfig`'s fields. A name has one range in both pipelines and in every
``*_parameters``, and one message (``sampling_count must be an integer from 1 to 64, got 0``)."""


def to_bounded(name: str, value: Any, bound: Bound | None = None) -> int | float:
    """Convert a KFP value of the numeric parameter ``name`` and check it against its bound.

    Args:
        name: The parameter name (a key of :data:`BOUNDS` unless ``bound`` is given).
        value: The value as received (int, float, or a string of a number).
        bound: The range; default ``BOUNDS[name]``.

    Returns:
        An ``int`` for integer parameters, a ``float`` for numbers.

    Raises:
        ValueError: not a number of the right kind, or out of range:
            ``"<name> must be an integer from 1 to 64, got '2.5'"``.
    """
    return (bound or BOUNDS[name]).check(name, value)


def to_bool(name: str, value: Any) -> bool:
    """Convert a KFP value of the flag ``name``: ``true``/``false`` or those strings, any case.

    Raises:
        ValueError: any other value: ``"<name> must be true or false, got 'yes'"``.
    """
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def to_choice(value: Any, choices: Iterable[str]) -> Any:
    """An enum-like string option as its choice: case and surrounding whitespace ignored (``" TIE "`` → ``"tie"``).

    Args:
        value: The value as received.
        choices: The accepted spellings, lower-case (``("judge", "tie")``).

    Returns:
        The matching choice; any other value unchanged, for the caller (or pydantic's ``Literal``) to refuse with
        its own message.
    """
    if isinstance(value, str):
        label = value.strip().lower()
        if label in choices:
            return label
    return value


def from_struct(value: Any) -> Any:
    """Undo KFP's struct encoding of ``dict`` parameters: integral floats become ints (``2.0`` → ``2``).

    Applied recursively to dicts and lists; booleans, strings and non-integral floats are kept.
    """
    if isinstance(value, Mapping):
        return {k: from_struct(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_struct(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _flag_field(value: Any, info: pydantic.ValidationInfo) -> Any:
    return None if value is None else to_bool(str(info.field_name), value)


Flag = Annotated[bool, pydantic.BeforeValidator(_flag_field)]
"""A boolean parameter (``true``/``false``, or those strings)."""


class ParameterModel(pydantic.BaseModel):
    """Base of every parameter model: unknown keys refused, values coerced from KFP forms, frozen.

    Build one with :meth:`parse`, which turns every problem into an :class:`InputError` naming the parameter.
    """

    # Field docstrings become descriptions (their JSON schema; `autorater params` lists them).
    model_config = pydantic.ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True
    )

    @classmethod
    def valid_keys(cls) -> list[str]:
        """The keys a user may write (field names), sorted."""
        return sorted(cls.model_fields)

    @classmethod
    def parse(cls: type[_Model], value: Any, *, source: str) -> _Model:
        """Validate ``value`` (a dict, None = empty, or an instance) into this model.

        Args:
            value: The parameter's value as received.
            source: The pipeline parameter's name, for messages (``autorater_parameters``).

        Raises:
            InputError: not an object, an unknown key (listing the valid ones) or a bad value, naming ``source``.
        """
        if isinstance(value, cls):
            return value
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise InputError(f"expected a JSON object of settings, got {value!r}", source=source)
        unknown = sorted(str(k) for k in value if not cls._is_known(k))
        if unknown:
            raise InputError(unknown_names("keys", unknown, cls.valid_keys()), source=source)
        try:
            return cls.model_validate(dict(value))
        except pydantic.ValidationError as exc:
            raise _input_error(exc, source) from None

    @classmethod
    def _is_known(cls, key: Any) -> bool:
        return key in cls.model_fields or any(f.alias == key for f in cls.model_fields.values())


class RunParameters(ParameterModel):
    """Base of a pipeline's whole parameter model: a ``null`` optional parameter takes its default."""

    @pydantic.model_validator(mode="before")
    @classmethod
    def _defaults_for_null(cls, data: Any) -> Any:
        """A ``null`` optional parameter takes its default (KFP and Python callers pass None for "not set")."""
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if v is not None}
        return data


def _input_error(exc: pydantic.ValidationError, source: str) -> InputError:
    """One InputError from a ValidationError: a nested InputError as is, else every problem in one line."""
    problems = []
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, InputError):
            return cause
        if isinstance(cause, ValueError):
            problems.append(str(cause))
        else:
            where = ".".join(str(p) for p in error["loc"])
            problems.append(f"{where} {error['msg'][:1].lower()}{error['msg'][1:]}, got {error.get('input')!r}")
    return InputError("; ".join(problems), source=source)


def nested(model: type[ParameterModel], source: str) -> pydantic.BeforeValidator:
    """A field validator that parses a nested options dict with ``model``, errors named after ``source``."""
    return pydantic.BeforeValidator(lambda value: model.parse(value, source=source))


class ModelCallOptions(ParameterModel):
    """The model-call settings of a ``*_parameters`` dict: every ``GenerateConfig`` field.

    The fields are derived from :class:`~autorater_pipelines.models.GenerateConfig` (never listed here); numbers are
    coerced and bounded by :data:`BOUNDS`.

    Subclasses add the keys of their stage (``sampling_count`` …). :meth:`settings` gives the GenerateConfig keys
    the user set; :meth:`generate_config` the config itself.
    """

    model_config = pydantic.ConfigDict(extra="allow", frozen=True, populate_by_name=True)
    ALIASES: ClassVar[dict[str, str]] = {}
    """Other names accepted for GenerateConfig fields (GCPC's camelCase ``maxOutputTokens`` …)."""

    @classmethod
    def config_fields(cls) -> dict[str, Any]:
        """GenerateConfig's fields."""
        return dict(GenerateConfig.model_fields)

    @classmethod
    def valid_keys(cls) -> list[str]:
        """Own keys, GenerateConfig fields and aliases, sorted."""
        return sorted({*cls.model_fields, *cls.config_fields(), *cls.ALIASES})

    @classmethod
    def _is_known(cls, key: Any) -> bool:
        return super()._is_known(key) or key in cls.config_fields() or key in cls.ALIASES

    @pydantic.model_validator(mode="before")
    @classmethod
    def _coerce_settings(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        fields = cls.config_fields()
        out = {}
        given: dict[Any, Any] = {}  # setting name -> the key it was given under
        for key, value in data.items():
            name = cls.ALIASES.get(key, key)
            if given.setdefault(name, key) != key:
                raise ValueError(f"{given[name]} and {key} are the same setting ({name}); keep one")
            if name in cls.model_fields or name not in fields:
                out[name] = value
            elif name in BOUNDS and value is not None:
                out[name] = to_bounded(name, value)
            elif fields[name].annotation is bool:
                out[name] = to_bool(name, value)
            else:
                out[name] = value
        return out

    @pydantic.model_validator(mode="after")
    def _check_settings(self) -> ModelCallOptions:
        try:
            GenerateConfig(**self.settings())
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}={e.get('input')!r}: {_reason(e)}" for e in exc.errors()
            )
            raise ValueError(f"invalid model parameters: {problems}") from None
        return self

    def settings(self) -> dict[str, Any]:
        """The GenerateConfig keys the user set, with coerced values."""
        return dict(self.model_extra or {})

    def generate_config(self, *, source: str, project: str = "", location: str = "", **overrides: Any) -> Any:
        """The :class:`~autorater_pipelines.models.GenerateConfig` of these settings.

        Args:
            source: The parameter name, for messages.
            project: Google Cloud project (the pipeline's ``project``); empty = none.
            location: Google Cloud region; empty = none.
            **overrides: Values that win over the user's (None values are ignored).
        """
        values = {**self.settings(), **{k: v for k, v in overrides.items() if v is not None}}
        return GenerateConfig.from_params(values, source=source, project=project or None, location=location or None)


class ValidatedRun(NamedTuple):
    """What a pipeline's ``validate_run`` checked."""

    params: Any
    """The pipeline's parameter model (``AutosxsParams``, ``GeckoParams``): converted, defaults filled in."""
    rows: list[dict[str, Any]] | None
    """The rows the first step works on (AutoSxS: prepared examples; Gecko: dataset rows), or None when the
    dataset was not read from here."""
    notes: list[str]
    """What was not checked from here and why (``autorater submit`` prints them)."""
    row_count: int | None = None
    """How many rows the first step works on, also when they were streamed to a file (``rows`` None then)."""
