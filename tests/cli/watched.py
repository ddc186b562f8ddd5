# SPDX-License-Identifier: Apache-2.0
"""Runs a tool with its resident memory watched, for the hostile-input CLI checks (issue 14).

RLIMIT_AS cannot bound a sanitizer build: AddressSanitizer reserves terabytes of address space
for its shadow at start-up and aborts under any such limit. So the tool runs unconstrained and
its resident set (VmRSS in /proc/PID/status) is sampled every few milliseconds; past the limit
it is killed and reported as "memory". A tool that reads an endless input into memory grows by
hundreds of MB a second, far past any limit here within one sampling period or two."""
import os
import subprocess
import tempfile
import threading
import time


def resident_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError):
        pass
    return 0


def run_watched(args, timeout, memory_mb, stdout=None, feed=None):
    """(status, stdout bytes, stderr bytes, peak resident MB). status: the exit code (negative
    for a signal), "timeout" when still running after `timeout` seconds (then killed), "memory"
    when its resident set passed `memory_mb` (then killed). stdout: a file to write to instead
    of capturing. feed: a function given the tool's stdin pipe, run on a thread (stdin is
    /dev/null otherwise)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(args, stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                             stdout=stdout or out, stderr=err)
        if feed:
            threading.Thread(target=feed, args=(p.stdin,), daemon=True).start()
        start, peak, status = time.monotonic(), 0, None
        while status is None:
            rc = p.poll()
            if rc is not None:
                status = rc
                break
            peak = max(peak, resident_mb(p.pid))
            if peak > memory_mb:
                status = "memory"
            elif time.monotonic() - start > timeout:
                status = "timeout"
            else:
                time.sleep(0.005)
        if p.poll() is None:
            p.kill()
        p.wait()
        if feed:
            try:
                p.stdin.close()
            except OSError:
                pass
        out.seek(0)
        err.seek(0)
        return status, out.read(), err.read(), peak
