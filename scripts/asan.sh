#!/usr/bin/env bash
# The CPU code under AddressSanitizer + UndefinedBehaviorSanitizer: configures the "asan" preset
# (CMakePresets.json: RelWithDebInfo, GPUDM_SANITIZE=ON, CUDA off; clang) in build-asan, builds its CPU
# test binaries (cpu_tests) and runs the unit and equivalence tests (ctest labels; -LE gpu).
# Any sanitizer report fails the test that triggered it. Extra arguments go to ctest.
# Environment: GPUDM_ASAN_BUILD_DIR (default build-asan), GPUDM_JOBS, GPUDM_TEST_JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
# One clang tree for these tests and the libFuzzer targets (GPUDM_FUZZ=ON: coverage
# instrumentation besides the sanitizers, which the tests do not notice): CI compiles the CPU code
# once under the sanitizers instead of twice, and `GPUDM_FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh`
# adds only the fuzz targets' own files. clang at -O0 also compiles these files in two thirds of
# gcc's time (tests/gmt/test_eval.cpp: 27 s against 40 s). -O0 -g1: line numbers in the reports;
# -O0 compiles 2.5x faster than -O1 under the sanitizers and the tests still take a few minutes.
# Only the test binaries with CPU tests are built (cpu_tests: no GPU-only test binaries, no tools).
if ! command -v clang++ >/dev/null; then
  echo "asan.sh: clang++ not found (scripts/install-deps.sh installs clang)" >&2
  exit 1
fi
CC=clang CXX=clang++ "$ROOT/scripts/configure-once.sh" "$BUILD" --preset asan -DGPUDM_FUZZ=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1"
cmake --build "$BUILD" -j "${GPUDM_JOBS:-$(nproc)}" --target cpu_tests
# halt_on_error: the first report fails the test; detect_leaks stays on (LeakSanitizer).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "$BUILD"
# Generated data only: the tests over the shared real datasets read gigabytes, which at -O0 under
# the sanitizers took 10 of CI's minutes (Pittsburgh on every shared set 189 s, the catalog report
# 148 s, KDDcup's load 108 s); they run in the Release suite, and the loaders they drive are fuzzed.
SHARED_DATA_TESTS='SharedData|SharedDatasets|SharedClassificationDatasets|RealFiles'
ctest --output-on-failure -j "${GPUDM_TEST_JOBS:-$(nproc)}" -L 'unit|equivalence' -LE gpu -E "$SHARED_DATA_TESTS" "$@"
