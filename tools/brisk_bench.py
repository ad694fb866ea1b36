# SPDX-License-Identifier: MIT
"""`brisk bench`: brisk against every allocator it can find, on the classic
multithreaded-allocation workloads, side by side in time and memory.

Runs are interleaved (rep -> row -> allocator, the allocator order rotating
each rep) so machine noise spreads evenly over the allocators; the tables
show the median of the reps with its spread, and crown a winner only where
the lead exceeds the spread (bench_stats). Every run writes a new folder
under bench-results/ and points bench-results/latest at it.
"""
import argparse
import datetime
import os
import re
import shlex
import sys
import time

import bench_allocators
import bench_build
import bench_output
import bench_plan
import bench_provenance
import bench_report
import bench_stats
import bench_workloads
from bench_runner import OK, run_measured

ROOT = bench_build.ROOT
ANCHORS_DIR = os.path.join(ROOT, ".cache", "anchors")

# Line data: 4 files of lines of ~10 fields (the account read 4 files, 750 MB).
LINES_FULL = {"files": 4, "lines": 1000000, "fields": 10, "max-field": 16, "seed": 1}
LINES_QUICK = dict(LINES_FULL, lines=150000)

DESCRIPTION = """\
Compare brisk with glibc, jemalloc, tcmalloc, mimalloc and TBB (the Debian
packages, when installed) and with any allocator built by
scripts/build-anchors.sh (mimalloc v3, snmalloc, rpmalloc: every NAME.so in
.cache/anchors/ is picked up automatically; FastMM4 for the Pascal
workloads) on multithreaded allocation workloads. Each cell is the median
of --reps interleaved runs with its spread (min-max, or the interquartile
range from 5 reps); a row names a winner only when the winner's spread lies
wholly below every other allocator's, and calls it a tie otherwise. Writes
results.json (machine, load, allocator versions and sha256), results.csv,
table.md and bench.png to a new folder bench-results/<date>T<time>/ and
points bench-results/latest at it.

With no options it runs the default set, chosen to answer in about 5
minutes on 2 cores: the multithreaded small-block workloads lines, strcopy,
cache, churn, objects, larson, prodcons, fanout and sharing at 1, 2 and 4
threads, and the
Free Pascal object loop (pascal-objects, where fpc is installed) at 2
threads, 3 reps each, under every allocator found. --full runs the whole
matrix: every workload (the memory ones, the other Pascal ones too) at 1, 2
and 2 x cores threads, 5 reps: about 40 minutes on 2 cores with Debian's
six allocators, an hour with the three anchors too. --only, --threads and
--reps override their part of either.
Before the first run it prints its estimated time (the runs times a
per-workload estimate measured on 2 cores), then after every run a progress
line with the time left, corrected by what the runs so far took.

--callgrind instead runs every C workload once at 1 thread (quick sizes)
under valgrind --tool=callgrind for each allocator and writes callgrind.md:
instructions inside the allocator per allocation call (see BENCHMARKS.md)."""


def log(message):
    print(f"brisk bench: {message}", flush=True)


class BenchError(Exception):
    """A problem the user can fix; reported as one clear message."""


# --- options -----------------------------------------------------------------

def _csv_list(text):
    return [item.strip() for item in text.split(",") if item.strip()] if text else []


