#!/usr/bin/env bash
# CI stage "newest SDKs": the Gemini and OpenAI paths against the newest google-genai and openai that
# pyproject.toml allows, in a venv of its own WITHOUT the lock files (everything else resolves to its newest
# allowed version too). The rest of CI and the image run the locked versions; this stage says, before a user
# or a lock update meets it, whether the next release inside the bounds still works: the provider's
# self-check of google-genai's private transport (tests/models/test_models_gemini.py fails if the fallback
# kicks in with the installed release) and the calls against the emulator.
#
#   bash .ci/newest_sdks.sh PYTHON      PYTHON: an interpreter to make the venv with (python3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-python3}"
VENV="$(mktemp -d)/newest-sdks"
trap 'rm -rf "$(dirname "$VENV")"' EXIT
if command -v uv >/dev/null; then  # same resolution (newest allowed), in seconds instead of minutes
  uv venv --quiet --seed -p "$PYTHON" "$VENV"
  VIRTUAL_ENV="$VENV" uv pip install --quiet -e . "pytest>=8" packaging
else
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet --upgrade --upgrade-strategy eager -e . "pytest>=8" packaging
fi
"$VENV/bin/python" - <<'PY'
"""Fail unless the installed google-genai and openai are the newest releases the project's bounds allow."""
import subprocess, sys, tomllib
from importlib.metadata import version
from packaging.requirements import Requirement
from packaging.version import Version

deps = [Requirement(d) for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]]
for name in ("google-genai", "openai"):
    spec = next(d.specifier for d in deps if d.name == name)
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", name], capture_output=True, text=True, check=True
    ).stdout
    releases = next(line for line in listing.splitlines() if line.startswith("Available versions:"))
    newest = max(v for v in map(Version, releases.split(":", 1)[1].replace(",", " ").split()) if v in spec)
    installed = Version(version(name))
    print(f"{name}: installed {installed}, newest allowed by {name}{spec}: {newest}")
    if installed != newest:
        sys.exit(f"error: {name} {installed} is not the newest allowed release ({newest})")
PY
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/models/test_models_gemini.py tests/models/test_models_openai.py

# Beyond the bounds, for information only (never fails CI): the newest release of each SDK even when
# pyproject.toml does not allow it yet, forced in with --no-deps, against the same tests. It says whether
# raising a bound looks safe; it is not a claim that the combination is supported.
for sdk in google-genai:gemini openai:openai; do
  name="${sdk%%:*}"; tests="tests/models/test_models_${sdk##*:}.py"
  newest="$("$VENV/bin/python" -m pip index versions "$name" 2>/dev/null | sed -n 's/^[^ ]* (\(.*\))$/\1/p')"
  installed="$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('$name'))")"
  [ -n "$newest" ] && [ "$newest" != "$installed" ] || continue
  "$VENV/bin/python" -m pip install --quiet --no-deps "$name==$newest" >/dev/null 2>&1 || continue
  if "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$tests" >/dev/null 2>&1; then verdict=pass; else verdict=FAIL; fi
  echo "info: $name $newest (newest release, outside the bound; $installed is the newest allowed): $tests ${verdict}"
  "$VENV/bin/python" -m pip install --quiet --no-deps "$name==$installed" >/dev/null 2>&1
done
