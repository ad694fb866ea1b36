#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per GetMem/FreeMem pair under each memory manager, counted by
valgrind's callgrind (stable on a shared machine, unlike timings).

Runs build/bench/pascal/percall_{fpcheap,cmem,brisk} (and percall_fastmm4
and percall_fpcx64mm{,_server,_booster}, where FastMM4's and mORMot 2's
sources were at hand for the build), and percall_cmem over jemalloc and
mimalloc where Debian's packages are installed, under callgrind twice,
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

MANAGERS = ["fpcheap", "cmem", "brisk", "fastmm4", "fpcx64mm", "fpcx64mm_server",
            "fpcx64mm_booster"]
OPTIONAL = ("fastmm4", "fpcx64mm", "fpcx64mm_server", "fpcx64mm_booster")
# cmem over another malloc: the library preloaded into the cmem binary
PRELOADED = {"jemalloc": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
             "mimalloc": "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"}


def instructions(argv, preload=None):
    """Total instructions (Ir) of one run under callgrind."""
    env = dict(os.environ, LD_PRELOAD=preload) if preload else None
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                         capture_output=True, text=True, env=env)
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
    columns = [(m, m, None) for m in MANAGERS]
    columns += [(f"cmem+{name}", "cmem", path) for name, path in PRELOADED.items()]
    for name, manager, preload in columns:
        binary = os.path.join(bin_dir, f"percall_{manager}")
        if (manager in OPTIONAL and not os.access(binary, os.X_OK)) or (
                preload and not os.path.exists(preload)):
            continue
        loop = [binary, "--iterations", str(args.iterations), "--size", str(args.size)]
        with_loop = instructions(loop, preload)
        without = instructions(loop[:2] + ["0"] + loop[3:], preload)
        print(f"| {name} | {(with_loop - without) / args.iterations:.1f} |")


if __name__ == "__main__":
    main()
