#!/usr/bin/env python3
"""A config and the configs it includes, as run_experiment reads them: "include" paths are relative
to the including file, and a composite such as configs/table3.json has no runs of its own.

  python3 scripts/device/config_tree.py --parts configs/table3.json ...   # the included experiments' ids

Used by cache_datasets.sh (the datasets of every config in the tree) and tables.sh (the parts'
results files it packs)."""
import json
import os
import sys


def walk(path, seen=None, included=False):
    """(config, included?) for `path` and, depth first, every config it includes, each once."""
    seen = set() if seen is None else seen
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    cfg = json.load(open(real))
    yield cfg, included
    for inc in cfg.get("include", []):
        yield from walk(os.path.join(os.path.dirname(real), inc), seen, True)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--parts":
        sys.exit(__doc__)
    seen = set()
    for c in sys.argv[2:]:
        for cfg, included in walk(c, seen):
            if included:
                print(cfg["experiment"])
