#!/usr/bin/env bash
# The Python package on the GPU machine: built by the same CMake (GPUDM_BUILD_PYTHON=ON) against the
# image's python3 (its numpy, scikit-learn, pandas, pytest and nanobind: the image's versions, not
# our pins), then the pytest suite (its CUDA tests run here: CPU == CUDA, a GPU model pickled and
# predicting on the host), the CUDA vfdt equivalence cases (continue_with in chunks), and the Python
# path's overhead on the GPU (GMT on Armchair 100K, the 100-tree forest over 1M rows).
# Before the device call, here: scripts/device/stage_deps.sh; carry [".deps.tar.xz"]; set GPUDM_GIT_SHA.
#
#   OUT=$OUT scripts/device/python.sh [STAGES]     STAGES comma-separated (default "build,tests,overhead")
#     build     configure + build gpudm_python, run_experiment, gmt_study_split, test_vfdt_equivalence
#               into BUILD (default build-python; kept while the machine is warm)           ~3-5 min
#     tests     pytest tests/python (GPU tests included) and test_vfdt_equivalence '*/cuda'  ~1 min
#     overhead  scripts/python_overhead.py --device cuda, --family gmt (10,000 iterations) and
#               --family vfdt (1M rows), 3 pairs each, into $OUT/results/<tag>/           ~2-3 min
#     wheel     a CUDA wheel as a user builds one (pip wheel --no-build-isolation, pyproject.toml's
#               scikit-build-core, sm_90, the carried .deps), installed into a folder of its own and
#               the pytest suite run against it (not against BUILD); its size and the pip log kept
#                                                                                  ~5-8 min (a call)
# Logs and results are packed into $OUT/python_results.tar.gz.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD="${BUILD:-$ROOT/build-python}"
. "$ROOT/scripts/device/common.sh"  # GPUDM_DATA_DIR, .deps, call_timeout
STAGES=",${1:-${PYTHON_STAGES:-build,tests,overhead}},"
OUT_DIR="${OUT_DIR:-$ROOT/logs/python}"
mkdir -p "$OUT_DIR"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
has() { case "$STAGES" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
status=0
PY="${PYTHON:-$(command -v python3)}"
TAG="$(results_tag)"
pack() {
  [ -n "${OUT:-}" ] || return 0
  mkdir -p "$OUT"
  tar -czf "$OUT/python_results.tar.gz" -C "$OUT_DIR/.." "$(basename "$OUT_DIR")" 2>/dev/null
  stamp "packed $OUT/python_results.tar.gz"
}
trap pack EXIT
{ echo "python: $PY"; "$PY" -c 'import sys, numpy, sklearn, nanobind; print(sys.version); print("numpy", numpy.__version__, "sklearn", sklearn.__version__, "nanobind", nanobind.__version__)'; } \
  > "$OUT_DIR/python.txt" 2>&1
cat "$OUT_DIR/python.txt"

if has build; then
  stamp "== build (python $PY)"
  if ! BUILD="$BUILD" OUT="$(mktemp -d)" GPUDM_CMAKE_ARGS="-DGPUDM_BUILD_PYTHON=ON -DPython_EXECUTABLE=$PY" \
       GPUDM_BUILD_TARGETS="gpudm_python run_experiment gmt_study_split test_vfdt_equivalence" \
       timeout "$(call_timeout 560)" bash "$ROOT/scripts/device/run_all.sh" build >"$OUT_DIR/build.log" 2>&1; then
    tail -30 "$OUT_DIR/build.log"
    grep -h "Python package" "$BUILD"/CMakeFiles/CMakeOutput.log "$OUT_DIR/build.log" 2>/dev/null | tail -2
    exit 1
  fi
  stamp "build done: $(ls "$BUILD"/python/gpudm/_gpudm*.so 2>/dev/null)"
  # What the module links and exports (its init function only, python/gpudm.map: with the C++
  # library's template instances exported, the image's pytest crashed in export_text).
  so="$(ls "$BUILD"/python/gpudm/_gpudm*.so 2>/dev/null | head -1)"
  { echo "link:"; ninja -C "$BUILD" -t commands "python/gpudm/$(basename "$so")" 2>/dev/null | tail -1
    echo "symbols the module exports (PyInit__gpudm only): $(nm -D --defined-only "$so" 2>/dev/null | awk '{print $NF}' | tr '\n' ' ')"
    echo "ldd:"; ldd "$so"
    echo "environment:"; env | grep -i -E 'flags|auditwheel|cmake|^cc=|^cxx=' ; } >"$OUT_DIR/module_link.txt" 2>&1
  grep -E "module exports|libstdc" "$OUT_DIR/module_link.txt"
fi
[ -d "$ROOT/.deps/usr" ] && export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"

if has tests; then
  stamp "== pytest tests/python"
  if ! (cd /tmp && timeout "$(call_timeout 300)" "$PY" -X faulthandler -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/python") \
    >"$OUT_DIR/pytest.log" 2>&1; then
    status=1; echo "!! pytest failed"
    # where the module's C++ runtime references bind in such a process (a crash there in export_text
    # came from the module's exported template instances)
    (cd /tmp && timeout "$(call_timeout 120)" "$PY" "$ROOT/scripts/device/module_bindings.py" "$OUT_DIR/module_bindings.txt") 2>&1 | tail -14
  fi
  grep -E "passed|failed|SKIPPED|Error" "$OUT_DIR/pytest.log" | tail -12
  stamp "== test_vfdt_equivalence */cuda"
  timeout "$(call_timeout 200)" "$BUILD/tests/vfdt/test_vfdt_equivalence" --gtest_filter='*/cuda' \
    >"$OUT_DIR/vfdt_cuda.log" 2>&1 || { status=1; echo "!! test_vfdt_equivalence */cuda failed"; }
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure" "$OUT_DIR/vfdt_cuda.log" | head -20
fi

if has overhead; then
  mkdir -p "$OUT_DIR/results/$TAG"
  for fam in gmt vfdt; do
    lim="$(call_timeout 200)"
    [ "$lim" = 0 ] && { status=1; echo "!! overhead $fam: the call has no time left"; continue; }
    stamp "== python_overhead --family $fam --device cuda"
    timeout "$lim" "$PY" "$ROOT/scripts/python_overhead.py" --family "$fam" --device cuda --build "$BUILD" --pairs 3 \
      --out "$OUT_DIR/results/$TAG/python_overhead_${fam}_cuda" >"$OUT_DIR/overhead_$fam.log" 2>&1 ||
      { status=1; echo "!! overhead $fam failed"; }
    tail -2 "$OUT_DIR/overhead_$fam.log"
  done
fi
if has wheel; then
  stamp "== wheel (CUDA, sm_90)"
  D="$ROOT/.deps/usr"
  [ -d "$D" ] && export CMAKE_PREFIX_PATH="$D:$D/lib/x86_64-linux-gnu/cmake:$D/share/cmake:$D/share/eigen3/cmake${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  WHEEL_DIR="$OUT_DIR/wheel"
  rm -rf "$WHEEL_DIR" /tmp/gpudm-wheel-site
  if timeout "$(call_timeout 480)" "$PY" -m pip wheel --no-build-isolation --no-deps -w "$WHEEL_DIR" "$ROOT"        -Cbuild-dir=/tmp/gpudm-wheel-build -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90        ${D:+-Ccmake.define.ZLIB_ROOT=$D -Ccmake.define.CMAKE_BUILD_RPATH=$D/lib/x86_64-linux-gnu} >"$OUT_DIR/wheel.log" 2>&1; then
    ls -la "$WHEEL_DIR" | tee -a "$OUT_DIR/wheel.log"
    "$PY" -m pip install -q --no-deps --target /tmp/gpudm-wheel-site "$WHEEL_DIR"/*.whl >>"$OUT_DIR/wheel.log" 2>&1
    (cd /tmp && PYTHONPATH=/tmp/gpudm-wheel-site timeout "$(call_timeout 240)" "$PY" -X faulthandler -m pytest -q -p no:cacheprovider -rs        "$ROOT/tests/python") >"$OUT_DIR/pytest_wheel.log" 2>&1 || { status=1; echo "!! pytest on the wheel failed"; }
    grep -E "passed|failed|SKIPPED" "$OUT_DIR/pytest_wheel.log" | tail -6
    rm -f "$WHEEL_DIR"/*.whl  # (its size is in wheel.log; the wheel itself stays on the machine)
  else
    status=1
    echo "!! pip wheel failed"; tail -20 "$OUT_DIR/wheel.log"
  fi
fi
stamp "python.sh: status $status"
exit $status
