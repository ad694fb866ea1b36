#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Pascal workloads as Win64 or Win32 programs under Wine, side by side:
Free Pascal's own heap (fpcheap), msvcrt's malloc through cmem, and BriskMM
linked statically. Shows that the programs run and agree, and the shape of
their scaling; Wine's heap, loader and scheduler are not Windows', so these
are not Windows timings.

usage: tools/wine_bench.py [--win32] [--build DIR] [--reps 5] [--threads 1,2,4]
                           [--mb 12] [--objects-items N]

Needs a Windows build with its Pascal programs: build-win64 by default
(scripts/test-windows.sh), or with --win32 the i386-win32 programs of
build-win32 (`./brisk test --stages win32`), run by Wine's 32-bit loader
(/usr/lib/wine/wine, Debian's wine32:i386). Generates its line data (4 files
of --mb MB each) under BUILD/pascal-win64/ (pascal-win32/) with the
workloads' own generator. Each configuration runs --reps times,
interleaved (rep by rep) so that a change in the machine's load hits all of
them alike; prints medians of the in-program times (ms=), the ratio to
BriskMM, the peak working sets, the load average before and after, and fails
when two memory managers disagree on a result or a run fails its own check.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANAGERS = ["fpcheap", "cmem", "brisk"]
# the fields of RESULT that must be the same whatever the memory manager
RESULT_KEYS = {"lines": ["lines", "fields", "bytes"], "objects": ["objects", "checksum"]}


def wine_env(build):
    env = dict(os.environ)
    env.update(WINEPREFIX=os.path.join(build, "wine-prefix"), WINEDEBUG="-all",
               WINEDLLOVERRIDES="mscoree,mshtml=")
    for key in [k for k in env if k.startswith("BRISK_")]:
        del env[key]
    return env


# the Wine loader and the objdump of each width: wine64's loader cannot start
# a 32-bit program, and /usr/bin/wine may be either
WIDTHS = {
    "win64": (("/usr/lib/wine/wine64", "/usr/bin/wine64", "/usr/bin/wine"),
              "wine64 not found (scripts/install-deps.sh windows)", "x86_64-w64-mingw32-objdump"),
    "win32": (("/usr/lib/wine/wine",),
              "Wine's 32-bit loader /usr/lib/wine/wine not found (Debian's wine32:i386, which "
              "scripts/install-deps.sh win32 installs where apt can)", "i686-w64-mingw32-objdump"),
}
WIDTH = "win64"


def wine_binary():
    candidates, missing, _ = WIDTHS[WIDTH]
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    sys.exit(f"wine_bench: {missing}")


def run(build, program, args):
    command = [wine_binary(), program] + args
    proc = subprocess.run(command, env=wine_env(build), capture_output=True, text=True,
                          timeout=600)
    match = re.search(r"^RESULT (.*)$", proc.stdout, re.M)
    if proc.returncode != 0 or match is None or "ok=1" not in match.group(1):
        sys.exit(f"wine_bench: {' '.join(command)} failed ({proc.returncode}):\n"
                 f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return dict(field.split("=", 1) for field in match.group(1).split())


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def imports(program):
    out = subprocess.run([WIDTHS[WIDTH][2], "-p", program], capture_output=True,
                         text=True).stdout
    return sorted({name.lower() for name in re.findall(r"DLL Name: (\S+)", out)})


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--win32", action="store_true",
                        help="the i386-win32 programs under Wine's 32-bit loader")
    parser.add_argument("--build", help="the build folder (default build-win64, or build-win32 "
                        "with --win32)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", default="1,2,4")
    parser.add_argument("--mb", type=int, default=12, help="MB per line file (4 files)")
    parser.add_argument("--objects-items", type=int, default=0,
                        help="objects --items (0: the workload's default)")
    options = parser.parse_args(argv)
    global WIDTH
    WIDTH = "win32" if options.win32 else "win64"
    build = os.path.abspath(options.build or os.path.join(ROOT, f"build-{WIDTH}"))
    bench = os.path.join(build, f"pascal-{WIDTH}", "bench")
    if not os.path.isdir(bench):
        sys.exit(f"wine_bench: no {bench}: build the {WIDTH} programs first")
    threads = [int(t) for t in options.threads.split(",")]
    data = os.path.join(build, f"pascal-{WIDTH}", f"lines_{options.mb}mb")
    if not os.path.exists(os.path.join(data, "expect.txt")):
        subprocess.run([wine_binary(), os.path.join(bench, "gen_lines.exe"), "--dir", data,
                        "--files", "4", "--mb", str(options.mb)], env=wine_env(build),
                       check=True, capture_output=True)
    with open(os.path.join(data, "expect.txt")) as f:
        expect = f.read().strip()

    workloads = {
        "lines": (["--dir", data, "--reader", "readln"], "line splitting, ReadLn"),
        "objects": ((["--items", str(options.objects_items)] if options.objects_items else []),
                    "objects in a parallel loop"),
    }
    print(f"{WIDTH} programs, {wine_binary()}; load average before: {load_average()}")
    for workload in workloads:
        for manager in MANAGERS:
            program = os.path.join(bench, f"{workload}_{manager}.exe")
            print(f"{workload}_{manager}.exe imports: {', '.join(imports(program))}")
    samples = {}
    results = {}
    for rep in range(options.reps):
        for workload, (args, _) in workloads.items():
            for t in threads:
                for manager in MANAGERS:
                    program = os.path.join(bench, f"{workload}_{manager}.exe")
                    result = run(build, program, ["--threads", str(t)] + args)
                    key = (workload, t, manager)
                    samples.setdefault(key, []).append(
                        (int(result["ms"]), int(result.get("peak_rss_kib", 0))))
                    same = tuple(result[k] for k in RESULT_KEYS[workload])
                    results.setdefault((workload, t), set()).add(same)
        print(f"rep {rep + 1}/{options.reps} done, load average {load_average()}", flush=True)
    print(f"load average after: {load_average()}")
    disagree = {k: v for k, v in results.items() if len(v) != 1}
    for (workload, t), values in disagree.items():
        print(f"DISAGREE {workload} T={t}: {sorted(values)}")

    print(f"\nline data: {expect}")
    print(f"medians of {options.reps} runs; time in ms (x = ratio to brisk); "
          "peak working set in MiB\n")
    print("| workload | T | fpcheap | cmem (msvcrt) | brisk | peak WS fpcheap / cmem / brisk |")
    print("|---|--:|--:|--:|--:|--:|")
    for workload, (_, title) in workloads.items():
        for t in threads:
            ms = {m: statistics.median(s[0] for s in samples[(workload, t, m)]) for m in MANAGERS}
            ws = {m: statistics.median(s[1] for s in samples[(workload, t, m)]) / 1024
                  for m in MANAGERS}
            cells = [f"{ms[m]:.0f} x{ms[m] / ms['brisk']:.2f}" for m in MANAGERS]
            print(f"| {title} | {t} | " + " | ".join(cells) + " | "
                  + " / ".join(f"{ws[m]:.0f}" for m in MANAGERS) + " |")
    agree = ", ".join(f"{w} T={t}: {next(iter(v))}" for (w, t), v in sorted(results.items())
                      if len(v) == 1)
    print(f"\nresults identical across the memory managers: {agree}")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
