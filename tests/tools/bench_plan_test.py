# SPDX-License-Identifier: MIT
"""`brisk bench`'s plans and its time estimate, without running anything:
the default plan fits in 10 minutes on 2 cores by the estimate table (with
room for the build), --full plans the whole matrix, --quick stays the smoke
test, explicit --only/--threads/--reps override the plan, and the time left
follows what the runs actually took.
usage: bench_plan_test.py TOOLS_DIR
"""
import contextlib
import io
import os
import stat
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import bench_allocators  # noqa: E402
import bench_plan  # noqa: E402
import bench_workloads  # noqa: E402
import brisk_bench  # noqa: E402
from expect import expect, finish  # noqa: E402 (beside this script)

# What `./brisk bench` installs as root on Debian 12, and what
# scripts/build-anchors.sh adds.
DEBIAN = ["glibc", "brisk", "jemalloc", "tcmalloc", "mimalloc", "tbb"]
ANCHORS = ["mimalloc3", "snmalloc", "rpmalloc"]
CORES = os.cpu_count() or 1


def allocators(names):
    return [bench_allocators.Allocator(n, "" if n == "glibc" else f"/nowhere/{n}.so", "test")
            for n in names]


def make_bench_dir(scratch, fastmm4):
    """A bench folder with the floor library and every Pascal binary (empty
    files: nothing runs), and an `fpc` on PATH so the Pascal rows count."""
    bench_dir = os.path.join(scratch, "fastmm4" if fastmm4 else "plain")
    os.makedirs(os.path.join(bench_dir, "pascal"))
    open(os.path.join(bench_dir, bench_workloads.FLOOR_LIBRARY), "w").close()
    managers = [m for m in bench_workloads.PASCAL_MANAGERS if fastmm4 or m != "fastmm4"]
    names = [f"{p}_{m}" for p in ("lines", "objects") for m in managers] + ["fpc"]
    for name in names:
        path = os.path.join(bench_dir, "pascal", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, stat.S_IRWXU)
    return bench_dir


def parse(argv):
    with contextlib.redirect_stdout(io.StringIO()):
        return brisk_bench.parse_args(argv)


def plan(argv, bench_dir, names=DEBIAN):
    """(args, rows as [(workload, threads)], estimated seconds) of a command."""
    args = parse(argv)
    pascal, _ = bench_workloads.pascal_workloads(bench_dir)
    workloads = bench_workloads.WORKLOADS + pascal
    columns_of = {w.name: bench_workloads.variants_for(w, bench_dir, allocators(names), bench_dir)
                  for w in workloads}
    rows = bench_plan.rows_for(args, workloads)
    estimate = bench_plan.estimate_seconds(rows, columns_of, args.reps, args.quick)
    return args, [(r["workload"], r["threads"]) for r in rows], estimate


def minutes(seconds):
    return f"{seconds / 60:.1f} min"


