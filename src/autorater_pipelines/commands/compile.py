"""``autorater compile``: write the pipeline templates."""

from __future__ import annotations

import argparse
from typing import Any

from autorater_pipelines.commands._common import DEFAULT_COMPILED_DIR


def register(sub: Any) -> None:
    """Add the ``compile`` subcommand."""
    from autorater_pipelines.components import IMAGE

    p = sub.add_parser(
        "compile",
        help="compile the pipelines to YAML templates",
        epilog="examples:\n"
        "  autorater compile --output-dir compiled\n"
        "  autorater compile --image us-central1-docker.pkg.dev/PROJECT/REPO/autorater-pipelines:TAG "
        "--output-dir build/compiled",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--image",
        default=None,
        help=f"container image URI for every component (default: the placeholder {IMAGE}, which no registry "
        "serves and `autorater submit` refuses; for Vertex AI build the Dockerfile, push the image and pass its "
        "URI here)",
    )
    p.add_argument(
        "--output-dir", default=DEFAULT_COMPILED_DIR, help="where to write <pipeline>.yaml (default: %(default)s)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compile every pipeline into ``--output-dir``."""
    from autorater_pipelines.pipelines import compile_pipelines

    for path in compile_pipelines(args.output_dir, image=args.image):
        print(f"wrote {path}")
    return 0
