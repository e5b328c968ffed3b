#!/usr/bin/env bash
# Copies the real data files that the given configs use into datasets/cache/ (ignored by git), for
# the device tool's `carry`: ../shared does not travel to the GPU machine, and the catalog searches
# datasets/cache too. Only the file each dataset loads by default (its catalog entry's first
# variant) is copied, plus STATS.tsv, so the working tree stays under the tool's 64 MiB.
#   scripts/device/cache_datasets.sh configs/gmt_table3.json [configs/....json ...]
# Source: $GPUDM_DATA_DIR, else ../shared/datasets beside the checkout. Generated and surrogate
# datasets need no file and are skipped; a config's "include"s are followed. Prints what it copied
# and the cache's size.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SRC="${GPUDM_DATA_DIR:-$ROOT/../shared/datasets}"
DEST="$ROOT/datasets/cache"
[ $# -ge 1 ] || { echo "usage: $0 CONFIG.json [CONFIG.json ...]" >&2; exit 2; }
[ -d "$SRC" ] || { echo "cache_datasets: no data folder at $SRC (set GPUDM_DATA_DIR)" >&2; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
mkdir -p "$DEST"
"$PY" - "$ROOT/datasets/catalog.json" "$SRC" "$DEST" "$@" <<'EOF'
import json, os, shutil, sys
catalog_path, src, dest, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
catalog = {d["name"]: d for d in json.load(open(catalog_path))["datasets"]}
sys.path.insert(0, os.path.join(os.path.dirname(catalog_path), "..", "scripts", "device"))
from config_tree import walk  # (a composite such as configs/table3.json has no datasets itself)

wanted, seen = [], set()
for c in configs:
    for cfg, _ in walk(c, seen):
        for d in cfg.get("datasets", []):
            name = d if isinstance(d, str) else d.get("name", "")
            if name and name not in wanted:
                wanted.append(name)
copied = 0
for name in wanted:
    entry = catalog.get(name)
    if entry is None:
        sys.exit(f"cache_datasets: {name}: not in datasets/catalog.json")
    if entry.get("source") != "file" or not entry.get("files"):
        print(f"  {name}: generated or surrogate, no file")
        continue
    rel = entry["files"][0]["path"]
    s, d = os.path.join(src, rel), os.path.join(dest, rel)
    if not os.path.exists(s):
        sys.exit(f"cache_datasets: {name}: {s} is missing")
    os.makedirs(os.path.dirname(d), exist_ok=True)
    shutil.copyfile(s, d)
    copied += 1
    print(f"  {name}: {rel} ({os.path.getsize(d) / 1e6:.1f} MB)")
stats = os.path.join(src, "STATS.tsv")
if os.path.exists(stats):
    shutil.copyfile(stats, os.path.join(dest, "STATS.tsv"))
print(f"cache_datasets: {copied} files")
EOF
echo "cache_datasets: $(du -sh "$DEST" | cut -f1) in $DEST (carry \"datasets/cache\" in the device call)"
