#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the firmware example under QEMU and checks its trace against the path it recorded.

  check_firmware.py --qemu QEMU --ete-dump ETE_DUMP MACHINE:CPU:ELF...
  check_firmware.py --measure --nm NM --qemu QEMU --ete-dump ETE_DUMP MACHINE:CPU:ELF...
  check_firmware.py --skip REASON                  (exit 77: meson reports the test skipped)

Each ELF runs in a fresh directory, where it writes trace.ete (the producer's chunks) and
path.bin (one record per producer call, written by the program itself). ete-dump decodes
trace.ete to elements; the check fails unless QEMU exits with 0, ete-dump reports no error,
and the decoded elements are exactly, in order, the elements each recorded call stands for
(producer.hpp: a branch is an atom, an indirect branch an E atom and a target address, ...).

--measure also runs each ELF with QEMU's one-instruction-per-block execution log and counts the
instructions executed on the emulated core from the entry of each producer call (firmware.cpp's
produce<>, which the library's code is inlined into or called from) to its return, including
the functions it calls (memcpy, memset, the sink with its semihosting write).
"""
import argparse
import bisect
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

# presets::ete_1_0 (include/tracecodec/ete/packet/config.hpp), the firmware's trace_unit.
ETE_1_0 = ['--trcidr0', '0x2801cea1', '--trcidr2', '0xd0001088', '--trcidr8', '0',
           '--trcdevarch', '0x47705a13', '--trcconfigr', '0x1']
# -icount shift=0: virtual time advances one nanosecond per instruction, so the SysTick
# interrupts land at the same instructions on every run and every host.
QEMU_FLAGS = ['-nographic', '-semihosting-config', 'enable=on,target=native',
              '-icount', 'shift=0']
KINDS = ['start', 'branch', 'branches', 'indirect', 'exception', 'exception_return',
         'timestamp', 'event', 'sync', 'end']
EXCEPTION_NAMES = {14: 'IRQ'}  # the ETE exception types the firmware uses


class Failure(Exception):
    pass


def run_qemu(qemu, machine, cpu, elf, cwd, extra=()):
    cmd = [qemu, '-M', machine, '-cpu', cpu, *QEMU_FLAGS, *extra, '-kernel', os.path.abspath(elf)]
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure(f'{machine}: QEMU did not finish within 60 s: {" ".join(cmd)}')
    if r.returncode != 0:
        raise Failure(f'{machine}: QEMU exit status {r.returncode} (the firmware failed)\n'
                      f'{r.stdout}{r.stderr}')
    return r


def read_path(file):
    """The recorded calls: (kind, a, b, c) each, without the end record."""
    with open(file, 'rb') as f:
        data = f.read()
    if not data or len(data) % 16:
        raise Failure(f'{file}: {len(data)} bytes, not whole 16-byte records')
    records = [(KINDS[k] if k < len(KINDS) else k, a, b, c)
               for k, a, b, c in struct.iter_unpack('<4I', data)]
    if records[-1][0] != 'end' or records[-1][1] != len(records) - 1:
        raise Failure(f'{file}: no end record for {len(records) - 1} records')
    return records[:-1]


def context(el, ns):
    return {'el': el, 'ns': bool(ns), 'nse': False, 'sf': False,
            'cid': '0x00000000', 'vmid': '0x00000000'}


def target(address):
    # T32: bit 0 of an interworking address is the instruction set, not part of the address.
    return {'element': 'target_address', 'address': f'0x{address & ~1:016x}', 'isa': 'IS1'}


def atom(taken):
    return {'element': 'atom', 'taken': 'E' if taken else 'N'}


def expected_elements(path):
    """(element, index of the record it comes from), as producer.hpp defines each call."""
    ctx = None
    for i, (kind, a, b, c) in enumerate(path):
        if kind == 'start':
            ctx = context(b, c)
            out = [{'element': 'trace_info', 'spec': 0, 'cc_enabled': False, 'cc_threshold': 0,
                    'in_transaction': False},
                   {'element': 'trace_on'}, {'element': 'context', 'context': ctx}, target(a)]
        elif kind == 'branch':
            out = [atom(a)]
        elif kind == 'branches':
            out = [atom(a >> k & 1) for k in range(b)]  # oldest in bit 0
        elif kind in ('indirect', 'exception_return'):
            out = [atom(True), target(a)]
        elif kind == 'exception':
            out = [{'element': 'exception', 'address': f'0x{b & ~1:016x}', 'isa': 'IS1',
                    'exception_type': a, 'exception_name': EXCEPTION_NAMES[a]}, target(c)]
        elif kind == 'timestamp':
            out = [{'element': 'timestamp', 'timestamp': a | b << 32}]
        elif kind == 'event':
            out = [{'element': 'event', 'event': a}]
        elif kind == 'sync':  # A-Sync, Trace Info, the current context and the next address
            out = [{'element': 'trace_info', 'spec': 0, 'cc_enabled': False, 'cc_threshold': 0,
                    'in_transaction': False}, {'element': 'context', 'context': ctx}, target(a)]
        else:
            raise Failure(f'path record {i}: unknown kind {kind}')
        for e in out:
            yield e, i


def decoded_elements(ete_dump, trace):
    r = subprocess.run([ete_dump, trace, *ETE_1_0, '--elements', '--json'],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or r.stderr:
        raise Failure(f'ete-dump exit status {r.returncode}: {r.stderr}')
    out = []
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if 'element' not in e:
            raise Failure(f'ete-dump reports: {line}')
        e.pop('session')
        e.pop('offset')
        if e['element'] == 'atom' and len(e['taken']) > 1:  # a run: one atom each, oldest first
            out.extend({'element': 'atom', 'taken': t} for t in e['taken'])
        else:
            out.append(e)
    return out


def compare(name, path, decoded):
    expected = list(expected_elements(path))
    for n, ((want, record), got) in enumerate(zip(expected, decoded)):
        if want != got:
            kind, a, b, c = path[record]
            raise Failure(f'{name}: element {n} differs\n  recorded (path record {record}: '
                          f'{kind} 0x{a:x} 0x{b:x} 0x{c:x}): {want}\n  decoded: {got}')
    if len(expected) != len(decoded):
        extra = decoded[len(expected)] if len(decoded) > len(expected) else \
            expected[len(decoded)][0]
        raise Failure(f'{name}: {len(expected)} elements recorded, {len(decoded)} decoded; '
                      f'the first unmatched: {extra}')
    if not any(kind == 'exception' for kind, *_ in path):
        raise Failure(f'{name}: no timer interrupt was traced')
    return expected


# ---- --measure ----------------------------------------------------------------------------
def functions(nm, elf):
    """Sorted (start, end, demangled name) of the ELF's functions."""
    out = subprocess.run([nm, '-C', '-S', '--defined-only', elf], capture_output=True,
                         text=True, check=True).stdout
    table = []
    for line in out.splitlines():
        m = re.match(r'([0-9a-f]+) ([0-9a-f]+) [tTwW] (.*)', line)
        if m:
            start = int(m.group(1), 16) & ~1
            table.append((start, start + int(m.group(2), 16), m.group(3)))
    table.sort()
    return table


def executed_pcs(log):
    """The PCs the core executed, in order, from a -singlestep -d exec,nochain log: one Trace
    line per one-instruction block, less the blocks QEMU logged but then did not run (an
    icount budget or an interrupt stopped it first) or ran again (an I/O instruction)."""
    pcs = []
    trace = re.compile(r'Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/')
    undone = re.compile(r'(?:Stopped execution of TB chain before \S+ \[|'
                        r'cpu_io_recompile: rewound execution of TB to )([0-9a-f]+)')
    with open(log) as f:
        for line in f:
            m = trace.match(line)
            if m:
                pcs.append(int(m.group(1), 16))
                continue
            m = undone.match(line)
            if m:
                if not pcs or pcs[-1] != int(m.group(1), 16):
                    raise Failure(f'{log}: cannot match "{line.strip()}" to the last block')
                pcs.pop()
    return pcs


# What a producer call may call besides the library: the C library's and the compiler's
# run-time helpers, and the sink's semihosting calls. Anything else is a counting error
# (a return taken for a call), reported rather than counted.
HELPERS = re.compile(r'(memcpy|memset|memmove|__aeabi_\w+|__gnu_\w+|__\w+[sd]i2|semihosting::.*)$')


def measure_calls(pcs, table):
    """Instructions from each producer call's entry to its return, by call kind and part."""
    starts = [f[0] for f in table]

    def function(pc):
        i = bisect.bisect_right(starts, pc) - 1
        return table[i] if i >= 0 and pc < table[i][1] else (pc, pc + 1, f'?{pc:x}')

    def part(name):
        if 'produce<' in name:
            return 'producer'  # firmware.cpp's produce<>, with the library inlined into it
        if re.match(r'(?:[\w:<>]+ )?tracecodec::', name):
            return 'producer'  # the library's out-of-line functions (a template's with its type)
        if 'write_chunk' in name:
            return 'sink'
        return None

    per_kind = {}  # call kind: [calls, instructions]
    parts = {'producer': 0, 'helpers': 0, 'sink': 0}
    inside = None  # the call kind being counted
    helper_of = None  # the part that called the helper we are in (memcpy, ...)
    prev_part = None
    for pc in pcs:
        start, _, name = function(pc)
        p = part(name)
        if inside is None:
            if p is None or 'produce<' not in name or pc != start:
                continue
            # produce<(anonymous namespace)::branch(bool)::{lambda...}>: the kind is branch.
            inside = re.search(r'produce<(?:\(anonymous namespace\)::)?(\w+)', name).group(1)
            per_kind.setdefault(inside, [0, 0])[0] += 1
        elif helper_of is not None:
            if p is None:  # still in the helper, or in what it calls
                if not HELPERS.match(name):
                    raise Failure(f'{name} at 0x{pc:x} reached from a producer call: '
                                  'not a known helper (update HELPERS)')
                parts['sink' if helper_of == 'sink' else 'helpers'] += 1
                per_kind[inside][1] += 1
                continue
            helper_of = None  # back from the helper
        elif p is None:
            if pc != start:  # returned from produce<>: the call is over
                inside = None
                continue
            if not HELPERS.match(name):
                raise Failure(f'{name} at 0x{pc:x} called from a producer call: '
                              'not a known helper (update HELPERS)')
            helper_of = prev_part  # a call (to a function's first instruction)
            parts['sink' if helper_of == 'sink' else 'helpers'] += 1
            per_kind[inside][1] += 1
            continue
        parts[p] += 1
        per_kind[inside][1] += 1
        prev_part = p
    return per_kind, parts


def measure(args, name, machine, cpu, elf, workdir, path, elements):
    log = os.path.join(workdir, 'exec.log')
    # One instruction per translation block, each block's execution logged with its PC.
    version = subprocess.run([args.qemu, '--version'], capture_output=True, text=True).stdout
    m = re.search(r'version (\d+)\.(\d+)', version)
    if m and (int(m.group(1)), int(m.group(2))) >= (8, 1):
        one_per_block = ['-accel', 'tcg,one-insn-per-tb=on']  # -singlestep's new name
    else:
        one_per_block = ['-singlestep']
    run_qemu(args.qemu, machine, cpu, elf, workdir,
             [*one_per_block, '-d', 'exec,nochain', '-D', log])
    pcs = executed_pcs(log)
    per_kind, parts = measure_calls(pcs, functions(args.nm, elf))
    os.remove(log)
    calls = sum(n for n, _ in per_kind.values())
    if calls != len(path):
        raise Failure(f'{name}: {calls} producer calls counted, {len(path)} recorded')
    total = sum(parts.values())
    size = os.path.getsize(os.path.join(workdir, 'trace.ete'))
    print(f'{name}: {len(path)} producer calls ({len(elements)} elements), {size} trace bytes, '
          f'{len(pcs)} instructions executed in all')
    print(f'  per producer call: {total / calls:.1f} instructions, {size / calls:.2f} bytes')
    print(f'  per element:       {total / len(elements):.1f} instructions, '
          f'{size / len(elements):.2f} bytes')
    print(f'  instructions in producer calls: {total} = {parts["producer"]} producer/library '
          f'+ {parts["helpers"]} memcpy/memset + {parts["sink"]} sink (semihosting write)')
    print('  by call:        calls  instructions/call')
    for kind, (n, insns) in sorted(per_kind.items(), key=lambda x: -x[1][0]):
        print(f'    {kind:16} {n:5}  {insns / n:8.1f}')


def check(args, spec):
    machine, cpu, elf = spec.split(':', 2)
    name = f'{machine} ({cpu})'
    with tempfile.TemporaryDirectory(prefix='firmware-') as workdir:
        run_qemu(args.qemu, machine, cpu, elf, workdir)
        path = read_path(os.path.join(workdir, 'path.bin'))
        trace = os.path.join(workdir, 'trace.ete')
        elements = compare(name, path, decoded_elements(args.ete_dump, trace))
        counts = {}
        for kind, *_ in path:
            counts[kind] = counts.get(kind, 0) + 1
        print(f'ok: {name}: {len(elements)} elements decoded from {os.path.getsize(trace)} bytes '
              f'equal the {len(path)} recorded calls '
              f'({", ".join(f"{k} {n}" for k, n in counts.items())})')
        if args.measure:
            measure(args, name, machine, cpu, elf, workdir, path, elements)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--qemu')
    ap.add_argument('--ete-dump')
    ap.add_argument('--nm', help='arm-none-eabi-nm, for --measure')
    ap.add_argument('--measure', action='store_true')
    ap.add_argument('--skip', metavar='REASON')
    ap.add_argument('elfs', nargs='*', metavar='MACHINE:CPU:ELF')
    args = ap.parse_args()
    if args.skip:
        print(f'skipped: {args.skip}')
        return 77
    if not args.qemu or not args.ete_dump or not args.elfs or (args.measure and not args.nm):
        ap.error('--qemu, --ete-dump and at least one MACHINE:CPU:ELF (--nm with --measure)')
    try:
        for spec in args.elfs:
            check(args, spec)
    except Failure as f:
        print(f'FAIL: {f}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
