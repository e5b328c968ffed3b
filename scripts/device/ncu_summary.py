#!/usr/bin/env python3
"""One Nsight Compute launch, summarised: the `ncu` text report of a one-evaluation run_experiment
run (sections SpeedOfLight, LaunchStats, Occupancy, WarpStateStats, InstructionStats and the stall
metrics of ncu_stall_metrics in common.sh) beside that run's results JSON (metrics.gpops, the work
of the one evaluation): duration, throughputs, occupancy, warp instructions per GPop, GPops/s under
ncu and the top warp stall reasons (cycles per issued instruction).

  ncu_summary.py NCU_TXT RESULTS_JSON KERNEL_REGEX [--label TEXT]

Used by rules_profile.sh (the rule kernels) and subtree.sh's profile mode (the four tree
interpreters)."""
import argparse
import json
import re

LABELS = ("Duration", "Compute (SM) Throughput", "Memory Throughput", "DRAM Throughput", "Executed Ipc Active",
          "Issue Slots Busy", "Achieved Occupancy", "Theoretical Occupancy", "Registers Per Thread",
          "Dynamic Shared Memory Per Block", "Grid Size", "Block Size", "Executed Instructions",
          "Warp Cycles Per Issued Instruction")
TIME = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "second": 1.0}
INST = {"inst": 1, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9}


def value(txt, label):
    m = re.search(r"^\s*" + re.escape(label) + r"\s+(\S+)\s+([\d.,]+)", txt, re.M)
    return (float(m.group(2).replace(",", "")), m.group(1)) if m else (None, "")


def summary(txt, gpops, kernel_regex, label=""):
    out = []
    kern = re.search(kernel_regex + r"(<[^>]*>)?", txt)
    out.append(f"  {label + ': ' if label else ''}{kern.group(0) if kern else kernel_regex + ' (not found in the report)'}")
    for lab in LABELS:
        v, unit = value(txt, lab)
        if v is not None:
            out.append(f"    {lab:36} {v:>14,.2f} {unit}")
    inst, iunit = value(txt, "Executed Instructions")
    dur, dunit = value(txt, "Duration")
    if inst and gpops:
        out.append(f"    warp instructions per GPop           {inst * INST.get(iunit, 1) / gpops:14.4f}   (GPops of the evaluation {gpops:.4g})")
    if dur and gpops:
        out.append(f"    GPops/s in ncu                       {gpops / (dur * TIME.get(dunit, 1e-3)):14.3e}")
    stalls = re.findall(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio\s+\S*\s+([\d.,]+)", txt)
    if stalls:
        top = sorted(((float(v.replace(",", "")), k) for k, v in stalls), reverse=True)[:6]
        out.append("    stalls (cycles per issued instruction): " + ", ".join(f"{k} {v:.2f}" for v, k in top))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ncu_txt")
    ap.add_argument("results_json")
    ap.add_argument("kernel_regex")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    gpops = None
    try:  # one evaluation: generations 0 / repetitions 1, warmup 0
        gpops = (json.load(open(a.results_json))["runs"][0].get("metrics") or {}).get("gpops")
    except (OSError, ValueError, KeyError, IndexError):
        pass
    print(summary(open(a.ncu_txt, errors="replace").read(), gpops, a.kernel_regex, a.label))


if __name__ == "__main__":
    main()
