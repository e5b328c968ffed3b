#!/usr/bin/env python3
"""Reads a GPUDM_PROFILE_OUT file (algorithms/core/sample_profiler.hpp) and prints where the
samples are: flat (the innermost frame: the function the CPU was in) and inclusive (a function
anywhere on the stack, counted once per sample). Addresses become functions with addr2line
(binutils), per mapped file; run it on the machine that ran the profile (the binary must match).

    scripts/profile_report.py PROFILE [--top N] [--under FUNCTION_SUBSTRING] [--lines FUNCTION_SUBSTRING]

--under keeps only the samples whose stack contains a function matching the substring (e.g.
"GmtEA::run" for the EA's host work) and reports shares of those.
--lines adds, for the samples in a function matching the substring (or in code inlined into it),
their counts by that function's source line and the innermost inlined line (addr2line -f -i on the
interrupted address; needs line tables, e.g. -g1 or RelWithDebInfo).
"""
import collections
import subprocess
import sys


def parse(path):
    maps, samples = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("map "):
                parts = line.split()
                lo, hi = (int(x, 16) for x in parts[1].split("-"))
                off = int(parts[3], 16)
                name = parts[6] if len(parts) > 6 else ""
                maps.append((lo, hi, off, name))
            elif line.startswith("s"):
                samples.append([int(x, 16) for x in line.split()[1:]])
    return maps, samples


def locate(maps, a):
    """(mapped file, offset in it) of address a, or None outside the mapped files."""
    for lo, hi, off, name in maps:
        if lo <= a < hi and name.startswith("/"):
            return name, a - lo + off
    return None


def symbolize(maps, addrs):
    by_file = collections.defaultdict(list)
    where = {}
    for a in addrs:
        at = locate(maps, a - 1)  # the return address points after the call: look up a - 1
        if at:
            by_file[at[0]].append((a, at[1]))
        else:
            where[a] = "?"
    for name, items in by_file.items():
        offs = ["%x" % o for _, o in items]
        try:
            out = subprocess.run(["addr2line", "-f", "-C", "-e", name] + offs, capture_output=True, text=True, check=False).stdout.split("\n")
        except FileNotFoundError:
            out = []
        for k, (a, _) in enumerate(items):
            fn = out[2 * k] if 2 * k < len(out) else "??"
            if fn in ("??", ""):
                fn = "?? (" + name.rsplit("/", 1)[-1] + ")"
            where[a] = fn
    return where


def chains_of(maps, addrs):
    """Per address (an interrupted PC: looked up as it is, not as a return address): its inline
    chain, innermost first, as (function, file:line) pairs (addr2line -a -f -i -C)."""
    out = {}
    by_file = collections.defaultdict(list)
    for a in addrs:
        at = locate(maps, a)
        if at:
            by_file[at[0]].append((a, at[1]))
    for name, items in by_file.items():
        try:  # one call per file; -a starts each address's chain with the address
            text = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", name] + ["%x" % o for _, o in items], capture_output=True,
                                  text=True, check=False).stdout
        except FileNotFoundError:
            text = ""
        chains, cur = [], None
        for ln in text.split("\n"):
            if ln.startswith("0x"):
                cur = []
                chains.append(cur)
            elif ln.strip() and cur is not None:
                cur.append(ln.strip())
        for k, (a, _) in enumerate(items):
            flat = chains[k] if k < len(chains) else []
            # (function, file:line) pairs; the line loses its directory and its "(discriminator N)"
            out[a] = [(flat[i], flat[i + 1].rsplit("/", 1)[-1].split(" (")[0]) for i in range(0, len(flat) - 1, 2)]
    return out


def short(fn, width=110):
    return fn if len(fn) <= width else fn[: width - 3] + "..."


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    top = 40
    under = None
    if "--top" in args:
        top = int(args[args.index("--top") + 1])
    if "--under" in args:
        under = args[args.index("--under") + 1]
    lines = args[args.index("--lines") + 1] if "--lines" in args else None
    maps, samples = parse(args[0])
    addrs = {a for s in samples for a in s}
    where = symbolize(maps, addrs)
    stacks = [[where.get(a, "?") for a in s] for s in samples]
    # the profiler's own frames: the handler and backtrace, then the signal trampoline (libc's
    # __restore_rt, which addr2line may name after its neighbour __sigaction): cut after it
    clean, inner = [], []  # each sample's stack after the profiler's frames, and its innermost address
    for st, raw in zip(stacks, samples):
        cut = 0
        for k, fn in enumerate(st[:6]):
            if "restore_rt" in fn or "sigaction" in fn:
                cut = k + 1
                break
        clean.append(st[cut:])
        inner.append(raw[cut] if cut < len(raw) else None)
    if under:
        keep = [any(under in fn for fn in st) for st in clean]
        clean = [st for st, k in zip(clean, keep) if k]
        inner = [a for a, k in zip(inner, keep) if k]
    n = len(clean)
    print(f"{n} samples" + (f" with '{under}' on the stack" if under else "") + f" (of {len(samples)})")
    if not n:
        return 0
    flat = collections.Counter(st[0] if st else "?" for st in clean)
    incl = collections.Counter()
    for st in clean:
        for fn in set(st):
            incl[fn] += 1
    print("\nflat (innermost function)")
    for fn, c in flat.most_common(top):
        print(f"{100.0 * c / n:6.2f}%  {c:7d}  {short(fn)}")
    print("\ninclusive (on the stack)")
    for fn, c in incl.most_common(top):
        print(f"{100.0 * c / n:6.2f}%  {c:7d}  {short(fn)}")
    if lines:
        # the samples whose innermost address's inline chain has a function matching `lines` (code
        # inlined into it counts), by that function's line and the innermost line
        chains = chains_of(maps, {a for a in inner if a is not None})
        by_line = collections.Counter()
        for a in inner:
            chain = chains.get(a, []) if a is not None else []
            for k, (fn, ln) in enumerate(chain):
                if lines in fn:
                    by_line[(ln, chain[0][1] if k > 0 else ln)] += 1
                    break
        hit = sum(by_line.values())
        print(f"\nlines of '{lines}' ({hit} samples in it or in code inlined into it): its line  <-  the innermost (inlined) line")
        for (ln, innermost), c in by_line.most_common(top):
            print(f"{100.0 * c / max(1, hit):6.2f}%  {c:7d}  {ln}" + (f"  <-  {innermost}" if innermost != ln else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
