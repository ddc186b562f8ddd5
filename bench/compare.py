#!/usr/bin/env python3
"""Runs ete-bench and prints tracecodec against OpenCSD, side by side, as a markdown table.

usage: bench/compare.py [--best] [path/to/ete-bench] [extra benchmark args...]
Ratios are of bytes/s measured in the same run (the machines are shared and noisy: compare
ratios, not absolute times). By default each figure is the median of the repetitions' aggregate
(with --benchmark_report_aggregates_only=true) or a single run's figure. --best takes the best
repetition of each instead, for runs such as
  --best --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true
where the repetitions of every benchmark are spread over the run in random order, so that a
stretch of load from the machine's other users slows both sides of a ratio alike, and the
best of each is the one least slowed. BM_decode_paired and BM_flow_paired (a pass of
tracecodec and one of OpenCSD in turn, the ratio the median of the pairs') are printed as tables
of their own, the median of their repetitions' counters in either mode. A run of every
benchmark includes them: 15 decode pairs per corpus (a few seconds each) and 5 flow pairs (OpenCSD
takes 1-3 s per flow pass), per repetition.
"""
import json
import math
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    best = "--best" in args
    args = [a for a in args if a != "--best"]
    exe = args[0] if args else "build/bench/ete-bench"
    extra = args[1:] or (["--benchmark_min_time=0.3s", "--benchmark_repetitions=7",
                          "--benchmark_enable_random_interleaving=true"] if best else
                         ["--benchmark_min_time=0.5", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true"])
    out = subprocess.run([exe, "--benchmark_format=json"] + extra, check=True,
                         capture_output=True, text=True).stdout
    rows, flow, par, paired = {}, {}, {}, {}
    for b in json.loads(out)["benchmarks"]:
        name = b.get("run_name", b["name"]).replace("/manual_time", "")
        if best:
            if b.get("run_type") == "aggregate":
                continue
        elif b.get("aggregate_name") not in (None, "median"):
            continue
        if name.startswith(("BM_decode_paired/", "BM_flow_paired/")):  # BM_<what>_paired/<corpus>/iterations:N
            what, corpus = name.split("/")[:2]
            if not b.get("error_occurred"):  # a run that stopped on an error has no counters
                paired.setdefault(what, {}).setdefault(corpus, []).append(b)
            continue
        rate = b.get("bytes_per_second", 0.0) / 1e6
        if name.startswith("BM_ete_parallel"):  # BM_ete_parallel_<form>/<corpus>/threads:N/real_time
            family, corpus, threads = name.split("/")[:3]
            key = family + "/" + threads.split(":")[1]
            cell = par.setdefault(corpus, {})
            cell[key] = max(rate, cell.get(key, 0.0)) if best else rate
            continue
        family, corpus = name.split("/", 1)
        cell = rows.setdefault(corpus, {})
        if best and family in cell and rate <= cell[family]:
            continue
        cell[family] = rate
        if family.endswith(("_flow", "_flow_without_memo")):  # instructions and ranges per second, in millions
            # (with --best, of the best repetition: reached only when its rate is the best yet)
            flow.setdefault(corpus, {})[family] = (b.get("bytes_per_second", 0.0) / 1e6,
                                                   b.get("instructions", 0.0) / 1e6,
                                                   b.get("ranges", 0.0) / 1e6)
    if best and not rows and not par and not paired:
        sys.exit("compare.py --best: no repetitions in the output (drop --benchmark_report_aggregates_only "
                 "and --benchmark_display_aggregates_only)")
    packet_rows = {c: r for c, r in rows.items() if "BM_ete_decode" in r or "BM_opencsd_decode" in r}
    if packet_rows:
        print("| corpus | ete decode MB/s | OpenCSD MB/s | decode ratio | elements (atom runs) MB/s | ratio "
              "| elements (one per atom) MB/s | ratio | encode MB/s (out) | compress MB/s (out) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for corpus, r in packet_rows.items():
        o = r.get("BM_opencsd_decode")
        d, e, a = r.get("BM_ete_decode"), r.get("BM_ete_elements"), r.get("BM_ete_atom_elements")
        ratio = lambda x: f"{x / o:.1f}x" if (o and x) else "-"
        fmt = lambda x: f"{x:.0f}" if x else "-"
        print(f"| {corpus} | {fmt(d)} | {fmt(o)} | {ratio(d)} | {fmt(e)} | {ratio(e)} | {fmt(a)} | "
              f"{ratio(a)} | {fmt(r.get('BM_ete_encode'))} | {fmt(r.get('BM_ete_compress'))} |")
    # The paired passes: both sides' passes in turn (BM_decode_paired, BM_flow_paired), the
    # median of the repetitions' counters, each on its own (the lowest pair: the median of the
    # repetitions' lowest pairs).
    median = lambda v: (sorted(v)[(len(v) - 1) // 2] + sorted(v)[len(v) // 2]) / 2
    paired_ratio = {}
    for what, stage in (("BM_decode_paired", "decode"), ("BM_flow_paired", "flow")):
        if what not in paired:
            continue
        print()
        print(f"| corpus | ete {stage} MB/s | OpenCSD MB/s | ratio (median pair) | lowest pair "
              "| highest pair |")
        print("|---|---|---|---|---|---|")
        for corpus, bs in paired[what].items():
            m = {k: median([b[k] for b in bs])
                 for k in ("ete_MBps", "opencsd_MBps", "ratio", "ratio_low", "ratio_high")}
            if stage == "decode":
                paired_ratio[corpus] = m["ratio"]
            print(f"| {corpus} | {m['ete_MBps']:.1f} | {m['opencsd_MBps']:.1f} | {m['ratio']:.1f}x | "
                  f"{m['ratio_low']:.1f}x | {m['ratio_high']:.1f}x |")
    # Issue 17: ETMv4 packet decode at least the ratio to OpenCSD that ETE has (OpenCSD's
    # ETMv4I packet processor on both): each protocol's lowest, median and geometric mean, each
    # corpus's ratio from its paired passes where they ran, else from BM_ete_decode against
    # BM_opencsd_decode.
    separate = {c: r["BM_ete_decode"] / r["BM_opencsd_decode"] for c, r in packet_rows.items()
                if r.get("BM_ete_decode") and r.get("BM_opencsd_decode")}
    decode_ratio = {**separate, **paired_ratio}
    etmv4 = {c: x for c, x in decode_ratio.items() if c.startswith("etmv4-")}
    ete = {c: x for c, x in decode_ratio.items() if not c.startswith("etmv4-")}
    if etmv4 and ete:
        def summary(d):
            c, x = min(d.items(), key=lambda t: t[1])
            g = math.exp(sum(math.log(v) for v in d.values()) / len(d))
            return x, c, median(list(d.values())), g
        (x4, c4, m4, g4), (xe, ce, me, ge) = summary(etmv4), summary(ete)
        side = lambda a, b: "at or above" if a >= b else "below"
        print()
        print(f"decode ratios ({len(paired_ratio)} of {len(decode_ratio)} corpora from paired passes), "
              f"ETMv4 ({len(etmv4)} corpora): lowest {x4:.1f}x ({c4}), median {m4:.1f}x, geometric mean {g4:.1f}x; "
              f"ETE ({len(ete)}): lowest {xe:.1f}x ({ce}), median {me:.1f}x, geometric mean {ge:.1f}x; "
              f"ETMv4's lowest {side(x4, xe)} ETE's lowest, median {side(m4, me)} ETE's median, "
              f"geometric mean {side(g4, ge)} ETE's")
    # The encoder's own figures. BM_ete_encode times the encoder on freshly built packets;
    # streamed from memory, its input (72-byte packets) caps it near the packet-read floor.
    if packet_rows:
        print()
        print("| corpus | encode MB/s (out) | encode, call per packet | encode streamed from memory "
              "| packet-read floor MB/s |")
        print("|---|---|---|---|---|")
    for corpus, r in packet_rows.items():
        fmt = lambda x: f"{x:.0f}" if x else "-"
        print(f"| {corpus} | {fmt(r.get('BM_ete_encode'))} | {fmt(r.get('BM_ete_encode_each'))} | "
              f"{fmt(r.get('BM_ete_encode_streamed'))} | {fmt(r.get('BM_packet_read'))} |")
    # The consumer out of reach of the inliner (another translation unit): the share of the
    # inlined-consumer rate kept (issue 18 asks at least 80%, with GCC and with Clang).
    opaque_rows = {c: r for c, r in packet_rows.items() if "BM_ete_decode_opaque" in r}
    if opaque_rows:
        print()
        print("| corpus | decode MB/s, consumer inlined | consumer in another TU | kept "
              "| elements MB/s, inlined | in another TU | kept |")
        print("|---|---|---|---|---|---|---|")
        for corpus, r in opaque_rows.items():
            fmt = lambda x: f"{x:.0f}" if x else "-"
            kept = lambda a, b: f"{100 * b / a:.0f}%" if (a and b) else "-"
            d, do = r.get("BM_ete_decode"), r.get("BM_ete_decode_opaque")
            e, eo = r.get("BM_ete_elements"), r.get("BM_ete_elements_opaque")
            print(f"| {corpus} | {fmt(d)} | {fmt(do)} | {kept(d, do)} | {fmt(e)} | {fmt(eo)} | {kept(e, eo)} |")
    # Program flow (BM_*_flow over the flow corpora: snapshots with memory images). The ratio
    # is of bytes/s. BM_ete_flow_without_memo: the same without the memo of atom elements
    # (flow_options::memo), and what the memo gains.
    if flow:
        print()
        print("| corpus | OpenCSD flow MB/s | M instr/s | M ranges/s | ete flow MB/s | M instr/s "
              "| M ranges/s | ratio | without memo MB/s | memo gain |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for corpus, r in flow.items():
            o, e = r.get("BM_opencsd_flow"), r.get("BM_ete_flow")
            w = r.get("BM_ete_flow_without_memo")
            cells = lambda t: (f"{t[0]:.1f} | {t[1]:.1f} | {t[2]:.2f}" if t else "- | - | -")
            ratio = f"{e[0] / o[0]:.1f}x" if (o and e and o[0]) else "-"
            gain = f"{e[0] / w[0]:.2f}x" if (e and w and w[0]) else "-"
            print(f"| {corpus} | {cells(o)} | {cells(e)} | {ratio} | {f'{w[0]:.1f}' if w else '-'} | {gain} |")

    # The CoreSight deformatter on the formatted captures: against OpenCSD's deformatter with no
    # decoder attached (frames unpacked, data dropped) and with a decoder on every trace ID
    # giving its bytes to the same consumer as BM_coresight_deformat (the same work).
    dfm = {c: r for c, r in rows.items() if "BM_coresight_deformat" in r or "BM_opencsd_deformat" in r}
    if dfm:
        print()
        print("| capture | deformat MB/s | consumer called | per run | OpenCSD, data dropped | ratio "
              "| OpenCSD, data delivered | ratio |")
        print("|---|---|---|---|---|---|---|---|")
        for corpus, r in dfm.items():
            fmt = lambda x: f"{x:.0f}" if x else "-"
            d = r.get("BM_coresight_deformat")
            o, od = r.get("BM_opencsd_deformat"), r.get("BM_opencsd_deformat_delivered")
            ratio = lambda x: f"{d / x:.1f}x" if (d and x) else "-"
            print(f"| {corpus} | {fmt(d)} | {fmt(r.get('BM_coresight_deformat_called'))} | "
                  f"{fmt(r.get('BM_coresight_deformat_runs'))} | {fmt(o)} | {ratio(o)} | {fmt(od)} | {ratio(od)} |")

    # Parallel decode of one buffer (the corpus repeated to 64 MiB; wall-clock): serially
    # (1 thread), one consumer in stream order, and a consumer per segment (2 threads).
    if par:
        print()
        print("| corpus | packets serial MB/s | ordered, 2 threads | scaling | by segment | scaling "
              "| elements serial MB/s | ordered, 2 threads | scaling | by segment | scaling "
              "| flow serial MB/s | by segment | scaling |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for corpus, r in par.items():
            fmt = lambda x: f"{x:.0f}" if x else "-"
            scale = lambda a, b: f"{b / a:.2f}x" if (a and b) else "-"
            cells = []
            for what in ("decode", "elements"):
                one = r.get(f"BM_ete_parallel_{what}/1")
                two = r.get(f"BM_ete_parallel_{what}/2")
                seg = r.get(f"BM_ete_parallel_{what}_by_segment/2")
                cells += [fmt(one), fmt(two), scale(one, two), fmt(seg), scale(one, seg)]
            one, seg = r.get("BM_ete_parallel_flow/1"), r.get("BM_ete_parallel_flow_by_segment/2")
            cells += [fmt(one), fmt(seg), scale(one, seg)]
            print(f"| {corpus} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
