"""The vfdt tables' streams as the peers (River, MOA) see them.

One list of streams and one export for every peer of the vfdt family: build/tools/vfdt_export
writes a catalog stream encoded exactly as our learners see it (integer codes per attribute:
binary, nominal, quantile-binned numeric; label last) to CSV, so a peer learns from the same
values, in the same order, with the same seed as our runs.
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results_json  # noqa: E402  scripts/: the layout of every JSON file under results/

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_EXPORT_TOOL = os.path.join(ROOT, "build", "tools", "vfdt_export")

# (catalog name, options): the datasets of configs/vfdt_table1.json / vfdt_table2.json
# (Tables 3 and 4 time the first three).
STREAMS = [
    ("covertype", {"binary": True}),
    ("rec", {"binary": True}),
    ("rt_vfml", {}),
    ("rt_moa", {}),
    ("kddcup", {}),
    ("poker", {}),
    ("shuttle", {}),
    ("connect4", {}),
]


def export(tool, name, options, path):
    """Writes stream `name` (catalog options `options`) to `path` as CSV: a0..a{d-1},class."""
    subprocess.run([tool, name, json.dumps(options), path], check=True)


def scan_codes(path):
    """One pass over an exported CSV: (attribute names, rows, the largest code of each attribute,
    the largest label, the count of each label)."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        names = header[:-1]
        max_code = [0] * len(names)
        label_counts = {}
        rows = 0
        for row in r:
            rows += 1
            for i in range(len(names)):
                v = int(row[i])
                if v > max_code[i]:
                    max_code[i] = v
            y = int(row[-1])
            label_counts[y] = label_counts.get(y, 0) + 1
    max_label = max(label_counts) if label_counts else 0
    return names, rows, max_code, max_label, label_counts


def write_results(out, doc, header, rows):
    """The peer's results: `doc` as JSON at `out` (written whole, then renamed: a reader never sees
    half a file) and `rows` under `header` as the CSV beside it."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp_out = out + ".tmp"
    with open(tmp_out, "w") as f:
        f.write(results_json.dumps(doc))
    os.replace(tmp_out, out)
    with open(os.path.splitext(out)[0] + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
