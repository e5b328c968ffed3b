#!/usr/bin/env bash
# The CPU code under AddressSanitizer + UndefinedBehaviorSanitizer: configures the "asan" preset
# (CMakePresets.json: RelWithDebInfo, GPUDM_SANITIZE=ON, CUDA off) in build-asan, builds its CPU
# test binaries (cpu_tests) and runs the unit and equivalence tests (ctest labels; -LE gpu).
# Any sanitizer report fails the test that triggered it. Extra arguments go to ctest.
# Environment: GPUDM_ASAN_BUILD_DIR (default build-asan), GPUDM_JOBS, GPUDM_TEST_JOBS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GPUDM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
# gcc, -O0 -g1: line numbers in the reports; -O0 compiles 2.5x faster than -O1 under the
# sanitizers. Not clang with the fuzz targets in one tree: libFuzzer's coverage instrumentation
# (fuzzer-no-link, with trace-cmp) made the equivalence tests 4-5x slower at -O0 (GmtEa's
# two-leaf test 146 s against 31 s with gcc; the VFDT equivalence tests minutes each), more than
# the second build it saved. Only the test binaries with CPU tests are built (cpu_tests).
"$ROOT/scripts/configure-once.sh" "$BUILD" --preset asan -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1"
cmake --build "$BUILD" -j "${GPUDM_JOBS:-$(nproc)}" --target cpu_tests
# halt_on_error: the first report fails the test; detect_leaks stays on (LeakSanitizer).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "$BUILD"
# Generated data only: the tests over the shared real datasets read gigabytes at -O0 under the
# sanitizers (the catalog report alone 57 s); they run in the Release suite, and the loaders they
# drive are fuzzed.
SHARED_DATA_TESTS='SharedData|SharedDatasets|SharedClassificationDatasets|RealFiles'
ctest --output-on-failure -j "${GPUDM_TEST_JOBS:-$(nproc)}" -L 'unit|equivalence' -LE gpu -E "$SHARED_DATA_TESTS" "$@"
