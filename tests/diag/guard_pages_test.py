# SPDX-License-Identifier: MIT
"""BRISK_GUARD catches what it promises: guard_victim (preloaded, BRISK_GUARD=1,
so that blocks are guarded often) overflows a guarded block onto the next
page, reads before one, reads one after its free, writes within its rounding
and frees it, frees it twice. Each must die by SIGABRT with the report naming
the kind, the access's distance from the block, the function that made the
access and those that allocated and freed the block. A sound program must run
to its end with some blocks guarded, and the setting off or bad must guard
nothing.

usage: guard_pages_test.py LIBBRISK GUARD_VICTIM
"""
import os
import re
import signal
import subprocess
import sys

failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(what)


def run(library, victim, case, guard="1"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    env.update(LD_PRELOAD=library, BRISK_GUARD=guard)
    # a cross build's program runs through its emulator (qemu-user)
    emulator = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()
    return subprocess.run([*emulator, victim, case], env=env, capture_output=True, text=True, timeout=60)


def after(report, heading):
    """The first stack frame's line under a heading of the report."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if heading in line:
            frames = [l for l in lines[i + 1:i + 4] if re.match(r"brisk:     #\d", l)]
            return "\n".join(frames)
    return ""


CASES = [
    # case, first line, access function, freed?
    ("overflow", r"heap overflow: access at 0x[0-9a-f]+, 12 bytes past the end of the 20-byte "
                 r"block at (0x[0-9a-f]+)$", "write_at", False),
    ("underflow", r"heap underflow: access at 0x[0-9a-f]+, 1 bytes before the 20-byte block at "
                  r"(0x[0-9a-f]+)$", "touch", False),
    ("use-after-free", r"use after free: access at 0x[0-9a-f]+, 8 bytes into the 20-byte block "
                       r"at (0x[0-9a-f]+), freed$", "touch", True),
    ("overflow-at-free", r"heap overflow of pointer (0x[0-9a-f]+)$", "release_watched", False),
    ("double-free", r"double free of pointer (0x[0-9a-f]+)$", "release_watched", True),
]


def main(argv):
    library, victim = argv
    for case, first, accessor, freed in CASES:
        result = run(library, victim, case)
        report = result.stderr
        pointer = re.search(r"pointer=(0x[0-9a-f]+)", result.stdout)
        check(f"{case}: dies by SIGABRT", result.returncode == -signal.SIGABRT,
              f"status {result.returncode}, stdout {result.stdout!r}, stderr {report[-800:]!r}")
        m = re.search(r"^brisk: error: " + first, report, re.M)
        check(f"{case}: the report names the kind and the block", m is not None and pointer and
              m.group(1) == pointer.group(1), report[:600])
        check(f"{case}: the access is at {accessor}()",
              re.search(rf"#\d+ 0x[0-9a-f]+ {accessor} \(.*guard_victim\.c:\d+",
                        after(report, "brisk:   at (thread")) is not None, report)
        check(f"{case}: the allocation's stack names allocate_watched()",
              "allocate_watched (" in after(report, "was allocated by thread"), report)
        frees = after(report, "and freed by thread")
        check(f"{case}: the free's stack " + ("names release_watched()" if freed else "is absent"),
              ("release_watched (" in frees) if freed else frees == "", report)
        check(f"{case}: says it was BRISK_GUARD", "found by BRISK_GUARD" in report, report)
    result = run(library, victim, "sound")
    m = re.search(r"sound: (\d+) of (\d+) blocks guarded", result.stdout)
    check("a sound program runs to its end with blocks guarded, contents intact",
          result.returncode == 0 and m is not None and int(m.group(1)) > 0,
          f"status {result.returncode}: {result.stdout} {result.stderr[-500:]}")
    for guard in ("0", "off"):
        result = run(library, victim, "sound", guard)
        check(f"BRISK_GUARD={guard}: nothing guarded", result.returncode == 2 and
              "sound: 0 of" in result.stdout, result.stdout + result.stderr)
    result = run(library, victim, "sound", "sometimes")
    check("BRISK_GUARD=sometimes: a warning naming it, nothing guarded",
          'BRISK_GUARD="sometimes" is not valid' in result.stderr and "sound: 0 of" in result.stdout,
          result.stderr)
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
