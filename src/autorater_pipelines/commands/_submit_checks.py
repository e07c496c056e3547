"""What ``autorater submit`` checks so that a Vertex AI run cannot trip on things only this machine has.

- The image: a template compiled with the placeholder image of the checked-in templates
  (:data:`autorater_pipelines.components.IMAGE`) would fail at image pull, after the job started. It is
  refused with the commands that build and push the image and compile the templates with it, by ``submit``
  and, before anything is uploaded, by ``publish`` (:func:`placeholder_images` is the one test).
- Local files named in the parameters (``evaluation_dataset``, ``replay/<path>`` model specs, a custom task's
  ``few_shot_examples_config.dataset``, and a Gecko dataset's local media files) cannot be read by steps on
  Vertex AI. They are uploaded under ``<pipeline root>/autorater-inputs/<sha256 prefix>/<file name>``
  (content-addressed: a re-submit reuses the object) and the parameters rewritten to the ``gs://`` URIs,
  or, with ``--no-upload``, refused with the ``gcloud storage cp`` command that uploads them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from autorater_pipelines import registry
from autorater_pipelines.errors import InputError

__all__ = [
    "PLACEHOLDER_IMAGE_PREFIX",
    "check_image",
    "check_publishable",
    "placeholder_images",
    "stage_local_inputs",
    "template_images",
]

UPLOAD_FOLDER = "autorater-inputs"


def _placeholder_prefix() -> str:
    from autorater_pipelines.components import IMAGE

    return IMAGE.rsplit(":", 1)[0] + ":"


PLACEHOLDER_IMAGE_PREFIX = _placeholder_prefix()
"""``us-docker.pkg.dev/autorater-pipelines/images/autorater-pipelines:``: the image no project can pull."""


def template_images(path: str) -> set[str]:
    """The container images of every executor of a compiled template."""
    import yaml  # here: the CLI imports this module for every command

    with open(path, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle) or {}
    executors = (spec.get("deploymentSpec") or {}).get("executors") or {}
    return {e["container"]["image"] for e in executors.values() if "container" in e}


def placeholder_images(images: Iterable[str]) -> list[str]:
    """The images among ``images`` that are the placeholder of the checked-in templates (sorted).

    The one test of "this template cannot run on Vertex AI": ``submit`` (:func:`check_image`) and ``publish``
    (:func:`check_publishable`) refuse such a template.
    """
    return sorted(i for i in images if i.startswith(PLACEHOLDER_IMAGE_PREFIX))


def _build_image_fix(location: str, project: str, last: str, cloud_build_last: str) -> str:
    """How to build the image in the user's Artifact Registry and compile the templates with it."""
    image = f"{location}-docker.pkg.dev/{project}/autorater/autorater-pipelines:$(git rev-parse --short HEAD)"
    return (
        "Build the image in your Artifact Registry and use templates compiled with it, either with Cloud Build "
        "from this repository (builds, pushes, compiles, publishes; Artifact Registry repositories `autorater` "
        "(Docker) and `autorater-templates` (KFP)):\n"
        f"  gcloud builds submit --config cloudbuild.yaml --region {location} "
        f"--substitutions=_REGION={location},_COMMIT=$(git rev-parse --short HEAD)\n"
        f"{cloud_build_last}"
        "or with Docker here:\n"
        f"  docker build -t {image} . && docker push {image}\n"
        f"  autorater compile --image {image} --output-dir build/compiled\n"
        f"{last}"
    )


def check_image(path: str, *, pipeline: str, package: str, project: str, location: str) -> None:
    """Refuse a template whose steps run in the placeholder image, saying how to build and use a real one.

    Raises:
        InputError: the template names the placeholder image.
    """
    placeholder = placeholder_images(template_images(path))
    if not placeholder:
        return
    registry = f"https://{location}-kfp.pkg.dev/{project}/autorater-templates/{package}/latest"
    raise InputError(
        f"its steps run in {placeholder[0]}, the placeholder image of the checked-in templates, which no project "
        "can pull: the job would fail at image pull on Vertex AI. "
        + _build_image_fix(
            location,
            project,
            f"  autorater submit {pipeline} --template build/compiled/{pipeline}.yaml ...",
            f"  autorater submit {pipeline} --template {registry} ...\n",
        ),
        source=path,
    )


