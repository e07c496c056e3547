"""Pipeline parameters: KFP value coercion, the one table of numeric bounds, and the base of the parameter models.

KFP hands parameters over in forms users did not write: ``dict`` parameters travel as protobuf Structs, so
``{"sampling_count": 2}`` arrives as ``2.0``; GCPC's ``model_*_parameters`` are ``Dict[str, str]``, so
``{"temperature": "0.2"}``. Every parameter model of both pipelines (:mod:`autorater_pipelines.autosxs.params`,
:mod:`autorater_pipelines.gecko.params`) converts these here, in one place:

- integers: an int, an integral float (``2.0``) or a string of one (``"2"``, ``" 2 "``, ``"2.0"``); never a
  boolean, a fraction (``2.5``) or other text (``"x"``, ``"²"``, ``"1_0"``);
- numbers: an int, a finite float or a string of one (``"0.2"``); never a boolean, NaN or infinity;
- flags: ``true``/``false`` or the strings ``"true"``/``"false"`` (any case).

:data:`BOUNDS` holds the allowed range of every numeric parameter, by name. A name means the same thing with
the same range wherever it appears (``sampling_count`` in AutoSxS's ``autorater_parameters`` and in Gecko's
``validator_parameters``), and a value out of range gets the same message in both pipelines:
``sampling_count must be an integer from 1 to 64, got 0``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, NamedTuple, TypeVar

import pydantic

from autorater_pipelines.errors import InputError
from autorater_pipelines.evaluation.model_checks import check_model_spec
from autorater_pipelines.models._config import _reason

__all__ = [
    "BOUNDS",
    "Bound",
    "Flag",
    "Integer",
    "ModelCallOptions",
    "Number",
    "ParameterModel",
    "RunParameters",
    "ValidatedRun",
    "check_model_spec",
    "from_struct",
    "nested",
    "to_bool",
    "to_bounded",
]

_Model = TypeVar("_Model", bound="ParameterModel")


@dataclasses.dataclass(frozen=True)
class Bound:
    """The allowed values of one numeric parameter.

    Attributes:
        kind: ``integer`` or ``number``.
        low: Smallest allowed value (excluded when ``low_exclusive``).
        high: Largest allowed value.
        low_exclusive: ``low`` itself is not allowed (``timeout_s`` > 0).
        wording: How the message states the range, when ``from low to high`` says it badly.
    """

    kind: str
    low: float
    high: float
    low_exclusive: bool = False
    wording: str = ""

    def describe(self) -> str:
        """The range in words: ``an integer from 1 to 64``, ``a number greater than 0 and at most 3600`` …."""
        if self.wording:
            return self.wording
        article = "an integer" if self.kind == "integer" else "a number"
        low, high = _show(self.low), _show(self.high)
        return (
            f"{article} greater than {low} and at most {high}"
            if self.low_exclusive
            else f"{article} from {low} to {high}"
        )

    def contains(self, value: float) -> bool:
        """Whether ``value`` is in range."""
        above = value > self.low if self.low_exclusive else value >= self.low
        return above and value <= self.high


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(number)


_DAY = 86_400
BOUNDS: dict[str, Bound] = {
    # judging and validation (autosxs autorater_parameters, gecko validator_parameters)
    "sampling_count": Bound("integer", 1, 64),
    "shards": Bound("integer", 1, 1000),
    "questions_per_call": Bound(
        "integer", 0, 1, wording="0 (all questions of a row in one call) or 1 (one question per call)"
    ),
    # generation (every *_parameters dict; models.GenerateConfig)
    "temperature": Bound("number", 0, 2),
    "top_p": Bound("number", 0, 1, low_exclusive=True),
    "max_output_tokens": Bound("integer", 1, 1_000_000),
    "max_input_tokens": Bound("integer", 1, 100_000_000),
    "seed": Bound("integer", -(2**31), 2**31 - 1),
    "logprobs": Bound("integer", 0, 20),
    # call execution (models.GenerateConfig)
    "max_concurrency": Bound("integer", 1, 1024),
    "requests_per_minute": Bound("number", 0, 1_000_000, low_exclusive=True),
    "max_retries": Bound("integer", 0, 100),
    "initial_backoff_s": Bound("number", 0, 3600, low_exclusive=True),
    "max_backoff_s": Bound("number", 0, _DAY, low_exclusive=True),
    "timeout_s": Bound("number", 0, _DAY, low_exclusive=True),
    "max_consecutive_failures": Bound("integer", 1, 1_000_000),
    "max_retry_after_s": Bound("number", 0, _DAY, low_exclusive=True),
    "max_stall_s": Bound("number", 0, _DAY, low_exclusive=True),
    "heartbeat_s": Bound("number", 0, _DAY, low_exclusive=True),
    "batch_poll_interval_s": Bound("number", 0, _DAY, low_exclusive=True),
    "batch_timeout_s": Bound("number", 0, 7 * _DAY, low_exclusive=True),
}
"""Allowed range of every numeric parameter, by name (the same in both pipelines and in every ``*_parameters``).

Upper bounds keep a typo from exhausting the machine (``max_concurrency`` 1e8 opens 1e8 tasks;
``sampling_count`` 1e8 builds 1e8 requests per row); they are far above any useful value: 64 samples per
example, 1024 calls in flight, a week for a batch job, 20 log-probabilities (Gemini's and OpenAI's maximum)."""


def to_bounded(name: str, value: Any, bound: Bound | None = None) -> int | float:
    """Convert a KFP value of the numeric parameter ``name`` and check it against :data:`BOUNDS`.

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
    bound = bound or BOUNDS[name]
    number = _parse_number(value)
    if number is not None and bound.kind == "integer":
        number = int(number) if float(number).is_integer() else None
    if number is None or not bound.contains(number):
        raise ValueError(f"{name} must be {bound.describe()}, got {value!r}")
    return int(number) if bound.kind == "integer" else float(number)


def _parse_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text or not text.isascii() or "_" in text:  # Python reads "1_0" as 10: a typo, not a number
            return None
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


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


def _bounded_field(value: Any, info: pydantic.ValidationInfo) -> Any:
    return None if value is None else to_bounded(str(info.field_name), value)


def _flag_field(value: Any, info: pydantic.ValidationInfo) -> Any:
    return None if value is None else to_bool(str(info.field_name), value)


Integer = Annotated[int, pydantic.BeforeValidator(_bounded_field)]
"""An integer parameter whose range is ``BOUNDS[<field name>]``."""
Number = Annotated[float, pydantic.BeforeValidator(_bounded_field)]
"""A number parameter whose range is ``BOUNDS[<field name>]``."""
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
            raise InputError(f"unknown keys {unknown}; valid keys: {cls.valid_keys()}", source=source)
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
        """GenerateConfig's fields (imported here: ``models`` loads its SDK registry lazily)."""
        from autorater_pipelines.models import GenerateConfig

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
        from autorater_pipelines.models import GenerateConfig

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
        from autorater_pipelines.models import GenerateConfig

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
