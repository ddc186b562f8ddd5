#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README.md's C++ code blocks are regions of the example programs, which the build compiles
and runs (examples/meson.build), so a README snippet cannot stop compiling unnoticed.

Every ```cpp block of README.md must follow a line
    <!-- example: examples/FILE.cpp [readme:NAME] -->
and be exactly the lines between `// [readme:NAME]` and `// [/readme:NAME]` in that file
(the region's common indentation removed; a block indented inside a list item has its fence's
indentation removed). Every region of examples/*.cpp must be shown in the README.

Usage: check_readme.py SOURCE_ROOT           check (exit 1 with a diff on any difference)
       check_readme.py SOURCE_ROOT --update  rewrite README.md's blocks from the regions
"""
import difflib
import glob
import os
import re
import sys

root = sys.argv[1]
update = "--update" in sys.argv[2:]
readme_path = os.path.join(root, "README.md")
failures = []

TAG = re.compile(r"^\s*<!-- example: (examples/[A-Za-z0-9_./-]+\.cpp) \[readme:([A-Za-z0-9_-]+)\] -->\s*$")
BEGIN = re.compile(r"^\s*// \[readme:([A-Za-z0-9_-]+)\]\s*$")
END = re.compile(r"^\s*// \[/readme:([A-Za-z0-9_-]+)\]\s*$")


def dedent(lines):
    indents = [len(l) - len(l.lstrip(" ")) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in lines]


def read_regions(path):
    """NAME -> lines of the region, for one example file."""
    regions, open_name, body = {}, None, []
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f.read().split("\n"), 1):
            b, e = BEGIN.match(line), END.match(line)
            if b:
                if open_name:
                    failures.append(f"{rel}:{number}: [readme:{b.group(1)}] inside [readme:{open_name}]")
                open_name, body = b.group(1), []
            elif e:
                if e.group(1) != open_name:
                    failures.append(f"{rel}:{number}: [/readme:{e.group(1)}] without its [readme:{e.group(1)}]")
                else:
                    if open_name in regions:
                        failures.append(f"{rel}:{number}: region {open_name} twice")
                    regions[open_name] = dedent(body)
                open_name = None
            elif open_name:
                body.append(line.rstrip())
    if open_name:
        failures.append(f"{rel}: [readme:{open_name}] never closed")
    return regions


regions = {}  # (path, name) -> lines
for path in sorted(glob.glob(os.path.join(root, "examples", "*.cpp"))):
    for name, lines in read_regions(path).items():
        regions[(os.path.relpath(path, root), name)] = lines
if not regions:
    failures.append("no // [readme:NAME] regions in examples/*.cpp")

with open(readme_path, encoding="utf-8") as f:
    readme = f.read().split("\n")

out, used, blocks = [], set(), 0
i = 0
while i < len(readme):
    line = readme[i]
    fence = re.match(r"^(\s*)```(\S*)\s*$", line)
    if not fence:
        out.append(line)
        i += 1
        continue
    indent, lang = fence.group(1), fence.group(2)
    j = i + 1
    while j < len(readme) and readme[j].strip() != "```":
        j += 1
    if j == len(readme):
        failures.append(f"README.md:{i + 1}: code block never closed")
        out.extend(readme[i:])
        break
    body = [l[len(indent):] if l.startswith(indent) else l.lstrip(" ") for l in readme[i + 1:j]]
    body = [l.rstrip() for l in body]
    if lang in ("cpp", "c++", "cxx"):
        blocks += 1
        prev = next((readme[k] for k in range(i - 1, -1, -1) if readme[k].strip()), "")
        tag = TAG.match(prev)
        if not tag:
            failures.append(f"README.md:{i + 1}: a C++ block without the line "
                            "'<!-- example: examples/FILE.cpp [readme:NAME] -->' before it")
        elif (tag.group(1), tag.group(2)) not in regions:
            failures.append(f"README.md:{i + 1}: no region [readme:{tag.group(2)}] in {tag.group(1)}")
        else:
            key = (tag.group(1), tag.group(2))
            used.add(key)
            want = regions[key]
            if body != want:
                if update:
                    body = want
                else:
                    diff = "\n".join(difflib.unified_diff(
                        want, body, f"{key[0]} [readme:{key[1]}]", f"README.md:{i + 2}", lineterm=""))
                    failures.append(f"README.md:{i + 1}: block differs from {key[0]} [readme:{key[1]}]:\n{diff}")
    out.append(line)
    out.extend(indent + l if l else "" for l in body)
    out.append(readme[j])
    i = j + 1

for key in sorted(set(regions) - used):
    failures.append(f"{key[0]}: region [readme:{key[1]}] is not shown in README.md")

if update and out != readme:
    with open(readme_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    print("README.md updated from the examples")

if failures:
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1)
print(f"ok: {blocks} C++ blocks of README.md are the {len(regions)} regions of examples/*.cpp")
