# SPDX-License-Identifier: MIT
"""`brisk overhead`: what each diagnostic mode costs on the benchmark workloads.

Runs each workload with brisk preloaded under five configurations, interleaved,
several repetitions, medians of wall time:
  nodiag   brisk built with -DBRISK_DIAGNOSTICS=OFF (build-nodiag/): no diagnostic code
  off      the normal build, every mode off (what users run)
  stats    BRISK_STATS=1
  profile  BRISK_PROFILE=1
  check    BRISK_CHECK=1
  heap     BRISK_HEAP_PROFILE at the default rate, with libbrisk-heapprof.so (what
           `brisk run --heap-profile` preloads; not in the default --modes)
  countdown  libbrisk-heapprof.so with the profile off: its fast path's countdown alone
  guard    BRISK_GUARD=on (sampled guard pages at the default rate); guard:N, at rate N
and, single-threaded, the callgrind instruction counts of nodiag, off, heap and
the guard modes, which do not drift with the machine's load; --cpu adds the
median CPU time (user and system: a guard page's system calls are system time);
--in-run the median of the workload's own clock (its `secs`: the timed work,
without the process's start-up and exit, where the profile is written).
Prints a markdown table.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import brisk_bench
from bench_runner import OK, run_measured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["lines", "strcopy", "cache", "churn", "objects", "prodcons", "larson"]


def build(folder, options):
    for command in (["cmake", "-S", ROOT, "-B", folder, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                     *options], ["cmake", "--build", folder]):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"brisk overhead: {' '.join(command)} failed:\n{result.stderr[-2000:]}")


def instructions(library, argv, settings):
    env = dict(os.environ, LD_PRELOAD=library, **settings)
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                             *argv], capture_output=True, text=True, env=env)
    match = re.search(r"Collected : (\d+)", result.stderr)
    return int(match.group(1)) if match else None


def main(argv):
    parser = argparse.ArgumentParser(prog="brisk overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--modes", default="nodiag,off,stats,profile,check",
                        help="comma-separated configurations to run")
    parser.add_argument("--only", help="comma-separated workloads (default: all the workloads)")
    parser.add_argument("--cpu", action="store_true", help="show median CPU time too")
    parser.add_argument("--in-run", action="store_true",
                        help="show the median of the workload's own clock too (start-up and "
                             "exit left out)")
    args = parser.parse_args(argv)
    workloads = args.only.split(",") if args.only else WORKLOADS
    unknown = set(workloads) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    build(os.path.join(ROOT, "build"), [])
    build(os.path.join(ROOT, "build-nodiag"), ["-DBRISK_DIAGNOSTICS=OFF",
                                               "-DBRISK_BUILD_TESTS=OFF"])
    bench_dir = os.path.join(ROOT, "build", "bench")
    launcher = os.path.join(bench_dir, "measure")
    libs = {"nodiag": os.path.join(ROOT, "build-nodiag", "libbrisk.so"),
            "normal": os.path.join(ROOT, "build", "libbrisk.so"),
            "heapprof": os.path.join(ROOT, "build", "libbrisk-heapprof.so.0")}
    lines_dir = brisk_bench.lines_data(
        bench_dir, brisk_bench.LINES_QUICK if args.quick else brisk_bench.LINES_FULL)
    scratch = tempfile.mkdtemp(prefix="brisk-overhead-")
    configs = {
        "nodiag": (libs["nodiag"], {}),
        "off": (libs["normal"], {}),
        "stats": (libs["normal"], {"BRISK_STATS": "1",
                                   "BRISK_STATS_FILE": os.path.join(scratch, "stats")}),
        "profile": (libs["normal"], {"BRISK_PROFILE": "1",
                                     "BRISK_PROFILE_FILE": os.path.join(scratch, "profile")}),
        "check": (libs["normal"], {"BRISK_CHECK": "1"}),
        "countdown": (libs["heapprof"], {}),
        "heap": (libs["heapprof"], {"BRISK_HEAP_PROFILE": os.path.join(scratch, "heap.pb.gz")}),
        "guard": (libs["normal"], {"BRISK_GUARD": "on"}),
    }
    modes = args.modes.split(",")
    for mode in modes:
        if re.fullmatch(r"guard:\d+", mode):
            configs[mode] = (libs["normal"], {"BRISK_GUARD": mode.split(":")[1]})
    if "off" not in modes or set(modes) - set(configs):
        parser.error(f"--modes takes a list of {', '.join(configs)}, including off")
    configs = {name: configs[name] for name in modes}

    def workload_argv(name, threads, quick):
        command = [os.path.join(bench_dir, name), "--threads", str(threads)]
        if quick:
            command.append("--quick")
        if name == "lines":
            command += ["--dir", lines_dir]
        return command

    times = {(w, c): [] for w in workloads for c in configs}
    cpu = {(w, c): [] for w in workloads for c in configs}
    inrun = {(w, c): [] for w in workloads for c in configs}
    for rep in range(args.reps):
        for w in workloads:
            order = list(configs)
            order = order[rep % len(order):] + order[:rep % len(order)]
            for c in order:
                library, env = configs[c]
                result = run_measured(launcher, workload_argv(w, args.threads, args.quick),
                                      library, 600, env)
                status = result.status if result.status != OK else f"{result.wall_s:.3f}s"
                print(f"rep {rep + 1}/{args.reps} {w:9} {c:8} {status}", file=sys.stderr)
                if result.status == OK:
                    times[(w, c)].append(result.wall_s)
                    cpu[(w, c)].append(result.user_s + result.sys_s)
                    inrun[(w, c)].append(float(result.result.get("secs", "nan")))
                else:
                    times[(w, c)].append(float("nan"))
                    cpu[(w, c)].append(float("nan"))
                    inrun[(w, c)].append(float("nan"))
    counts = {}
    counted = [c for c in configs
               if c in ("nodiag", "off", "countdown", "heap") or c.startswith("guard")]
    if not args.no_callgrind:
        for w in workloads:
            for c in counted:
                counts[(w, c)] = instructions(configs[c][0], workload_argv(w, 1, True),
                                              configs[c][1])

    print(f"\nDiagnostic modes' cost: median wall time of {args.reps} interleaved runs, "
          f"{args.threads} threads{' (quick sizes)' if args.quick else ''}; "
          "ratio to `off` in brackets.\n")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {' '.join(f.read().split()[:3])}\n")
    columns = [f"callgrind {c}" for c in counted] if counts else []
    if columns:
        print("callgrind: instructions of a 1-thread run at the quick sizes, ratio to off.\n")
    shown = [(c, "") for c in configs] + ([(c, " CPU") for c in configs] if args.cpu else []) + (
        [(c, " in-run") for c in configs] if args.in_run else [])
    print("| workload | " + " | ".join([c + kind for c, kind in shown] + columns) + " |")
    print("|---|" + "---|" * (len(shown) + len(columns)))
    for w in workloads:
        cells = []
        for c, kind in shown:
            figures = {"": times, " CPU": cpu, " in-run": inrun}[kind]
            base = statistics.median(figures[(w, "off")])
            m = statistics.median(figures[(w, c)])
            ratio = m / base if base > 0 else float("nan")
            cells.append(f"{m:.3f} s" + ("" if c == "off" else f" ({ratio:.3f}x)"))
        off = counts.get((w, "off"))
        for c in (counted if counts else []):
            n = counts.get((w, c))
            cells.append("-" if not n else f"{n:,}" + (
                "" if c == "off" or not off else f" ({n / off:.4f}x)"))
        print(f"| {w} | " + " | ".join(cells) + " |")
    return 0
