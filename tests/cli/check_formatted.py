#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ete-dump on CoreSight formatted snapshots (issue 17): every snapshot of the ETMv4 corpus
(../shared/conformance/etmv4) decoded with --json, checked against OpenCSD 1.8.0's packet
listings and the capture file, not against our own output:
  - each trace ID's packet bytes, concatenated, equal the bytes OpenCSD lists for that ID
    outside its I_NOT_SYNC chunks (its unsynchronized bytes are our skipped bytes);
  - each packet's "offset" is where its first byte is in the capture file (an even frame
    byte holds the data byte without bit 0, which the auxiliary byte carries);
  - "id" is on every packet and error record; the text form shows "ID:<hex>;";
  - --id ID prints exactly that ID's records; usage errors for a bad or absent --id;
  - --flow --opencsd gives OpenCSD's element lines per trace ID, Idx included (for a formatted
    capture OpenCSD's deformatter numbering: decode_tree::opencsd_index).

usage: check_formatted.py ETE_DUMP   (corpus: $TRACECODEC_ETMV4_DIR)"""
import functools
import json
import os
import re
import subprocess
import sys

ete_dump = sys.argv[1]
corpus = os.environ.get("TRACECODEC_ETMV4_DIR", "../shared/conformance/etmv4")
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: " + what)


def run(args):
    p = subprocess.run([ete_dump] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


LINE = re.compile(r"Idx:(\d+); ID:([0-9a-f]+); \[([^\]]*)\];\s*(\S+)")


@functools.lru_cache(maxsize=None)
def listed(name):
    """Per trace ID: (bytes of packets, bytes of I_NOT_SYNC chunks) from OpenCSD's listing.
    Appended to bytearrays: joining bytes objects one packet at a time is quadratic, which made
    this check take minutes on bugfix-exact-match (a megabyte of packets)."""
    packets, unsynced = {}, {}
    with open(os.path.join(corpus, "expected", name + ".packets.txt")) as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            tid = int(m.group(2), 16)
            raw = bytes(int(t, 16) for t in m.group(3).split())
            target = unsynced if m.group(4) == "I_NOT_SYNC" else packets
            target.setdefault(tid, bytearray()).extend(raw)
    return packets, unsynced


def capture_file(snap):
    """The first buffer file a snapshot's trace.ini names."""
    with open(os.path.join(snap, "trace.ini")) as f:
        return os.path.join(snap, [l.split("=", 1)[1].strip() for l in f if l.startswith("file=")][0])


