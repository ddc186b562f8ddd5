#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks etrace-dump: JSON keys and values for hand-built packets (bytes from the spec tables,
see test_spec_vectors.cpp), text output, errors with offsets, usage and parameter errors."""
import json
import os
import subprocess
import sys
import tempfile

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
check(rc == 2, "unknown option: %d" % rc)
rc, out, err = run(["/nonexistent/trace.bin"])
check(rc == 1, "missing file: exit 1, got %d" % rc)
# Demonstration trace (no file): decodes without errors.
rc, out, err = run(["--json", "--recovery", "blocks", "--block-size", "64"])
check(rc == 0 and out and all("error" not in json.loads(l) for l in out.splitlines()), "demonstration trace")

if failures:
    print("%d failures" % failures)
    sys.exit(1)
print("ok: etrace-dump JSON, text, errors and options")
