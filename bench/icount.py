#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The instruction-count gate (issue 18): instructions per trace byte of each codec stage on
each corpus, counted by callgrind, against the committed budgets.

  icount.py [--valgrind V] [--budgets FILE] [--jobs N] [--write] ETE_ICOUNT

ETE_ICOUNT is bench/ete-icount (icount.cpp): `list` names the stage/corpus pairs, and
`STAGE CORPUS` runs one inside icount_region(), the only function callgrind counts
(--toggle-collect), so loading the corpus is left out. Fails when a count is more than 5% over
its budget, when a pair has no budget, or when a budgeted pair cannot run with
TRACECODEC_REQUIRE_CONFORMANCE=1 (without it: exit 77, skipped, after checking the others).
--write writes the counts measured as the new budgets (rounded up to 0.01).

Counts are of the code GCC 12 (Debian 12) makes at -O3; another compiler gives other counts.
Counts below 90% of the budget are reported, so that budgets follow improvements.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

TOLERANCE = 1.05


def read_budgets(path):
    budgets = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            stage, corpus, per_byte = line.split()
            budgets[(stage, corpus)] = float(per_byte)
    return budgets


def count(valgrind, driver, stage, corpus, tmp):
    out = os.path.join(tmp, "callgrind.%s.%s.out" % (stage, corpus))
    # --instr-atstart=no: the driver switches instrumentation on only around icount_region()
    # (CALLGRIND_START_INSTRUMENTATION), so building the corpus runs several times faster.
    cmd = [valgrind, "--tool=callgrind", "--instr-atstart=no", "--toggle-collect=icount_region",
           "--callgrind-out-file=" + out,
           driver, stage, corpus]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, "%s exited %d: %s" % (" ".join(cmd[-3:]), r.returncode, r.stderr.strip()[-500:])
    fields = r.stdout.split()
    if len(fields) != 4 or fields[0] != stage or fields[1] != corpus:
        return None, "unexpected driver output %r" % r.stdout
    nbytes = int(fields[2])
    total = None
    with open(out) as f:
        for line in f:
            m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
            if m:
                total = int(m.group(1))
    os.unlink(out)
    if not total:
        return None, "no instruction count in callgrind's output"
    return total / nbytes, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--budgets", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "icount_budgets.txt"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("driver")
    a = ap.parse_args()

    listed = subprocess.run([a.driver, "list"], capture_output=True, text=True, check=True)
    pairs = [tuple(l.split()) for l in listed.stdout.splitlines() if l.strip()]
    budgets = {} if a.write else read_budgets(a.budgets)

    results = {}
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {p: pool.submit(count, a.valgrind, a.driver, p[0], p[1], tmp) for p in pairs}
        for p in pairs:
            results[p] = futures[p].result()

    failures, notes = [], []
    print("%-16s %-25s %12s %12s %8s" % ("stage", "corpus", "instr/byte", "budget", "ratio"))
    for p in pairs:
        per_byte, err = results[p]
        if err:
            failures.append("%s %s: %s" % (p[0], p[1], err))
            continue
        budget = budgets.get(p)
        ratio = per_byte / budget if budget else float("nan")
        print("%-16s %-25s %12.2f %12s %8s" % (p[0], p[1], per_byte, "%.2f" % budget if budget else "-",
                                              "%.3f" % ratio if budget else "-"))
        if a.write:
            continue
        if budget is None:
            failures.append("%s %s: no budget in %s" % (p[0], p[1], a.budgets))
        elif per_byte > budget * TOLERANCE:
            failures.append("%s %s: %.2f instructions per byte, %.1f%% over the budget %.2f" %
                            (p[0], p[1], per_byte, 100 * (ratio - 1), budget))
        elif per_byte < budget * 0.9:
            notes.append("%s %s: %.2f instructions per byte, %.1f%% under the budget %.2f (lower it: --write)" %
                         (p[0], p[1], per_byte, 100 * (1 - ratio), budget))

    if a.write:
        if failures:
            print("\n".join(failures), file=sys.stderr)
            return 1
        with open(a.budgets, "w") as f:
            f.write("# Instructions per trace byte (callgrind, bench/icount.py --write), each stage on each corpus;\n"
                    "# the icount-gate test fails at more than 5% over. GCC 12 (Debian 12), -O3.\n")
            for p in pairs:
                f.write("%s %s %.2f\n" % (p[0], p[1], int(results[p][0] * 100 + 0.999) / 100))
        print("wrote %d budgets to %s" % (len(pairs), a.budgets))
        return 0

    missing = [p for p in budgets if p not in results]
    for n in notes:
        print("note: " + n)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    if missing:
        names = ", ".join("%s %s" % p for p in missing)
        if os.environ.get("TRACECODEC_REQUIRE_CONFORMANCE", "0") not in ("", "0"):
            print("FAIL: budgeted pairs that did not run (corpus missing): " + names)
            return 1
        print("%d pairs within budget; skipped: no corpus for %s" % (len(results), names))
        return 77
    print("%d pairs within 5%% of their budgets" % len(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
