"""Conversion of Python, numpy, pandas and pyarrow values to plain JSON-compatible values.

Rows written by this package (judgments, error messages, metrics) must be valid JSON everywhere:
no ``NaN`` literals, no numpy scalars, no timestamps. numpy and pandas are recognised by duck typing so
that this module does not import them.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from autorater_pipelines.unencodable import replace_unencodable

__all__ = ["dumps", "to_jsonable"]

logger = logging.getLogger("autorater_pipelines.io")


def _is_missing_scalar(value: Any) -> bool:
    """Return True for pandas ``NA``/``NaT`` (detected by type name so pandas is not imported)."""
    return type(value).__name__ in {"NAType", "NaTType"}


def to_jsonable(value: Any) -> Any:
    """Return ``value`` as plain JSON-compatible Python (dict, list, str, int, float, bool, None).

    Conversions: NaN/±inf floats, pandas ``NA`` and ``NaT`` → ``None``; numpy scalars and arrays →
    Python scalars and lists; ``datetime``/``date``/``time`` (and pandas ``Timestamp``) → ISO 8601
    strings; ``Decimal`` → float; ``bytes`` → base64 text; enums → their value; tuples and sets →
    lists; mapping keys → ``str``; pydantic models and dataclasses → dicts.

    Args:
        value: Any value found in a row or a result object.

    Returns:
        The converted value; containers are copied, never modified in place.

    Raises:
        TypeError: ``value`` (or something inside it) has a type with no JSON form. This is a
            programming error, not bad user input.

    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if _is_missing_scalar(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return to_jsonable(float(value))
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    module = type(value).__module__
    if module.startswith("numpy") and hasattr(value, "tolist"):
        return to_jsonable(value.tolist())
    if hasattr(value, "model_dump"):  # pydantic v2 model
        return to_jsonable(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if hasattr(value, "isoformat"):  # e.g. pandas Timedelta-like objects
        return value.isoformat()
    raise TypeError(f"cannot convert a value of type {type(value).__qualname__} to JSON: {value!r}")


def dumps(value: Any, *, indent: int | None = None) -> str:
    r"""Serialise ``value`` as strict JSON (UTF-8 text, no NaN) after :func:`to_jsonable`.

    Args:
        value: Any value accepted by :func:`to_jsonable`.
        indent: Indentation in spaces; ``None`` writes one line.

    Returns:
        The JSON text. Non-ASCII characters are kept as is (not ``\u`` escaped). A lone UTF-16 surrogate, which
        UTF-8 cannot encode, is written as U+FFFD with a warning: text enters the package repaired
        (:mod:`autorater_pipelines.unencodable`), so this only keeps a finished result from being lost.

    """
    text = json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False, indent=indent)
    if not text.isascii():
        fixed, count = replace_unencodable(text)
        if count:
            logger.warning("%d lone UTF-16 surrogate(s) in a value being written replaced by U+FFFD", count)
            return str(fixed)
    return text
