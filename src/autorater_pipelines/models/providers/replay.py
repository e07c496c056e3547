r"""``replay/<path>``: answer requests from recorded raw model outputs (docs/architecture.md, replay format).

File format: JSONL, one JSON object per line: identifying fields (e.g. the ``id_columns`` values,
``flipped``, ``sample_index``, ``question_id``) plus ``response``, the raw text exactly as the model
returned it, and optionally ``logprobs``, the answer's token log-probabilities in OpenAI's
``choices[0].logprobs.content`` shape: a list of ``{"token", "logprob", "top_logprobs": [{"token",
"logprob"}, …]}`` (natural log; other keys such as ``bytes`` ignored), returned as ``ModelOutput.logprobs`` so
that a recorded run with logprobs replays to the digit (``null`` = none recorded). The file is read by the same
code as JSONL datasets (``autorater_pipelines.io``): UTF-8 with an optional byte-order mark, ``\n`` or ``\r\n``
line ends (U+2028 and the like inside strings are not line ends), blank lines skipped, and errors naming the
file and line.

Matching: a record answers a request when each of the record's identifying fields equals the request's
``key`` value of the same name (``ModelRequest.sample_index`` stands in for a ``sample_index`` missing
from ``key``), and the record carries every field of the request's key except ``sample_index``, the one
optional field. Values are compared as text by ``io.canonical_id_value`` (the same rule as dataset ids):
``7`` matches ``"7"``, ``True`` matches ``"true"``, ``7.0`` matches ``7``. Records are grouped by their set
of field names and the group with the most fields is tried first, so a record without ``sample_index``
answers every sample of its row unless a more specific record exists. A record with fields the request's key
lacks, or lacking a field other than ``sample_index`` (e.g. a stray line with no id), answers nothing.

A request without a recording gets an output with error kind ``NOT_RECORDED`` — never a default answer.
Replay reads no media, calls no network, uses no cache or rate limiter and reports zero usage.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.io import canonical_id_value
from autorater_pipelines.io._formats import decode_utf8, parse_jsonl_text
from autorater_pipelines.io._fs import check_file_uri, filesystem_for, not_found, split_scheme
from autorater_pipelines.models._config import GenerateConfig
from autorater_pipelines.models._logprobs import LogprobsError, openai_logprobs
from autorater_pipelines.models._provider import Provider
from autorater_pipelines.models._types import ErrorKind, ModelError, ModelOutput, ModelRequest, TokenLogprob

__all__ = ["ReplayProvider", "check_recording_uri", "normalize_key_value"]

RESPONSE_FIELD = "response"
LOGPROBS_FIELD = "logprobs"
ANSWER_FIELDS = frozenset({RESPONSE_FIELD, LOGPROBS_FIELD})
"""Fields of a record that are its answer, not its key."""
OPTIONAL_FIELDS = frozenset({"sample_index"})
"""Request key fields a record may omit (it then answers every value of that field)."""

normalize_key_value = canonical_id_value
"""The text form used to compare key values; the same function as ``io.canonical_id_value``."""


def check_recording_uri(uri: str) -> None:
    """Refuse a recording URI that cannot be read whatever the file holds (checked with no request).

    The same check and message as reading it (:func:`autorater_pipelines.io.check_file_uri`): ``autorater submit
    --dry-run`` calls it for a recording it does not read.

    Raises:
        InputError: an unsupported scheme or a malformed ``gs://`` URI ("model spec: replay file ...").
    """
    try:
        check_file_uri(uri)
    except InputError as exc:
        raise InputError(f"replay file {uri!r}: {exc}", source="model spec") from None


_NOTE = '; a replay line looks like {"id": 1, "response": "raw model output"}'


def _local_file(uri: str) -> Path | None:
    """The local file of ``uri`` (a plain path or ``file://``), or None for other file systems."""
    scheme = split_scheme(uri)[0]
    return Path(filesystem_for(uri)[1]).expanduser() if scheme in ("", "file") else None


def _read_records(uri: str) -> Iterator[tuple[int, dict[str, Any], int, int]]:
    """Read the recording: a local path, ``file://`` or ``gs://`` URI (any scheme registered in ``io``).

    Decoding and JSONL parsing are the dataset reader's (:func:`io._formats.parse_jsonl_text`); a local file is
    read line by line.

    Yields:
        ``(line number, record, byte offset of the line, its length)``; offset -1 for a file read whole.

    Raises:
        InputError: unsupported scheme, missing or unreadable file ("model spec: replay file ...");
            not UTF-8, a line that is not a JSON object, or nesting too deep (names the file and line).
    """
    check_recording_uri(uri)
    try:
        filesystem, target = filesystem_for(uri)
        local = _local_file(uri)
        if local is not None and not local.exists():
            raise InputError(f"replay file {uri!r} {not_found(local)}", source="model spec")
        if local is None or not local.is_file():
            data = filesystem.read_bytes(target)
    except InputError as exc:
        if exc.source == "model spec":
            raise
        raise InputError(f"replay file {uri!r}: {exc}", source="model spec") from None
    if local is None or not local.is_file():
        for number, record in parse_jsonl_text(decode_utf8(data, uri), uri, note=_NOTE):
            yield number, record, -1, 0
        return
    with open(local, "rb") as handle:
        offset = 0  # of the line in the file
        decoded = 0  # bytes after the byte-order mark, as the whole-file decoder counts them
        for number, raw in enumerate(handle, start=1):
            text = decode_utf8(raw, uri, line=number, offset=decoded)
            bom = 3 if number == 1 and raw.startswith(b"\xef\xbb\xbf") else 0
            if text.strip():
                for _, record in parse_jsonl_text(text.rstrip("\n"), uri, note=_NOTE, first_line=number):
                    yield number, record, offset + bom, len(raw) - bom
            offset += len(raw)
            decoded += len(raw) - bom


class ReplayProvider(Provider):
    """Recorded answers, checked once when the model is built (a local file's answers are read when asked for).

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
        # field names (sorted) -> normalized values -> (line number, where the line is or the record itself):
        # a local file's records are read again at their offset when asked for, so memory holds keys only
        self._groups: dict[tuple[str, ...], dict[tuple[str, ...], tuple[int, Any]]] = {}
        self._logprobs: dict[int, tuple[TokenLogprob, ...]] = {}  # line number -> the record's logprobs, if any
        self._local = _local_file(path)
        for number, record, offset, length in _read_records(path):
            self._add(number, record, record if offset < 0 else (offset, length))
        # most specific (most fields) first; ties in a stable order
        self._order = sorted(self._groups, key=lambda names: (-len(names), names))

    def _add(self, number: int, record: dict[str, Any], stored: Any) -> None:
        response = record.get(RESPONSE_FIELD)
        if not isinstance(response, str):
            raise InputError(
                f"field {RESPONSE_FIELD!r} must be the raw model output as a string, got {response!r}",
                source=self.name,
                row=number,
                column=RESPONSE_FIELD,
            )
        logprobs = _read_logprobs(record.get(LOGPROBS_FIELD), self.name, number)
        if logprobs is not None:
            self._logprobs[number] = logprobs
        names = tuple(sorted(k for k in record if k not in ANSWER_FIELDS))
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
        group[values] = (number, stored)

    def _record(self, number: int, stored: Any) -> dict[str, Any]:
        """The record of line ``number``: kept, or read again from the local file at its offset."""
        if isinstance(stored, dict):
            return stored
        offset, length = stored
        with open(self._local, "rb") as handle:  # type: ignore[arg-type]
            handle.seek(offset)
            line = handle.read(length).decode("utf-8")
        return dict(parse_jsonl_text(line.rstrip("\n"), self.name, note=_NOTE, first_line=number)[0][1])

    def cache_identity(self) -> dict[str, Any]:
        """Replays are never cached; identity kept for completeness."""
        return {"provider": self.provider, "model": self.name}

    async def generate(self, request: ModelRequest) -> ModelOutput:
        """Look the request's key up (see the module docstring)."""
        key = {str(k): normalize_key_value(v) for k, v in request.key.items()}
        key.setdefault("sample_index", normalize_key_value(request.sample_index))
        required = set(key) - OPTIONAL_FIELDS
        for names in self._order:
            # every record field is in the key, and every key field but the optional ones is in the record
            if required.issubset(names) and all(name in key for name in names):
                found = self._groups[names].get(tuple(key[name] for name in names))
                if found is not None:
                    record = self._record(*found)
                    logprobs = self._logprobs.get(found[0])
                    return ModelOutput(text=record[RESPONSE_FIELD], attempts=0, raw=record, logprobs=logprobs)
        fields = " or ".join(repr(list(names)) for names in self._order) or "none (empty file)"
        shown = dict(request.key)
        shown.setdefault("sample_index", request.sample_index)
        error = ModelError(
            ErrorKind.NOT_RECORDED,
            f"no recording in {self.name!r} for key {shown!r} (recorded key fields: {fields})",
        )
        return ModelOutput(text=None, attempts=0, error=error)


_LOGPROBS_SHAPE = (
    'a list of {"token": str, "logprob": number <= 0, "top_logprobs": [{"token": str, "logprob": number}, ...]} '
    "(OpenAI's choices[0].logprobs.content), or null"
)


def _read_logprobs(value: Any, source: str, line: int) -> tuple[TokenLogprob, ...] | None:
    """A record's ``logprobs`` (OpenAI's ``choices[0].logprobs.content`` shape) as ``ModelOutput.logprobs``.

    Checked as a live answer's are (:func:`~autorater_pipelines.models._logprobs.openai_logprobs`); a JSON
    ``NaN`` is read as null (:mod:`autorater_pipelines.io`), so a ``None`` logprob is named "null or NaN".

    Raises:
        InputError: not that shape, naming the file, line, column and the field.
    """
    if value is None:
        return None
    try:
        return openai_logprobs(value)
    except LogprobsError as exc:
        message = str(exc).replace(" = None is not", " = null or NaN is not")
        raise InputError(
            f"{message}; logprobs must be {_LOGPROBS_SHAPE}", source=source, row=line, column=LOGPROBS_FIELD
        ) from None
