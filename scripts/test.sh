#!/usr/bin/env bash
# Installs missing deps, builds, runs every test (ctest) and prints ctest's summary.
# GPU tests skip visibly when no device is present. Extra arguments go to ctest
# (e.g. ./scripts/test.sh -L unit, ./scripts/test.sh -LE slow).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/install-deps.sh"
if [ -z "${GPUDM_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  export GPUDM_DATA_DIR="$(cd "$ROOT/../shared/datasets" && pwd)"
fi
"$ROOT/scripts/build.sh"
BUILD="${GPUDM_BUILD_DIR:-$ROOT/build}"
cd "$BUILD"
ctest --output-on-failure -j "${GPUDM_TEST_JOBS:-$(nproc)}" "$@"
