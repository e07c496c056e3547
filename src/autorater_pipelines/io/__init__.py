"""Reading datasets and writing results: local files now, ``gs://`` and ``bq://`` through registries.

- :func:`read_dataset` reads a comma-separated list of JSONL/JSON/CSV/Parquet sources into a
  :class:`Dataset` whose rows remember their file and line.
- :func:`require_columns`, :func:`check_unique_ids`, :func:`id_key` validate it before any model call.
- :func:`write_jsonl`, :func:`write_json` write atomically; :func:`read_jsonl` reads JSONL back.
- :func:`register_filesystem` / :func:`register_source_reader` plug in new URI schemes.
"""

from autorater_pipelines.io._dataset import Dataset, check_unique_ids, id_key, is_missing, require_columns
from autorater_pipelines.io._formats import SUPPORTED_EXTENSIONS
from autorater_pipelines.io._fs import FileSystem, LocalFileSystem, register_filesystem
from autorater_pipelines.io._jsonl import read_jsonl, write_json, write_jsonl
from autorater_pipelines.io._jsonsafe import to_jsonable
from autorater_pipelines.io._read import SourcePart, read_dataset, register_source_reader

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "Dataset",
    "FileSystem",
    "LocalFileSystem",
    "SourcePart",
    "check_unique_ids",
    "id_key",
    "is_missing",
    "read_dataset",
    "read_jsonl",
    "register_filesystem",
    "register_source_reader",
    "require_columns",
    "to_jsonable",
    "write_json",
    "write_jsonl",
]
