#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""brisk against musl's own malloc, both statically linked into musl programs.

Builds brisk with musl-gcc (cmake/x86_64-linux-musl.cmake, folder
build-musl-bench), then each `brisk bench` workload twice with `musl-gcc
-static`: once alone (musl's malloc, mallocng) and once with libbrisk.a
(brisk's malloc replaces musl's whole family). Runs every workload at each
thread count with both, the runs interleaved (musl, brisk, musl, ...), and
prints the median seconds of each and brisk's time over musl's as a
Markdown table, with `uptime` before and after. Every run must report ok=1.

usage: tools/musl_bench.py [--runs N] [--threads 1,2,4] [--full] [--workloads a,b]

--full runs the workloads at their default sizes; the default is their
quick sizes (`--quick`): musl's malloc takes a minute or more per run of
some workloads at full size with threads.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import bench_build  # noqa: E402 (after the path)
import bench_runner  # noqa: E402
import bench_workloads  # noqa: E402
from brisk_bench import LINES_FULL, LINES_QUICK  # noqa: E402

BUILD = os.path.join(ROOT, "build-musl-bench")
# The workloads of `brisk bench`'s default run (README's table).
DEFAULT_WORKLOADS = "lines,strcopy,objects,churn,larson,prodcons,frag,bigbuffers"
BENCH_FLAGS = ["-O2", "-std=c11", "-D_GNU_SOURCE", "-fno-builtin-malloc", "-fno-builtin-free",
               "-fno-builtin-realloc", "-fno-builtin-calloc", "-pthread", "-static"]


def log(message):
    print(f"musl_bench: {message}", file=sys.stderr, flush=True)


def run(command, **kwargs):
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"musl_bench: {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def build(workloads):
    """The two static programs of each workload: {name: {"musl": path, "brisk": path}}."""
    log("building brisk with musl-gcc (build-musl-bench) ...")
    run(["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
         "-DCMAKE_TOOLCHAIN_FILE=cmake/x86_64-linux-musl.cmake", "-DBRISK_BUILD_TESTS=OFF"])
    run(["cmake", "--build", BUILD, "--target", "brisk_static"])
    library = os.path.join(BUILD, "libbrisk.a")
    bench = os.path.join(ROOT, "bench")
    programs = {}
    for name in workloads + ["gen_lines"]:
        programs[name] = {}
        for allocator in ("musl", "brisk"):
            out = os.path.join(BUILD, "static", f"{name}-{allocator}")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            extra = [library] if allocator == "brisk" else []
            run(["musl-gcc", *BENCH_FLAGS, os.path.join(bench, f"{name}.c"),
                 os.path.join(bench, "bench_common.c"), *extra, "-o", out])
            programs[name][allocator] = out
    return programs


def seconds_of(workload, program, argv):
    """The run's seconds (the workload's own figure where it sleeps on
    purpose, else the wall time) and its RESULT fields."""
    start = time.monotonic()
    result = subprocess.run([program, *argv], capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - start
    fields = bench_runner.parse_result_line(result.stdout)
    if result.returncode != 0 or not fields or fields.get("ok") != "1":
        sys.exit(f"musl_bench: {program} {' '.join(argv)} did not report ok=1:\n"
                 f"{result.stdout[-400:]}{result.stderr[-400:]}")
    if workload.time_key:
        return float(fields[workload.time_key])
    return wall


def main(argv):
    parser = argparse.ArgumentParser(prog="tools/musl_bench.py", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", default="1,2,4")
    parser.add_argument("--full", action="store_true", help="the workloads' default sizes")
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    args = parser.parse_args(argv)
    known = {w.name: w for w in bench_workloads.WORKLOADS}
    names = args.workloads.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown workloads: {', '.join(unknown)}")
    threads = [int(t) for t in args.threads.split(",")]
    quick = not args.full
    programs = build(names)
    lines_dir = None
    if "lines" in names:  # the line data, made by gen_lines, found by that name in bin_dir
        bin_dir = os.path.join(BUILD, "lines-bin")
        os.makedirs(bin_dir, exist_ok=True)
        target = os.path.join(bin_dir, "gen_lines")
        if not os.path.exists(target):
            os.symlink(programs["gen_lines"]["musl"], target)
        lines_dir = bench_build.lines_data(bin_dir, LINES_QUICK if quick else LINES_FULL, log)
    times = {}
    uptime_before = run(["uptime"]).strip()
    log(f"uptime: {uptime_before}")
    for r in range(args.runs):
        log(f"round {r + 1} of {args.runs} ...")
        for name in names:
            workload = known[name]
            for t in bench_workloads.thread_counts(workload, threads, quick):
                run_argv = ["--threads", str(t)] + (["--quick"] if quick else [])
                if workload.uses_lines:
                    run_argv += ["--dir", lines_dir]
                run_argv += workload.options
                for allocator in ("musl", "brisk"):
                    seconds = seconds_of(workload, programs[name][allocator], run_argv)
                    times.setdefault((name, t, allocator), []).append(seconds)
                    log(f"{name} {t} {allocator}: {seconds:.3f} s")
    uptime_after = run(["uptime"]).strip()
    sizes = "default sizes" if args.full else "quick sizes (--quick)"
    version = run(["dpkg-query", "-W", "-f=${Version}", "musl"]).strip()
    print(f"brisk and musl {version}'s malloc, each statically linked into the workload "
          f"(musl-gcc -static), {sizes}; median seconds of {args.runs} interleaved runs")
    print(f"uptime before: {uptime_before}")
    print(f"uptime after:  {uptime_after}\n")
    print("| workload | threads | musl (s) | brisk (s) | brisk / musl |")
    print("|---|--:|--:|--:|--:|")
    for name in names:
        for t in bench_workloads.thread_counts(known[name], threads, quick):
            musl = statistics.median(times[(name, t, "musl")])
            brisk = statistics.median(times[(name, t, "brisk")])
            print(f"| `{name}` | {t} | {musl:.3f} | {brisk:.3f} | {brisk / musl:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
