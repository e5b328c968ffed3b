#!/usr/bin/env python3
"""Do the papers reproduce? Every claim of experiments/paper_tables/*_claims.json decided from the
rendered tables of one results folder, written as <results>/REPRODUCTION.md.

  python3 scripts/reproduction.py [--results results/h200] [--claims experiments/paper_tables]
  python3 scripts/reproduction.py --check      # exit 1 when the committed page differs from a fresh render

The claims format and the rules are in docs/claims-format.md. Verdicts:
  reproduced              the level check holds
  in direction, not level the level check fails, the direction check holds
  contradicted            the level check fails and the direction check fails (or there is none)
  not run here            the level check found no number in our tables (what is missing is named)
  not testable here       the claim says why (hardware or quantities we do not have)
A claims file that names a table, row key or column the CSV does not have is an error (exit 2):
the claims and the tables disagree.
"""
import argparse
import csv
import glob
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPERS = ["gmt", "gp", "pitt", "subtree", "vfdt"]
VERDICTS = ["reproduced", "in direction, not level", "contradicted", "not run here", "not testable here"]
RULES = {"ratio_in", "greater", "less", "rises", "falls", "flat", "saturates"}


class ClaimsError(Exception):
    pass


def number(text):
    """A table cell as a number, or None ('—', 'n/a', 'skipped', empty, words)."""
    t = str(text).strip().rstrip("*†x%").strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    elif re.fullmatch(r"-?\d+,\d+", t):  # a decimal comma as some papers print it
        t = t.replace(",", ".")
    try:
        return float(t)
    except ValueError:
        return None


def fmt(v):
    if v is None:
        return "—"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.1:
        return f"{v:.2f}"
    return f"{v:.3g}"


class Tables:
    """The rendered CSVs of one results folder, read once."""

    def __init__(self, folder):
        self.folder = folder
        self.cache = {}

    def rows(self, name, title_prefix, where):
        path = os.path.join(self.folder, name + ".csv")
        if name not in self.cache:
            if not os.path.exists(path):
                raise ClaimsError(f"{where}: no table file {os.path.relpath(path, ROOT)}")
            with open(path, newline="") as f:
                self.cache[name] = list(csv.reader(f))
        out, header = [], None
        for rec in self.cache[name]:
            if rec and rec[0] == "table":  # each table's block starts with its header
                header = rec
                continue
            if header and rec and rec[0].startswith(title_prefix):
                out.append(dict(zip(header, rec)))
        if not out:
            titles = sorted({r[0] for r in self.cache[name] if r and r[0] != "table"})
            raise ClaimsError(f"{where}: {name}.csv has no table titled '{title_prefix}...' (it has: {'; '.join(titles)})")
        return out


def columns_of(op, where):
    """The CSV columns an operand reads. An operand is a column label, a number, {"ratio": [a, b]}
    (a / b, optionally "scale": k) or {"sum": [a, ...]} (the numbers among them added), a and b
    operands again."""
    if op is None or isinstance(op, (int, float)):
        return []
    if isinstance(op, str):
        return [op]
    if isinstance(op, dict) and "ratio" in op and set(op) <= {"ratio", "scale"} and isinstance(op["ratio"], list) \
            and len(op["ratio"]) == 2:
        return columns_of(op["ratio"][0], where) + columns_of(op["ratio"][1], where)
    if isinstance(op, dict) and set(op) == {"sum"} and isinstance(op["sum"], list) and op["sum"]:
        return [c for x in op["sum"] for c in columns_of(x, where)]
    raise ClaimsError(f"{where}: an operand is a column label, a number, {{\"ratio\": [a, b]}} or {{\"sum\": [a, ...]}}, "
                      f"not {json.dumps(op)}")


def operand(row, op):
    if op is None:
        return None
    if isinstance(op, (int, float)):
        return float(op)
    if isinstance(op, str):
        return number(row[op])
    if "sum" in op:  # a phase a path does not have ('n/a') adds nothing
        vals = [v for v in (operand(row, x) for x in op["sum"]) if v is not None]
        return sum(vals) if vals else None
    a, b = operand(row, op["ratio"][0]), operand(row, op["ratio"][1])
    return a / b * float(op.get("scale", 1.0)) if a is not None and b not in (None, 0.0) else None


def operand_text(op):
    if isinstance(op, (int, float)):
        return fmt(float(op))
    if isinstance(op, str):
        return op
    if "sum" in op:
        return "(" + " + ".join(operand_text(x) for x in op["sum"]) + ")"
    scale = f" x {op['scale']:g}" if "scale" in op else ""
    return f"({operand_text(op['ratio'][0])} / {operand_text(op['ratio'][1])}{scale})"


