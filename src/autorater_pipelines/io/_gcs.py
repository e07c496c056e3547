"""``gs://bucket/object`` URIs through google-cloud-storage (imported lazily when a URI is first used).

Registered as the ``gs`` file system (:func:`autorater_pipelines.io.register_filesystem`), so datasets
(``gs://b/data/*.jsonl``), replay files (``replay/gs://b/rec.jsonl``) and written files all reach Cloud
Storage the same way.

Endpoint and credentials, decided when the client is created (never at import): google-cloud-storage
itself honours ``STORAGE_EMULATOR_HOST`` (e.g. ``http://127.0.0.1:9023`` for ``gcp-storage-emulator``);
with it set the client uses anonymous credentials, otherwise Application Default Credentials.
On Vertex AI, pipeline artifacts are ``/gcs/...`` paths (Cloud Storage FUSE) and need no client.

Wildcards (in the object name only): ``*`` and ``?`` stay within one ``/`` level, ``**`` crosses levels
(``**/`` also matches no level), ``[...]``/``[!...]`` match one character, as in local globs.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from typing import IO, Any

from autorater_pipelines.errors import InputError
from autorater_pipelines.io._fs import has_wildcard

__all__ = ["STORAGE_EMULATOR_ENV", "GcsFileSystem", "glob_to_regex", "split_gcs_uri"]

STORAGE_EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
"""Environment variable google-cloud-storage reads to talk to an emulator instead of Cloud Storage."""

_SPOOL_BYTES = 64 * 1024 * 1024
_READ_CHUNK_BYTES = 8 * 1024 * 1024

_BUCKET_NAME = re.compile(r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?")
"""The characters of a Cloud Storage bucket name (its length and reserved words are left to the server)."""


def split_gcs_uri(uri: str, *, need_object: bool = True) -> tuple[str, str]:
    """Split ``gs://bucket/a/b.jsonl`` into ``("bucket", "a/b.jsonl")``.

    Raises:
        InputError: Not a ``gs://`` URI, no bucket, a bucket name Cloud Storage cannot have (capitals, spaces,
            other characters; its length is left to the server), or (with ``need_object``) no object name.

    """
    if not uri.lower().startswith("gs://"):
        raise InputError("expected a gs://bucket/object URI", source=uri)
    bucket, _, name = uri[len("gs://") :].partition("/")
    if not bucket:
        raise InputError("the gs:// URI has no bucket name; write gs://BUCKET/path/to/file.jsonl", source=uri)
    if has_wildcard(bucket):
        raise InputError("wildcards are not supported in the bucket name, only in the object name", source=uri)
    if not _BUCKET_NAME.fullmatch(bucket):
        raise InputError(
            f"invalid bucket name {bucket!r}: Cloud Storage bucket names use lowercase letters, digits, dashes (-), "
            "underscores (_) and dots (.), and start and end with a letter or digit "
            "(https://cloud.google.com/storage/docs/buckets#naming)",
            source=uri,
        )
    if need_object and not name:
        raise InputError("the gs:// URI names a bucket but no object; write gs://BUCKET/path/to/file.jsonl", source=uri)
    return bucket, name


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate an object-name glob (see the module docstring) into a regular expression (full match)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


class GcsFileSystem:
    """Cloud Storage as a :class:`~autorater_pipelines.io.FileSystem`.

    Args:
        client: A ``google.cloud.storage.Client`` to use; None creates one on first use (see the module
            docstring), again whenever ``STORAGE_EMULATOR_HOST`` changes.
        project: Project for a client created here (None: no project; reading and writing objects needs none).

    """

    def __init__(self, client: Any = None, *, project: str | None = None) -> None:
        self._given = client
        self._project = project
        self._client: Any = None
        self._emulator: str | None = None

    def client(self) -> Any:
        """Return the storage client, creating it on first use.

        Raises:
            InputError: google-cloud-storage is not installed, or no credentials were found.

        """
        if self._given is not None:
            return self._given
        emulator = os.environ.get(STORAGE_EMULATOR_ENV) or None
        if self._client is None or emulator != self._emulator:
            try:
                from google.auth.credentials import AnonymousCredentials
                from google.auth.exceptions import DefaultCredentialsError
                from google.cloud import storage  # type: ignore[attr-defined]
            except ImportError as exc:  # the optional extra `cloud`
                raise InputError(
                    f"gs:// support needs google-cloud-storage: pip install 'autorater-pipelines[cloud]' ({exc})",
                    source="gs://",
                ) from exc
            try:
                credentials = AnonymousCredentials() if emulator else None
                self._client = storage.Client(project=self._project, credentials=credentials)
            except DefaultCredentialsError as exc:
                raise InputError(
                    "no Google Cloud credentials for gs:// access; run `gcloud auth application-default login` "
                    f"(or run on Vertex AI with a service account), or set {STORAGE_EMULATOR_ENV} to use an emulator",
                    source="gs://",
                ) from exc
            self._emulator = emulator
        return self._client

    def _api_error(self, exc: Exception, uri: str, action: str) -> Exception:
        from google.api_core import exceptions

        if isinstance(exc, exceptions.NotFound):
            return InputError(
                f"not found in Cloud Storage while trying to {action}; check the bucket and object names", source=uri
            )
        if isinstance(exc, exceptions.Forbidden):
            return InputError(
                f"permission denied while trying to {action} ({exc.message}); the caller needs "
                "roles/storage.objectViewer (read) or roles/storage.objectCreator (write)",
                source=uri,
            )
        return exc

    def check_uri(self, uri: str) -> tuple[str, str]:
        """Check a ``gs://`` URI's form without any request; return its bucket and object name (or pattern).

        This is every check :meth:`read_bytes` and :meth:`glob` make before they reach Cloud Storage, so a dry run
        refuses what a run refuses.

        Raises:
            InputError: Not a ``gs://`` URI, no bucket, a wildcard in the bucket name, no object name, or (without
                a wildcard) a folder name ending in ``/``.

        """
        bucket, name = split_gcs_uri(uri)
        if name.endswith("/") and not has_wildcard(name):
            raise InputError(
                f"names a folder, expected a file; pass the object or a wildcard such as 'gs://{bucket}/{name}*.jsonl'",
                source=uri,
            )
        return bucket, name

    def read_bytes(self, uri: str) -> bytes:
        """Download the whole object.

        Raises:
            InputError: Bad URI, object or bucket not found, or permission denied.

        """
        from google.api_core import exceptions

        bucket, name = self.check_uri(uri)
        try:
            return bytes(self.client().bucket(bucket).blob(name).download_as_bytes())
        except (exceptions.NotFound, exceptions.Forbidden) as exc:
            raise self._api_error(exc, uri, "read it") from exc

    def open_read(self, uri: str) -> IO[bytes]:
        """Open the object for reading in chunks (8 MiB ranged downloads), for files read line by line.

        Raises:
            InputError: Bad URI, object or bucket not found, or permission denied.

        """
        from google.api_core import exceptions

        bucket, name = self.check_uri(uri)
        blob = self.client().bucket(bucket).blob(name)
        try:
            blob.reload()  # a missing object fails here, with read_bytes's message, not at the first line
        except (exceptions.NotFound, exceptions.Forbidden) as exc:
            raise self._api_error(exc, uri, "read it") from exc
        reader: IO[bytes] = blob.open("rb", chunk_size=_READ_CHUNK_BYTES)
        return reader

    def write_atomic(self, uri: str, chunks: Iterable[bytes]) -> None:
        """Upload ``chunks`` as one object; Cloud Storage shows an object only once its upload is complete.

        The bytes are spooled (in memory up to 64 MiB, then in a temporary file) and uploaded in one call.

        Raises:
            InputError: Bad URI, bucket not found, or permission denied.

        """
        from google.api_core import exceptions

        bucket, name = split_gcs_uri(uri)
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as spool:
            for chunk in chunks:
                spool.write(chunk)
            spool.seek(0)
            try:
                self.client().bucket(bucket).blob(name).upload_from_file(spool, rewind=True)
            except (exceptions.NotFound, exceptions.Forbidden) as exc:
                raise self._api_error(exc, uri, "write it") from exc

    def glob(self, pattern: str) -> list[str]:
        """List the objects whose names match ``pattern``, as sorted ``gs://`` URIs (folder markers skipped).

        Only the objects under the pattern's literal prefix (up to the first wildcard) are listed. An object named
        ``pattern`` itself (``gs://b/d[1].jsonl``) is that object alone, as a local file of that name is.

        Raises:
            InputError: Bad URI, a wildcard in the bucket name, bucket not found, or permission denied.

        """
        from google.api_core import exceptions

        bucket, name = self.check_uri(pattern)
        first = min((i for i, ch in enumerate(name) if ch in "*?["), default=len(name))
        regex = glob_to_regex(name)
        try:
            blobs = list(self.client().list_blobs(bucket, prefix=name[:first]))
        except (exceptions.NotFound, exceptions.Forbidden) as exc:
            raise self._api_error(exc, pattern, "list objects") from exc
        if any(b.name == name for b in blobs):  # listed under the prefix anyway: no extra request
            return [f"gs://{bucket}/{name}"]
        return sorted(f"gs://{bucket}/{b.name}" for b in blobs if not b.name.endswith("/") and regex.fullmatch(b.name))
