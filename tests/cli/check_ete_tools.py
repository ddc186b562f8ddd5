#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks ete-dump and ete-recompress on hostile input (issue 14): a directory where a file
should be, endless input (/dev/zero, an endless pipe), output that cannot be written
(/dev/full), usage errors, inline .ini comments; and that decoding in chunks prints what a
whole-buffer decode prints for a trace whose packets span chunk boundaries.

usage: check_ete_tools.py ETE_DUMP ETE_RECOMPRESS
Optional: TRACECODEC_CONFORMANCE_DIR (../shared/conformance/ete) adds a real buffer."""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watched import run_watched  # noqa: E402

ete_dump, ete_recompress = sys.argv[1], sys.argv[2]
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(args, stdout=None, timeout=60, memory_mb=None, stdin=subprocess.DEVNULL):
    """(status, stdout, stderr); status "timeout" when the tool was still running (killed).
    A tool killed by a signal (an abort) has a negative status. With memory_mb, its resident
    memory is watched (watched.py): status "memory" when it passed the limit (killed)."""
    if memory_mb:
        status, out, err, _ = run_watched(args, timeout, memory_mb, stdout=stdout)
        return status, out, err
    try:
        p = subprocess.run(args, stdin=stdin, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b""
    return p.returncode, p.stdout or b"", p.stderr or b""


def text(b):
    return b.decode("utf-8", "replace")


# The demonstration trace (made by the encoder) and the registers of the trace unit it is for.
rc, out, err = run([ete_dump, "--json"])
check(rc == 0, "demonstration: exit 0, got %s %s" % (rc, text(err)))
demo = bytes.fromhex("".join(json.loads(l)["bytes"] for l in text(out).splitlines()))
demo_packets = len(text(out).splitlines())
rc, out, err = run([ete_dump])
regs = dict(re.findall(r"(TRC[A-Z0-9]+)=(0x[0-9a-f]+)", text(out).splitlines()[0]))
check(len(demo) > 20 and len(regs) == 6, "demonstration bytes and registers: %d %s" % (len(demo), regs))
reg_args = [a for k, v in regs.items() for a in ("--" + k.lower(), v)]

work = tempfile.TemporaryDirectory()


def make_snapshot(name, file="session1.bin", data=demo, device_file="ETE_0.ini", regs_text=None,
                  write_device=True):
    """A one-buffer snapshot as OpenCSD lays it out. data=None: `file` is left as it is."""
    d = os.path.join(work.name, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "snapshot.ini"), "w") as f:
        f.write("[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=%s\n\n"
                "[trace]\nmetadata=trace.ini\n" % device_file)
    with open(os.path.join(d, "cpu_0.ini"), "w") as f:
        f.write("[device]\nname=cpu_0\nclass=core\ntype=ARM-AA64\n\n[regs]\nPC(size:64)=0\n")
    if write_device:
        if regs_text is None:
            regs_text = "".join("%s=%s\n" % kv for kv in regs.items())
        with open(os.path.join(d, device_file), "w") as f:
            f.write("[device]\nname=ETE_0\nclass=trace_source\ntype=ETE\n\n[regs]\n" + regs_text)
    with open(os.path.join(d, "trace.ini"), "w") as f:
        f.write("[trace_buffers]\nbuffers=buffer1\n\n[buffer1]\nname=ETB_1\nfile=%s\n"
                "format=source_data\n\n[source_buffers]\nETE_0=ETB_1\n" % file)
    if data is not None:
        with open(os.path.join(d, file), "wb") as f:
            f.write(data)
    return d


good = make_snapshot("good")
trace_file_demo = os.path.join(good, "session1.bin")
rc, out, err = run([ete_dump, "--snapshot", good, "--json"])
check(rc == 0 and len(text(out).splitlines()) == demo_packets,
      "snapshot of the demonstration: exit 0 and its %d packets, got %s %s" % (demo_packets, rc, text(err)))
rc, out, err = run([ete_recompress, "--snapshot", good])
check(rc == 0 and b'"elements_equal":true' in out, "ete-recompress: exit 0, equal: %s %s %s" % (rc, out, err))

# D2: a directory as the trace buffer or as a device file. iostreams threw std::ios_failure
# (EISDIR from filebuf::underflow): abort, exit 134. Now exit 1 with the reason.
dir_buffer = make_snapshot("dir_buffer", file="subdir", data=None)
os.makedirs(os.path.join(dir_buffer, "subdir"), exist_ok=True)
dir_device = make_snapshot("dir_device", device_file="devdir", write_device=False)
os.makedirs(os.path.join(dir_device, "devdir"), exist_ok=True)
for tool in (ete_dump, ete_recompress):
    name = os.path.basename(tool)
    rc, out, err = run([tool, "--snapshot", dir_buffer])
    check(rc == 1 and "cannot read trace buffer" in text(err) and "Is a directory" in text(err) and not out,
          "%s: buffer file= a directory: exit 1 and the reason, got %s %r" % (name, rc, text(err)))
    rc, out, err = run([tool, "--snapshot", dir_device])
    check(rc == 1 and "cannot read device file" in text(err) and "Is a directory" in text(err) and not out,
          "%s: device file a directory: exit 1 and the reason, got %s %r" % (name, rc, text(err)))
rc, out, err = run([ete_dump, work.name] + reg_args)
check(rc == 1 and "Is a directory" in text(err), "ete-dump FILE a directory: exit 1, got %s %r" % (rc, text(err)))
missing = make_snapshot("missing", file="nonexistent.bin", data=None)
for tool in (ete_dump, ete_recompress):
    rc, out, err = run([tool, "--snapshot", missing])
    check(rc == 1 and "cannot read trace buffer" in text(err) and "No such file" in text(err) and not out,
          "%s: missing buffer file: exit 1 and the reason, got %s %r" % (os.path.basename(tool), rc, text(err)))

# D3: endless input. Reading it whole ended in std::bad_alloc (abort); decoded in chunks it runs
# in bounded memory until stopped, like cat.
if os.path.exists("/dev/zero"):
    for extra in ([], ["--elements"]):
        rc, out, err = run([ete_dump, "/dev/zero"] + reg_args + extra, timeout=3, memory_mb=400)
        check(rc == "timeout", "ete-dump /dev/zero %s under a 400 MB limit: still running after 3 s, got %s %r"
              % (" ".join(extra), rc, text(err)[:200]))
    zero = make_snapshot("zero", file="/dev/zero", data=None)
    rc, out, err = run([ete_dump, "--snapshot", zero], timeout=3, memory_mb=400)
    check(rc == "timeout", "ete-dump: snapshot file=/dev/zero under a 400 MB limit: still running after 3 s, "
          "got %s %r" % (rc, text(err)[:200]))
    # An .ini file is read whole, at most 16 MiB of it.
    zero_ini = make_snapshot("zero_ini", device_file="/dev/zero", write_device=False)
    for tool in (ete_dump, ete_recompress):
        rc, out, err = run([tool, "--snapshot", zero_ini], timeout=30, memory_mb=400)
        check(rc == 1 and "cannot read device file /dev/zero: larger than" in text(err) and not out,
              "%s: device file /dev/zero: exit 1, got %s %r" % (os.path.basename(tool), rc, text(err)[:200]))
    # ete-recompress needs whole buffers: it reads at most 256 MiB + 1 bytes, then refuses.
    rc, out, err = run([ete_recompress, "--snapshot", zero], timeout=60, memory_mb=1024)
    check(rc == 1 and "larger than 268435456 bytes" in text(err) and not out,
          "ete-recompress: file=/dev/zero refused, exit 1, got %s %r" % (rc, text(err)[:200]))
big = make_snapshot("big", data=None)
with open(os.path.join(big, "session1.bin"), "wb") as f:
    f.truncate((256 << 20) + 1)  # sparse: refused from its size, without reading it
rc, out, err = run([ete_recompress, "--snapshot", big], timeout=60, memory_mb=1024)
check(rc == 1 and "larger than 268435456 bytes" in text(err) and not out,
      "ete-recompress: a 256 MiB + 1 byte buffer refused, exit 1, got %s %r" % (rc, text(err)[:200]))

# D3/D4: a write error ends an endless decode (exit 1), instead of decoding on (or reading all
# of the input first).
if os.path.exists("/dev/full"):
    def endless(pipe):
        block = demo * 1000
        try:
            while True:
                pipe.write(block)
        except (BrokenPipeError, OSError, ValueError):
            pass

    with open("/dev/full", "wb") as full:
        rc, _, err, _ = run_watched([ete_dump, "/dev/stdin"] + reg_args, 10, 400, stdout=full, feed=endless)
    check(rc == 1 and "error writing output" in text(err),
          "ete-dump: endless input, stdout /dev/full: exit 1 soon, got %s %r" % (rc, text(err)[:200]))

    # D4: output lost is an I/O error (exit 1 and a message), not success.
    for name, args in (("ete-dump demonstration", [ete_dump]),
                       ("ete-dump --snapshot", [ete_dump, "--snapshot", good, "--json"]),
                       ("ete-dump FILE", [ete_dump, os.path.join(good, "session1.bin")] + reg_args),
                       ("ete-recompress", [ete_recompress, "--snapshot", good])):
        with open("/dev/full", "wb") as full:
            rc, out, err = run(args, stdout=full)
        check(rc == 1 and "error writing output" in text(err),
              "%s > /dev/full: exit 1 and a message, got %s %r" % (name, rc, text(err)))

# A FIFO as the buffer (a live trace): read once, as it comes; load() must not open it to check
# it (that would take the writer's data, or wait for one).
fifo = make_snapshot("fifo", data=None)
os.mkfifo(os.path.join(fifo, "session1.bin"))


def write_fifo():
    with open(os.path.join(fifo, "session1.bin"), "wb") as f:
        f.write(demo)


writer = threading.Thread(target=write_fifo, daemon=True)
writer.start()
rc, out, err = run([ete_dump, "--snapshot", fifo, "--json"], timeout=10)
check(rc == 0 and out == run([ete_dump, "--snapshot", good, "--json"])[1],
      "ete-dump: a FIFO buffer decodes as the file would, got %s %r" % (rc, text(err)[:200]))
if writer.is_alive():  # unblock the writer if the tool never opened the FIFO
    try:
        os.close(os.open(os.path.join(fifo, "session1.bin"), os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass

# ete-recompress: invalid registers are a configuration error with its reason (exit 2), not a
# silent elements_equal:false.
bad_regs = make_snapshot("bad_regs", regs_text="".join(
    "%s=%s\n" % (k, "0x0" if k == "TRCDEVARCH" else v) for k, v in regs.items()))
rc, out, err = run([ete_recompress, "--snapshot", bad_regs])
check(rc == 2 and "session 0 (ETB_1, source ETE_0): invalid trace unit configuration" in text(err),
      "ete-recompress: invalid registers: exit 2 and the reason, got %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--snapshot", bad_regs])
check(rc == 2 and "invalid trace unit configuration" in text(err), "ete-dump: invalid registers: exit 2")

# D5: MAXSPEC is any 32-bit value (D6.7 I_RKYCD); the element reader resolves at most 487 at
# run time. Beyond that, --elements and ete-recompress refuse the configuration up front (exit 2,
# the reason, no output) instead of one unsupported_config line per session and exit 0; packets
# decode for every MAXSPEC.
def with_maxspec(v):
    return [a for k, x in regs.items() for a in ("--" + k.lower(), v if k == "TRCIDR8" else x)]


rc, out, err = run([ete_dump, trace_file_demo] + with_maxspec("0xffffffff") + ["--elements"])
check(rc == 2 and "MAXSPEC 4294967295 is more than --elements resolves (at most 487" in text(err) and not out,
      "ete-dump --elements, MAXSPEC 0xffffffff: exit 2 and the reason, got %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, trace_file_demo] + with_maxspec("488") + ["--elements", "--json"])
check(rc == 2 and "MAXSPEC 488" in text(err) and not out, "ete-dump --elements, MAXSPEC 488: exit 2, got %s" % rc)
rc, out, err = run([ete_dump, trace_file_demo] + with_maxspec("487") + ["--elements", "--json"])
check(rc == 0 and out and b"unsupported_config" not in out, "ete-dump --elements, MAXSPEC 487: exit 0, got %s %r"
      % (rc, text(err)))
rc, out, err = run([ete_dump, trace_file_demo] + with_maxspec("0xffffffff") + ["--json"])
check(rc == 0 and len(text(out).splitlines()) == demo_packets, "ete-dump packets, MAXSPEC 0xffffffff: exit 0")
huge = make_snapshot("huge_maxspec", regs_text="".join(
    "%s=%s\n" % (k, "0xffffffff" if k == "TRCIDR8" else v) for k, v in regs.items()))
rc, out, err = run([ete_recompress, "--snapshot", huge])
check(rc == 2 and "session 0 (ETB_1, source ETE_0): MAXSPEC larger than this element reader resolves"
      in text(err) and not out, "ete-recompress, MAXSPEC 0xffffffff: exit 2 and the reason, got %s %r"
      % (rc, text(err)))
rc, out, err = run([ete_dump, "--snapshot", huge, "--elements"])
check(rc == 2 and "session 0 (ETB_1, source ETE_0): TRCIDR8.MAXSPEC 4294967295" in text(err),
      "ete-dump --snapshot --elements, MAXSPEC 0xffffffff: exit 2, got %s %r" % (rc, text(err)))

# ete-recompress usage: --help is not an error; unknown options and repeats are, by name.
rc, out, err = run([ete_recompress, "--help"])
check(rc == 0 and "usage: ete-recompress" in text(out) and not err, "ete-recompress --help: usage on stdout, exit 0, "
      "got %s %r %r" % (rc, text(out)[:80], text(err)))
rc, out, err = run([ete_recompress, "--snapshot", good, "--bogus"])
check(rc == 2 and "unknown option --bogus" in text(err), "ete-recompress --bogus: %s %r" % (rc, text(err)))
rc, out, err = run([ete_recompress, "--snapshot", good, "--snapshot", bad_regs])
check(rc == 2 and "--snapshot given twice" in text(err), "ete-recompress --snapshot twice: %s %r" % (rc, text(err)))
rc, out, err = run([ete_recompress])
check(rc == 2 and "--snapshot" in text(err), "ete-recompress without --snapshot: %s %r" % (rc, text(err)))

# ete-dump usage: every value option at most once; --atom-runs only with --elements.
trace_file = os.path.join(good, "session1.bin")
for opt in reg_args[0::2]:
    rc, out, err = run([ete_dump, trace_file] + reg_args + [opt, regs[opt[2:].upper()]])
    check(rc == 2 and (opt + " given twice") in text(err) and not out, "ete-dump %s twice: %s %r" % (opt, rc, text(err)))
rc, out, err = run([ete_dump, "--snapshot", good, "--snapshot", good])
check(rc == 2 and "--snapshot given twice" in text(err), "ete-dump --snapshot twice: %s" % rc)
rc, out, err = run([ete_dump, "--snapshot", good, "--atom-runs"])
check(rc == 2 and "--atom-runs" in text(err) and "--elements" in text(err) and not out,
      "ete-dump --atom-runs without --elements: usage error, got %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--snapshot", good, "--atom-runs", "--elements"])
check(rc == 0 and out, "ete-dump --atom-runs --elements: exit 0")

# Inline comments in .ini files (OpenCSD writes "TRCIDR0=0x28000ea1 ; comment"); a '#' inside a
# value stays (a file name may hold one), a '#' after a blank starts a comment.
commented = make_snapshot("commented", file="trace#1.bin", regs_text="".join(
    "%s=%s %s\n" % (k, v, "; the %s value" % k if i % 2 else "# the %s value" % k)
    for i, (k, v) in enumerate(regs.items())))
rc, plain, err = run([ete_dump, "--snapshot", good, "--json"])
rc, out, err = run([ete_dump, "--snapshot", commented, "--json"])
check(rc == 0 and out == plain, "inline ; and # comments: same registers, same output, got %s %r" % (rc, text(err)))
rc, out, err = run([ete_recompress, "--snapshot", commented])
check(rc == 0 and b'"elements_equal":true' in out, "ete-recompress with inline comments: %s %r" % (rc, text(err)))


# Streaming: a trace longer than the 64 KiB chunks, whose packets span chunk boundaries, prints
# what a whole-buffer decode prints: each packet's raw bytes are the file's bytes at its offset,
# the packets tile the file, every copy of the demonstration decodes alike, and a shift of the
# chunk boundaries (more A-Sync zeros in front) shifts the offsets and nothing else.
def records(args):
    rc, out, err = run(args, timeout=120)
    check(rc == 0, "%s: exit 0, got %s %r" % (" ".join(args[1:3]), rc, text(err)[:200]))
    return [json.loads(l) for l in text(out).splitlines()]


def check_stream(data, name, rregs, whole_copies=None):
    path = os.path.join(work.name, "stream.bin")
    with open(path, "wb") as f:
        f.write(data)
    rargs = [a for k, v in rregs.items() for a in ("--" + k.lower(), v)]
    recs = records([ete_dump, path, "--json"] + rargs)
    errors = [r for r in recs if "error" in r]
    pk = [r for r in recs if "packet" in r]
    size = [r.get("size", len(r["bytes"]) // 2) for r in pk]  # an A-Sync shows its first 16 bytes
    check(pk and all(r["bytes"] and bytes.fromhex(r["bytes"]) == data[r["offset"]:r["offset"] + len(r["bytes"]) // 2]
                     for r in pk),
          "%s: every packet's bytes are the file's bytes at its offset" % name)
    global spanning
    spanning += sum(1 for r, n in zip(pk, size) if any(r["offset"] < b < r["offset"] + n
                                                       for b in range(65536, len(data), 65536)))
    if whole_copies is not None:
        check(not errors, "%s: no decode errors, got %s" % (name, errors[:3]))
        check(all(a["offset"] + n == b["offset"] for a, n, b in zip(pk, size, pk[1:]))
              and pk[-1]["offset"] + size[-1] == len(data), "%s: the packets tile the file" % name)
        check(len(pk) == whole_copies * demo_packets,
              "%s: %d packets, got %d" % (name, whole_copies * demo_packets, len(pk)))
    # The same bytes as a snapshot buffer decode alike.
    snap = make_snapshot("stream", data=data, regs_text="".join("%s=%s\n" % kv for kv in rregs.items()))
    check(records([ete_dump, "--snapshot", snap, "--json"]) == recs, "%s: --snapshot prints the same" % name)
    elements = records([ete_dump, path, "--json", "--elements"] + rargs)
    return recs, elements


def unshift(recs, k):
    """The records of a trace that begins with an A-Sync, given k more zeros in front of it,
    as they would be without them."""
    out = []
    for r in recs:
        r = dict(r)
        if r.get("packet") == "async" and r["offset"] == 0:  # k zeros fewer
            n = r.pop("size", len(r["bytes"]) // 2) - k
            r["bytes"] = ("00" * (n - 1) + "80")[:32]
            if n > 16:
                r["size"] = n
        elif r["offset"] >= k:
            r["offset"] -= k
        out.append(r)
    return out


spanning = 0  # packets that span a 64 KiB chunk boundary: without them these checks cannot fail


def check_shifts(data, name, rregs, whole_copies=None):
    global spanning
    spanning = 0
    base, base_elements = check_stream(data, name, rregs, whole_copies)
    for k in (1, 7, 20, 33):
        recs, elements = check_stream(b"\0" * k + data, "%s shifted by %d" % (name, k), rregs)
        check(unshift(recs, k) == base, "%s shifted by %d: the same packets" % (name, k))
        check(unshift(elements, k) == base_elements, "%s shifted by %d: the same elements" % (name, k))
    check(spanning >= 3, "%s: packets span the 64 KiB chunk boundaries, got %d" % (name, spanning))


copies = 200000 // len(demo) + 1
check_shifts(demo * copies, "demonstration x%d" % copies, regs, whole_copies=copies)
# An A-Sync longer than the tail kept between chunks: its bytes are rebuilt exactly.
spanning = 0
recs, _ = check_stream(demo * 1000 + b"\0" * 100000 + b"\x80" + demo * 1000, "long A-Sync", regs)
check(spanning >= 1, "long A-Sync: it spans a chunk boundary")
check(any(r.get("packet") == "async" and r.get("size") == 100001 for r in recs),
      "long A-Sync: one A-Sync packet of 100001 bytes")

# A real buffer (OpenCSD's ete_ip: it begins with an A-Sync), repeated past several chunks.
conf = os.environ.get("TRACECODEC_CONFORMANCE_DIR", "")
real = os.path.join(conf, "snapshots", "ete_ip")
if conf and os.path.exists(os.path.join(real, "session1.bin")):
    with open(os.path.join(real, "ETE_0_s1.ini")) as f:
        real_regs = {k: v for k, v in re.findall(r"^(TRC[A-Z0-9]+)=(\S+)", f.read(), re.M)
                     if k in ("TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCDEVARCH", "TRCCONFIGR")}
    with open(os.path.join(real, "session1.bin"), "rb") as f:
        data = f.read()
    check_shifts(data * (200000 // len(data) + 1), "ete_ip repeated", real_regs)
elif os.environ.get("TRACECODEC_REQUIRE_CONFORMANCE", "0") not in ("", "0"):
    check(False, "TRACECODEC_REQUIRE_CONFORMANCE is set but %s/session1.bin is missing" % real)
else:
    print("note: no TRACECODEC_CONFORMANCE_DIR/snapshots/ete_ip: the real-buffer streaming check is skipped")

# --flow: usage rules; a raw file with --memory per dump equals the snapshot's own decode; the
# flow decode streamed in 64 KiB chunks equals the decode of one copy, repeated.
rc, out, err = run([ete_dump, "--opencsd"])
check(rc == 2 and "--opencsd only applies with --flow" in text(err), "--opencsd without --flow: %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--memory", "x@0x1000"])
check(rc == 2 and "only apply with --flow" in text(err), "--memory without --flow: %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--flow"])
check(rc == 2 and "--flow needs --snapshot DIR or a trace FILE" in text(err), "--flow alone: %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--flow", "--elements", "--snapshot", good])
check(rc == 2 and "exclude each other" in text(err), "--flow --elements: %s %r" % (rc, text(err)))
rc, out, err = run([ete_dump, "--flow", "--arch", "v10.1", "--snapshot", good])
check(rc == 2 and "--arch needs" in text(err), "--arch v10.1: %s %r" % (rc, text(err)))
snap = os.path.join(conf, "snapshots", "ete_mem")
if conf and os.path.exists(os.path.join(snap, "cpu_0.ini")):
    with open(os.path.join(snap, "cpu_0.ini")) as f:
        ini = f.read()
    dumps = re.findall(r"^file=(\S+)\s*\naddress=(\S+)", ini, re.M)
    with open(os.path.join(snap, "ETE_0_s1.ini")) as f:
        sregs = {k: v for k, v in re.findall(r"^(TRC[A-Z0-9]+)=(\S+)", f.read(), re.M)}
    reg_args = []
    for k in ("TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCDEVARCH", "TRCCONFIGR"):
        reg_args += ["--" + k.lower(), sregs[k]]
    mem_args = []
    for fname, addr in dumps:
        mem_args += ["--memory", os.path.join(snap, fname) + "@" + addr]
    rc, whole, err = run([ete_dump, "--snapshot", snap, "--flow", "--opencsd"])
    check(rc == 0 and b"INSTR_RANGE" in whole, "ete_mem --flow --opencsd: %s %r" % (rc, text(err)))
    rc, raw, err = run([ete_dump, os.path.join(snap, "session1.bin"), "--flow", "--opencsd",
                        "--trctraceidr", sregs["TRCTRACEIDR"], "--arch", "newest"] + reg_args + mem_args)
    check(rc == 0 and raw == b"\n".join(whole.split(b"\n")[1:]),
          "raw file with --memory per dump = the snapshot's flow: %s %r" % (rc, text(err)))
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(snap, "session1.bin"), "rb") as f:
            one = f.read()
        big = os.path.join(tmp, "big.bin")
        copies = 200000 // len(one) + 1
        with open(big, "wb") as f:
            f.write(one * copies)
        rc, rep, err = run([ete_dump, big, "--flow", "--json"] + reg_args + mem_args)
        rc1, single, _ = run([ete_dump, os.path.join(snap, "session1.bin"), "--flow", "--json"] + reg_args + mem_args)
        ranges = lambda b: [l for l in text(b).splitlines() if '"instr_range"' in l]
        strip = lambda l: re.sub(r'"offset":\d+,', "", l)
        r_rep, r_one = ranges(rep), ranges(single)
        check(rc == 0 and rc1 == 0 and len(r_rep) == copies * len(r_one) and
              [strip(l) for l in r_rep[:len(r_one)]] == [strip(l) for l in r_one] and
              [strip(l) for l in r_rep[-len(r_one):]] == [strip(l) for l in r_one],
              "flow over %d copies streamed in chunks: %d ranges, one copy %d" % (copies, len(r_rep), len(r_one)))
elif os.environ.get("TRACECODEC_REQUIRE_CONFORMANCE", "0") not in ("", "0"):
    check(False, "TRACECODEC_REQUIRE_CONFORMANCE is set but %s is missing" % snap)

if failures:
    print("%d of %d checks failed" % (failures, checks))
    sys.exit(1)
print("ok: %d ete-dump / ete-recompress checks" % checks)
