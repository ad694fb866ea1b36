#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the workloads of src/lib.rs under each global-allocator crate and
prints a Markdown table: the median over the repetitions of wall time, of
CPU time (user + system, which another program's load on the machine
disturbs less than wall time) and of peak resident memory (VmHWM, what
getrusage's ru_maxrss reports), with the
load averages of `uptime` before and after. The runs are interleaved (each
repetition runs every workload under every allocator, in a rotated order), so
a change in the machine's load falls on all of them alike.

usage: bench/run.py [--reps 5] [--threads 4] [--scale 1] [--only strings,...]
Builds with `cargo build --release` first (the cargo on PATH: these crates
need a newer rustc than Debian 12's).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOCATORS = ["system", "brisk", "mimalloc", "snmalloc", "jemalloc"]
CRATES = {"system": "std::alloc::System (glibc)", "brisk": "briskalloc",
          "mimalloc": "mimalloc", "snmalloc": "snmalloc-rs", "jemalloc": "tikv-jemallocator"}
WORKLOADS = ["strings", "hashmap", "channels"]


def versions():
    """The crates' versions, from Cargo.lock."""
    found, name = {}, None
    with open(os.path.join(HERE, "Cargo.lock")) as lock:
        for line in lock:
            if line.startswith("name = "):
                name = line.split('"')[1]
            elif line.startswith("version = ") and name:
                found[name] = line.split('"')[1]
    return found


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    workloads = [w for w in args.only.split(",") if w]
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "target"))
    results = {(w, a): [] for w in workloads for a in ALLOCATORS}
    checksums = {}
    before = uptime()
    for rep in range(args.reps):
        order = ALLOCATORS[rep % len(ALLOCATORS):] + ALLOCATORS[:rep % len(ALLOCATORS)]
        for workload in workloads:
            for allocator in order:
                program = os.path.join(target, "release", allocator)
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                out = subprocess.run([program, workload, str(args.threads), str(args.scale)],
                                     capture_output=True, text=True, check=True).stdout.split()
                now = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
                seconds, peak_kib, checksum = float(out[0]), int(out[1]), out[2]
                # every allocator must have done the same work
                if checksums.setdefault(workload, checksum) != checksum:
                    sys.exit(f"run.py: {workload} under {allocator}: checksum {checksum}, "
                             f"others {checksums[workload]}")
                results[(workload, allocator)].append((seconds, peak_kib, cpu))
        print(f"run.py: repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    after = uptime()

    print(f"`bench/run.py --reps {args.reps} --threads {args.threads} --scale {args.scale}`"
          f" (medians of {args.reps}, interleaved)\n")
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    lock = versions()
    crates = ", ".join(f"{CRATES[a]} {lock.get(CRATES[a], '?')}" for a in ALLOCATORS[1:])
    print(f"{rustc}; {crates}; {os.cpu_count()} CPUs  ")
    print(f"load before: `{before}`  ")
    print(f"load after: `{after}`\n")
    print("| workload | allocator | time (s) | vs system | CPU (s) | vs system "
          "| peak RSS (MiB) | vs system |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for workload in workloads:
        base = [statistics.median(run[i] for run in results[(workload, "system")])
                for i in range(3)]
        for allocator in ALLOCATORS:
            runs = results[(workload, allocator)]
            wall, peak, cpu = (statistics.median(run[i] for run in runs) for i in range(3))
            print(f"| {workload} | {CRATES[allocator]} | {wall:.3f} | {wall / base[0]:.2f} | "
                  f"{cpu:.3f} | {cpu / base[2]:.2f} | {peak / 1024:.1f} | {peak / base[1]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