def check_publishable(path: str, images: Iterable[str], host: str) -> None:
    """Refuse to publish a template whose steps run in the placeholder image (``submit`` would refuse it).

    Args:
        path: The template file.
        images: Its executors' images (:class:`~autorater_pipelines.commands._registry.TemplateInfo`).
        host: The registry host; an Artifact Registry host's region and project fill in the commands.

    Raises:
        InputError: the template names the placeholder image; the message says how to build and compile with a
            real one, then publish ``build/compiled``.
    """
    placeholder = placeholder_images(images)
    if not placeholder:
        return
    from autorater_pipelines.commands._registry import AR_HOST_PATTERN

    match = AR_HOST_PATTERN.match(host)
    location, project = (match["region"], match["project"]) if match else ("REGION", "PROJECT")
    raise InputError(
        f"its steps run in {placeholder[0]}, the placeholder image of the checked-in templates, which no project "
        "can pull: a job submitted from the published template would fail at image pull on Vertex AI (and "
        "`autorater submit` refuses it). Nothing was uploaded. "
        + _build_image_fix(
            location,
            project,
            f"  autorater publish --host {host} --template-dir build/compiled --tag ...",
            "",
        ),
        source=path,
    )


def _is_local(value: str) -> bool:
    text = value.strip()
    return bool(text) and (not urlparse(text).scheme or text.startswith("file://")) and not text.startswith("/gcs/")


def _local_path(value: str) -> str:
    text = value.strip()
    return urlparse(text).path if text.startswith("file://") else os.path.expanduser(text)


class _Stager:
    """Uploads (or plans, or refuses) local files; remembers what it did for the summary."""

    def __init__(self, pipeline_root: str, *, project: str, upload: bool, dry_run: bool) -> None:
        self.root = f"{pipeline_root.rstrip('/')}/{UPLOAD_FOLDER}"
        self.project, self.upload, self.dry_run = project, upload, dry_run
        self.done: list[tuple[str, str, str]] = []  # (parameter, local file, gs:// URI)
        self.refused: list[tuple[str, str]] = []  # (parameter, local file)
        self.unreadable: list[str] = []  # media files that stay as they are: their rows become error rows

    def put(self, parameter: str, path: str, data: bytes | None = None, name: str | None = None) -> str:
        """The ``gs://`` URI of a local file (or of ``data`` standing in for it) once uploaded."""
        if data is None:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise InputError(
                    f"local file {path!r} cannot be read ({exc.strerror or exc}); steps on Vertex AI could not "
                    "read it either: give a gs:// URI",
                    source=parameter,
                ) from None
        uri = f"{self.root}/{hashlib.sha256(data).hexdigest()[:16]}/{name or Path(path).name}"
        if any(done == uri for _, _, done in self.done) or (parameter, path) in self.refused:
            return uri  # the same file again (one image in two candidate columns): uploaded once
        if not self.upload:
            self.refused.append((parameter, path))
            return uri
        if not self.dry_run:
            from autorater_pipelines.io import GcsFileSystem

            GcsFileSystem(project=self.project).write_atomic(uri, [data])
        self.done.append((parameter, path, uri))
        return uri

    def files(self, parameter: str, value: str) -> list[str]:
        """The local files one dataset entry names (a path or a wildcard), or a clear error."""
        from autorater_pipelines.io import LocalFileSystem
        from autorater_pipelines.io._fs import has_wildcard

        path = _local_path(value)  # the dataset reader's rule: a file named like a wildcard (d[1].jsonl) is itself
        matches = LocalFileSystem().glob(path) if has_wildcard(path) else [path]
        matches = [m for m in matches if os.path.isfile(m)]
        if not matches:
            raise InputError(
                f"{value.strip()!r} is neither a local file nor a gs:// URI (no such file here); steps on "
                "Vertex AI read gs:// URIs",
                source=parameter,
            )
        return matches


def _dataset(stager: _Stager, parameter: str, value: str, media_columns: Sequence[str] = ()) -> str:
    """Upload the local entries of a comma-separated dataset list (and their rows' local media); the rewritten list."""
    entries = []
    for entry in (e.strip() for e in value.split(",") if e.strip()):
        if not _is_local(entry):
            entries.append(entry)
            continue
        for path in stager.files(parameter, entry):
            rows = _with_uploaded_media(stager, parameter, path, media_columns) if media_columns else None
            if rows is None:
                entries.append(stager.put(parameter, path))
            else:  # a Gecko dataset pointing at local media: its rows rewritten to the uploaded media
                data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
                entries.append(stager.put(parameter, path, data, Path(path).stem + ".jsonl"))
    return ",".join(entries)


def _with_uploaded_media(stager: _Stager, parameter: str, path: str, columns: Sequence[str]) -> list[dict] | None:
    """The dataset's rows with local media paths in ``columns`` replaced by uploaded ``gs://`` URIs; None if none is.

    A media file that cannot be read here is not a reason to refuse the run: ``autorater run`` scores the other
    rows and reports that row in ``error_messages.jsonl`` (the Gecko contract), so the row keeps its path, which
    the step on Vertex AI cannot read either, and becomes the same error row there; a warning names it now.
    """
    from autorater_pipelines.io import read_dataset

    def local(value: Any) -> bool:
        return isinstance(value, str) and _is_local(value) and value[:1] != "{"

    dataset = read_dataset(path, source_name=parameter)
    if not any(local(r.get(c)) for r in dataset.rows for c in columns):
        return None
    rows = copy.deepcopy(dataset.rows)
    for column in columns:
        where = f"{parameter} ({Path(path).name}, column {column!r})"
        for index, row in enumerate(rows):
            value = row.get(column)
            if not isinstance(value, str) or not local(value):
                continue
            media = Path(_local_path(value))
            media = media if media.is_absolute() else Path(path).resolve().parent / media
            try:
                data = media.read_bytes()
            except OSError as exc:
                stager.unreadable.append(
                    f"{dataset.location(index)}, column {column!r}: media file {str(media)!r} cannot be read "
                    f"({exc.strerror or exc}); the run scores the other rows and lists this one in "
                    "error_messages.jsonl, as `autorater run` does"
                )
                continue
            row[column] = stager.put(where, str(media), data)
    return rows


