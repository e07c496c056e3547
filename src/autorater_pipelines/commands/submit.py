"""``autorater submit PIPELINE``: validate parameters against the template, then create a Vertex AI PipelineJob.

``aiplatform.PipelineJob`` rejects unknown parameter names but accepts values of the wrong type and
missing required parameters (NOTES.md), so the job would be created and fail later. ``submit`` checks
names, required parameters and types against the template first, then runs the pipeline's ``validate_run``
(the check its first step makes, and ``autorater run``'s): bounds, nested options, model specs (a Vertex AI
model with no project), templates and, when the dataset is readable from here, its columns and ids. A dry run
and a real submit read local files only (``gs://`` and ``bq://`` data are checked by the first step; a note says
so).

Templates: ``compiled/<pipeline>.yaml`` by default, any local compiled YAML, or a registry URL
``https://REGION-kfp.pkg.dev/PROJECT/REPO/PACKAGE/VERSION`` (``sha256:…`` or a tag). A registry template
is downloaded with ``kfp.registry.RegistryClient`` and validated before submitting; with ``--dry-run``
nothing is downloaded: the parameters are checked against the local template of the same package if
there is one, and Vertex AI validates the remote template's parameter names at submit time.

``--dry-run`` builds the job offline (anonymous credentials, no network) and prints its spec as JSON on
stdout; without it, Application Default Credentials are used and the console URL of the run is printed.

Nothing that only exists on this machine reaches Vertex AI (:mod:`._submit_checks`): a template compiled
with the placeholder image is refused with the commands that build and push a real one (also in
``--dry-run``), and local files named in the parameters are uploaded under the pipeline root, the
parameters rewritten to their ``gs://`` URIs (``--no-upload``: refused with the upload command).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import re
import sys
import tempfile
from typing import Any

from autorater_pipelines.commands import _common, _registry, _submit_checks
from autorater_pipelines.errors import AutoraterError, InputError
from autorater_pipelines.redaction import redact

__all__ = ["console_url", "register"]

_LABEL = re.compile(r"^(?P<key>[a-z][a-z0-9_-]{0,62})=(?P<value>[a-z0-9_-]{0,63})$")


def console_url(project: str, location: str, job_id: str) -> str:
    """The Google Cloud console page of a pipeline run."""
    return f"https://console.cloud.google.com/vertex-ai/locations/{location}/pipelines/runs/{job_id}?project={project}"


SUBMIT_EXAMPLES = """\
examples:
  # check everything that can be checked from here, create nothing:
  autorater submit autosxs --params examples/quickstart/params.json --template build/compiled/autosxs.yaml \\
      --project my-project --location us-central1 --pipeline-root gs://my-bucket/runs --dry-run

  # submit a published template and wait for it:
  autorater submit gecko --params params.json --project my-project --location us-central1 \\
      --pipeline-root gs://my-bucket/runs \\
      --template https://us-central1-kfp.pkg.dev/my-project/my-repo/gecko/latest --wait

  autorater params gecko          # every parameter of PARAMS.json, with types and defaults
