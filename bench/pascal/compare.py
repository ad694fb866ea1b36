#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Side-by-side run of the Pascal workloads under three memory managers.

Runs build/bench/pascal/{lines,objects}_{fpcheap,cmem,brisk} at 1, 2 and 4
threads, interleaved (every repetition runs all variants in turn, in a
rotating order, so that a slow phase of the machine hits all of them alike),
takes the median wall time of the parallel phase (as each workload reports it
in ms=), the median CPU time of the process (user + system, from wait4: less
sensitive than wall time to other processes on a small machine) and the
median peak RSS of each, and prints a markdown table and BriskMM's target
at 2 threads: faster than both the default heap and cmem, with peak RSS at
most 10% above the default heap's.

lines runs with --keep (each thread holds its file's split lines until the
file is done, so that peak RSS shows the memory manager's footprint); pass
--no-keep for the variant that reuses one TStringList per thread.

    bench/pascal/compare.py [--build build] [--data DIR] [--files 4] [--mb 32]
                            [--reps 5] [--threads 1,2,4] [--no-keep] [--quick]

Line data: DIR (default BUILD/bench/pascal/lines_data) is generated with
gen_lines when it has no expect.txt. Standard library only; peak RSS is the
VmHWM each workload reports (peak_rss_kib=), so GNU time is not needed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

MANAGERS = ["fpcheap", "cmem", "brisk"]
LABELS = {"fpcheap": "FPC heap", "cmem": "cmem (glibc)", "brisk": "BriskMM"}


def run_measured(argv):
    """Runs argv with fork/exec + wait4 to get the child's own peak RSS."""
    start = time.perf_counter()
    read_fd, write_fd = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(write_fd, 1)
        os.dup2(err_write, 2)
        os.close(read_fd)
        os.close(err_read)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(write_fd)
    os.close(err_write)
    with os.fdopen(read_fd) as out_file, os.fdopen(err_read) as err_file:
        out = out_file.read()
        err = err_file.read()
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    cpu_seconds = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    if code != 0 or not last.startswith("RESULT ok=1 "):
        sys.exit(f"{' '.join(argv)} failed (exit {code}):\n{out}\n{err}")
    # the workload's own VmHWM: wait4's ru_maxrss would include this
    # script's memory at fork time
    fields = dict(f.split("=", 1) for f in last.split()[1:] if "=" in f)
    rss_kib = int(fields.get("peak_rss_kib", 0)) or usage.ru_maxrss
    # the workload's own timing of its parallel phase (ms=); the process's
    # wall time would add start-up and FPC's 100 ms TThread.WaitFor polling
    if "ms" in fields:
        seconds = int(fields["ms"]) / 1000.0
    return seconds, cpu_seconds, rss_kib, last


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--data", default=None)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--mb", type=int, default=32, help="MiB per line file")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", default="1,2,4")
    parser.add_argument("--items", type=int, default=1000, help="objects workload items")
    parser.add_argument("--no-keep", action="store_true",
                        help="lines without --keep (one reused TStringList per thread)")
    parser.add_argument("--quick", action="store_true", help="tiny data, 1 repetition")
    args = parser.parse_args()
    if args.quick:
        args.mb, args.reps, args.items = 1, 1, 100

    bin_dir = os.path.join(args.build, "bench", "pascal")
    data = args.data or os.path.join(bin_dir, "lines_data")
    for name in [f"{w}_{m}" for w in ("lines", "objects") for m in MANAGERS] + ["gen_lines"]:
        if not os.access(os.path.join(bin_dir, name), os.X_OK):
            sys.exit(f"{bin_dir}/{name} missing: build with cmake --build {args.build}")
    # regenerate unless the folder holds exactly the data asked for
    stamp = os.path.join(data, "gen_args.txt")
    wanted = f"files={args.files} mb={args.mb}\n"
    if not os.path.exists(stamp) or open(stamp).read() != wanted:
        subprocess.run([os.path.join(bin_dir, "gen_lines"), "--dir", data, "--files",
                        str(args.files), "--mb", str(args.mb)], check=True,
                       stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(wanted)

    threads = [int(t) for t in args.threads.split(",")]
    keep = [] if args.no_keep else ["--keep"]
    lines_label = "lines" if args.no_keep else "lines --keep"
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    load_before = os.getloadavg()
    cases = []  # (label, threads, {manager: argv})
    for t in threads:
        for reader in ("readln", "stream"):
            cases.append((f"{lines_label} ({reader})", t, {
                m: [os.path.join(bin_dir, f"lines_{m}"), "--threads", str(t), "--dir", data,
                    "--reader", reader] + keep for m in MANAGERS}))
        cases.append(("objects", t, {
            m: [os.path.join(bin_dir, f"objects_{m}"), "--threads", str(t), "--items",
                str(args.items)] for m in MANAGERS}))

    samples = {}  # (label, t, manager) -> [(seconds, cpu_seconds, rss)]
    for rep in range(args.reps):
        for label, t, argvs in cases:
            # rotate the order every repetition: no variant always runs first
            order = MANAGERS[rep % 3:] + MANAGERS[:rep % 3]
            for m in order:
                seconds, cpu_seconds, rss, _ = run_measured(argvs[m])
                samples.setdefault((label, t, m), []).append((seconds, cpu_seconds, rss))
        print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr)

    def med(label, t, m, index):
        return statistics.median(s[index] for s in samples[(label, t, m)])

    load_after = os.getloadavg()
    print(f"Median of {args.reps} interleaved runs; {os.cpu_count()} CPUs; started {started}; "
          f"load average (1/5/15 min) {' '.join(f'{x:.2f}' for x in load_before)} at the start, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} at the end; "
          f"lines: {args.files} files x {args.mb} MiB; objects: {args.items} items.")
    print("s = wall time of the parallel phase; CPU s = user + system time of the process.\n")
    print("| workload | threads | " + " | ".join(f"{LABELS[m]} s" for m in MANAGERS)
          + " | " + " | ".join(f"{LABELS[m]} CPU s" for m in MANAGERS)
          + " | " + " | ".join(f"{LABELS[m]} RSS MiB" for m in MANAGERS)
          + " | BriskMM speed-up vs FPC heap / cmem |")
    print("|---|---:|" + "---:|" * (3 * len(MANAGERS) + 1))
    verdicts = []
    for label, t, _ in cases:
        secs = {m: med(label, t, m, 0) for m in MANAGERS}
        cpu = {m: med(label, t, m, 1) for m in MANAGERS}
        rss = {m: med(label, t, m, 2) / 1024 for m in MANAGERS}
        print(f"| {label} | {t} | " + " | ".join(f"{secs[m]:.2f}" for m in MANAGERS) + " | "
              + " | ".join(f"{cpu[m]:.2f}" for m in MANAGERS) + " | "
              + " | ".join(f"{rss[m]:.1f}" for m in MANAGERS) + " | "
              + f"{secs['fpcheap'] / secs['brisk']:.2f}x / {secs['cmem'] / secs['brisk']:.2f}x |")
        if t == 2:
            ok = (secs["brisk"] < secs["fpcheap"] and secs["brisk"] < secs["cmem"]
                  and rss["brisk"] <= rss["fpcheap"] * 1.10)
            verdicts.append((label, ok))
    if verdicts:
        print("\nBriskMM's target at 2 threads (faster than both, peak RSS <= 1.10 x FPC heap):")
        for label, ok in verdicts:
            print(f"- {label}: {'met' if ok else 'NOT met'}")
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
