#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Firmware budgets (issue 19): code size and worst-case stack of the encoder, the element
compressor, the producer API and the packet decoder, each linked alone into a Cortex-M image.

For each core and each piece of pieces.cpp: compile with arm-none-eabi-g++ -Os (the firmware
flags), link with the minimal start-up and --gc-sections, and measure
- size: text + rodata of the image, minus that of the image without the piece (start-up and
  main only);
- stack: for each public call (the extern "C" tc_* functions), the deepest path through the
  call graph GCC writes with -fcallgraph-info=su, each function counted with its -fstack-usage
  frame. Functions outside the translation unit (memcpy, memset, libgcc helpers) are read from
  the linked image's disassembly: the bytes their prologue pushes and subtracts from sp, and
  the functions they call. An indirect call (the producer's chunk sink) is the caller's code:
  the table says so.

Prints the table and exits 1 if a gated piece is over its budget (Cortex-M4 and Cortex-M33;
Cortex-M0+ must build). Usage:
  budget.py CXX SIZE OBJDUMP SOURCE_DIR INCLUDE_DIR WORK_DIR [--markdown FILE]
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

CORES = [  # name, -mcpu, gated
    ("Cortex-M4", "cortex-m4", True),
    ("Cortex-M33", "cortex-m33", True),
    ("Cortex-M0+", "cortex-m0plus", False),
]
PIECES = [  # name, PIECE value, size budget (bytes); what a firmware image instantiates
    ("packet encoder", 1, 4096),
    ("element compressor", 2, 8192),
    ("producer API", 3, 8192),
    ("packet decoder", 4, 8192),
]
STACK_BUDGET = 256
FLAGS = ["-std=c++20", "-ffreestanding", "-fno-exceptions", "-fno-rtti", "-mthumb", "-Os",
         "-ffunction-sections", "-fdata-sections", "-Wall", "-Wextra", "-Werror"]


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stdout.write(" ".join(cmd) + "\n" + r.stdout)
        raise SystemExit(1)
    return r.stdout


def image_size(size_tool, elf):
    """text + rodata (everything in flash but .data's initial values) and RAM (data + bss)."""
    flash = ram = 0
    for line in run([size_tool, "-A", elf]).splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        name, n = parts[0], int(parts[1])
        if name in (".vectors", ".text", ".rodata", ".init_array", ".ARM.exidx"):
            flash += n
        elif name in (".data", ".bss"):
            ram += n
    return flash, ram


NODE = re.compile(r'node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")


def read_callgraph(ci):
    """Frames (bytes, or None for a function the unit only calls) and edges of a .ci file."""
    frames, edges = {}, defaultdict(set)
    with open(ci) as f:
        text = f.read()
    for title, label in NODE.findall(text):
        m = FRAME.search(label)
        if m is None:
            frames.setdefault(title, None)
            continue
        if m.group(2) not in ("static", "dynamic,bounded"):
            raise SystemExit(f"budget: {title}: stack usage is {m.group(2)}: no bound")
        frames[title] = int(m.group(1))
    for a, b in EDGE.findall(text):
        edges[a].add(b)
    return frames, edges


FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
PUSH = re.compile(r"\t(?:push|stmdb\s+sp!,)(?:\.w)?\s+\{([^}]*)\}")
VPUSH = re.compile(r"\tvpush\s+\{([^}]*)\}")
SUBSP = re.compile(r"\tsub(?:\.w|w)?\s+sp,\s*(?:sp,\s*)?#(\d+)")
CALL = re.compile(r"\t(bl|blx|b\.w|b|bx|b\.n)\s+([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")
INDIRECT = re.compile(r"\tblx\s+r\d+")


def reglist_count(regs, width):
    n = 0
    for part in regs.split(","):
        part = part.strip()
        m = re.match(r"([a-z]+)(\d+)-[a-z]+(\d+)$", part)
        n += int(m.group(3)) - int(m.group(2)) + 1 if m else 1
    return n * width


def disassembly(objdump, elf):
    """Every function of the image: the bytes its code pushes and subtracts from sp, the
    functions it calls (bl), the functions it jumps to at their start (a tail call: its frame
    is gone by then), and whether it calls through a register."""
    frames, calls, tails, indirect, current = {}, defaultdict(set), defaultdict(set), set(), None
    for line in run([objdump, "-d", "--no-show-raw-insn", elf]).splitlines():
        m = FUNC.match(line.strip())
        if m:
            current = m.group(2)
            frames[current] = 0
            continue
        if current is None:
            continue
        m = PUSH.search(line)
        if m:
            frames[current] += reglist_count(m.group(1), 4)
        m = VPUSH.search(line)
        if m:
            frames[current] += reglist_count(m.group(1), 8)
        m = SUBSP.search(line)
        if m:
            frames[current] += int(m.group(1))
        if INDIRECT.search(line):
            indirect.add(current)
        m = CALL.search(line)
        if m and m.group(3) != current and m.group(4) is None:
            (calls if m.group(1) in ("bl", "blx") else tails)[current].add(m.group(3))
    return frames, calls, tails, indirect


def worst_stacks(su_frames, image, entries):
    """Deepest stack of each entry: (bytes, path, whether an indirect call is on the way), the
    path a list of (function, bytes its frame adds). A function's frame is the larger of GCC's
    -fstack-usage figure (when the unit has one) and what its prologue reserves; a tail call
    runs with its caller's frame gone, so it adds nothing for the caller."""
    frames, calls, tails, indirect = image
    memo = {}

    def frame_of(name):
        return max(frames[name], su_frames.get(name) or 0)

    def deepest(name, seen):
        if name in memo:
            return memo[name]
        if name in seen:
            raise SystemExit(f"budget: recursion through {name}")
        if name not in frames:
            raise SystemExit(f"budget: {name}: not in the image, frame unknown")
        own = frame_of(name)
        depth, path = own, [(name, own)]
        ind = name in indirect
        for c in calls.get(name, ()):
            d, p, i = deepest(c, seen | {name})
            ind = ind or i
            if own + d > depth:
                depth, path = own + d, [(name, own)] + p
        for c in tails.get(name, ()):
            d, p, i = deepest(c, seen | {name})
            ind = ind or i
            if d > depth:
                depth, path = d, [(name + " (then jumps to)", 0)] + p
        memo[name] = (depth, path, ind)
        return memo[name]

    return {e: deepest(e, frozenset()) for e in entries}


def su_frames_by_symbol(ci):
    """-fstack-usage frames of the unit's functions, by their symbol (the .ci titles carry the
    file name for functions with internal linkage)."""
    frames, _ = read_callgraph(ci)
    return {t.split(":", 1)[-1]: f for t, f in frames.items() if f is not None}


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), stdout=subprocess.PIPE,
                         text=True).stdout.splitlines()
    return out if len(out) == len(names) else names