"""
"""Examples shown by ``autorater submit --help``."""


def register(sub: Any) -> None:
    """Add the ``submit`` subcommand."""
    from autorater_pipelines import registry

    p = sub.add_parser(
        "submit",
        help="validate parameters and submit a template to Vertex AI Pipelines",
        description="Validate PARAMS.json against the template (names, required parameters, types), then create "
        "a Vertex AI PipelineJob with Application Default Credentials and print its console URL.",
        epilog=SUBMIT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("pipeline", choices=sorted(registry.names()), help="which pipeline to submit")
    p.add_argument("--params", required=True, help="JSON file mapping pipeline parameter names to values")
    p.add_argument("--project", required=True, help="Google Cloud project of the PipelineJob")
    p.add_argument("--location", required=True, help="Vertex AI region of the PipelineJob (e.g. us-central1)")
    p.add_argument("--pipeline-root", required=True, help="gs:// URI for the run's artifacts and outputs")
    p.add_argument(
        "--service-account", default=None, help="service account the run uses (default: Compute Engine default)"
    )
    p.add_argument(
        "--template",
        default=None,
        help="compiled YAML, or https://REGION-kfp.pkg.dev/PROJECT/REPO/PACKAGE/VERSION (default: "
        "compiled/<pipeline>.yaml)",
    )
    p.add_argument("--display-name", default=None, help="run display name (default: <pipeline name>-<timestamp>)")
    p.add_argument("--job-id", default=None, help="PipelineJob id (default: <pipeline name>-<timestamp>)")
    p.add_argument(
        "--label", action="append", default=[], metavar="KEY=VALUE", help="label on the run; repeat for several"
    )
    p.add_argument(
        "--cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="reuse outputs of identical earlier steps (default: as compiled)",
    )
    p.add_argument("--wait", action="store_true", help="block until the run finishes; exit 1 if it failed")
    p.add_argument(
        "--upload",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="upload local files named in the parameters (dataset, replay/<path>, few-shot dataset, Gecko media) "
        "under <pipeline root>/autorater-inputs/ and pass their gs:// URIs (default); --no-upload refuses them",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and print the job spec as JSON; no network, nothing uploaded or submitted",
    )
    p.set_defaults(func=run)


def _labels(pairs: list[str]) -> dict[str, str]:
    labels = {}
    for pair in pairs:
        match = _LABEL.match(pair)
        if not match:
            raise InputError(
                f"invalid label {pair!r}: expected key=value with lowercase letters, digits, '_' and '-' "
                "(key starting with a letter)",
                source="--label",
            )
        labels[match["key"]] = match["value"]
    return labels


def _check_pipeline_root(pipeline_root: str) -> None:
    if not re.match(r"^gs://[^/\s]+", pipeline_root):
        raise InputError(
            f"Vertex AI needs a Cloud Storage URI such as gs://BUCKET/pipeline-root, got {pipeline_root!r}",
            source="--pipeline-root",
        )


def _quiet(line: str) -> None:
    """Drop a line (the upload check before ``validate_run`` says nothing)."""


def _readable_here(uri: str) -> bool:
    """What ``submit`` reads before building the job: local files only (no network, no credentials)."""
    return "://" not in uri or uri.startswith("file://")


@dataclasses.dataclass(frozen=True)
class _Template:
    """Where the job's template comes from and what the parameters were checked against.

    Attributes:
        job_template: What ``PipelineJob(template_path=...)`` gets; None when there is nothing to build from.
        checked: The local file the parameters were validated against; None when not validated.
        uri: The registry URL recorded as the job's ``templateUri``.
        note: What the user should know about the validation (printed on stderr).
        runs: The local file of the template that will run (its images are checked); None when not at hand.
    """

    job_template: str | None
    checked: str | None
    uri: str | None = None
    note: str | None = None
    runs: str | None = None


def _local_template_for(pipeline: str, package: str) -> str | None:
    """``compiled/<pipeline>.yaml`` when it exists and is the same package as a remote template."""
    try:
        path = _common.template_path(pipeline, None)
        return path if _registry.read_template(path).name == package else None
    except InputError:
        return None


def _resolve_template(args: argparse.Namespace, workdir: str) -> _Template:
    template = args.template
    if template and template.startswith("gs://"):
        raise InputError(
            "gs:// templates are not supported: copy it locally or publish it to Artifact Registry "
            "(`autorater publish`) and pass its https://REGION-kfp.pkg.dev/... URL",
            source="--template",
        )
    if not template or "://" not in template:
        path = _common.template_path(args.pipeline, template)
        _registry.read_template(path)
        return _Template(path, path, runs=path)
    ref = _registry.parse_template_url(template)
    if args.dry_run:
        local = _local_template_for(args.pipeline, ref.package)
        remote = (
            "the remote template is not downloaded in --dry-run; without --dry-run it is downloaded and validated "
            "first, and Vertex AI validates it at submit time"
        )
        if local:
            note = f"parameters checked against the local {local} (same package {ref.package!r}); {remote}"
        else:
            note = f"parameters NOT validated: {remote} (no local template of package {ref.package!r})"
        return _Template(local, local, ref.url if ref.is_artifact_registry else None, note)
    path = _registry.download_template(ref, workdir)
    _registry.read_template(path)
    if not ref.is_digest:
        print(
            f"note: tag {ref.version!r} is resolved at submit time; pin a sha256: version for reproducible runs",
            file=sys.stderr,
        )
    if ref.is_artifact_registry:  # Vertex AI fetches it itself and records the job's templateUri
        return _Template(ref.url, path, ref.url, runs=path)
    return _Template(path, path, runs=path)


def _check_pipeline_matches(pipeline: str, checked: str) -> None:
    """Warn when the template is another pipeline than the one named on the command line."""
    try:
        expected = _registry.read_template(_common.template_path(pipeline, None)).name
    except InputError:
        return
    name = _registry.read_template(checked).name
    if name != expected:
        print(f"warning: {checked} is pipeline {name!r}; {pipeline}'s template is {expected!r}", file=sys.stderr)


def _default_job_id(template: _Template, pipeline: str) -> str:
    """``<pipeline name>-<UTC timestamp>``, the form the Vertex AI SDK uses."""
    name = _registry.read_template(template.checked).name if template.checked else f"autorater-{pipeline}"
    name = re.sub(r"[^-0-9a-z]+", "-", name.lower()).strip("-")
    return f"{name}-{datetime.datetime.now(datetime.timezone.utc):%Y%m%d%H%M%S}"


def _build_job(args: argparse.Namespace, params: dict[str, Any], template: _Template, labels: dict[str, str]) -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.auth.exceptions import DefaultCredentialsError

    try:
        from google.cloud import aiplatform
    except ImportError:
        raise AutoraterError(
            "`autorater submit` needs the Vertex AI SDK: pip install 'autorater-pipelines[submit]'"
        ) from None

    assert template.job_template is not None, "a template without a local file is never built into a job"
    job_id = args.job_id or _default_job_id(template, args.pipeline)
    try:
        return aiplatform.PipelineJob(
            display_name=args.display_name or job_id,
            template_path=template.job_template,
            job_id=job_id,
            pipeline_root=args.pipeline_root,
            parameter_values=params,
            enable_caching=args.cache,
            labels=labels or None,
            project=args.project,
            location=args.location,
            credentials=AnonymousCredentials() if args.dry_run else None,
        )
    except DefaultCredentialsError as exc:
        raise AutoraterError(
            "no Application Default Credentials: run `gcloud auth application-default login` or set "
            f"GOOGLE_APPLICATION_CREDENTIALS ({exc})"
        ) from None
    except ValueError as exc:
        raise InputError(f"Vertex AI SDK rejected the job: {exc}", source=args.params) from None


def _spec(
    args: argparse.Namespace, job: Any, template: _Template, labels: dict[str, str], params: dict[str, Any]
) -> dict[str, Any]:
    """The PipelineJob resource as it will be created (``pipelineSpec`` left out: it is the template)."""
    spec: dict[str, Any] = {"name": f"projects/{args.project}/locations/{args.location}/pipelineJobs/{job.job_id}"}
    spec.update({k: v for k, v in job.to_dict().items() if k != "pipelineSpec"})
    values = (spec.get("runtimeConfig") or {}).get("parameterValues")
    if isinstance(values, dict):  # protobuf writes 2 as 2.0: show the integers given
        spec["runtimeConfig"]["parameterValues"] = _common.integers_as_given(values, params)
    if template.uri:
        spec["templateUri"] = template.uri
    if args.service_account:
        spec["serviceAccount"] = args.service_account
    if labels:
        spec["labels"] = labels
    return spec


def run(args: argparse.Namespace) -> int:
    """Validate, build the PipelineJob, and submit it (or print its spec with ``--dry-run``)."""
    params = _common.load_params(args.params)
    labels = _labels(args.label)
    _check_pipeline_root(args.pipeline_root)
    with tempfile.TemporaryDirectory(prefix="autorater-submit-") as workdir:
        template = _resolve_template(args, workdir)
        if template.checked:
            _common.check_param_names(params, template.checked, args.params)
            _check_pipeline_matches(args.pipeline, template.checked)
        if template.note:
            print(f"note: {template.note}", file=sys.stderr)
        notes = _check_run(args, params, template)
        params = _submit_checks.stage_local_inputs(
            params,
            pipeline_root=args.pipeline_root,
            project=args.project,
            upload=args.upload,
            dry_run=args.dry_run,
            say=_submit_checks.print_to_stderr if args.dry_run else print,
            pipeline=args.pipeline,
        )
        if template.job_template is None:  # --dry-run of a remote template with no local counterpart
            return _print_unvalidated_spec(args, params, template, labels)
        job = _build_job(args, params, template, labels)
        url = console_url(args.project, args.location, job.job_id)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        if args.dry_run:
            print(redact(json.dumps(_spec(args, job, template, labels, params), indent=2, sort_keys=True)))
            checked = f"valid for {template.checked}" if template.checked else "not validated"
            print(
                f"dry run: {len(params)} parameters {checked}; nothing submitted; console URL once submitted: {url}",
                file=sys.stderr,
            )
            return 0
        return _submit(args, job, url)


def _check_run(args: argparse.Namespace, params: dict[str, Any], template: _Template) -> list[str]:
    """Everything the job must pass before it is built: the image, local files, the pipeline's ``validate_run``.

    ``validate_run`` is the check the pipeline's first step makes; it reads the local dataset and replay files
    (before they are uploaded) and leaves ``gs://``/``bq://`` data to the first step, returning notes that say so.

    The parameters are checked before the image, so a dry run with the checked-in (placeholder-image) template
    still reports every parameter and dataset problem first.

    Raises:
        InputError: a missing local file, the first problem ``validate_run`` finds, or the placeholder image.
    """
    notes: list[str] = []
    if template.checked:  # else a remote template we know nothing about: Vertex AI checks its parameters
        # validate_run first: a set is refused with the message ``autorater run`` and the first step give (a
        # missing local dataset included); then every other local file must exist (nothing uploaded yet).
        # The job's project stands in for a `project` left out (the template's default resolves to it on Vertex
        # AI); an explicit "" reaches the first step as "", so it is checked as "".
        project = args.project if "project" not in params else ""
        notes = _common.validate_run(args.pipeline, params, readable=_readable_here, project=project)
        _submit_checks.stage_local_inputs(
            params,
            pipeline_root=args.pipeline_root,
            project=args.project,
            upload=args.upload,
            dry_run=True,
            say=_quiet,
            pipeline=args.pipeline,
        )
    if template.runs:
        package = _registry.read_template(template.runs).name
        _submit_checks.check_image(
            template.runs, pipeline=args.pipeline, package=package, project=args.project, location=args.location
        )
    return notes


def _print_unvalidated_spec(
    args: argparse.Namespace, params: dict[str, Any], template: _Template, labels: dict[str, str]
) -> int:
    spec: dict[str, Any] = {
        "displayName": args.display_name or "(set by Vertex AI)",
        "runtimeConfig": {"gcsOutputDirectory": args.pipeline_root, "parameterValues": params},
        "templateUri": template.uri or args.template,
    }
    if args.job_id:
        spec["name"] = f"projects/{args.project}/locations/{args.location}/pipelineJobs/{args.job_id}"
    if args.service_account:
        spec["serviceAccount"] = args.service_account
    if labels:
        spec["labels"] = labels
    print(redact(json.dumps(spec, indent=2, sort_keys=True)))
    print("dry run: nothing submitted", file=sys.stderr)
    return 0


def _submit(args: argparse.Namespace, job: Any, url: str) -> int:
    from google.api_core import exceptions as api_exceptions
    from google.auth.exceptions import GoogleAuthError

    try:
        job.submit(service_account=args.service_account)
    except (api_exceptions.GoogleAPIError, GoogleAuthError) as exc:
        raise AutoraterError(f"Vertex AI did not accept the job: {exc}") from None
    print(f"submitted {job.resource_name}")
    print(f"console: {url}")
    print(f"outputs: {args.pipeline_root.rstrip('/')}/<project number>/{job.job_id}/<step>/ (also in the console)")
    if not args.wait:
        return 0
    try:
        job.wait()
    except RuntimeError as exc:  # aiplatform raises when the run fails or is cancelled
        print(f"error: the run did not succeed: {exc}", file=sys.stderr)
        return 1
    print(f"finished: {getattr(job.state, 'name', job.state)}")
    return 0
