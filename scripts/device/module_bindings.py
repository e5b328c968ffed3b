"""Where the Python module's C++ runtime references bind, in the process the tests run in.

A crash in the first numeric ostream insert of GMTRegressor.export_text was seen on the GPU image
only. Two C++ runtimes in one process (a library loaded before ours that exports its own copy of
libstdc++'s locale or ostream code) would do that: glibc binds each of the module's undefined
references to the first object in the lookup scope that defines the symbol. This reruns the failing
call in a child under LD_DEBUG=bindings, after importing what the test session imports, and lists
every libstdc++ symbol of _gpudm that bound to an object other than libstdc++.so, and each loaded
object that defines std::ostream's _M_insert.

    python3 scripts/device/module_bindings.py OUT.txt      (PYTHONPATH naming the built package)
"""
import os
import re
import subprocess
import sys

CHILD = r"""
import numpy as np, sklearn, pandas, pytest  # what a pytest session of tests/python has loaded
import gpudm
rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, (200, 3)); y = np.where(X[:, 0] > 0, X[:, 1], -X[:, 2])
m = gpudm.GMTRegressor(iterations=50, population=8, random_state=1).fit(X, y)
print(m.export_text().splitlines()[0])
print("MAPS", *sorted({l.split()[-1] for l in open("/proc/self/maps") if ".so" in l}), sep="\nMAP ")
"""


def main(out_path):
    log = out_path + ".ld_debug"
    env = dict(os.environ, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=log)
    p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=300)
    lines = [f"child exit code: {p.returncode}", "child stdout (first line):", *[l for l in p.stdout.splitlines() if not l.startswith("MAP")][:1],
             "child stderr (last lines):", *p.stderr.splitlines()[-15:]]
    maps = [l[4:] for l in p.stdout.splitlines() if l.startswith("MAP ")]
    # ld.so writes LD_DEBUG_OUTPUT.<pid>
    logs = [os.path.join(os.path.dirname(log) or ".", f) for f in os.listdir(os.path.dirname(log) or ".")
            if f.startswith(os.path.basename(log))]
    pat = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `([^']+)'")
    odd, own, total = [], 0, 0
    for f in logs:
        with open(f, errors="replace") as fh:
            for line in fh:
                m = pat.search(line)
                if not m or "_gpudm" not in m.group(1):
                    continue
                total += 1
                sym = m.group(3)
                if not sym.startswith(("_ZNS", "_ZNKS", "_ZSt", "_ZTVS", "_ZTIS", "_ZTSS")) or "libstdc++" in m.group(2):
                    continue
                if "_gpudm" in m.group(2):
                    own += 1  # a template instance the module defines and exports (header visibility)
                else:
                    odd.append(f"{sym} -> {m.group(2)}")
        os.remove(f)
    lines += [f"bindings of _gpudm's references: {total}",
              f"std symbols of _gpudm bound to the module's own exported instances: {own}",
              f"std symbols of _gpudm bound to a third object (neither libstdc++.so nor _gpudm): {len(odd)}",
              *odd[:60]]
    lines.append("loaded objects defining std::ostream::_M_insert<double>:")
    for so in maps:
        try:
            nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        if "_ZNSo9_M_insertIdEERSoT_" in nm:
            lines.append(f"  {so}")
    lines.append(f"loaded objects: {len(maps)}")
    lines += [f"  {so}" for so in maps if re.search(r"stdc\+\+|gcc_s|torch|arrow|_gpudm", so)]
    with open(out_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines[:8] + lines[-12:]))


if __name__ == "__main__":
    main(sys.argv[1])
