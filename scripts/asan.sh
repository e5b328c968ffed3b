#!/usr/bin/env bash
# The CPU code under AddressSanitizer + UndefinedBehaviorSanitizer: configures the "asan" preset
# (CMakePresets.json: RelWithDebInfo, GPUDM_SANITIZE=ON, CUDA off) in build-asan, builds it and
# runs the unit and equivalence tests (ctest labels; gpu tests are not built without CUDA).
# Any sanitizer report fails the test that triggered it. Extra arguments go to ctest.
# Environment: GPUDM_ASAN_BUILD_DIR (default build-asan), GPUDM_JOBS, GPUDM_TEST_JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
# -O1 -g1: line numbers in the reports at half the compile time of the preset's -O2 -g (CI
# builds this tree twice, on 2 cores).
"$ROOT/scripts/configure-once.sh" "$BUILD" --preset asan -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$BUILD" -j "${GPUDM_JOBS:-$(nproc)}"
# halt_on_error: the first report fails the test; detect_leaks stays on (LeakSanitizer).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "$BUILD"
ctest --output-on-failure -j "${GPUDM_TEST_JOBS:-$(nproc)}" -L 'unit|equivalence' -LE gpu "$@"
