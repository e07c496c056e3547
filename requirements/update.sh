#!/usr/bin/env bash
# Regenerate the lock files from pyproject.toml (needs uv: `pip install uv`). Run after changing dependencies;
# pass --upgrade to move every pin to the newest version allowed (else existing pins are kept where possible).
#   ci.lock     every extra (test, submit): the constraints of `.ci/run` and Cloud Build's install step
#   image.lock  runtime dependencies and the extra `cloud` (gs://, bq://), at the same versions: what the
#               Dockerfile installs
set -euo pipefail
cd "$(dirname "$0")/.."
common=(--quiet --python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-header --annotation-style line)
uv pip compile "${common[@]}" "$@" pyproject.toml --all-extras -o requirements/ci.lock
uv pip compile "${common[@]}" "$@" pyproject.toml --extra cloud -c requirements/ci.lock -o requirements/image.lock
echo "wrote requirements/ci.lock ($(grep -c '==' requirements/ci.lock) pins) and requirements/image.lock ($(grep -c '==' requirements/image.lock) pins)"
