#!/usr/bin/env python3
"""The layout of every JSON file under results/: indented (2 spaces) to three levels (the document,
its lists such as "runs", each run's fields), each deeper value compact on one line. The same layout
as run_experiment's writer (experiments/results.cpp, dump_results): readable diffs, a third smaller
than full indentation. Number text may differ where the two libraries print a double differently
(nlohmann writes [1e15, 1e16) as 1e+15, Python as 1000000000000000.0): --check compares the layout
with numbers parsed, so either text passes.

  scripts/results_json.py --rewrite PATH...   rewrite the JSON files (folders: every *.json below)
                                              in this layout; a file that does not parse is an error
  scripts/results_json.py --check PATH...     exit 1 naming each file not in this layout

From Python: `import results_json; results_json.dump(doc, path)` or `results_json.dumps(doc)`.
"""
import argparse
import json
import os
import re
import sys

INDENT_DEPTH = 3


def _compact(v):
    # NaN / Infinity are no JSON (the C++ reader rejects them): an error, as in the C++ writer's null
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _write(v, depth, out):
    if depth >= INDENT_DEPTH or not isinstance(v, (dict, list)) or not v:
        out.append(_compact(v))
        return
    pad = " " * (2 * (depth + 1))
    items = v.items() if isinstance(v, dict) else ((None, x) for x in v)
    out.append("{\n" if isinstance(v, dict) else "[\n")
    first = True
    for k, x in items:
        if not first:
            out.append(",\n")
        first = False
        out.append(pad)
        if k is not None:
            out.append(_compact(str(k)) + ": ")  # JSON keys are strings (json.dumps turns 1 into "1" too)
        _write(x, depth + 1, out)
    out.append("\n" + " " * (2 * depth) + ("}" if isinstance(v, dict) else "]"))


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _shape(text):
    """The layout with every number replaced by one token (outside strings: numbers never start a
    quoted token here, since _compact escapes nothing into digits)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':  # a string, copied through (escapes included)
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "-" or c.isdigit():
            m = _NUMBER.match(text, i)
            out.append("0")
            i = m.end() if m and m.end() > i else i + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def dumps(doc):
    out = []
    _write(doc, 0, out)
    return "".join(out) + "\n"


def dump(doc, path):
    """Write doc to path in the layout, through a temporary file (a reader never sees half a file)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(dumps(doc))
    os.replace(tmp, path)


def _files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for n in sorted(names):
                    if n.endswith(".json"):
                        yield os.path.join(root, n)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--rewrite", action="store_true")
    g.add_argument("--check", action="store_true")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    bad = 0
    n = 0
    for f in _files(a.paths):
        n += 1
        try:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            doc = json.loads(text)
        except (OSError, ValueError) as e:
            print(f"results_json: {f}: {e}", file=sys.stderr)
            bad += 1
            continue
        try:
            want = dumps(doc)
        except ValueError as e:
            print(f"results_json: {f}: {e}", file=sys.stderr)
            bad += 1
            continue
        # the same document in the layout: parsed back equal (floats keep their value)
        if json.loads(want) != doc:
            print(f"results_json: {f}: does not round-trip", file=sys.stderr)
            bad += 1
            continue
        if text != want and _shape(text) != _shape(want):
            if a.rewrite:
                dump(doc, f)
            else:
                print(f"results_json: {f}: not in the results layout (scripts/results_json.py --rewrite {f})", file=sys.stderr)
                bad += 1
    print(f"results_json: {n} files, {bad} {'bad' if a.rewrite else 'not in the layout'}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