def select(tables, spec, operands, where):
    """(records, key column, header, rows asked for but absent) of the table a check or a value
    reads: its columns checked against the CSV, `where` applied, then `rows` (all, or in their order)."""
    recs = tables.rows(spec["csv"], spec["table"], where)
    header = list(recs[0].keys())
    key = header[1]
    for col in [c for op in operands for c in columns_of(op, where)] + list(spec.get("where", {})):
        if col not in header:
            raise ClaimsError(f"{where}: {spec['csv']}.csv '{spec['table']}' has no column '{col}'")
    # (a `where` value is one cell value, or a list of them: the row matches any)
    recs = [r for r in recs
            if all(r.get(k) in ([str(x) for x in v] if isinstance(v, list) else [str(v)]) for k, v in spec.get("where", {}).items())]
    if spec.get("rows", "all") == "all":
        return recs, key, header, []
    by = {}
    for r in recs:
        by.setdefault(r[key], r)
    return [by[v] for v in spec["rows"] if v in by], key, header, [v for v in spec["rows"] if v not in by]


def check(tables, c, where):
    """(status, lines): status 'holds' | 'fails' | 'none'; lines the numbers behind it."""
    for k in ("csv", "table", "ours", "rule"):
        if k not in c:
            raise ClaimsError(f"{where}: a check needs '{k}'")
    rule = c["rule"]
    if rule not in RULES:
        raise ClaimsError(f"{where}: unknown rule '{rule}' (known: {', '.join(sorted(RULES))})")
    chosen, key, _, missing = select(tables, c, [c["ours"], c.get("than")], where)
    pts = []  # (row label, ours, than)
    for r in chosen:
        ours = operand(r, c["ours"])
        than = operand(r, c.get("than"))
        if ours is None or (rule in ("ratio_in", "greater", "less") and than is None):
            missing.append(r[key])
            continue
        pts.append((r[key], ours, than))
    # the rendered table beside its CSV; a figure's CSV (plots/<fig>.csv) has no page of its own
    page = c["csv"] + (".md" if os.path.exists(os.path.join(tables.folder, c["csv"] + ".md")) else ".csv")
    src = f"[{c['csv']}]({page})"
    what = operand_text(c["ours"]) + (f" vs {operand_text(c['than'])}" if "than" in c else "")
    if not pts:
        return "none", [f"{src}: {what}: no number" + (f" ({', '.join(missing[:6])})" if missing else "")]
    frac = float(c.get("fraction", 1.0))
    tol = float(c.get("tolerance", 0.05))
    if rule in ("ratio_in", "greater", "less"):
        ok = []
        for label, o, t in pts:
            if rule == "ratio_in":
                lo, hi = c.get("band", [0.5, 2.0])
                ok.append(t != 0 and lo <= o / t <= hi)
            elif rule == "greater":
                ok.append(o > float(c.get("factor", 1.0)) * t)
            else:
                ok.append(o < float(c.get("factor", 1.0)) * t)
        n_ok = sum(ok)
        holds = n_ok >= frac * len(pts) - 1e-9
        rule_text = {"ratio_in": f"ratio in [{c.get('band', [0.5, 2.0])[0]}, {c.get('band', [0.5, 2.0])[1]}]",
                     "greater": f"> {c.get('factor', 1.0)}x", "less": f"< {c.get('factor', 1.0)}x"}[rule]
        shown = ", ".join(f"{lab} {fmt(o)} vs {fmt(t)}{'' if k else ' ✗'}" for (lab, o, t), k in list(zip(pts, ok))[:8])
        more = f", … ({len(pts) - 8} more)" if len(pts) > 8 else ""
        need = "" if frac >= 1 else f", {frac:.0%} needed"
        line = f"{src}: {what}, {rule_text}: {n_ok} of {len(pts)} rows{need} ({shown}{more})"
    else:
        vals = [o for _, o, _ in pts]
        steps_up = all(b >= a * (1 - tol) for a, b in zip(vals, vals[1:]))
        steps_down = all(b <= a * (1 + tol) for a, b in zip(vals, vals[1:]))
        if rule == "rises":
            holds = steps_up and vals[-1] > vals[0] * (1 + tol)
        elif rule == "falls":
            holds = steps_down and vals[-1] < vals[0] * (1 - tol)
        elif rule == "flat":
            holds = all(abs(v - vals[0]) <= tol * abs(vals[0]) for v in vals)
        else:  # saturates
            labels = [lab for lab, _, _ in pts]
            if str(c.get("after")) not in labels:
                raise ClaimsError(f"{where}: saturates needs 'after', a row among {labels}")
            i = labels.index(str(c["after"]))
            tail, head = vals[i:], vals[: i + 1]
            holds = all(abs(v - tail[0]) <= tol * abs(tail[0]) for v in tail) and len(head) > 1 and head[-1] > head[0] * (1 + tol)
        shown = ", ".join(f"{lab} {fmt(o)}" for lab, o, _ in pts[:10]) + (", …" if len(pts) > 10 else "")
        line = f"{src}: {what} {rule} (tolerance {tol:g}): {shown}"
    if missing:
        line += f"; no number for {', '.join(missing[:6])}" + (" …" if len(missing) > 6 else "")
    return ("holds" if holds else "fails"), [line]


