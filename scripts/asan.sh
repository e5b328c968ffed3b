#!/usr/bin/env bash
# The CPU code under AddressSanitizer + UndefinedBehaviorSanitizer: configures the "asan" preset
# (CMakePresets.json: RelWithDebInfo, GPUDM_SANITIZE=ON, CUDA off) in build-asan, builds its CPU
# test binaries (cpu_tests) and runs the unit and equivalence tests (ctest labels; -LE gpu).
# Any sanitizer report fails the test that triggered it. Extra arguments go to ctest.
# Environment: GPUDM_ASAN_BUILD_DIR (default build-asan), GPUDM_JOBS, GPUDM_TEST_JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
# -O0 -g1: line numbers in the reports; -O0 compiles 2.5x faster than -O1 under the sanitizers
# (experiments/config.cpp: 14 s against 35 s) and the tests still take about a minute (CI builds
# this tree besides the Release one, on 2 cores, without ccache). Only the test binaries with CPU
# tests are built (cpu_tests: no GPU-only test binaries, no tools).
"$ROOT/scripts/configure-once.sh" "$BUILD" --preset asan -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1"
cmake --build "$BUILD" -j "${GPUDM_JOBS:-$(nproc)}" --target cpu_tests
# halt_on_error: the first report fails the test; detect_leaks stays on (LeakSanitizer).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "$BUILD"
ctest --output-on-failure -j "${GPUDM_TEST_JOBS:-$(nproc)}" -L 'unit|equivalence' -LE gpu "$@"