with tempfile.TemporaryDirectory() as scratch:
    plain = make_bench_dir(scratch, fastmm4=False)
    with_fastmm4 = make_bench_dir(scratch, fastmm4=True)
    os.environ["PATH"] = os.path.join(plain, "pascal") + os.pathsep + os.environ["PATH"]
    pascal_names = [w.name for w in bench_workloads.pascal_workloads(plain)[0]]
    expect("the fake bench folder has the three Pascal workloads", len(pascal_names) == 3,
           pascal_names)
    all_names = [w.name for w in bench_workloads.WORKLOADS] + pascal_names

    # The default: the small-block workloads at 1, 2 and 4 threads, the one
    # Pascal row, 3 reps; within budget.
    args, rows, estimate = plan([], plain)
    c_rows = [(w, t) for w, t in rows if not w.startswith("pascal")]
    expect("default: the small-block workloads at threads 1,2,4",
           c_rows == [(w, t) for w in bench_plan.DEFAULT_WORKLOADS for t in (1, 2, 4)], rows)
    expect("default: one Pascal row, pascal-objects at 2 threads",
           [r for r in rows if r[0].startswith("pascal")] == [("pascal-objects", 2)], rows)
    expect("default: no memory workload", not {"threadchurn", "bursts", "bigbuffers"}
           & {w for w, _ in rows}, rows)
    expect("default: 3 reps, enough for a median and a spread",
           args.reps == 3 and args.reps >= brisk_bench.bench_stats.MIN_SAMPLES, args.reps)
    expect(f"default, Debian's allocators: estimated {minutes(estimate)}, within the budget of "
           f"{minutes(bench_plan.DEFAULT_BUDGET_S)} on {bench_plan.ESTIMATE_CORES} cores",
           estimate < bench_plan.DEFAULT_BUDGET_S, estimate)
    expect(f"default, Debian's allocators: {minutes(estimate)} leaves at least 3 minutes of the "
           "budget for installing, building and a slower machine",
           estimate <= bench_plan.DEFAULT_BUDGET_S - 180, estimate)
    _, _, estimate = plan([], with_fastmm4, DEBIAN + ANCHORS)
    expect(f"default with the anchors and FastMM4 too: {minutes(estimate)}, still within the "
           "budget", estimate < bench_plan.DEFAULT_BUDGET_S, estimate)

    # --full: every workload at its thread counts (1, 2, 2 x cores unless it
    # fixes its own), 5 reps: today's whole matrix.
    args, rows, _ = plan(["--full"], plain)
    expected = [(w.name, t) for w in bench_workloads.WORKLOADS
                for t in (w.thread_counts or sorted({1, 2, 2 * CORES}))]
    expected += [(name, t) for name in pascal_names for t in bench_workloads.PASCAL_THREADS]
    expect("--full: every workload, every thread count", rows == expected, rows)
    expect("--full: 5 reps", args.reps == 5, args.reps)
    # On 2 cores (its thread counts there), what --help says it takes.
    _, _, on_two_cores = plan(["--full", "--threads", "1,2,4"], plain)
    expect(f"--full on 2 cores, Debian's allocators: estimated {minutes(on_two_cores)}, the "
           "40 minutes --help says", 30 * 60 <= on_two_cores <= 50 * 60, on_two_cores)
    _, _, default_estimate = plan([], plain)
    expect("--full takes several times the default",
           on_two_cores > 5 * default_estimate, (on_two_cores, default_estimate))

    # --quick: unchanged, the smoke test CI runs.
    args, rows, quick_estimate = plan(["--quick", "--allocators", "glibc,brisk"], plain,
                                      ["glibc", "brisk"])
    expected = [(w.name, t) for w in bench_workloads.WORKLOADS
                for t in (w.quick_thread_counts or [1, 2])]
    expected += [(name, t) for name in pascal_names for t in bench_workloads.PASCAL_QUICK_THREADS]
    expect("--quick: every workload at threads 1,2 (or its own)", rows == expected, rows)
    expect("--quick: 3 reps, quick sizes, 30 s timeout",
           args.reps == 3 and args.quick and args.timeout == 30.0, vars(args))

    # Explicit options override their part of the plan.
    args, rows, _ = plan(["--only", "bursts,lines", "--threads", "1,3", "--reps", "4"], plain)
    expect("--only/--threads/--reps: those workloads, at those threads, that many reps",
           rows == [("lines", 1), ("lines", 3), ("bursts", 1), ("bursts", 3)] and args.reps == 4,
           (rows, args.reps))
    args, rows, _ = plan(["--threads", "2"], plain)
    expect("--threads alone: the default set at those threads",
           {w for w, _ in rows} == set(bench_plan.DEFAULT_WORKLOADS) | {"pascal-objects"}
           and {t for _, t in rows} == {2} and args.reps == 3, rows)
    args, rows, _ = plan(["--reps", "7"], plain)
    expect("--reps alone: the default set, that many reps",
           args.reps == 7 and len(rows) == len(bench_plan.DEFAULT_WORKLOADS) * 3 + 1, rows)
    args, rows, _ = plan(["--only", "pascal-objects"], plain)
    expect("--only a Pascal workload: its own thread counts",
           rows == [("pascal-objects", t) for t in bench_workloads.PASCAL_THREADS], rows)
    args, rows, _ = plan(["--full", "--only", "lines", "--reps", "2"], plain)
    expect("--full --only lines --reps 2: lines at the full thread counts, 2 reps",
           rows == [("lines", t) for t in sorted({1, 2, 2 * CORES})] and args.reps == 2,
           (rows, args.reps))
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parse(["--quick", "--full"])
        refused = False
    except SystemExit:
        refused = True
    expect("--quick --full is refused", refused)
    expect("every name in the default set is a workload",
           set(bench_plan.DEFAULT_WORKLOADS) | set(bench_plan.DEFAULT_PASCAL_ROWS)
           <= set(all_names), bench_plan.DEFAULT_WORKLOADS)