CLAIM_KEYS = {"id", "where", "claim", "paper_numbers", "design", "level", "direction", "second_line", "explanation",
              "not_testable", "pending"}
CHECK_KEYS = {"csv", "table", "rows", "where", "ours", "than", "rule", "band", "factor", "tolerance", "after", "fraction",
              "label"}


VALUE_KEYS = {"csv", "table", "rows", "where", "ours", "show", "label", "above", "below"}
SHOWS = {"value", "range", "list", "values", "min", "max", "median", "count"}
ONE_NUMBER = {"value": lambda v: v[0], "min": min, "max": max, "median": statistics.median}


def percent_above(tables, values, spec, where, lenient=False):
    """{"percent_above": [a, b]}: by how many percent the explanation's value a is above its value b
    (negative: below), each a one-number value (show value, min, max or median), so a derived
    comparison stays true when the table is rerun."""
    names = spec.get("percent_above") if isinstance(spec, dict) else None
    if set(spec) != {"percent_above"} or not isinstance(names, list) or len(names) != 2:
        raise ClaimsError(f"{where}: percent_above is a list of two value names")
    nums = []
    for n in names:
        v = values.get(n)
        if not isinstance(v, dict) or "percent_above" in v or v.get("show", "value") not in ONE_NUMBER:
            raise ClaimsError(f"{where}: percent_above names values of one number (show value, min, max or median), not '{n}'")
        nums.append(value_text(tables, v, f"{where}.{n}", lenient, raw=True))
    a, b = nums
    if a is None or b is None or b == 0:
        return "(no number)"
    p = 100.0 * (a / b - 1.0)
    return f"{p:.1f}" if abs(p) < 10 else f"{p:.0f}"


def value_text(tables, spec, where, lenient=False, raw=False):
    """The text an explanation's {{name}} stands for: numbers read from a rendered table as a check
    reads them ("show": value (one row), range (lo-hi), list (row value, ...), values (value, ...), min,
    max, median, count ("k of n": the rows whose value is above "above" or below "below")), so the
    reason a claim differs stays true when its table is rerun (raw: the number of a one-number show).
    A value {"percent_above": [a, b]} compares two of these (percent_above)."""
    bad = sorted(set(spec) - VALUE_KEYS) if isinstance(spec, dict) else ["(not an object)"]
    if bad:
        raise ClaimsError(f"{where}: unknown key(s) {', '.join(bad)} (known: {', '.join(sorted(VALUE_KEYS))})")
    for k in ("csv", "table", "ours"):
        if k not in spec:
            raise ClaimsError(f"{where}: a value needs '{k}'")
    show = spec.get("show", "value")
    if show not in SHOWS:
        raise ClaimsError(f"{where}: show is one of {', '.join(sorted(SHOWS))}, not '{show}'")
    recs, key, header, absent = select(tables, spec, [spec["ours"]], where)
    if absent and lenient:
        return None if raw else "(no number)"
    if absent:
        raise ClaimsError(f"{where}: {spec['csv']}.csv '{spec['table']}' has no row {', '.join(absent)}")
    lab = spec.get("label", key)  # the column that names a row in a list
    if lab not in header:
        raise ClaimsError(f"{where}: {spec['csv']}.csv '{spec['table']}' has no column '{lab}'")
    pts = [(r[lab], operand(r, spec["ours"])) for r in recs]
    vals = [v for _, v in pts if v is not None]
    if show == "value" and len(pts) != 1:
        raise ClaimsError(f"{where}: show 'value' needs one row, the selection has {len(pts)}")
    if not vals:
        return None if raw else "(no number)"
    if show in ONE_NUMBER:
        return ONE_NUMBER[show](vals) if raw else fmt(ONE_NUMBER[show](vals))
    if show == "range":
        return f"{fmt(min(vals))}-{fmt(max(vals))}"
    if show == "count":
        if ("above" in spec) == ("below" in spec):
            raise ClaimsError(f"{where}: show 'count' needs one of 'above' or 'below' (a number)")
        n = sum(v > float(spec["above"]) for v in vals) if "above" in spec else sum(v < float(spec["below"]) for v in vals)
        return f"{n} of {len(vals)}"
    if show == "values":
        return ", ".join(fmt(v) for v in vals)
    return ", ".join(f"{name} {fmt(v)}" for name, v in pts if v is not None)


