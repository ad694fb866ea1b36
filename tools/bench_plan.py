# SPDX-License-Identifier: MIT
"""What `brisk bench` runs, and how long that takes.

Three plans. The default answers in minutes on 2 cores: a newcomer who
types `./brisk bench` wants to know whether brisk helps a multithreaded
program that allocates small blocks, so it runs those workloads at 1, 2 and
4 threads, 3 reps (the fewest that give a median and a spread), plus the
one Free Pascal row that tells the most. --full runs the whole matrix (every
workload at 1, 2 and 2 x cores threads, 5 reps: 40 minutes to an hour on 2
cores), --quick the smoke test CI runs. --only, --threads and --reps override their
part of whichever plan.

The estimate is the plan's runs times each workload's estimate_s (measured
on 2 cores, bench_workloads); while the runs go, Eta replaces it with what
the runs actually took.
"""
import statistics
import types

import bench_workloads

QUICK, DEFAULT, FULL = "quick", "default", "full"

# The default set: the multithreaded small-block workloads, the pattern
# brisk exists for (threads splitting text lines, copying strings, building
# and freeing objects, handing blocks to another thread, churning one size),
# in the order of bench_workloads.WORKLOADS. Left for --full: falseshare,
# append and frag (single-pattern details), and the memory workloads
# (threadchurn, bursts, bigbuffers), which run for seconds each.
DEFAULT_WORKLOADS = ("lines", "strcopy", "cache", "churn", "objects", "larson", "prodcons",
                     "fanout", "sharing")
DEFAULT_THREADS = [1, 2, 4]
DEFAULT_REPS = 3
# The one Free Pascal row: the object loop at 2 threads, where a lock per
# size class (FastMM4) or FPC's own heap falls behind BriskMM. All nine
# Pascal rows (8 columns of 2-4 s each) would take longer than the rest of
# the default put together.
DEFAULT_PASCAL_ROWS = {"pascal-objects": [2]}
FULL_REPS = 5
QUICK_REPS = 3
QUICK_THREADS = [1, 2]
# The quick sizes take about this share of the default sizes' time (0.18 for
# glibc and brisk, measured on 2 cores).
QUICK_SCALE = 0.2
# Per run, besides the workload: starting the launcher and the process.
RUN_OVERHEAD_S = 0.05
# How much estimated time the first measured runs count against when they
# correct the table (Eta): a few short runs should not swing the whole
# estimate.
PRIOR_S = 30.0
# The machine the estimate table was measured on, and the budget the default
# plan must fit in there (tests/tools/bench_plan_test.py checks it).
ESTIMATE_CORES = 2
DEFAULT_BUDGET_S = 10 * 60


def mode_of(args):
    return QUICK if args.quick else FULL if args.full else DEFAULT


def default_threads(mode, cores):
    if mode == QUICK:
        return list(QUICK_THREADS)
    if mode == FULL:
        return sorted({1, 2, 2 * cores})
    return list(DEFAULT_THREADS)


def default_reps(mode):
    return {QUICK: QUICK_REPS, FULL: FULL_REPS, DEFAULT: DEFAULT_REPS}[mode]


def rows_for(args, workloads):
    """The rows ({workload, threads, workload_def}) the plan runs, in order:
    --only's workloads, else the plan's, each at its thread counts."""
    mode = mode_of(args)
    pascal_rows = DEFAULT_PASCAL_ROWS if mode == DEFAULT and not args.only else {}
    if args.only:
        chosen = [w for w in workloads if w.name in args.only]
    elif mode == DEFAULT:
        chosen = [w for w in workloads if w.name in DEFAULT_WORKLOADS or w.name in pascal_rows]
    else:
        chosen = list(workloads)
    rows = []
    for w in chosen:
        counts = pascal_rows.get(w.name) or bench_workloads.thread_counts(
            w, args.threads, args.quick)
        rows += [{"workload": w.name, "threads": t, "workload_def": w} for t in counts]
    return rows


def run_estimate(workload, quick):
    """Seconds one run of this workload takes, from the table."""
    return workload.estimate_s * (QUICK_SCALE if quick else 1.0) + RUN_OVERHEAD_S


def planned_runs(rows, columns_of, reps, quick):
    """[(key, estimated seconds)] for every run; key = (workload, threads,
    column)."""
    return [((r["workload"], r["threads"], v.name), run_estimate(r["workload_def"], quick))
            for _ in range(reps) for r in rows for v in columns_of[r["workload"]]]


def estimate_seconds(rows, columns_of, reps, quick):
    return sum(estimate for _, estimate in planned_runs(rows, columns_of, reps, quick))


def full_seconds(workloads, columns_of, cores):
    """The estimate of --full with these columns, for the default's plan line:
    what running everything would take instead."""
    full = types.SimpleNamespace(quick=False, full=True, only=[],
                                 threads=default_threads(FULL, cores))
    return estimate_seconds(rows_for(full, workloads), columns_of, FULL_REPS, False)


def format_minutes(seconds):
    """A duration as the estimate line shows it: '4.6 min', '40 s'."""
    return f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def format_left(seconds):
    """The time left as the progress line shows it, no more precise than an
    estimate can be."""
    if seconds < 1:
        return "done"
    if seconds < 90:
        return f"about {max(5, round(seconds / 5) * 5)} s left"
    return f"about {round(seconds / 60)} min left"


def progress_line(done, total, rep, workload, threads, column, measured, left_s):
    """One run's line: `[ 37/120] rep 1 lines T=2 jemalloc <measured> about 4 min left`."""
    width = len(str(total))
    return (f"[{done:{width}}/{total}] rep {rep} {workload:<20} T={threads:<3} {column:<14} "
            f"{measured}  {format_left(left_s)}")


class Eta:
    """The time left of the planned runs. A run not yet measured counts as
    the mean of its earlier reps (key measured), else its table estimate
    times what its workload's runs took against their estimates, else times
    what all runs so far took against theirs (weighted by PRIOR_S, so the
    table holds until enough has been measured)."""

    def __init__(self, planned):
        self.estimate = {}
        self.left = {}
        for key, estimate in planned:
            self.estimate[key] = estimate
            self.left[key] = self.left.get(key, 0) + 1
        self.times = {}  # key -> [seconds]
        self.spent = {}  # workload -> [actual, estimated]
        self.spent_all = [0.0, 0.0]

    def done(self, key, seconds):
        self.left[key] -= 1
        self.times.setdefault(key, []).append(seconds)
        spent = self.spent.setdefault(key[0], [0.0, 0.0])
        for totals in (spent, self.spent_all):
            totals[0] += seconds
            totals[1] += self.estimate[key]

    def guess(self, key):
        """Seconds the next run of key will take."""
        if key in self.times:
            return statistics.fmean(self.times[key])
        actual, estimated = self.spent.get(key[0], (0.0, 0.0))
        if estimated > 0:
            return self.estimate[key] * actual / estimated
        actual, estimated = self.spent_all
        return self.estimate[key] * (actual + PRIOR_S) / (estimated + PRIOR_S)

    def left_s(self):
        return sum(n * self.guess(key) for key, n in self.left.items() if n > 0)
