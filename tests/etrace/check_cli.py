#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks etrace-dump: JSON keys and values for hand-built packets (bytes from the spec tables,
see test_spec_vectors.cpp), text output, errors with offsets, skipped bytes, usage and
parameter errors, and hostile input (issue 14): endless input, output that cannot be written."""
import json
import os
import subprocess
import sys
import tempfile

# The resident-memory watcher shared with the ete tools' checks (RLIMIT_AS kills sanitizer builds).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from watched import run_watched  # noqa: E402

exe = sys.argv[1]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(args, data=None):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.bin")
        if data is not None:
            with open(path, "wb") as f:
                f.write(bytes(data))
            args = [path] + args
        p = subprocess.run([exe] + args, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr


# RV32 defaults, Siemens header without index:
#   05 | 73 00 00 00 e0   format 3 start, branch 1, privilege 3, address 0x80000000
#   c3 | 34 12 | 95 0d 08 format 1, flow 2, timestamp 0x1234, branches 5, map 0x1b, address 0x40
#   60                    malformed header (length 0) at offset 11
#   05 | e2 ff ff ff 03   format 2: address -16 bytes, updiscon (test_spec_vectors)
trace = [0x05, 0x73, 0x00, 0x00, 0x00, 0xe0,
         0xc3, 0x34, 0x12, 0x95, 0x0d, 0x08,
         0x60,
         0x05, 0xe2, 0xff, 0xff, 0xff, 0x03]
rc, out, err = run(["--json"], trace)
check(rc == 0, "exit status 0, got %d (%s)" % (rc, err))
lines = [json.loads(l) for l in out.splitlines()]
check(len(lines) == 4, "4 JSON lines, got %d" % len(lines))
if len(lines) == 4:
    a, b, e, c = lines
    check(a["offset"] == 0 and a["format"] == 3 and a["subformat"] == 0, "start packet: %s" % a)
    check(a["kind"] == "sync_start" and a["branch"] == 1 and a["privilege"] == 3, "start fields: %s" % a)
    check(a["address"] == "0x80000000", "start address: %s" % a)
    check("time" not in a and "context" not in a, "notime/nocontext: no time or context keys: %s" % a)
    check(a["header"] == {"length": 5, "flow": 0, "index": 0, "timestamp": None}, "header: %s" % a)
    check(a["bytes"] == "0573000000e0", "bytes: %s" % a)
    check(b["format"] == 1 and b["subformat"] is None, "format 1: %s" % b)
    check(b["branches"] == 5 and b["branch_map"] == 0x1b and b["address"] == "0x40", "format 1 fields: %s" % b)
    check(b["notify"] is False and b["updiscon"] is False and b["irreport"] is False, "flags: %s" % b)
    check("irdepth" not in b, "no irdepth bits in RV32: %s" % b)
    check(b["header"]["flow"] == 2 and b["header"]["timestamp"] == 0x1234, "header: %s" % b)
    check(e == {"offset": 12, "error": "malformed_header", "code": 9,
                "message": "malformed encapsulation header", "length": 1}, "error: %s" % e)
    check(c["offset"] == 13 and c["format"] == 2 and c["address"] == "0xfffffff0" and c["updiscon"] is True,
          "format 2: %s" % c)

rc, out, err = run([], trace)
check(rc == 0, "text: exit 0")
check("Idx:0; [05 73 00 00 00 e0]; flow=0 len=5; format 3 (sync) subformat 0 (start): branch=1 privilege=3 address=0x80000000" in out,
      "text line for the start packet:\n" + out)
check("Idx:12; ERROR malformed_header (9)" in out, "text error line:\n" + out)
check("# 3 packets, 1 errors" in out, "summary:\n" + out)

# Parameters given as options: 64-bit addresses, 3-bit irdepth, format 0 with a 1-bit
# subformat, 3-bit cache index, ATB header. Payload ec e0 = format 0 subformat 1 (parameters B
# of test_spec_vectors have 32-bit addresses; the jump target cache packet does not depend on
# them): index 5, branches 3, map 0b100.
rc, out, err = run(["--json", "--iaddress-width", "64", "--privilege-width", "2", "--return-stack-size", "2",
                    "--cache-size", "3", "--f0s-width", "1", "--branch-prediction", "1",
                    "--jump-target-cache", "1", "--transport", "atb"], [0x02, 0xec, 0xe0])
check(rc == 0, "options: exit 0 (%s)" % err)
j = json.loads(out.splitlines()[0]) if out else {}
check(j.get("kind") == "jump_target_cache" and j.get("format") == 0 and j.get("subformat") == 1, "jtc: %s" % j)
check(j.get("index") == 5 and j.get("branches") == 3 and j.get("branch_map") == 4, "jtc fields: %s" % j)
check(j.get("irreport") is False and j.get("irdepth") is None, "jtc irreport/irdepth: %s" % j)
check(j.get("header") == {"length": 2, "timestamp": None}, "ATB header keys: %s" % j)

# Invalid parameters and usage errors: exit status 2.
rc, out, err = run(["--iaddress-width", "32", "--iaddress-lsb", "32"], [0x05])
check(rc == 2 and "iaddress_lsb" in err, "invalid parameters: %d %s" % (rc, err))
rc, out, err = run(["--recovery", "zero-run", "--zero-run-log2", "3"], [0x05])
check(rc == 2 and "invalid encapsulation" in err, "invalid encapsulation: %d %s" % (rc, err))
rc, out, err = run(["--bogus", "1"])
check(rc == 2 and "unknown option --bogus" in err, "unknown option: %d %r" % (rc, err[:80]))
# Unknown, not "needs a value", even as the last argument.
rc, out, err = run(["--bogus"])
check(rc == 2 and "unknown option --bogus" in err and "needs a value" not in err,
      "unknown last option: %d %r" % (rc, err[:80]))
rc, out, err = run(["--iaddress-width"])
check(rc == 2 and "--iaddress-width needs a value" in err, "known option without a value: %d %r" % (rc, err[:80]))
# A repeated value option is an error, not silently its last value.
for args in (["--iaddress-width", "32", "--iaddress-width", "64"], ["--transport", "atb", "--transport", "siemens"],
             ["--notime", "1", "--notime", "0"], ["--recovery", "none", "--recovery", "blocks"]):
    rc, out, err = run(args, [0x05])
    check(rc == 2 and (args[0] + " given twice") in err and not out, "%s twice: %d %r" % (args[0], rc, err[:80]))
# The ATB header has no index field: an index width with it is a usage error, not ignored.
rc, out, err = run(["--transport", "atb", "--index-width", "8"], [0x02, 0xec, 0xe0])
check(rc == 2 and "--index-width" in err and "ATB" in err and not out, "ATB with an index width: %d %r" % (rc, err[:120]))
rc, out, err = run(["--transport", "siemens", "--index-width", "8"], [0x05])
check(rc == 0, "Siemens with an index width: exit 0, got %d %r" % (rc, err[:120]))
rc, out, err = run(["/nonexistent/trace.bin"])
check(rc == 1, "missing file: exit 1, got %d" % rc)
# Demonstration trace (no file): decodes without errors.
rc, out, err = run(["--json", "--recovery", "blocks", "--block-size", "64"])
check(rc == 0 and out and all("error" not in json.loads(l) for l in out.splitlines()), "demonstration trace")

# JSON: bytes skipped without a packet boundary get their own object; before, an input skipped
# entirely printed nothing at all. The test trace has no zero run: all of it is skipped.
rc, out, err = run(["--json", "--unsynchronized", "--recovery", "zero-run"], trace)
lines = [json.loads(l) for l in out.splitlines()]
check(rc == 0 and lines == [{"offset": 0, "skipped": len(trace), "reason": "unsynchronized"}],
      "unsynchronized input without a zero run: one skipped object, got %s" % lines)
rc, out, err = run(["--unsynchronized", "--recovery", "zero-run"], trace)
check("# 0 packets, 0 errors, %d bytes skipped" % len(trace) in out, "text summary of it:\n" + out)
# After an error with zero-run recovery: the error (its own byte), the bytes skipped up to the
# next packet after a 32-byte zero run, then that packet.
damaged = [0x60, 0x05, 0x73] + [0] * 32 + trace[:6]
rc, out, err = run(["--json", "--recovery", "zero-run"], damaged)
lines = [json.loads(l) for l in out.splitlines()]
check(len(lines) == 3 and lines[0].get("error") == "malformed_header" and lines[0]["length"] == 1
      and lines[1] == {"offset": 1, "skipped": 34, "reason": "recovery"} and lines[2].get("offset") == 35,
      "error, skipped run, packet: %s" % lines)
# Every skipped byte is in an error's length or a skipped object: they add up to the summary.
rc, out, err = run(["--recovery", "zero-run"], damaged)
check("# 1 packets, 1 errors, 35 bytes skipped" in out, "text summary: 1 + 34 bytes skipped:\n" + out)

# Errors reading and writing (issue 14): exit 1 with the reason, never exit 0 or an abort.
rc, out, err = run([tempfile.gettempdir()])
check(rc == 1 and "Is a directory" in err, "a directory as FILE: exit 1 and the reason, got %d %r" % (rc, err))


if os.path.exists("/dev/full"):
    with open("/dev/full", "wb") as full:
        p = subprocess.run([exe, "--json"], stdout=full, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 1 and "error writing output" in p.stderr,
          "output to /dev/full: exit 1 and a message, got %d %r" % (p.returncode, p.stderr))
    # An endless input whose output cannot be written stops (it used to read all input first).
    packet = bytes(trace[:6])

    def endless(pipe):
        try:
            while True:
                pipe.write(packet * 10000)
        except (BrokenPipeError, OSError, ValueError):
            pass

    with open("/dev/full", "wb") as full:
        rc, _, err, _ = run_watched([exe, "-"], 10, 400, stdout=full, feed=endless)
    err = err.decode()
    check(rc == 1 and "error writing output" in err, "endless input to /dev/full: exit 1, got %s %r" % (rc, err[:200]))
if os.path.exists("/dev/zero"):
    # Endless input decodes in bounded memory until stopped (it was read whole: std::bad_alloc).
    rc, _, _, _ = run_watched([exe, "/dev/zero", "--json"], 3, 400)
    check(rc == "timeout", "/dev/zero under a 400 MB limit: still running after 3 s, got %s" % rc)

if failures:
    print("%d failures" % failures)
    sys.exit(1)
print("ok: etrace-dump JSON, text, errors and options")