def explanation_text(tables, ex, where, lenient=False):
    """An explanation's text with each {{name}} replaced by its value from the tables; a name
    without a value, or a value the text does not use, is an error. lenient (a pending claim's: its
    tables wait for a rerun): a row the table lacks reads "(no number)"."""
    if not isinstance(ex, dict):
        return str(ex)
    values = ex.get("values", {})
    bad = sorted(set(ex) - {"text", "evidence", "values"})
    if bad:
        raise ClaimsError(f"{where}: unknown key(s) {', '.join(bad)} (known: evidence, text, values)")
    used = set(re.findall(r"\{\{(\w+)\}\}", ex["text"]))
    if used - set(values):
        raise ClaimsError(f"{where}: the text uses {', '.join(sorted(used - set(values)))} without a value")
    used |= {n for v in values.values() if isinstance(v, dict) and isinstance(v.get("percent_above"), list)
             for n in v["percent_above"] if isinstance(n, str)}
    if set(values) - used:
        raise ClaimsError(f"{where}: values {', '.join(sorted(set(values) - used))} not used by the text")
    def text(name):
        spec, at = values[name], f"{where}.values.{name}"
        if isinstance(spec, dict) and "percent_above" in spec:
            return percent_above(tables, values, spec, at, lenient)
        return value_text(tables, spec, at, lenient)
    return re.sub(r"\{\{(\w+)\}\}", lambda m: text(m.group(1)), ex["text"])


def check_all(tables, checks, where):
    """A check, or a list of checks that must all hold (e.g. one per algorithm of a table)."""
    if isinstance(checks, dict):
        return check(tables, checks, where)
    if not isinstance(checks, list) or not checks:
        raise ClaimsError(f"{where}: a check or a non-empty list of checks")
    results = [check(tables, c, f"{where}[{i}]") for i, c in enumerate(checks)]
    lines = [l for _, ls in results for l in ls]
    statuses = [s for s, _ in results]
    if "fails" in statuses:
        return "fails", lines
    return ("holds" if "holds" in statuses else "none"), lines


