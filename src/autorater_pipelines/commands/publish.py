"""``autorater publish``: upload the compiled templates to an Artifact Registry KFP repository.

Every template in ``--template-dir`` (one per pipeline) is checked first (a template whose steps run in the
placeholder image of the checked-in templates is refused, as ``autorater submit`` refuses it), then uploaded with
``kfp.registry.RegistryClient.upload_pipeline`` under the package named by its ``pipelineInfo.name``,
with every ``--tag``. Each upload prints the immutable ``sha256:`` URL to give
``autorater submit --template`` (prefer it to a tag: NOTES.md).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from autorater_pipelines.commands import _common, _registry, _submit_checks
from autorater_pipelines.errors import AutoraterError, InputError

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``publish`` subcommand."""
    p = sub.add_parser(
        "publish",
        help="upload the compiled templates to Artifact Registry",
        description="Upload every compiled template to an Artifact Registry KFP repository with the given tags. "
        "Uses Application Default Credentials for *-kfp.pkg.dev hosts.",
    )
    p.add_argument("--host", required=True, help="KFP repository URL: https://REGION-kfp.pkg.dev/PROJECT/REPO")
    p.add_argument(
        "--tag",
        action="append",
        required=True,
        dest="tags",
        metavar="TAG",
        help="tag for every uploaded template; repeat for several (e.g. --tag 0.1.0 --tag latest)",
    )
    p.add_argument(
        "--template-dir",
        default=None,
        help="directory holding <pipeline>.yaml, compiled with your image (`autorater compile --image IMAGE "
        "--output-dir DIR`); default: this installation's templates, whose placeholder image is refused",
    )
    p.set_defaults(func=run)


def _check_tags(tags: list[str]) -> list[str]:
    unique = list(dict.fromkeys(tags))
    for tag in unique:
        if not _registry.TAG_PATTERN.match(tag) or tag.startswith("sha256:"):
            raise InputError(
                f"invalid tag {tag!r}: use letters, digits, '.', '_' and '-', starting with a letter or digit "
                "(e.g. 0.1.0, latest)",
                source="--tag",
            )
    return unique


def _templates(template_dir: str | None) -> list[_registry.TemplateInfo]:
    from autorater_pipelines import registry

    paths = [
        _common.template_path(name, os.path.join(template_dir, f"{name}.yaml") if template_dir else None)
        for name in registry.names()
    ]
    return [_registry.read_template(path) for path in paths]


def run(args: argparse.Namespace) -> int:
    """Check the host, the tags and every template, then upload each template with every tag."""
    import requests

    host = _registry.check_host(args.host)
    tags = _check_tags(args.tags)
    templates = _templates(args.template_dir)
    for template in templates:  # every template checked before the first upload: all published or none
        _submit_checks.check_publishable(template.path, template.images, host)
    client = _registry.registry_client(host)
    for template in templates:
        try:
            package, version = client.upload_pipeline(template.path, tags=tags)
        except requests.RequestException as exc:
            raise AutoraterError(
                f"upload of {template.path} to {host} failed: {_registry.http_error_message(exc)}"
            ) from None
        ref = _registry.TemplateRef(host, package, version)
        print(f"published {template.path} as {package} {version} (tags: {', '.join(tags)})")
        print(f"  image: {', '.join(template.images) or '(none)'}")
        print(f"  template URL: {ref.url}")
    return 0
