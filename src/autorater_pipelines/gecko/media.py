"""Resolve a dataset's media cell to parts a multimodal model can read.

Accepted values (docs/gecko.md, `media_column`):

- ``gs://bucket/object.png`` and ``http(s)://…/clip.mp4``: sent by reference (the provider fetches
  them); the mime type comes from the file extension.
- a local path (absolute, relative to ``base_dir``, or ``file://``): read and sent inline; the mime
  type comes from the file's magic bytes, else its extension.
- the Vertex ``contents`` JSON string used by the Gecko evaluation sample,
  ``{"contents": [{"parts": [{"file_data": {"file_uri": "gs://…", "mime_type": "image/png"}}]}]}``
  (``inline_data`` with base64 ``data`` and camelCase keys are accepted too).

Failures raise :class:`MediaError` with a ``kind`` the caller turns into an error row.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from autorater_pipelines.evaluation.values import is_blank
from autorater_pipelines.models import MediaPart

__all__ = ["MIME_TYPES", "MediaError", "mime_type_for", "resolve_media", "sniff_mime_type"]

MIME_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".jpe": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".bmp": "image/bmp",
    ".heic": "image/heic",
    ".heif": "image/heif",
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".mov": "video/quicktime",
    ".webm": "video/webm",
    ".mpeg": "video/mpeg",
    ".mpg": "video/mpeg",
    ".avi": "video/x-msvideo",
    ".flv": "video/x-flv",
    ".wmv": "video/x-ms-wmv",
    ".3gp": "video/3gpp",
}
"""File extension → mime type (IANA names; the types Gemini accepts for images and video)."""

_REMOTE_SCHEMES = ("gs", "http", "https")


class MediaError(ValueError):
    """A media cell cannot be turned into model parts.

    Attributes:
        kind: ``missing_media``, ``unreadable_media``, ``unknown_media_type``,
            ``media_type_mismatch`` or ``invalid_media_json``.

    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def mime_type_for(name: str) -> str | None:
    """Return the mime type of a file name or URI path by its extension, or None if unknown."""
    return MIME_TYPES.get(PurePosixPath(name).suffix.lower())


def sniff_mime_type(data: bytes) -> str | None:
    """Return the mime type recognized from the first bytes of a file, or None.

    Recognizes PNG, JPEG, GIF, WebP, BMP, MP4/MOV/3GP (ISO base media ``ftyp``), WebM, AVI, MPEG.
    """
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "video/x-msvideo"
    if head.startswith(b"BM"):
        return "image/bmp"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand == b"qt  ":
            return "video/quicktime"
        if brand.startswith(b"3g"):
            return "video/3gpp"
        if brand in (b"heic", b"heix", b"mif1", b"msf1"):
            return "image/heic"
        return "video/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    if head.startswith((b"\x00\x00\x01\xba", b"\x00\x00\x01\xb3")):
        return "video/mpeg"
    return None


def _check_kind(part: MediaPart, media_type: str, shown: str) -> MediaPart:
    major = part.mime_type.split("/", 1)[0]
    if major != media_type:
        raise MediaError(
            "media_type_mismatch",
            f"media {shown!r} is {part.mime_type} but media_type is {media_type!r}",
        )
    return part


def _remote(uri: str, media_type: str, mime_type: str | None = None) -> MediaPart:
    mime = mime_type or mime_type_for(unquote(urlparse(uri).path))
    if not mime:
        raise MediaError(
            "unknown_media_type",
            f"cannot tell the media type of {uri!r} from its extension; use one of "
            f"{sorted(MIME_TYPES)} or give it as Vertex contents JSON with a mime_type",
        )
    return _check_kind(MediaPart(mime_type=mime, uri=uri), media_type, uri)


def _local(value: str, media_type: str, base_dir: str | os.PathLike[str] | None) -> MediaPart:
    path = Path(unquote(urlparse(value).path)) if value.startswith("file://") else Path(value).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or exc
        raise MediaError("unreadable_media", f"cannot read media file {str(path)!r}: {reason}") from None
    if not data:
        raise MediaError("unreadable_media", f"media file {str(path)!r} is empty")
    mime = sniff_mime_type(data) or mime_type_for(path.name)
    if not mime:
        raise MediaError(
            "unknown_media_type",
            f"cannot tell the media type of {str(path)!r}: unknown content and extension "
            f"{path.suffix!r}; supported extensions: {sorted(MIME_TYPES)}",
        )
    return _check_kind(MediaPart(mime_type=mime, data=data), media_type, str(path))


def _get(mapping: Mapping[str, Any], snake: str) -> Any:
    camel = snake.split("_")[0] + "".join(w.title() for w in snake.split("_")[1:])
    return mapping.get(snake, mapping.get(camel))


def _from_contents(value: Any, media_type: str) -> tuple[MediaPart, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            msg = f"media value is not valid JSON ({exc.msg}): {value[:120]!r}"
            raise MediaError("invalid_media_json", msg) from None
    contents = value.get("contents") if isinstance(value, Mapping) else None
    if isinstance(contents, Mapping):
        contents = [contents]
    parts = [p for c in contents or [] if isinstance(c, Mapping) for p in (c.get("parts") or [])]
    out: list[MediaPart] = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        file_data, inline = _get(part, "file_data"), _get(part, "inline_data")
        if isinstance(file_data, Mapping):
            uri = _get(file_data, "file_uri")
            if not isinstance(uri, str) or not uri:
                raise MediaError("invalid_media_json", f"file_data without file_uri: {file_data!r}")
            out.append(_remote(uri, media_type, _get(file_data, "mime_type")))
        elif isinstance(inline, Mapping):
            mime = _get(inline, "mime_type")
            try:
                data = base64.b64decode(_get(inline, "data") or "", validate=True)
            except (binascii.Error, TypeError) as exc:
                raise MediaError("invalid_media_json", f"inline_data is not valid base64: {exc}") from None
            mime = mime or sniff_mime_type(data)
            if not mime or not data:
                raise MediaError("invalid_media_json", "inline_data needs non-empty data and a mime_type")
            out.append(_check_kind(MediaPart(mime_type=mime, data=data), media_type, "inline_data"))
    if not out:
        raise MediaError(
            "invalid_media_json",
            "media JSON has no contents[].parts[] with file_data or inline_data: " + json.dumps(value)[:200],
        )
    return tuple(out)


def resolve_media(
    value: Any,
    *,
    media_type: str,
    base_dir: str | os.PathLike[str] | None = None,
) -> tuple[MediaPart, ...]:
    """Turn one media cell into the media parts of a model request.

    Args:
        value: The cell: a URI, a local path, a Vertex ``contents`` JSON string, or the parsed object.
        media_type: ``image`` or ``video``; every part's mime type must be of this kind.
        base_dir: Directory that relative local paths are resolved against (default: the current
            directory), usually the dataset file's directory.

    Returns:
        One or more :class:`MediaPart` (by ``uri`` for remote media, inline ``data`` for local files).

    Raises:
        MediaError: the cell is empty, unreadable, of unknown type, of the wrong kind, or bad JSON.

    """
    if is_blank(value):
        raise MediaError("missing_media", "no media in this row")
    if isinstance(value, Mapping) or (isinstance(value, str) and value.lstrip().startswith("{")):
        return _from_contents(value, media_type)
    if not isinstance(value, str):
        raise MediaError("invalid_media_json", f"media must be a URI, a path or contents JSON, got {value!r}")
    value = value.strip()
    if urlparse(value).scheme.lower() in _REMOTE_SCHEMES:
        return (_remote(value, media_type),)
    return (_local(value, media_type, base_dir),)
