#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""arm::classifier against a second implementation: GNU objdump.

Builds binary files of instruction words -- every distinct word of the conformance snapshots'
memory images (A64; the bindir_32 images also as A32 and T32), and random A64 words, A32 words
and T32 halfword pairs (fixed seed; half uniform, half drawn from the encoding spaces where the
P0 instructions live) -- disassembles them with aarch64-linux-gnu-objdump and
arm-linux-gnueabihf-objdump (-M force-thumb for T32), derives from each mnemonic what a trace
unit makes of the instruction (direct branch / indirect branch / ISB / WFx / TSTART / other,
link, conditional, direct target, T32 IT), and compares with what arm-classify-dump prints for
the same file.

Words objdump cannot decode (".inst", "<UNDEFINED>") are counted and skipped. A disagreement
fails the test unless an entry of EXPLAINED covers it; each entry says why the two differ.

Usage: classifier_objdump.py ARM_CLASSIFY_DUMP
Environment: TRACECODEC_CONFORMANCE_DIR (the snapshots; absent -> skipped, exit 77, unless
TRACECODEC_REQUIRE_CONFORMANCE=1, which also makes a missing objdump a failure).
"""
import array
import collections
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
OBJDUMP_A64 = "aarch64-linux-gnu-objdump"
OBJDUMP_ARM = "arm-linux-gnueabihf-objdump"
SEED = 0x7C0DEC
T32_NOP = 0xBF00

COND = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"


def field(w, hi, lo):
    return (w >> lo) & ((1 << (hi - lo + 1)) - 1)


# Disagreements with a known cause: (name, predicate, reason); the predicate takes the
# instruction set, the word (T32: first << 16 | second), objdump's mnemonic, and our and
# objdump's kinds.
def _t32_pc_write_base(mn):
    r = strip_cond(mn, DP_WRITES | (LOADS - {"ldr"}))
    return r is not None


EXPLAINED = [
    ("a32-opencsd-dp-pc-rule",
     lambda isa, w, mn, ok, tk: isa == "a32" and ok == "indirect" and tk == "other"
     and (w & 0x0E00F000) == 0x0000F000,
     "A32 bits [27:25] = 0b000 with bits [15:12] = 0b1111 is OpenCSD's 'data-processing to "
     "pc' rule, which the classifier keeps; it also covers words whose [15:12] is not a "
     "destination (compares with their (0) Rd bits set, multiplies' Ra/RdLo, stores, MSR): "
     "UNPREDICTABLE or SBZ-violating forms that compilers do not emit."),
    ("a32-unpredictable-byte-load-to-pc",
     lambda isa, w, mn, ok, tk: isa == "a32" and ok == "other" and tk == "indirect"
     and (w & 0x0C50F000) == 0x0450F000,
     "LDRB/LDRBT with Rt = pc is UNPREDICTABLE (Arm ARM F5 LDRB); OpenCSD and the "
     "classifier do not count it as a branch, objdump just names the load."),
    ("cp15isb-named-mcr",
     lambda isa, w, mn, ok, tk: isa != "a64" and ok == "isb" and tk == "other"
     and mn.startswith("mcr"),
     "MCR p15, 0, Rt, c7, c5, 4 is the (deprecated) CP15ISB barrier (Arm ARM G8); objdump "
     "prints it as a plain MCR."),
    ("t32-ldm-pc-named-clrm",
     lambda isa, w, mn, ok, tk: isa == "t32" and w >> 16 == 0xE89F and ok == "indirect"
     and tk == "other",
     "objdump (-m arm, any profile) decodes LDMIA.W pc, {..pc} as Armv8.1-M CLRM; in "
     "A-profile T32 an LDM that loads pc is an indirect branch (OpenCSD: the same)."),
    ("t32-unpredictable-pc-write",
     lambda isa, w, mn, ok, tk: isa == "t32" and w >> 16 >= 0xE800 and ok == "other"
     and tk == "indirect" and _t32_pc_write_base(mn),
     "T32 32-bit data-processing instructions, and loads other than LDR, with Rd/Rt = pc are "
     "UNPREDICTABLE (Arm ARM F3, F5); OpenCSD and the classifier do not count them as "
     "branches."),
    ("t32-ldr-register-loose",
     lambda isa, w, mn, ok, tk: isa == "t32" and (w >> 16) & 0xFFF0 == 0xF850
     and w & 0x0800 == 0 and w & 0x0FC0 != 0 and ok == "other" and tk == "indirect",
     "LDR (register) T2 needs bits [11:6] of the second halfword zero (other values are "
     "unallocated); objdump ignores them and prints ldr.w pc, [Rn, Rm, lsl #n]."),
    ("a64-cmpbr-newer-than-objdump",
     lambda isa, w, mn, ok, tk: isa == "a64" and (w & 0x7E000000) == 0x74000000,
     "FEAT_CMPBR (Armv9.6) postdates binutils 2.40, which prints these words as undefined "
     "(counted as undecodable, not as disagreements); listed for a newer objdump that names "
     "them cb<cc> and may see cc 0b100/0b101 (unallocated here) differently."),
]


def strip_cond(mn, bases):
    """(base, conditional) when mn is one of bases with an optional condition and .n/.w."""
    m = re.fullmatch(r"([a-z0-9]+?)(" + COND + r")?(\.[nw])?", mn)
    if m is None:
        return None
    for base, cond in ((m.group(1), m.group(2)), (m.group(1) + (m.group(2) or ""), None)):
        if base in bases:
            return base, cond is not None and cond != "al"
    return None


def target_of(ops):
    hexes = re.findall(r"\b0x([0-9a-f]+)\b", ops.split("<")[0])
    return int(hexes[-1], 16) if hexes else None


def first_operand(ops):
    return ops.split(",")[0].strip()


# What a trace unit makes of an instruction objdump names: (kind, link, conditional, target).
def theirs_a64(mn, ops):
    if mn in ("b", "bl"):
        return ("branch", mn == "bl", False, target_of(ops))
    if mn.startswith("b.") or mn.startswith("bc."):
        return ("branch", False, True, target_of(ops))
    if mn in ("cbz", "cbnz", "tbz", "tbnz") or re.fullmatch(r"cb[bh]?(" + COND + ")", mn):
        return ("branch", False, True, target_of(ops))
    if mn in ("br", "braa", "brab", "braaz", "brabz"):
        return ("indirect", False, False, None)
    if mn in ("blr", "blraa", "blrab", "blraaz", "blrabz"):
        return ("indirect", True, False, None)
    if mn in ("ret", "retaa", "retab", "retaasppc", "retabsppc", "retaasppcr", "retabsppcr",
              "eret", "eretaa", "eretab", "texit"):
        return ("indirect", False, False, None)
    if mn == "isb":
        return ("isb", False, False, None)
    if mn in ("wfi", "wfe", "wfit", "wfet"):
        return ("wfx", False, False, None)
    if mn == "tstart":
        return ("tstart", False, False, None)
    return ("other", False, False, None)


DP_WRITES = {b + s for b in ("and", "eor", "sub", "rsb", "add", "adc", "sbc", "rsc", "orr",
                              "orn", "mov", "bic", "mvn", "lsl", "lsr", "asr", "ror", "rrx",
                              "movw", "movt", "adr")
             for s in ("", "s")}
LOADS = {"ldr", "ldrt", "ldrb", "ldrbt", "ldrh", "ldrht", "ldrsb", "ldrsbt", "ldrsh",
         "ldrsht", "ldrex", "ldrexb", "ldrexh", "lda", "ldab", "ldah", "ldaex", "ldaexb",
         "ldaexh"}
LDM = {"ldm", "ldmia", "ldmib", "ldmda", "ldmdb", "ldmfd", "ldmfa", "ldmed", "ldmea", "pop"}


def theirs_aarch32(mn, ops, thumb):
    """A32 and T32: the branch mnemonics, and anything else that writes pc."""
    r = strip_cond(mn, {"b", "bl", "blx", "bx", "bxj", "bxns", "blxns", "cbz", "cbnz"})
    if r is not None:
        base, cond = r
        if base in ("cbz", "cbnz"):
            return ("branch", False, True, target_of(ops))
        if base in ("b", "bl") or (base == "blx" and target_of(ops) is not None
                                   and not first_operand(ops).startswith("r")):
            return ("branch", base != "b", cond, target_of(ops))
        return ("indirect", base in ("blx", "blxns"), cond, None)
    r = strip_cond(mn, {"tbb", "tbh", "eret", "rfe", "rfeia", "rfeib", "rfeda", "rfedb", "rfefd",
                        "rfefa", "rfeed", "rfeea"})
    if r is not None:
        return ("indirect", False, r[1], None)
    r = strip_cond(mn, {"isb"})
    if r is not None:
        return ("isb", False, r[1], None)
    r = strip_cond(mn, {"wfi", "wfe"})
    if r is not None:
        return ("wfx", False, r[1], None)
    r = strip_cond(mn, LDM)
    if r is not None:
        regs = ops[ops.find("{"):ops.find("}") + 1]
        if re.search(r"\bpc\b", regs):
            return ("indirect", False, r[1], None)
        return ("other", False, r[1], None)
    r = strip_cond(mn, LOADS | DP_WRITES)
    if r is not None and first_operand(ops) == "pc":
        return ("indirect", False, r[1], None)
    return ("other", False, False, None)


def parse_objdump(text, thumb):
    """offset -> (mnemonic, operands), or None where objdump cannot decode the word."""
    out = {}
    for line in text.splitlines():
        head, sep, rest = line.partition(":\t")
        if not sep:
            continue
        try:
            off = int(head, 16)
        except ValueError:
            continue
        if thumb and off % 4:
            continue
        parts = rest.split("\t")
        if len(parts) < 2:
            out[off] = None
            continue
        mn = parts[1].strip()
        ops = parts[2] if len(parts) > 2 else ""
        if mn.startswith(".") or "UNDEFINED" in line or "undefined" in line:
            out[off] = None
            continue
        for c in (" //", "\t@", ";", "\t"):
            ops = ops.split(c)[0]
        out[off] = (mn, ops.strip())
    return out


def parse_ours(text):
    out = {}
    for line in text.splitlines():
        off, kind, link, cond, target, it, undef = line.split()
        out[int(off, 16)] = (kind, link == "1", cond == "1",
                             None if target == "-" else int(target, 16), int(it, 16) != 0)
    return out


def compare(job):
    name, isa, path, fillers, helper = job
    thumb = isa == "t32"
    cmd = [OBJDUMP_A64, "-D", "-b", "binary", "-m", "aarch64", path] if isa == "a64" else \
        [OBJDUMP_ARM, "-D", "-b", "binary", "-m", "arm"] + (["-M", "force-thumb"] if thumb else []) + [path]
    dump = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    ours_text = subprocess.run([helper, isa, path], check=True, capture_output=True,
                               text=True).stdout
    theirs = parse_objdump(dump, thumb)
    ours = parse_ours(ours_text)
    data = open(path, "rb").read()
    words = array.array("I", data)
    if sys.byteorder != "little":
        words.byteswap()
    none = ("other", False, False, None, False)
    stats = collections.Counter()
    categories = collections.Counter()
    examples = {}
    for i, w in enumerate(words):
        if i in fillers:
            continue
        off = 4 * i
        t = theirs.get(off)
        if t is None:
            stats["undecodable"] += 1
            if ours.get(off, none)[0] != "other":
                stats["undecodable, P0 (ours)"] += 1
            continue
        mn, ops = t
        if isa == "a64":
            tk = theirs_a64(mn, ops)
        else:
            tk = theirs_aarch32(mn, ops, thumb)
        o = ours.get(off, none)
        key = w if not thumb else (w & 0xFFFF) << 16 | w >> 16
        diffs = []
        if o[0] != tk[0]:
            diffs.append("kind %s/%s" % (o[0], tk[0]))
        elif o[0] in ("branch", "indirect"):
            if o[1] != tk[1]:
                diffs.append("link %d/%d" % (o[1], tk[1]))
            if o[2] != tk[2]:
                diffs.append("conditional %d/%d" % (o[2], tk[2]))
            if o[0] == "branch" and o[3] != tk[3]:
                diffs.append("target")
        if thumb and o[4] != bool(re.fullmatch(r"it[te]{0,3}", mn)):
            diffs.append("it %d/%d" % (o[4], not o[4]))
        stats["compared"] += 1
        if o[0] != "other":
            stats["p0 (ours)"] += 1
        if not diffs:
            stats["agree"] += 1
            continue
        why = next((e for e in EXPLAINED if e[1](isa, key, mn, o[0], tk[0])), None)
        group = re.sub(r"\.[nw]$", "", mn)
        cond_name = ("eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt",
                     "gt", "le", "", "")[w >> 28]
        if isa == "a32" and cond_name and group.endswith(cond_name):
            group = group[:-2]
        cat = "%s %s: %s (ours/objdump) %s" % (
            "explained " + why[0] if why else "UNEXPLAINED", isa, ", ".join(diffs), group)
        categories[cat] += 1
        stats["explained" if why else "unexplained"] += 1
        examples.setdefault(cat, "%08x %s %s" % (key, mn, ops))
    return name, stats, categories, examples


def focused(rng, n, families, bits=32):
    fam = [(m, v) for m, v in families]
    out = array.array("I")
    for _ in range(n):
        m, v = fam[rng.randrange(len(fam))]
        out.append((rng.getrandbits(bits) & ~m) | (v & m))
    return out


A64_FAMILIES = [
    (0xFE000000, 0xD6000000),  # branch (register), ERET, DRPS, PAuth forms
    (0xFFFFF000, 0xD5033000),  # barriers
    (0xFFFFF000, 0xD5032000),  # hints (WFI, WFE)
    (0xFFFFFF00, 0xD5031000),  # WFET, WFIT
    (0xFFF00000, 0xD5200000),  # SYSL, MRS (TSTART, TTEST)
    (0xFE000000, 0x54000000),  # B.cond, BC.cond, RETAASPPC
    (0x7E000000, 0x74000000),  # CB<cc>
    (0x7C000000, 0x34000000),  # CBZ, TBZ
]
A32_FAMILIES = [
    (0x0E00F000, 0x0000F000),  # data-processing (register) to pc, misc, extra loads
    (0x0E00F000, 0x0200F000),  # data-processing (immediate) to pc, MSR, hints
    (0x0FF00000, 0x01200000),  # BX, BLX, BXJ, misc
    (0x0FF00000, 0x01600000),  # ERET, SMC, CLZ
    (0x0E108000, 0x08108000),  # LDM with pc
    (0x0C10F000, 0x0410F000),  # LDR pc
    (0xFE000000, 0xF8000000),  # RFE, SRS
    (0xFF000000, 0xF5000000),  # barriers, PLD
    (0x0FFFFF00, 0x0320F000),  # hints
    (0x0FFF0F00, 0x0E070F00),  # CP15 c7
]
T32_FAMILIES_16 = [(0xFF00, 0x4700), (0xFC00, 0x4400), (0xFF00, 0xBF00), (0xFE00, 0xBC00),
                   (0xF000, 0xD000), (0xF500, 0xB100), (0xF800, 0xE000)]
T32_FAMILIES_32 = [((0xF800, 0xF000), (0x8000, 0x8000)),  # branches, misc control
                   ((0xFFE0, 0xE8C0), (0x0000, 0x0000)),  # TBB, TBH, load/store exclusive
                   ((0xFE50, 0xE810), (0x8000, 0x8000)),  # LDM, RFE with pc
                   ((0xFF00, 0xF800), (0xF000, 0xF000)),  # loads to pc
                   ((0xFFE0, 0xF3A0), (0xD000, 0x8000)),  # hints, barriers
                   ((0xFFFF, 0xEE07), (0x0F00, 0x0F00))]  # CP15 c7


def t32_pairs(rng, n):
    pairs = []
    for _ in range(n // 2):
        pairs.append((rng.getrandbits(16), rng.getrandbits(16)))
    for _ in range(n - n // 2):
        if rng.random() < 0.4:
            m, v = T32_FAMILIES_16[rng.randrange(len(T32_FAMILIES_16))]
            pairs.append(((rng.getrandbits(16) & ~m) | v, 0))
        else:
            (m1, v1), (m2, v2) = T32_FAMILIES_32[rng.randrange(len(T32_FAMILIES_32))]
            pairs.append(((rng.getrandbits(16) & ~m1) | v1, (rng.getrandbits(16) & ~m2) | v2))
    return pairs


def t32_file(path, pairs):
    """One 4-byte item per pair. A 16-bit first instruction gets a NOP after it (so that
    objdump stays aligned); an IT gets 4 more NOPs (two filler items, not compared) so that
    its block ends before the next item."""
    out = array.array("H")
    fillers = set()
    for first, second in pairs:
        wide = (first & 0xF800) >= 0xE800
        out.extend((first, second if wide else T32_NOP))
        if (first & 0xFF00) == 0xBF00 and first & 0xF:
            for _ in range(2):
                fillers.add(len(out) // 2)
                out.extend((T32_NOP, T32_NOP))
    if sys.byteorder != "little":
        out.byteswap()
    with open(path, "wb") as f:
        out.tofile(f)
    return fillers


def write_words(path, words):
    if sys.byteorder != "little":
        words = array.array("I", words)
        words.byteswap()
    with open(path, "wb") as f:
        words.tofile(f)


def image_words(paths):
    seen = {}
    for p in paths:
        data = open(p, "rb").read()
        a = array.array("I", data[: len(data) // 4 * 4])
        if sys.byteorder != "little":
            a.byteswap()
        seen.update(dict.fromkeys(a))
    return array.array("I", seen)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    helper = sys.argv[1]
    require = os.environ.get("TRACECODEC_REQUIRE_CONFORMANCE") == "1"
    conf = os.environ.get("TRACECODEC_CONFORMANCE_DIR", "")
    snapshots = os.path.join(conf, "snapshots")
    if not conf or not os.path.isdir(snapshots):
        print("conformance corpus not found at %r" % conf)
        return 1 if require else SKIP
    missing = [t for t in (OBJDUMP_A64, OBJDUMP_ARM) if shutil.which(t) is None]
    if missing:
        print("not installed: %s (Debian: binutils-aarch64-linux-gnu, "
              "binutils-arm-linux-gnueabihf)" % ", ".join(missing))
        return 1 if require else SKIP

    images = sorted(p for p in glob.glob(os.path.join(snapshots, "*", "bindir*", "*"))
                    if os.path.isfile(p))
    images32 = [p for p in images if os.path.basename(os.path.dirname(p)) == "bindir_32"]
    if not images:
        print("no memory images under %s" % snapshots)
        return 1
    rng = random.Random(SEED)
    tmp = tempfile.mkdtemp(prefix="arm-classifier-objdump-")
    try:
        jobs = []

        def words_job(name, isa, words):
            path = os.path.join(tmp, name + ".bin")
            write_words(path, words)
            jobs.append((name, isa, path, set(), helper))

        def t32_job(name, pairs):
            path = os.path.join(tmp, name + ".bin")
            jobs.append((name, "t32", path, t32_file(path, pairs), helper))

        words_job("image-a64", "a64", image_words(images))
        w32 = image_words(images32)
        words_job("image-a32", "a32", w32)
        t32_job("image-t32", [(w & 0xFFFF, w >> 16) for w in w32])
        words_job("random-a64", "a64",
                  array.array("I", (rng.getrandbits(32) for _ in range(1_000_000)))
                  + focused(rng, 1_000_000, A64_FAMILIES))
        words_job("random-a32", "a32",
                  array.array("I", (rng.getrandbits(32) for _ in range(600_000)))
                  + focused(rng, 600_000, A32_FAMILIES))
        t32_job("random-t32", t32_pairs(rng, 800_000))

        total = collections.Counter()
        all_categories = collections.Counter()
        all_examples = {}
        with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
            for name, stats, categories, examples in pool.map(compare, jobs):
                print("%-11s compared %8d  agree %8d  P0 (ours) %7d  explained %6d  "
                      "unexplained %6d  undecodable by objdump %7d (P0 for us %d)" % (
                          name, stats["compared"], stats["agree"], stats["p0 (ours)"],
                          stats["explained"], stats["unexplained"], stats["undecodable"],
                          stats["undecodable, P0 (ours)"]))
                total.update(stats)
                all_categories.update(categories)
                for k, v in examples.items():
                    all_examples.setdefault(k, v)
        print("total: compared %d, agree %d, explained %d, unexplained %d, undecodable %d" % (
            total["compared"], total["agree"], total["explained"], total["unexplained"],
            total["undecodable"]))
        for cat, n in sorted(all_categories.items()):
            print("  %8d  %s   e.g. %s" % (n, cat, all_examples[cat]))
        used = {c.split()[1] for c in all_categories if c.startswith("explained")}
        for name, _, reason in EXPLAINED:
            if name in used:
                print("explained %s: %s" % (name, reason))
        return 1 if total["unexplained"] else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