def verdict(tables, claim, where):
    unknown = sorted(set(claim) - CLAIM_KEYS)
    if unknown:
        raise ClaimsError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(CLAIM_KEYS))})")
    for k in ("level", "direction", "second_line"):
        for c in (claim[k] if isinstance(claim.get(k), list) else [claim[k]]) if k in claim else []:
            bad = sorted(set(c) - CHECK_KEYS) if isinstance(c, dict) else ["(not an object)"]
            if bad:
                raise ClaimsError(f"{where}.{k}: unknown key(s) {', '.join(bad)} (known: {', '.join(sorted(CHECK_KEYS))})")
    if "not_testable" in claim:
        return "not testable here", [claim["not_testable"]], []
    if "level" not in claim:
        raise ClaimsError(f"{where}: a claim needs 'level' (and optionally 'direction') or 'not_testable'")
    second = []
    if "pending" in claim:  # the test names columns or tables a run still has to make
        if not isinstance(claim["pending"], str) or not claim["pending"]:
            raise ClaimsError(f"{where}: 'pending' says what has to run first")
    if "second_line" in claim:
        s2, l2 = check_all(tables, claim["second_line"], where + ".second_line")
        sl = claim["second_line"]
        label = (sl[0] if isinstance(sl, list) else sl).get("label", "second line")
        second = [f"{label}: {'holds' if s2 == 'holds' else 'does not hold' if s2 == 'fails' else 'not run'}; {l2[0]}"]
    if "pending" in claim:
        return "not run here", ["pending: " + claim["pending"]], second
    lvl, lines = check_all(tables, claim["level"], where + ".level")
    if lvl == "holds":
        return "reproduced", lines, second
    if lvl == "none":
        return "not run here", lines, second
    if "direction" in claim:
        d, dl = check_all(tables, claim["direction"], where + ".direction")
        lines = lines + ["direction: " + dl[0]]
        if d == "holds":
            return "in direction, not level", lines, second
    return "contradicted", lines, second


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(results, claims_dir):
    tables = Tables(results)
    files = {p: os.path.join(claims_dir, f"{p}_claims.json") for p in PAPERS}
    docs = {}
    for p, path in files.items():
        if os.path.exists(path):
            with open(path) as f:
                try:
                    docs[p] = json.load(f)
                except json.JSONDecodeError as e:
                    raise ClaimsError(f"{os.path.relpath(path, ROOT)}: not valid JSON: {e}")
    extra = sorted(set(glob.glob(os.path.join(claims_dir, "*_claims.json"))) - set(files.values()))
    if extra:
        raise ClaimsError(f"{', '.join(extra)}: not one of the papers {PAPERS}")
    out, counts, seen = [], {}, set()
    body = []
    for p, doc in docs.items():
        body.append(f"## {doc.get('citation', p)}\n")
        body.append(f"Claims: experiments/paper_tables/{p}_claims.json; paper: ../shared/{doc.get('source', '')}.\n")
        body.append("| claim | the paper | like for like (ours) | verdict |")
        body.append("|---|---|---|---|")
        notes = []
        for i, cl in enumerate(doc.get("claims", [])):
            where = f"{p}_claims.json claims[{i}]"
            cid = cl.get("id")
            if not cid:
                raise ClaimsError(f"{where}: a claim needs an 'id'")
            if cid in seen:
                raise ClaimsError(f"{where}: duplicate id '{cid}'")
            seen.add(cid)
            v, lines, second = verdict(tables, cl, f"{where} ({cid})")
            counts.setdefault(p, {}).setdefault(v, 0)
            counts[p][v] += 1
            ours = "<br>".join(cell(x) for x in ([cl.get("design", "")] if cl.get("design") else []) + lines + second)
            body.append(f"| **{cell(cid)}** ({cell(cl.get('where', ''))}): {cell(cl.get('claim', ''))} | "
                        f"{cell(cl.get('paper_numbers', ''))} | {ours} | **{v}** |")
            ex = cl.get("explanation")
            if ex:
                ev = f" (evidence: {ex['evidence']})" if isinstance(ex, dict) and ex.get("evidence") else ""
                text = explanation_text(tables, ex, f"{where} ({cid}).explanation", lenient="pending" in cl)
                notes.append(f"- **{cid}**: {text}{ev}")
            elif v == "contradicted":
                notes.append(f"- **{cid}**: contradicted; no measured reason recorded yet.")
        body.append("")
        if notes:
            body.append("Why they differ:\n")
            body += notes
            body.append("")
    out.append("# Do the papers reproduce?\n")
    out.append("Generated by `python3 scripts/reproduction.py` from experiments/paper_tables/*_claims.json and the "
               f"rendered tables of this folder ({os.path.relpath(results, ROOT)}); do not edit. Rules and verdicts: "
               "docs/claims-format.md. Each claim is tested like for like (the paper's design against the paper's kind "
               "of baseline); our fast path is the second line where there is one.\n")
    out.append("| paper | " + " | ".join(VERDICTS) + " | claims |")
    out.append("|---|" + "---:|" * (len(VERDICTS) + 1))
    tot = {v: 0 for v in VERDICTS}
    for p in docs:
        row = [counts.get(p, {}).get(v, 0) for v in VERDICTS]
        for v, n in zip(VERDICTS, row):
            tot[v] += n
        out.append(f"| {p} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    out.append("| all | " + " | ".join(str(tot[v]) for v in VERDICTS) + f" | {sum(tot.values())} |")
    missing = [p for p in PAPERS if p not in docs]
    if missing:
        out.append(f"\nNo claims file yet: {', '.join(missing)}.")
    out.append("")
    return "\n".join(out + body) + "\n", tot


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "results", "h200"))
    ap.add_argument("--claims", default=os.path.join(ROOT, "experiments", "paper_tables"))
    ap.add_argument("--check", action="store_true", help="compare with the committed page; exit 1 when it differs")
    a = ap.parse_args()
    try:
        page, tot = render(a.results, a.claims)
    except ClaimsError as e:
        print(f"reproduction: error: {e}", file=sys.stderr)
        return 2
    path = os.path.join(a.results, "REPRODUCTION.md")
    if a.check:
        old = ""
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        if old != page:
            print(f"reproduction: {os.path.relpath(path, ROOT)} is stale: run python3 scripts/reproduction.py "
                  f"--results {os.path.relpath(a.results, ROOT)} and commit it", file=sys.stderr)
            return 1
        print(f"reproduction: {os.path.relpath(path, ROOT)} is current ({sum(tot.values())} claims)")
        return 0
    with open(path, "w") as f:
        f.write(page)
    print(f"reproduction: wrote {os.path.relpath(path, ROOT)}: " + ", ".join(f"{n} {v}" for v, n in tot.items() if n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