def async_bytes(r):
    size = r.get("size", len(r["bytes"]) // 2)
    return b"\0" * (size - 1) + b"\x80"


if not os.path.isdir(os.path.join(corpus, "snapshots")):
    if os.environ.get("TRACECODEC_REQUIRE_CONFORMANCE", "0") not in ("", "0"):
        print("FAIL: TRACECODEC_REQUIRE_CONFORMANCE is set but %s is missing" % corpus)
        sys.exit(1)
    print("note: no ETMv4 corpus at %s: skipped" % corpus)
    sys.exit(77)

formatted = ["juno_r1_1", "bugfix-exact-match", "juno-uname-001", "a57_single_step"]
for name in formatted:
    snap = os.path.join(corpus, "snapshots", name)
    rc, out, err = run(["--snapshot", snap, "--json"])
    check(rc == 0, "%s: exit 0, got %d %r" % (name, rc, err[:300]))
    recs = [json.loads(l) for l in out.splitlines()]
    with open(capture_file(snap), "rb") as f:
        capture = f.read()
    want, unsynced = listed(name)
    got, skipped, bad_offsets, untagged = {}, {}, 0, 0
    for r in recs:
        if r["session"] != 0 or "frame_error" in r:
            continue
        if "id" not in r:
            untagged += 1
            continue
        tid = r["id"]
        if "packet" in r:
            raw = async_bytes(r) if r["packet"] == "async" else bytes.fromhex(r["bytes"])
            got.setdefault(tid, bytearray()).extend(raw)
            at = r["offset"]
            first = raw[0] if at % 2 else raw[0] & 0xFE
            if at >= len(capture) or capture[at] != first:
                bad_offsets += 1
        elif r.get("error") == "unsynchronized":
            skipped[tid] = skipped.get(tid, 0) + r["length"]
    check(untagged == 0, "%s: every packet and error record has an \"id\" (%d without)" % (name, untagged))
    check(bad_offsets == 0, "%s: every packet's offset holds its first byte (%d do not)" % (name, bad_offsets))
    for tid in sorted(set(want) | set(got)):
        check(got.get(tid, b"") == want.get(tid, b""),
              "%s ID 0x%x: packet bytes equal OpenCSD's (%d bytes, OpenCSD %d)" %
              (name, tid, len(got.get(tid, b"")), len(want.get(tid, b""))))
        check(skipped.get(tid, 0) == len(unsynced.get(tid, b"")),
              "%s ID 0x%x: bytes skipped before sync %d, OpenCSD's I_NOT_SYNC %d" %
              (name, tid, skipped.get(tid, 0), len(unsynced.get(tid, b""))))
    print("%s: %d IDs, %d packet bytes as OpenCSD lists them" % (name, len(want), sum(len(v) for v in got.values())))

    # --id: that ID's records only, the same as in the full output.
    tid = max(want, key=lambda t: len(want[t]))
    rc, one, err = run(["--snapshot", snap, "--json", "--id", hex(tid)])
    mine = [l for l, r in zip(out.splitlines(), recs) if r.get("id") == tid and "frame_error" not in l]
    one_recs = [l for l in one.splitlines() if "frame_error" not in l]
    check(rc == 0 and one_recs == mine, "%s --id 0x%x: its %d records, got %d" % (name, tid, len(mine), len(one_recs)))
    # Text: every packet line names its ID.
    rc, txt, err = run(["--snapshot", snap, "--id", hex(tid)])
    lines = [l for l in txt.splitlines() if l.startswith("Idx:") and "frame " not in l]
    check(rc == 0 and lines and all(l.split("; ")[1] == "ID:%x" % tid for l in lines),
          "%s --id 0x%x text: every line shows ID:%x" % (name, tid, tid))

# The DSTREAM capture: offsets in the file (footers included), errors where OpenCSD has them
# are checked by the etmv4 tests; here: it decodes and tags every record.
rc, out, err = run(["--snapshot", os.path.join(corpus, "snapshots", "a55-test-tpiu"), "--json"])
recs = [json.loads(l) for l in out.splitlines()]
check(rc == 0 and sum("packet" in r for r in recs) > 25000 and
      all("id" in r for r in recs if "packet" in r or "error" in r),
      "a55-test-tpiu (DSTREAM): exit 0, every packet tagged (%d packets)" % sum("packet" in r for r in recs))

# --flow --opencsd: OpenCSD's element lines of expected/<name>.decode.txt, per trace ID in
# order, the lines whole (tests/etmv4/test_flow.cpp checks the library on every ID).
ELEMENT = re.compile(r"(Idx:[0-9?]+; )(ID:[0-9a-f]+; OCSD_GEN_TRC_ELEM_.*)$")


def element_lines(text):
    per_id = {}
    for line in text.splitlines():
        m = ELEMENT.search(line)
        if m:
            tid = m.group(2).split(";")[0]
            per_id.setdefault(tid, []).append(m.group(1) + m.group(2))
    return per_id


for name in ("armv8_1m_branches", "init-short-addr", "a57_single_step", "juno_r1_1", "juno-uname-001"):
    rc, out, err = run(["--snapshot", os.path.join(corpus, "snapshots", name), "--flow", "--opencsd"])
    with open(os.path.join(corpus, "expected", name + ".decode.txt")) as f:
        want = element_lines(f.read())
    got = element_lines(out)
    check(rc == 0 and got == want and want,
          "%s --flow --opencsd: element lines per ID equal OpenCSD's (%s)" %
          (name, ", ".join("%s %d/%d" % (k, len(got.get(k, [])), len(v)) for k, v in sorted(want.items()))))

# A raw formatted FILE (--formatted): each source's output, given that source's registers and
# --id, equals the snapshot's for that ID; without --id, every trace ID OpenCSD lists data for
# is decoded; --flow --opencsd with --memory gives OpenCSD's element lines, Idx included.
HEADER = re.compile(r"^# session 0, trace ID (0x[0-9a-f]+): .*?, (TRCIDR0=.*)$")


def register_args(text):
    """Per trace ID: ete-dump register options from a snapshot's text header lines."""
    out = {}
    for line in text.splitlines():
        m = HEADER.match(line)
        if m:
            regs = dict(kv.split("=") for kv in m.group(2).split())
            args = ["--etmv4"]
            for k in ("TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCCONFIGR"):
                args += ["--" + k.lower(), regs[k]]
            out[int(m.group(1), 16)] = args
    return out


def records(text):
    return [l for l in text.splitlines() if not l.startswith("#")]


for name, form in (("juno_r1_1", "frames"), ("bugfix-exact-match", "frames"), ("juno-uname-001", "frames"),
                   ("a57_single_step", "frames"), ("a55-test-tpiu", "dstream")):
    snap = os.path.join(corpus, "snapshots", name)
    capture = capture_file(snap)
    rc, txt, err = run(["--snapshot", snap])
    regs = register_args(txt)
    want, unsynced = listed(name)
    check(rc == 0 and set(want) <= set(regs), "%s: registers of every listed ID (%s)" % (name, sorted(regs)))
    for tid in sorted(want):
        for fmt in (["--json"], []):
            rc1, a, err1 = run([capture, "--formatted", form, "--id", hex(tid)] + regs[tid] + fmt)
            rc2, b, err2 = run(["--snapshot", snap, "--id", hex(tid)] + fmt)
            check(rc1 == 0 and rc2 == 0 and records(a) == records(b) and records(a),
                  "%s ID 0x%x %s: --formatted %s FILE equals the snapshot (%d and %d lines) %r" %
                  (name, tid, " ".join(fmt), form, len(records(a)), len(records(b)), err1[:200]))
    tid = max(want, key=lambda t: len(want[t]))
    rc, out, err = run([capture, "--formatted", form, "--json"] + regs[tid])
    ids = set(json.loads(l)["id"] for l in records(out) if '"id"' in l)
    check(rc == 0 and ids == set(want), "%s --formatted without --id: IDs %s, OpenCSD lists %s" %
          (name, sorted(ids), sorted(want)))

snap = os.path.join(corpus, "snapshots", "juno_r1_1")
rc, txt, err = run(["--snapshot", snap])
regs = register_args(txt)
with open(os.path.join(corpus, "expected", "juno_r1_1.decode.txt")) as f:
    want = element_lines(f.read())
for tid in (0x10, 0x11):
    rc, out, err = run([os.path.join(snap, "cstrace.bin"), "--formatted", "frames", "--id", hex(tid), "--flow",
                        "--opencsd", "--arch", "v8.0",
                        "--memory", os.path.join(snap, "kernel_dump.bin") + "@0xFFFFFFC000081000"] + regs[tid])
    got = element_lines(out)
    key = "ID:%x" % tid
    check(rc == 0 and list(got) == [key] and got[key] == want[key] and want[key],
          "juno_r1_1 --formatted --id 0x%x --flow --opencsd: OpenCSD's %d element lines, got %d" %
          (tid, len(want.get(key, [])), len(got.get(key, []))))

r = regs[0x10]
rc, out, err = run(["/dev/zero", "--formatted", "frames"] + r)
check(rc == 2 and "needs a regular FILE" in err, "--formatted /dev/zero without --id: %d %r" % (rc, err))
rc, out, err = run([os.path.join(snap, "cstrace.bin"), "--formatted", "etb"] + r)
check(rc == 2 and "--formatted needs frames, tpiu or dstream" in err, "--formatted etb: %d %r" % (rc, err))
rc, out, err = run(["--formatted", "frames"])
check(rc == 2 and "--formatted needs a trace FILE" in err, "--formatted without FILE: %d %r" % (rc, err))
rc, out, err = run([os.path.join(snap, "cstrace.bin"), "--formatted", "frames", "--id", "0x70"] + r)
check(rc == 2 and "--id needs a trace ID" in err, "--formatted --id 0x70: %d %r" % (rc, err))

rc, out, err = run(["--snapshot", snap, "--id", "0x7"])
check(rc == 2 and "no trace source of the snapshot has trace ID 0x7" in err, "--id of no source: %d %r" % (rc, err))
rc, out, err = run(["--snapshot", snap, "--id", "0x80"])
check(rc == 2 and "--id needs a trace ID" in err, "--id 0x80: %d %r" % (rc, err))
rc, out, err = run(["--id", "0x10"])
check(rc == 2 and "--id only applies with --snapshot or --formatted" in err, "--id without --snapshot: %d %r" % (rc, err))

if failures:
    print("%d of %d checks failed" % (failures, checks))
    sys.exit(1)
print("ok: %d checks of ete-dump on formatted snapshots" % checks)