def _media_columns(pipeline: str | None, params: Mapping[str, Any]) -> list[str]:
    """The dataset columns whose local media paths are uploaded.

    Gecko's ``media_column``, or each of its ``response_columns`` columns (image or video candidates); none with
    ``media_type: text`` (the columns hold the text itself) or for another pipeline's ``response_columns``.
    """
    if str(params.get("media_type") or "").strip().lower() == "text":
        return []
    media = params.get("media_column")
    if isinstance(media, str) and media.strip():
        return [media]
    candidates = params.get("response_columns")
    if pipeline and registry.get(pipeline).media_response_columns and isinstance(candidates, Mapping):
        return list(dict.fromkeys(c for c in candidates.values() if isinstance(c, str) and c.strip()))
    return []


def _few_shot_configs(value: Any, where: str) -> Iterator[tuple[str, dict]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "few_shot_examples_config" and isinstance(item, dict):
                yield f"{where}.{key}.dataset", item
            else:
                yield from _few_shot_configs(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _few_shot_configs(item, f"{where}[{i}]")


def stage_local_inputs(
    params: dict[str, Any],
    *,
    pipeline_root: str,
    project: str,
    upload: bool,
    dry_run: bool,
    say: Callable[[str], None] = print,
    pipeline: str | None = None,
) -> dict[str, Any]:
    """Return ``params`` with every local file uploaded under the pipeline root and named by its ``gs://`` URI.

    Args:
        params: Pipeline parameters (not changed).
        pipeline_root: The run's ``gs://`` pipeline root.
        project: Project for the Cloud Storage client.
        upload: False refuses local files instead, with the command that uploads them.
        dry_run: Compute the URIs without uploading anything.
        say: Where the one line per uploaded file (and per unreadable media file) goes.
        pipeline: The pipeline submitted (``gecko``: each ``response_columns`` column holds media paths too).

    A Gecko dataset's local media files (in ``media_column``, or in every ``response_columns`` column) are uploaded
    and its rows rewritten to their URIs. A local media file that cannot be read is left as it is, with a
    ``warning:`` line through ``say``: its row becomes an error row of the run (as with ``autorater run``), the
    other rows are scored.

    Raises:
        InputError: a local file is missing or unreadable (a dataset, a recording; not a media file), or
            ``upload`` is False and there are local files.
    """
    stager = _Stager(pipeline_root, project=project, upload=upload, dry_run=dry_run)
    staged = copy.deepcopy(params)
    if isinstance(staged.get("evaluation_dataset"), str):
        media = _media_columns(pipeline, staged)
        staged["evaluation_dataset"] = _dataset(stager, "evaluation_dataset", staged["evaluation_dataset"], media)
    for key, value in staged.items():
        if isinstance(value, str) and value.startswith("replay/") and _is_local(value[len("replay/") :]):
            paths = stager.files(key, value[len("replay/") :])
            if len(paths) != 1:
                raise InputError(f"a replay file is one file; {value!r} matches {len(paths)}", source=key)
            staged[key] = "replay/" + stager.put(key, paths[0])
    for where, config in _few_shot_configs(staged.get("experimental_args"), "experimental_args"):
        if isinstance(config.get("dataset"), str):
            config["dataset"] = _dataset(stager, where, config["dataset"])
    if stager.refused:
        commands = "\n".join(
            f"  gcloud storage cp {shlex.quote(p)} {stager.root}/  # {parameter}" for parameter, p in stager.refused
        )
        raise InputError(
            "local files cannot be read by steps on Vertex AI; upload them and pass their gs:// URIs "
            f"(or submit without --no-upload, which uploads them under the pipeline root):\n{commands}",
            source="--params",
        )
    verb = "would upload" if dry_run else "uploaded"
    for parameter, path, uri in stager.done:
        say(f"{verb} {parameter} {path} -> {uri}")
    for warning in stager.unreadable:
        say(f"warning: {warning}")
    return staged


def print_to_stderr(line: str) -> None:
    """``say`` for ``--dry-run``, whose stdout is the job spec."""
    print(line, file=sys.stderr)