def _parser():
    parser = argparse.ArgumentParser(prog="brisk bench", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add = parser.add_argument
    add("--quick", action="store_true",
        help="small sizes, 3 reps, threads 1,2: a smoke test (about a minute for glibc and "
             "brisk on 2 cores)")
    add("--full", action="store_true",
        help="every workload at threads 1,2,2xcores, 5 reps: the whole matrix (about 40 min "
             "on 2 cores with Debian's allocators; the estimate is printed before it starts)")
    add("--only", metavar="W1,W2",
        help="run only these workloads, at their usual thread counts (names: see --list; "
             "default: the default set above)")
    add("--allocators", metavar="A1,A2", help="run only these allocators (default: all found)")
    add("--alloc", action="append", default=[], metavar="NAME=path.so",
        help="add (or replace) an allocator to preload; repeatable")
    add("--anchors", metavar="DIR", default=ANCHORS_DIR,
        help="folder whose NAME.so files are added as allocators (default .cache/anchors, "
             "where scripts/build-anchors.sh puts them)")
    add("--threads", metavar="N1,N2",
        help="thread counts (default 1,2,4; --full 1,2,2xcores; --quick 1,2)")
    add("--reps", type=int, metavar="N", help="repetitions (default 3; --full 5; --quick 3)")
    add("--out", metavar="DIR",
        help="output folder (default: a new bench-results/<date>T<time>/)")
    add("--timeout", type=float, metavar="S",
        help="seconds before a run is killed (default 120; --quick 30)")
    add("--check-verified", metavar="A1,A2",
        help="exit non-zero unless every workload gave a verified result under each of these "
             "allocators (CI: glibc,brisk)")
    add("--callgrind", action="store_true",
        help="count instructions per allocation call under callgrind instead of timing")
    add("--no-build", action="store_true", help="use the binaries already built")
    add("--no-install", action="store_true",
        help="do not run scripts/install-deps.sh bench first")
    add("--list", action="store_true", help="list the workloads and exit")
    return parser


def _parse_threads(parser, args):
    if not args.threads:
        return bench_plan.default_threads(bench_plan.mode_of(args), os.cpu_count() or 1)
    try:
        threads = sorted(set(int(t) for t in _csv_list(args.threads)))
    except ValueError:
        parser.error(f"--threads wants numbers like 1,2,4, not '{args.threads}'")
    if not threads or threads[0] < 1 or threads[-1] > 1024:
        parser.error("--threads: each count must be from 1 to 1024")
    return threads


def _parse_alloc(parser, specs):
    extra = {}
    reserved = {bench_allocators.GLIBC, *bench_workloads.REFERENCE_NAMES,
                *bench_workloads.PASCAL_MANAGERS} - {
        bench_allocators.BRISK}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not re.fullmatch(bench_allocators.NAME_PATTERN, name) or not path:
            parser.error(f"--alloc wants NAME=path.so, not '{spec}'")
        if name in reserved:
            parser.error(f"--alloc: the name '{name}' is reserved")
        if not os.path.isfile(path):
            parser.error(f"--alloc {name}: no such file: {path}")
        extra[name] = path
    return extra


def parse_args(argv):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.quick and args.full:
        parser.error("--quick and --full exclude each other")
    args.threads = _parse_threads(parser, args)
    if args.reps is None:
        args.reps = bench_plan.default_reps(bench_plan.mode_of(args))
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    if args.reps < bench_stats.MIN_SAMPLES:
        log(f"--reps {args.reps}: no row can name a winner with fewer than "
            f"{bench_stats.MIN_SAMPLES} samples")
    if args.timeout is None:
        args.timeout = 30.0 if args.quick else 120.0
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    args.alloc = _parse_alloc(parser, args.alloc)
    args.only = _csv_list(args.only)
    known = [w.name for w in bench_workloads.WORKLOADS] + [
        f"pascal-lines-{r}" for r in ("readln", "stream")] + ["pascal-objects", "pascal-pipeline"]
    unknown = [w for w in args.only if w not in known]
    if unknown:
        parser.error(f"--only: unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}")
    args.allocators = _csv_list(args.allocators)
    args.check_verified = _csv_list(args.check_verified)
    return args


# --- plan --------------------------------------------------------------------

def lines_data(bench_dir, params):
    """The cached line data folder (`./brisk overhead` uses it too)."""
    return bench_build.lines_data(bench_dir, params, log)


def find_allocators(args, brisk_lib, why_missing):
    allocators, skipped = bench_allocators.discover(
        brisk_lib, args.alloc, args.allocators, args.anchors, why_missing)
    anchors = bench_allocators.anchors_in(args.anchors) if os.path.isdir(args.anchors) else {}
    where = os.path.relpath(args.anchors, ROOT) if args.anchors.startswith(ROOT) else args.anchors
    if anchors:
        log(f"found in {where}: {', '.join(anchors)} (built by scripts/build-anchors.sh)")
    else:
        log(f"no allocators in {where} (scripts/build-anchors.sh builds mimalloc v3, snmalloc "
            "and rpmalloc there)")
    if os.path.isdir(_fastmm4_dir(args)):
        log(f"found in {where}: fastmm4/, FastMM4's sources, for the fastmm4 Pascal variants")
    if os.path.isdir(_fpcx64mm_dir(args)):
        log(f"found in {where}: fpcx64mm/, mORMot 2's fpcx64mm, for the fpcx64mm Pascal variants")
    for name, why in skipped.items():
        log(f"skipped {name}: {why}")
    if not allocators:
        raise BenchError("no allocator left to run")
    log("allocators: " + ", ".join(a.name + (f" ({a.preload})" if a.preload else "")
                                   for a in allocators))
    return allocators, skipped


def _keep_variant(variant, wanted):
    return not wanted or variant.name in wanted or variant.allocator in wanted


def plan(args, bench_dir, allocators, brisk_lib):
    """The rows to run ({workload, threads, workload_def}, bench_plan), the
    columns of each workload, the line data folder, and the estimated
    seconds of --full with these allocators (what the default leaves out)."""
    workloads = list(bench_workloads.WORKLOADS)
    pascal, note = bench_workloads.pascal_workloads(bench_dir)
    if note and (not args.only or any(w.startswith("pascal") for w in args.only)):
        log(note)
    workloads += pascal
    lib_dir = os.path.dirname(brisk_lib) if brisk_lib else bench_build.BUILD_DIR
    columns_of = {}
    for w in workloads:
        variants = bench_workloads.variants_for(w, bench_dir, allocators, lib_dir)
        columns_of[w.name] = [v for v in variants if _keep_variant(v, args.allocators)] or variants
    rows = bench_plan.rows_for(args, workloads)
    if not rows:
        raise BenchError("none of the --only workloads can run here")
    full_s = bench_plan.full_seconds(workloads, columns_of, os.cpu_count() or 1)
    lines_dir = ""
    if any(r["workload_def"].uses_lines for r in rows):
        lines_dir = lines_data(bench_dir, LINES_QUICK if args.quick else LINES_FULL)
    planned = {r["workload"] for r in rows}
    return rows, {name: c for name, c in columns_of.items() if name in planned}, lines_dir, full_s


# --- the run -----------------------------------------------------------------

def main(argv):
    try:
        args = parse_args(argv)
        if args.list:
            print(bench_workloads.list_text())
            return 0
        return bench(args)
    except (BenchError, bench_build.BuildError) as exc:
        print(f"brisk bench: error: {exc}", file=sys.stderr)
        return 1


def _fastmm4_dir(args):
    """Where scripts/build-anchors.sh puts FastMM4's sources in --anchors."""
    return os.path.join(args.anchors, "fastmm4")


def _fpcx64mm_dir(args):
    """Where scripts/build-anchors.sh puts mORMot 2's fpcx64mm in --anchors."""
    return os.path.join(args.anchors, "fpcx64mm")


def prepare(args):
    """Prerequisites, build and allocators: what both the timed run and
    --callgrind need. Returns (bench_dir, brisk_lib, allocators, skipped)."""
    why_missing = "--no-install given" if args.no_install else bench_build.install_deps(log)
    bench_dir, brisk_lib = bench_build.build(args.no_build, log, _fastmm4_dir(args),
                                             _fpcx64mm_dir(args))
    allocators, skipped = find_allocators(args, brisk_lib, why_missing)
    return bench_dir, brisk_lib, allocators, skipped


def bench(args):
    started = time.monotonic()
    # Before the build: the build's own load must not count as the machine's.
    meter = bench_provenance.BusyMeter()
    machine = bench_provenance.machine()
    bench_dir, brisk_lib, allocators, skipped = prepare(args)
    if args.callgrind:
        return callgrind(args, bench_dir, allocators)
    for warning in bench_provenance.busy_warnings({"load_start": meter.load_start},
                                                  machine["cores"]):
        log(f"WARNING: the machine is busy: {warning}; timings will be noisy")
    rows, columns_of, lines_dir, full_s = plan(args, bench_dir, allocators, brisk_lib)
    out = bench_output.output_folder(args.out)
    total_runs = sum(len(columns_of[r["workload"]]) for r in rows) * args.reps
    mode = bench_plan.mode_of(args)
    if mode == bench_plan.DEFAULT:
        name = (f"the default set (--full runs every workload, about "
                f"{bench_plan.format_minutes(full_s)})")
    else:
        name = f"--{mode}"
    log(f"plan: {name}: {_describe_rows(rows)}; {args.reps} reps")
    estimate = bench_plan.estimate_seconds(rows, columns_of, args.reps, args.quick)
    log(f"{len(rows)} rows x allocators x {args.reps} reps = {total_runs} runs; estimated "
        f"{bench_plan.format_minutes(estimate)} (on {bench_plan.ESTIMATE_CORES} cores; the "
        f"progress lines correct it as runs finish); output {out}")
    runs = run_all(args, bench_dir, rows, columns_of, lines_dir, total_runs)
    meta = _conditions(args, machine, meter.finish(), allocators, skipped, started)
    meta["pascal_managers"] = _pascal_managers(args, columns_of)
    cells, verdicts = bench_report.summarise(runs, rows, columns_of)
    bench_output.write_all(out, meta, runs, cells, verdicts, rows, columns_of, log)
    log(f"results: {out}/results.json, results.csv, table.md "
        f"({(time.monotonic() - started) / 60:.1f} min)")
    return check_verified(args.check_verified, allocators, skipped, cells, rows, columns_of)


def _describe_rows(rows):
    """'lines, strcopy at threads 1,2,4; pascal-objects at 2': the workloads
    in plan order, those with the same thread counts together."""
    threads_of = {}
    for row in rows:
        threads_of.setdefault(row["workload"], []).append(row["threads"])
    groups = []
    for name, threads in threads_of.items():
        if groups and groups[-1][1] == threads:
            groups[-1][0].append(name)
        else:
            groups.append(([name], threads))
    return "; ".join(f"{', '.join(names)} at {'threads ' if i == 0 else ''}"
                     f"{','.join(map(str, threads))}" for i, (names, threads) in enumerate(groups))


def callgrind(args, bench_dir, allocators):
    """--callgrind: the C workloads at 1 thread, quick sizes, under callgrind."""
    import bench_callgrind
    workloads = [w for w in bench_workloads.WORKLOADS if not args.only or w.name in args.only]
    lines_dir = ""
    if any(w.uses_lines for w in workloads):
        lines_dir = lines_data(bench_dir, LINES_QUICK)
    return bench_callgrind.run(workloads, bench_dir, allocators, lines_dir,
                               bench_output.output_folder(args.out), log)


def _conditions(args, machine, load, allocators, skipped, started):
    """results.json's "meta": what the figures depend on besides the code."""
    return dict(machine, **load,
                date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                command=_command_line(), reps=args.reps, quick=args.quick,
                plan=bench_plan.mode_of(args),
                threads=args.threads, skipped=skipped,
                allocators={a.name: bench_provenance.describe_allocator(a, ROOT)
                            for a in allocators},
                spread_rule=bench_stats.__doc__.strip(),
                busy=bench_provenance.busy_warnings(load, machine["cores"]),
                duration_s=round(time.monotonic() - started, 1))


def _pascal_managers(args, columns_of):
    """The versions of the Pascal memory managers from outside this
    repository and FPC (FastMM4, fpcx64mm) whose columns ran: from the
    NAME.version that scripts/build-anchors.sh wrote beside the sources it
    was built from."""
    ran = {v.name for variants in columns_of.values() for v in variants}
    managers = {}
    for name, folder, columns in (("fastmm4", _fastmm4_dir(args), {"fastmm4"}),
                                  ("fpcx64mm", _fpcx64mm_dir(args),
                                   set(bench_workloads.FPCX64MM))):
        if ran & columns:
            folder = os.path.abspath(folder)
            managers[name] = {"version": bench_provenance.version_file(folder) or "unknown",
                              "sources": folder}
    return managers


def _command_line():
    return "./brisk bench" + ("" if not sys.argv[2:] else " " + shlex.join(sys.argv[2:]))


def run_all(args, bench_dir, rows, columns_of, lines_dir, total_runs):
    """Every run, interleaved: rep -> row -> variant, the order rotating each rep."""
    launcher = os.path.join(bench_dir, "measure")
    eta = bench_plan.Eta(bench_plan.planned_runs(rows, columns_of, args.reps, args.quick))
    runs, done = [], 0
    for rep in range(args.reps):
        rep_start = time.monotonic()
        for row in rows:
            variants = columns_of[row["workload"]]
            shift = rep % len(variants)
            for variant in variants[shift:] + variants[:shift]:
                w = row["workload_def"]
                argv = bench_workloads.argv_for(variant, w, row["threads"], args.quick, lines_dir)
                run_start = time.monotonic()
                result = run_measured(launcher, argv, variant.preload, args.timeout, variant.env)
                # The whole run, start and bookkeeping included: what the
                # time left is made of.
                eta.done((w.name, row["threads"], variant.name), time.monotonic() - run_start)
                done += 1
                runs.append({"rep": rep + 1, "workload": w.name, "threads": row["threads"],
                             "allocator": variant.name, "status": result.status,
                             "wall_s": round(result.wall_s, 6), "user_s": result.user_s,
                             "sys_s": result.sys_s, "peak_rss_mb": round(result.peak_rss_mb, 2),
                             "result": result.result, "detail": result.detail,
                             "command": shlex.join(argv), "preload": variant.preload})
                print(bench_plan.progress_line(done, total_runs, rep + 1, w.name, row["threads"],
                                               variant.name, _measured(result), eta.left_s()),
                      flush=True)
        if rep + 1 < args.reps:
            log(f"rep {rep + 1} took {time.monotonic() - rep_start:.0f} s; "
                f"{bench_plan.format_left(eta.left_s())}; "
                f"load average {os.getloadavg()[0]:.2f}")
    return runs


def _measured(result):
    """What a run's progress line shows of it."""
    rate = float(result.result.get("ops_s") or 0)
    rate_text = (f"{rate / 1e6:9.2f} Mops/s" if rate >= 1e4 else
                 f"{rate:9.0f} ops/s " if rate else "")
    status = result.status if result.status == OK else f"{result.status}: {result.detail}"
    return (f"{result.wall_s:8.3f} s {result.peak_rss_mb:9.1f} MB {rate_text} {status}")


def check_verified(required, allocators, skipped, cells, rows, columns_of):
    if not required:
        return 0
    names = {a.name for a in allocators}
    bad = [f"{name}: not available ({skipped.get(name, 'unknown allocator')})"
           for name in required if name not in names]
    by_key = {(c["workload"], c["threads"], c["allocator"]): c for c in cells}
    for row in rows:
        columns = {c.name for c in columns_of[row["workload"]]}
        for name in required:
            if name not in names or name not in columns:
                continue
            cell = by_key[(row["workload"], row["threads"], name)]
            if cell["status"] != OK or cell["reps_ok"] != cell["reps"]:
                bad.append(f"{row['workload']} T={row['threads']} {name}: {cell['status']} "
                           f"{cell['detail']}".rstrip())
    if bad:
        print("brisk bench: --check-verified FAILED:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    log(f"--check-verified: every workload verified under {', '.join(required)}")
    return 0
