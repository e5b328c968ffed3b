#!/usr/bin/env bash
# `mpiexec -n N run_experiment CONFIG` against one process: every ok run's checksum (and
# the forest's tree checksum) identical, the provenance naming the ranks, one results file written
# (rank 0's). Usage: runner_ranks.sh RUN_EXPERIMENT MPIEXEC NP CONFIG...  (ctest, label mpi)
set -euo pipefail
RUN="$1" MPIEXEC="$2" NP="$3"
shift 3
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for cfg in "$@"; do
  name="$(basename "$cfg" .json)"
  "$RUN" "$cfg" --smoke -b sequential -b openmp -o "$OUT/one" -q >/dev/null
  "$MPIEXEC" -n "$NP" "$RUN" "$cfg" --smoke -b sequential -b openmp -o "$OUT/ranks" -q >/dev/null
  "$PY" - "$OUT/one/$name-smoke.json" "$OUT/ranks/$name-smoke.json" "$NP" <<'PYEOF'
import json, sys
one, ranks, np = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
prov = ranks["provenance"].get("ranks", {})
assert prov.get("count") == np and len(prov.get("hosts", [])) == np, f"provenance ranks: {prov}"
assert prov.get("split"), "provenance: what the family splits"
key = lambda r: (r["backend"], json.dumps(r["dataset"].get("name")), json.dumps(r["params"], sort_keys=True))
base = {key(r): r for r in one["runs"]}
matched = 0
for r in ranks["runs"]:
    b = base.get(key(r))
    assert b is not None, f"a run only in the MPI file: {key(r)}"
    assert r["status"] == b["status"], f"{key(r)[:2]}: {r['status']} ({r.get('reason')}) vs {b['status']}"
    if r["status"] != "ok":
        continue
    assert r["checksum"] == b["checksum"], f"{key(r)[:2]}: checksum {r['checksum']} vs {b['checksum']}"
    tc = b["metrics"].get("tree_checksum")
    assert tc is None or r["metrics"].get("tree_checksum") == tc, f"{key(r)[:2]}: trees differ"
    matched += 1
assert matched > 0, "no ok run to compare"
print(f"{sys.argv[2]}: {matched} runs identical to one process at {np} ranks")
PYEOF
done
