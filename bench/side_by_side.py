#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Before/after throughput of two ete-bench binaries measured side by side.

usage: bench/side_by_side.py OLD/ete-bench NEW/ete-bench [ROUNDS] [FILTER]

Runs the two binaries alternately (the order flips every round, so drift on a shared machine
falls on both), ROUNDS times, and prints the median MB/s of each benchmark and new/old.
FILTER defaults to the decode, elements, encode and compress benchmarks. The conformance
corpora are read from $TRACECODEC_CONFORMANCE_DIR (default ../shared/conformance/ete).
"""
import json
import os
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    filt = sys.argv[4] if len(sys.argv) > 4 else "BM_ete_(decode|elements|encode|compress)/"
    env = dict(os.environ)
    env.setdefault("TRACECODEC_CONFORMANCE_DIR", "../shared/conformance/ete")
    res = {old: {}, new: {}}
    for r in range(rounds):
        for exe in (old, new) if r % 2 == 0 else (new, old):
            out = subprocess.run([exe, "--benchmark_filter=" + filt, "--benchmark_min_time=0.4",
                                  "--benchmark_format=json"], env=env, capture_output=True,
                                 text=True, check=True).stdout
            for b in json.loads(out)["benchmarks"]:
                res[exe].setdefault(b["name"], []).append(b["bytes_per_second"] / 1e6)
    print("| benchmark | old MB/s | new MB/s | new/old |")
    print("|---|---|---|---|")
    for name, runs in res[old].items():
        o = statistics.median(runs)
        n = statistics.median(res[new].get(name, [0.0]))
        print(f"| {name} | {o:.1f} | {n:.1f} | {n / o:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
