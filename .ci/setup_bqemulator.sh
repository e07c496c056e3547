#!/usr/bin/env bash
# Prepare a private HOME for bqemulator with DuckDB's spatial and avro extensions installed offline from the
# duckdb-extension-* wheels (test extras), so the emulator downloads nothing when it starts.
# Usage: .ci/setup_bqemulator.sh PYTHON HOME_DIR   (then export AUTORATER_BQEMULATOR_HOME=HOME_DIR)
set -euo pipefail
PYTHON="${1:?usage: $0 PYTHON HOME_DIR}"
HOME_DIR="${2:?usage: $0 PYTHON HOME_DIR}"
"$PYTHON" -m autorater_pipelines.testing.cloud_emulators prepare-bqemulator-home "$HOME_DIR"
