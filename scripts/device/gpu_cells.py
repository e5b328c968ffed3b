#!/usr/bin/env python3
"""How many ok runs of a results file used more GPUs than this machine has.

  python3 scripts/device/gpu_cells.py RESULTS.json GPUS   -> prints the count

tables.sh asks before a fresh run deletes a committed table: a table measured on a machine with
more GPUs (its 2-GPU cells) rerun whole on a one-GPU machine would come back with those cells
skipped, and the committed measurements would be lost."""
import json
import sys


def gpus_of(run):
    p = run.get("params") or {}
    n = p.get("devices")
    ids = p.get("device_ids")
    return max(n if isinstance(n, int) else 0, len(ids) if isinstance(ids, list) else 0)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path, have = sys.argv[1], int(sys.argv[2])
    try:
        with open(path) as f:
            runs = json.load(f).get("runs", [])
    except (OSError, ValueError) as e:
        print(f"gpu_cells: {path}: {e}", file=sys.stderr)
        return 1
    print(sum(1 for r in runs if r.get("status") == "ok" and gpus_of(r) > have))
    return 0


if __name__ == "__main__":
    sys.exit(main())