# --help documents the default set, --full and the estimate.
help_text = " ".join(brisk_bench._parser().format_help().split())
for phrase in ("default set", "--full", "estimated time", "time left", "40 minutes on 2 cores",
               ", ".join(bench_plan.DEFAULT_WORKLOADS[:-1])):
    expect(f"--help mentions '{phrase}'", phrase in help_text, help_text[:300])

# The time left: the table at first, then what the runs took.
a1, a2, b1 = ("a", 1, "glibc"), ("a", 1, "brisk"), ("b", 1, "glibc")
eta = bench_plan.Eta([(a1, 1.0), (a2, 1.0), (b1, 2.0)] * 2)
expect("before any run: the sum of the estimates", abs(eta.left_s() - 8.0) < 1e-9, eta.left_s())
eta.done(a1, 3.0)
# a1 once more at 3 s; a2 twice at 1 s x 3 (its workload ran 3 times its
# estimate); b1 twice at 2 s x (3 + 30) / (1 + 30), the prior damping one run.
expected = 3.0 + 2 * 3.0 + 2 * 2.0 * 33 / 31
expect("after one slow run: its key at its time, its workload scaled, the rest damped",
       abs(eta.left_s() - expected) < 1e-9, (eta.left_s(), expected))
for key, seconds in ((a2, 0.5), (b1, 4.0)):
    eta.done(key, seconds)
expect("after one rep: every run at its own measured time",
       abs(eta.left_s() - (3.0 + 0.5 + 4.0)) < 1e-9, eta.left_s())
for key, seconds in ((a1, 5.0), (a2, 0.5), (b1, 4.0)):
    eta.done(key, seconds)
expect("after the last run: nothing left", eta.left_s() == 0, eta.left_s())

for seconds, text in ((0, "done"), (2, "about 5 s left"), (41, "about 40 s left"),
                      (89, "about 90 s left"), (250, "about 4 min left"),
                      (3725, "about 62 min left")):
    expect(f"{seconds} s left reads '{text}'", bench_plan.format_left(seconds) == text,
           bench_plan.format_left(seconds))
line = bench_plan.progress_line(37, 120, 2, "lines", 2, "jemalloc", "1.234 s ok", 250)
expect("the progress line: count, rep, row, column, the run, the time left",
       line.startswith("[ 37/120] rep 2 lines ") and " T=2 " in line and " jemalloc " in line
       and "1.234 s ok" in line and line.endswith("about 4 min left"), line)
expect("the count keeps its width", bench_plan.progress_line(
    7, 1500, 1, "x", 1, "y", "", 0).startswith("[   7/1500]"))
for seconds, text in ((40, "40 s"), (276, "4.6 min")):
    expect(f"the estimate line writes {seconds} s as '{text}'",
           bench_plan.format_minutes(seconds) == text, bench_plan.format_minutes(seconds))

finish()
