#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# End-to-end check of the sysreg-decode tool: JSON parses and carries the documented keys
# and values, text names the fields, bad input exits with status 2.
# Usage: sysreg_decode_check.py PATH_TO_SYSREG_DECODE
import json
import subprocess
import sys

exe = sys.argv[1]
failures = []


def run(*args):
    p = subprocess.run([exe, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        failures.append(what)


def one_json(*args):
    status, out, err = run(*args, "--json")
    check(status == 0, f"{args}: exit {status} {err}")
    lines = out.splitlines()
    check(len(lines) == 1, f"{args}: {len(lines)} lines")
    return json.loads(lines[0])


# PMBSR: stage 1 Data Abort (EC 0b100100), S, level-2 Translation fault (FSC 0b000110).
j = one_json("pmbsr", "0x90020006")
check(j["ec"] == 36 and j["s"] == 1 and j["mss"] == 6 and j["fsc"] == 6, f"pmbsr fields {j}")
check(j["fsc_meaning"] == "Translation fault, level 2" and j["fsc_level"] == 2, "pmbsr fsc")
check(j["ec_meaning"] == "Stage 1 Data Abort on write to Profiling Buffer", "pmbsr ec")
check("bsc" not in j, "pmbsr has no bsc")
for k in ("ec", "dl", "ea", "s", "coll", "mss"):
    check(k in j and k + "_meaning" in j, f"pmbsr key {k}")
check(one_json("pmbsr", "2416050182") == j, "decimal input")

# TRBSR: buffer full in Fill mode (IRQ, WRAP, S, BSC 0b000001).
j = one_json("trbsr", "0x520001")
check((j["irq"], j["trg"], j["wrap"], j["ea"], j["s"], j["bsc"]) == (1, 0, 1, 0, 1, 1),
      f"trbsr fields {j}")
check(j["bsc_meaning"] == "Buffer filled", "trbsr bsc")

# BRBINF: full record, indirect call to EL1, CC E=2 M=0xf4 (1000 cycles).
j = one_json("brbinf", "0x000002F400000343")
check((j["valid"], j["type"], j["el"], j["cc"], j["cycles"]) == (3, 3, 1, 0x2F4, 1000),
      f"brbinf fields {j}")
check(j["type_meaning"] == "Indirect Branch with link", "brbinf type")
check(j["cycles_overflow"] is False and j["not_valid"] == [], "brbinf cycles")
for k in ("valid", "type", "el", "mpred", "t", "lastfailed", "ccu", "cc"):
    check(k in j and k + "_meaning" in j, f"brbinf key {k}")
j = one_json("brbinf", "0x00003fff00000003")
check(j["cycles"] is None and j["cycles_overflow"] is True, "brbinf overflow")
j = one_json("brbinf", "0x0000400000000003")
check(j["cycles"] is None and j["ccu"] == 1, "brbinf unknown")
j = one_json("brbinf", "0x202", "--brbsrc", "0x1000", "--brbtgt", "0x2000")
check(j["brbsrc"] == "0x0000000000001000" and j["brbtgt"] is None, f"record {j}")

status, out, _ = run("pmbsr", "0x90020006", "0x20001", "--json")
check(status == 0 and len(out.splitlines()) == 2, "two values, two JSON lines")
status, out, _ = run("pmbsr", "0x90020006")
check(status == 0 and "FSC        [5:0]    = 0b000110   Translation fault, level 2" in out,
      "pmbsr text")
status, out, _ = run("brbinf", "0x3f01")
check(status == 0 and "= 0b111111   reserved" in out, "reserved TYPE in text")

for args in ([], ["foo", "1"], ["pmbsr"], ["pmbsr", "zz"], ["pmbsr", "0x1ffffffffffffffff"],
             ["pmbsr", "0x"], ["brbinf", "1", "--brbidr0", "0x5030"],
             ["pmbsr", "1", "--brbidr0", "1"],
             ["trbsr", "1", "--bogus"], ["brbinf", "1", "--brbsrc"]):
    status, out, err = run(*args)
    check(status == 2 and out == "" and err != "", f"{args}: want exit 2, got {status}")
status, out, _ = run("--help")
check(status == 0 and out.startswith("usage: sysreg-decode"), "--help")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok: sysreg-decode text, JSON and errors")