def short(name):
    name = re.sub(r"fixed_config<tracecodec::ete::registers\{[^}]*\}>", "unit", name)
    name = name.replace("tracecodec::ete::", "")
    return name if len(name) < 110 else name[:107] + "..."


def main():
    args = sys.argv[1:]
    markdown = None
    if "--markdown" in args:
        i = args.index("--markdown")
        markdown = args[i + 1]
        del args[i:i + 2]
    if len(args) != 6:
        print(__doc__)
        return 2
    cxx, size_tool, objdump, src, include, work = args
    os.makedirs(work, exist_ok=True)
    rows, failures = [], []
    for core, mcpu, gated in CORES:
        flags = FLAGS + [f"-mcpu={mcpu}", f"-I{include}"]
        start = os.path.join(work, f"startup-{mcpu}.o")
        run([cxx] + flags + ["-c", os.path.join(src, "startup.cpp"), "-o", start])

        def build(piece):
            base = os.path.join(work, f"{mcpu}-{piece}")
            run([cxx] + flags + [f"-DPIECE={piece}", "-fcallgraph-info=su", "-c",
                                 os.path.join(src, "pieces.cpp"), "-o", base + ".o"])
            run([cxx] + flags + ["-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections",
                                 "-T", os.path.join(src, "budget.ld"), start, base + ".o",
                                 "-o", base + ".elf"])
            return base

        base_flash, base_ram = image_size(size_tool, build(0) + ".elf")
        for name, piece, budget in PIECES:
            base = build(piece)
            flash, ram = image_size(size_tool, base + ".elf")
            flash -= base_flash
            ram -= base_ram
            su = su_frames_by_symbol(base + ".ci")
            image = disassembly(objdump, base + ".elf")
            entries = [n for n in image[0] if re.fullmatch(r"tc_\w+", n)]
            if not entries:
                raise SystemExit(f"budget: no tc_* entry points in {base}.elf")
            stacks = worst_stacks(su, image, entries)
            worst = max(stacks, key=lambda e: stacks[e][0])
            depth, path, _ = stacks[worst]
            indirect = any(s[2] for s in stacks.values())
            over = []
            if flash > budget:
                over.append(f"size {flash} > {budget}")
            if depth > STACK_BUDGET:
                over.append(f"stack {depth} > {STACK_BUDGET}")
            status = "over: " + ", ".join(over) if over else "ok"
            if not gated:
                status = "builds (not gated)" + (f"; {', '.join(over)}" if over else "")
            elif over:
                failures.append(f"{core} {name}: " + ", ".join(over))
            rows.append((core, name, flash, budget, ram, worst, depth, indirect, status))
            print(f"{core} {name}: {flash} B text+rodata (budget {budget}), {ram} B RAM, "
                  f"worst stack {depth} B in {worst} (budget {STACK_BUDGET}){' + the sink' if indirect else ''}: {status}")
            for e in sorted(stacks):
                d, p, ind = stacks[e]
                print(f"    {e}: {d} B{' + sink' if ind else ''}")
            names = demangle([n.replace(" (then jumps to)", "") for n, _ in path])
            print("      deepest: " + " -> ".join(
                f"{short(n)} ({f})" for n, (_, f) in zip(names, path)))
    table = ["| core | piece | text+rodata (B) | budget | RAM (B) | worst call | stack (B) | budget | |",
             "|---|---|---|---|---|---|---|---|---|"]
    for core, name, flash, budget, ram, worst, depth, indirect, status in rows:
        table.append(f"| {core} | {name} | {flash} | {budget} | {ram} | `{worst}` | "
                     f"{depth}{' + sink' if indirect else ''} | {STACK_BUDGET} | {status} |")
    print("\n".join(table))
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(table) + "\n")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
