# Sourced by the scripts/device/*.sh area scripts (after ROOT is set): what every one of them
# resolves the same way.
#   BUILD            the CUDA build folder (default $ROOT/build-device; relative to ROOT if relative)
#   GPUDM_DATA_DIR   when unset: shared/datasets beside or above the tree, where present (the GPU
#                    machine's copy has none: carry datasets/cache, which the catalog searches too)
BUILD="${BUILD:-$ROOT/build-device}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
if [ -z "${GPUDM_DATA_DIR:-}" ]; then
  for d in "$ROOT/shared/datasets" "$ROOT/../shared/datasets"; do
    [ -d "$d" ] && export GPUDM_DATA_DIR="$(cd "$d" && pwd)" && break
  done
fi
# .deps.tar.xz (stage_deps.sh's packed copy, what a device call carries) is unpacked once.
if [ ! -d "$ROOT/.deps/usr" ] && [ -f "$ROOT/.deps.tar.xz" ]; then
  tar -xJf "$ROOT/.deps.tar.xz" -C "$ROOT"
fi
#   DEVICE_CALL_LIMIT  seconds the device tool gives one call (default 590): it kills the call at
#                    its limit, exit traps included, so an area script bounds every step by what
#                    is left of it (call_timeout) and packs its results before the end.
# Open MPI staged with stage_deps.sh --mpi (carried in .deps): relocated through OPAL_PREFIX (its
# libraries, helper programs and plugins under the carried prefix), mpicxx / mpirun on PATH for
# FindMPI and the runs across ranks.
if [ -e "$ROOT/.deps/usr/lib/x86_64-linux-gnu/openmpi" ] && [ -z "${OPAL_PREFIX:-}" ]; then
  export OPAL_PREFIX="$ROOT/.deps/usr" PATH="$ROOT/.deps/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$ROOT/.deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
DEVICE_CALL_LIMIT="${DEVICE_CALL_LIMIT:-590}"
CALL_T0="${CALL_T0:-$(date +%s)}"
export CALL_T0
# call_timeout WANT: WANT seconds, or less when the call has less left (a 30 s margin for the
# packing); 0 when under 30 s remain (the caller skips the step).
call_timeout() {
  local left=$(( DEVICE_CALL_LIMIT - ($(date +%s) - CALL_T0) - 30 ))
  if [ "$left" -lt 30 ]; then echo 0; elif [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}
# host_check: one core's speed (a fixed Python loop's seconds) and the CPU time the hypervisor stole
# so far, for the log beside each table: leases of this machine kind have come up with every CPU
# cell 1.2-1.8x slower (builds too), and such a run measures the host, not the code.
host_check() {
  python3 -c 'import time
t = time.perf_counter(); s = 0
for i in range(3_000_000): s += i * i
print(f"host check: one-core loop {time.perf_counter() - t:.3f} s", end="")'
  awk '/^cpu /{ t = 0; for (i = 2; i <= NF; i++) t += $i; printf ", steal %.2f%% of CPU time since boot\n", 100 * $9 / t }' /proc/stat
}
# gpu_count: the GPUs this machine shows (0 without nvidia-smi).
gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true; }
# results_tag: the results/<tag> folder run_experiment picks on this machine (experiments/results.cpp
# machine_tag: the first GPU's name less vendor words, its first token with a digit; "cpu" without
# a GPU).
results_tag() {
  local name
  name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  [ -n "$name" ] || { echo cpu; return; }
  python3 - "$name" <<'PYEOF'
import re, sys
toks = [w for w in re.split(r"\s+", sys.argv[1].lower()) if w and w not in
        ("nvidia", "tesla", "geforce", "quadro", "amd", "radeon")]
tag = ""
for t in toks:
    if any(c.isdigit() for c in t):
        tag += re.sub(r"[^a-z0-9]", "", t.split("-")[0]); break
    tag += re.sub(r"[^a-z0-9]", "", t)
print(tag or "gpu")
PYEOF
}
# ncu_stall_metrics: the warp stall reasons as explicit ncu metrics (cycles per issued
# instruction), a comma-separated --metrics list; ncu_summary.py prints the top ones.
ncu_stall_metrics() {
  local r out=""
  for r in long_scoreboard short_scoreboard mio_throttle lg_throttle wait barrier not_selected math_pipe_throttle \
           branch_resolving dispatch_stall no_instruction membar drain sleeping tex_throttle misc selected; do
    out="${out:+$out,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  echo "$out"
}
