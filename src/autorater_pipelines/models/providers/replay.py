"""``replay/<path>``: answer requests from recorded raw model outputs (DESIGN.md "Replay format").

File format: JSONL, one JSON object per line: identifying fields (e.g. the ``id_columns`` values,
``flipped``, ``sample_index``, ``question_id``) plus ``response``, the raw text exactly as the model
returned it. Blank lines are skipped.

Matching: a record answers a request when each of the record's identifying fields equals the request's
``key`` value of the same name (``ModelRequest.sample_index`` stands in for a ``sample_index`` missing
from ``key``). Values are compared leniently as text: ``7`` matches ``"7"``, ``True`` matches
``"true"``, ``7.0`` matches ``7``. Records may omit optional fields: records are grouped by their set of
field names and the group with the most fields is tried first, so a record without ``sample_index``
answers every sample of its row unless a more specific record exists.

A request without a recording gets an output with error kind ``NOT_RECORDED`` — never a default answer.
Replay reads no media, calls no network, uses no cache or rate limiter and reports zero usage.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._provider import Provider
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest

__all__ = ["ReplayProvider", "normalize_key_value"]

RESPONSE_FIELD = "response"


def _open_text(uri: str) -> str:
    """Read a whole text file (UTF-8) from a local path, ``file://`` URI or ``gs://`` URI.

    Other schemes go through the file-system registry of :mod:`autorater_pipelines.io` (``gs://`` is
    registered there; see ``io.register_filesystem``).

    Raises:
        InputError: unsupported scheme, missing or unreadable file.
    """
    parsed = urllib.parse.urlsplit(uri)
    if parsed.scheme == "file":
        path = Path(urllib.parse.unquote(parsed.path))
    elif parsed.scheme == "" or (len(parsed.scheme) == 1 and uri[1:3] in (":\\", ":/")):  # C:\ on Windows
        path = Path(uri).expanduser()
    else:
        from autorater_pipelines.io._formats import decode_utf8
        from autorater_pipelines.io._fs import filesystem_for

        try:
            filesystem, target = filesystem_for(uri)
            return decode_utf8(filesystem.read_bytes(target), uri)
        except InputError as exc:
            raise InputError(f"replay file {uri!r}: {exc}", source="model spec") from exc
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"replay file {uri!r} does not exist.", source="model spec") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read replay file {uri!r}: {exc}", source="model spec") from None


def normalize_key_value(value: Any) -> str:
    """Return the text form used to compare key values (``7`` == ``"7"``, ``True`` == ``"true"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        lowered = value.lower()
        return lowered if lowered in ("true", "false", "null") else value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class ReplayProvider(Provider):
    """Recorded answers, loaded once when the model is built.

    Args:
        path: Local path (or ``file://`` URI) of the JSONL recording.
        config: Ignored except for being reported on the model.

    Raises:
        InputError: the file is missing or unreadable, a line is not a JSON object with a string
            ``response``, or two lines record the same key.
    """

    uses_network = False

    def __init__(self, path: str, config: GenerateConfig) -> None:
        super().__init__("replay", path, config)
        if not path:
            raise InputError("replay model spec has no file: use replay/<path to JSONL>.", source="model spec")
        # field names (sorted) -> normalized values -> (line number, record)
        self._groups: dict[tuple[str, ...], dict[tuple[str, ...], tuple[int, dict[str, Any]]]] = {}
        for number, line in enumerate(_open_text(path).splitlines(), start=1):
            if line.strip():
                self._add(number, line)
        # most specific (most fields) first; ties in a stable order
        self._order = sorted(self._groups, key=lambda names: (-len(names), names))

    def _add(self, number: int, line: str) -> None:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg} at column {exc.colno})", source=self.name, row=number
            ) from None
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", source=self.name, row=number)
        response = record.get(RESPONSE_FIELD)
        if not isinstance(response, str):
            raise InputError(
                f"field {RESPONSE_FIELD!r} must be the raw model output as a string, got {response!r}",
                source=self.name,
                row=number,
                column=RESPONSE_FIELD,
            )
        names = tuple(sorted(k for k in record if k != RESPONSE_FIELD))
        values = tuple(normalize_key_value(record[k]) for k in names)
        group = self._groups.setdefault(names, {})
        if values in group:
            first, _ = group[values]
            key = {k: record[k] for k in names}
            raise InputError(
                f"duplicate recording for key {key!r} (already on line {first}); keep one line per key",
                source=self.name,
                row=number,
            )
        group[values] = (number, record)

    def cache_identity(self) -> dict[str, Any]:
        """Replays are never cached; identity kept for completeness."""
        return {"provider": self.provider, "model": self.name}

    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Look the request's key up (see the module docstring)."""
        key = {str(k): normalize_key_value(v) for k, v in request.key.items()}
        key.setdefault("sample_index", normalize_key_value(request.sample_index))
        for names in self._order:
            if all(name in key for name in names):
                found = self._groups[names].get(tuple(key[name] for name in names))
                if found is not None:
                    _, record = found
                    return ModelOutput(text=record[RESPONSE_FIELD], attempts=0, raw=record)
        fields = " or ".join(repr(list(names)) for names in self._order) or "none (empty file)"
        shown = dict(request.key)
        shown.setdefault("sample_index", request.sample_index)
        error = ModelError(
            ErrorKind.NOT_RECORDED,
            f"no recording in {self.name!r} for key {shown!r} (recorded key fields: {fields})",
        )
        return ModelOutput(text=None, attempts=0, error=error)
