#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per GetMem/FreeMem pair under each memory manager, counted by
valgrind's callgrind (stable on a shared machine, unlike timings).

Runs build/bench/pascal/percall_{fpcheap,cmem,brisk} (and percall_fastmm4,
where FastMM4's sources were at hand for the build) under callgrind twice,
with --iterations N and with --iterations 0, and divides the difference of
the instruction counts by N: start-up and exit cancel out, what remains is
the loop (GetMem, FreeMem, the RTL's dispatch, and a few instructions of
loop body that are the same for every manager).

    bench/pascal/percall.py [--build build] [--iterations 1000000] [--size 32]
"""
import argparse
import os
import re
import subprocess
import sys

MANAGERS = ["fpcheap", "cmem", "brisk", "fastmm4"]
OPTIONAL = ("fastmm4",)


def instructions(argv):
    """Total instructions (Ir) of one run under callgrind."""
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                         capture_output=True, text=True)
    if run.returncode != 0 or "RESULT ok=1" not in run.stdout:
        sys.exit(f"{' '.join(argv)} failed:\n{run.stdout}\n{run.stderr}")
    match = re.search(r"Collected\s*:\s*(\d+)", run.stderr)
    if not match:
        sys.exit(f"no instruction count in callgrind's output:\n{run.stderr}")
    return int(match.group(1))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--iterations", type=int, default=1000000)
    parser.add_argument("--size", type=int, default=32)
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bench", "pascal")
    print(f"| manager | instructions per GetMem/FreeMem pair of {args.size} bytes |")
    print("|---|---:|")
    for manager in MANAGERS:
        binary = os.path.join(bin_dir, f"percall_{manager}")
        if manager in OPTIONAL and not os.access(binary, os.X_OK):
            continue
        with_loop = instructions([binary, "--iterations", str(args.iterations), "--size", str(args.size)])
        without = instructions([binary, "--iterations", "0", "--size", str(args.size)])
        print(f"| {manager} | {(with_loop - without) / args.iterations:.1f} |")


if __name__ == "__main__":
    main()
