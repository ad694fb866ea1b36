"""`brisk bench`: brisk against every allocator it can find, on the classic
multithreaded-allocation workloads, side by side in time and memory.

Runs are interleaved (rep -> row -> allocator, the allocator order rotating
each rep) so machine noise spreads evenly over the allocators; the table
shows medians over the reps.
"""
import argparse
import datetime
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import bench_allocators
import bench_report
import bench_workloads
from bench_runner import OK, run_measured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.join(ROOT, "build")
BENCH_ONLY_BUILD_DIR = os.path.join(ROOT, "build-bench")
LINES_CACHE = os.path.join(ROOT, ".cache", "lines")

# Line data: 4 files of lines of ~10 fields (seed 000 used 4 files, 750 MB).
LINES_FULL = {"files": 4, "lines": 1000000, "fields": 10, "max-field": 16, "seed": 1}
LINES_QUICK = dict(LINES_FULL, lines=150000)


def log(message):
    print(f"brisk bench: {message}", flush=True)


class BenchError(Exception):
    """A problem the user can fix; reported as one clear message."""


# --- options -----------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="brisk bench",
        description="Compare brisk with glibc, jemalloc, tcmalloc, mimalloc and TBB on "
                    "multithreaded allocation workloads: time, peak RSS, table and chart.")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, 1 rep, threads 1,2: a smoke test under 2 minutes")
    parser.add_argument("--only", metavar="W1,W2",
                        help="run only these workloads (names: see --list)")
    parser.add_argument("--allocators", metavar="A1,A2",
                        help="run only these allocators (default: all found)")
    parser.add_argument("--alloc", action="append", default=[], metavar="NAME=path.so",
                        help="add (or replace) an allocator to preload; repeatable")
    parser.add_argument("--threads", metavar="N1,N2",
                        help="thread counts (default 1,2,2xcores; --quick 1,2)")
    parser.add_argument("--reps", type=int, metavar="N", help="repetitions (default 3; --quick 1)")
    parser.add_argument("--out", metavar="DIR", default=os.path.join(ROOT, "bench-results"),
                        help="output folder (default bench-results/)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="seconds before a run is killed (default 120; --quick 30)")
    parser.add_argument("--check-verified", metavar="A1,A2",
                        help="exit non-zero unless every workload gave a verified result "
                             "under each of these allocators (CI: glibc,brisk)")
    parser.add_argument("--no-build", action="store_true", help="use the binaries already built")
    parser.add_argument("--no-install", action="store_true",
                        help="do not apt-get install missing allocators")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)

    def csv_list(text):
        return [item.strip() for item in text.split(",") if item.strip()] if text else []

    cores = os.cpu_count() or 1
    if args.threads:
        try:
            args.threads = sorted(set(int(t) for t in csv_list(args.threads)))
        except ValueError:
            parser.error(f"--threads wants numbers like 1,2,4, not '{args.threads}'")
        if not args.threads or args.threads[0] < 1 or args.threads[-1] > 1024:
            parser.error("--threads: each count must be from 1 to 1024")
    else:
        args.threads = [1, 2] if args.quick else sorted({1, 2, 2 * cores})
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    if args.timeout is None:
        args.timeout = 30.0 if args.quick else 120.0
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    extra = {}
    for spec in args.alloc:
        name, sep, path = spec.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name) or not path:
            parser.error(f"--alloc wants NAME=path.so, not '{spec}'")
        if name in ("glibc", "pool") or name in bench_workloads.PASCAL_MANAGERS and name != "brisk":
            parser.error(f"--alloc: the name '{name}' is reserved")
        if not os.path.isfile(path):
            parser.error(f"--alloc {name}: no such file: {path}")
        extra[name] = path
    args.alloc = extra
    args.only = csv_list(args.only)
    known = [w.name for w in bench_workloads.WORKLOADS] + [
        f"pascal-lines-{r}" for r in ("readln", "stream")] + ["pascal-objects"]
    unknown = [w for w in args.only if w not in known]
    if unknown:
        parser.error(f"--only: unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}")
    args.allocators = csv_list(args.allocators)
    args.check_verified = csv_list(args.check_verified)
    return args


# --- build and data ----------------------------------------------------------

def run_quiet(command, what):
    """Runs a build step; returns None on success, else the tail of its output."""
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    lines = (result.stdout + result.stderr).strip().splitlines()
    # The compiler's or CMake's own words first; make's summary lines last.
    errors = ([l for l in lines if "error:" in l.lower() or "CMake Error" in l]
              or [l for l in lines if "error" in l.lower()] or lines)
    return f"{what} failed: " + " | ".join(l.strip() for l in errors[:3])


def build(no_build):
    """Builds everything; falls back to the workloads alone while the
    allocator core does not build. Returns (bench binary folder, brisk
    library or None)."""
    brisk_lib = os.path.join(BUILD_DIR, "libbrisk.so")
    if no_build:
        for candidate in (os.path.join(BUILD_DIR, "bench"), BENCH_ONLY_BUILD_DIR):
            if os.path.exists(os.path.join(candidate, "lines")):
                return candidate, brisk_lib if os.path.exists(brisk_lib) else None
        raise BenchError("--no-build: no workload binaries in build/bench or build-bench")
    if not shutil.which("cmake"):
        raise BenchError("cmake is needed to build the workloads (Debian: apt-get install cmake)")
    log("building (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j) ...")
    problem = run_quiet(["cmake", "-S", ".", "-B", BUILD_DIR, "-DCMAKE_BUILD_TYPE=Release"],
                        "configure") or run_quiet(["cmake", "--build", BUILD_DIR, "-j"], "build")
    if problem is None and os.path.exists(brisk_lib):
        return os.path.join(BUILD_DIR, "bench"), brisk_lib
    log(problem or "the build made no libbrisk.so")
    log("building the workloads alone (build-bench/), comparing the other allocators")
    problem = run_quiet(["cmake", "-S", "bench", "-B", BENCH_ONLY_BUILD_DIR,
                         "-DCMAKE_BUILD_TYPE=Release"], "configure of bench/") or run_quiet(
        ["cmake", "--build", BENCH_ONLY_BUILD_DIR, "-j"], "build of bench/")
    if problem:
        raise BenchError(problem)
    return BENCH_ONLY_BUILD_DIR, None


def lines_data(bench_dir, params):
    """The line data folder for these parameters, generated once and cached."""
    key = "-".join(f"{k}{v}" for k, v in params.items()).replace("max-field", "m")
    folder = os.path.join(LINES_CACHE, key)
    if os.path.exists(os.path.join(folder, "expect.txt")):
        return folder
    os.makedirs(LINES_CACHE, exist_ok=True)
    partial = f"{folder}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    log(f"generating line data {key} (once; cached in .cache/lines) ...")
    command = [os.path.join(bench_dir, "gen_lines"), "--dir", partial]
    for name, value in params.items():
        command += [f"--{name}", str(value)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise BenchError(f"gen_lines failed: {result.stderr.strip()}")
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(partial, folder)  # atomic: a folder with expect.txt is always complete
    return folder


# --- chart -------------------------------------------------------------------

def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0


def draw_chart(json_path, png_path):
    """Draws the chart with whichever Python has matplotlib, installing it if
    it can. Returns a message saying what happened."""
    script = os.path.join(ROOT, "tools", "bench_chart.py")
    system_python = "/usr/bin/python3"

    def in_process():
        importlib.invalidate_caches()
        import bench_chart
        with open(json_path) as f:
            bench_chart.draw(json.load(f), png_path)

    def with_system_python():
        result = subprocess.run([system_python, script, json_path, png_path],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip().splitlines()[-1:])

    attempts = [("matplotlib", lambda: True, in_process)]
    if os.path.realpath(sys.executable) != os.path.realpath(system_python) and os.path.exists(
            system_python):
        attempts.append(("/usr/bin/python3", lambda: has_matplotlib(system_python),
                         with_system_python))
    for name, available, draw in attempts:
        try:
            if available():
                draw()
                return f"chart: {png_path}"
        except ImportError:
            pass
    # Not there yet: install it the way this Python expects.
    root_apt = os.geteuid() == 0 and shutil.which("apt-get")
    if root_apt and os.path.exists(system_python):
        log("installing python3-matplotlib with apt-get for the chart ...")
        subprocess.run(["apt-get", "install", "-y", "python3-matplotlib"], capture_output=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if has_matplotlib(system_python):
            with_system_python()
            return f"chart: {png_path}"
    log("installing matplotlib with pip for the chart ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"],
                         capture_output=True, text=True)
    if pip.returncode == 0:
        try:
            in_process()
            return f"chart: {png_path}"
        except ImportError:
            pass
    return ("chart skipped: matplotlib is not available and could not be installed "
            "(apt-get install python3-matplotlib, or pip install matplotlib)")


# --- the run -----------------------------------------------------------------

def machine_info():
    cpu = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        cpu = next((l.split(":", 1)[1].strip() for l in out.splitlines()
                    if l.startswith("Model name")), "")
    except OSError:
        pass
    return {"cpu": cpu or "unknown CPU", "cores": os.cpu_count() or 1}


def plan(args, bench_dir, brisk_lib):
    allocators, skipped = bench_allocators.discover(
        brisk_lib, args.alloc, args.allocators, not args.no_install, log)
    for name, why in skipped.items():
        log(f"skipped {name}: {why}")
    if not allocators:
        raise BenchError("no allocator left to run")
    log("allocators: " + ", ".join(f"{a.name}" + (f" ({a.preload})" if a.preload else "")
                                   for a in allocators))
    workloads = list(bench_workloads.WORKLOADS)
    pascal, note = bench_workloads.pascal_workloads(bench_dir)
    if note and (not args.only or any(w.startswith("pascal") for w in args.only)):
        log(note)
    workloads += pascal
    if args.only:
        workloads = [w for w in workloads if w.name in args.only]
    if not workloads:
        raise BenchError("none of the --only workloads can run here")
    lines_dir = ""
    if any(w.uses_lines for w in workloads):
        lines_dir = lines_data(bench_dir, LINES_QUICK if args.quick else LINES_FULL)
    rows, columns_of = [], {}
    lib_dir = os.path.dirname(brisk_lib) if brisk_lib else BUILD_DIR
    for w in workloads:
        variants = bench_workloads.variants_for(w, bench_dir, allocators, lib_dir)
        if w.binary_variants and args.allocators:
            variants = [v for v in variants if v.name in args.allocators] or variants
        columns_of[w.name] = [v.name for v in variants]
        threads = args.threads
        if w.thread_counts:
            threads = [t for t in w.thread_counts if not args.quick or t <= 2]
        for t in threads:
            rows.append({"workload": w.name, "threads": t, "workload_def": w, "variants": variants,
                         "figures": bench_workloads.FIGURES.get(w.name, [])})
    return allocators, skipped, rows, columns_of, lines_dir


def estimate_seconds(rows, args):
    scale = 0.3 if args.quick else 1.0
    per_rep = sum(len(r["variants"]) * (r["workload_def"].estimate_s * scale + 0.05) for r in rows)
    return per_rep * args.reps


def main(argv):
    try:
        return bench(parse_args(argv))
    except BenchError as exc:
        print(f"brisk bench: error: {exc}", file=sys.stderr)
        return 1


def bench(args):
    if args.list:
        for w in bench_workloads.WORKLOADS:
            seed = f"seed {w.seed}" if w.seed else "stressor"
            print(f"{w.name:<12} {seed:<9} {w.summary}")
        print("pascal-lines-readln, pascal-lines-stream, pascal-objects: Free Pascal variants "
              "(when fpc and build/bench/pascal/* exist)")
        return 0
    started = time.monotonic()
    bench_dir, brisk_lib = build(args.no_build)
    allocators, skipped, rows, columns_of, lines_dir = plan(args, bench_dir, brisk_lib)
    launcher = os.path.join(bench_dir, "measure")
    names = [a.name for a in allocators]
    reference = bench_allocators.BRISK if bench_allocators.BRISK in names else names[0]
    if reference != bench_allocators.BRISK:
        log(f"brisk is not available: ratios are to {reference} instead")
    missing_required = [a for a in args.check_verified if a not in names]

    total_runs = sum(len(r["variants"]) for r in rows) * args.reps
    log(f"{len(rows)} rows x allocators x {args.reps} reps = {total_runs} runs, "
        f"threads {','.join(map(str, args.threads))}; "
        f"estimated {estimate_seconds(rows, args) / 60:.1f} min")

    runs, done = [], 0
    for rep in range(args.reps):
        rep_start = time.monotonic()
        for row in rows:
            variants = row["variants"]
            shift = rep % len(variants)
            for variant in variants[shift:] + variants[:shift]:
                w = row["workload_def"]
                argv = bench_workloads.argv_for(variant, w, row["threads"], args.quick, lines_dir)
                result = run_measured(launcher, argv, variant.preload, args.timeout, variant.env)
                done += 1
                record = {"rep": rep + 1, "workload": w.name, "threads": row["threads"],
                          "allocator": variant.name, "status": result.status,
                          "wall_s": round(result.wall_s, 6),
                          "peak_rss_mb": round(result.peak_rss_mb, 2),
                          "result": result.result, "detail": result.detail,
                          "command": shlex.join(argv),
                          "preload": variant.preload}
                runs.append(record)
                rate = result.result.get("ops_s")
                rate_text = f"{float(rate) / 1e6:9.2f} Mops/s" if rate else ""
                status = result.status if result.status == OK else f"{result.status}: {result.detail}"
                print(f"[{done:4}/{total_runs}] rep {rep + 1} {w.name:<20} T={row['threads']:<3} "
                      f"{variant.name:<9} {result.wall_s:8.3f} s {result.peak_rss_mb:9.1f} MB "
                      f"{rate_text} {status}", flush=True)
        if rep + 1 < args.reps:
            left = (time.monotonic() - rep_start) * (args.reps - rep - 1)
            log(f"rep {rep + 1} took {time.monotonic() - rep_start:.0f} s; about {left / 60:.1f} min left")

    summary = bench_report.summarise(runs, rows, columns_of, reference)
    all_columns = list(dict.fromkeys(c for r in rows for c in columns_of[r["workload"]]))
    os.makedirs(args.out, exist_ok=True)
    info = machine_info()
    command = "./brisk bench" + ("" if not sys.argv[2:] else " " + shlex.join(sys.argv[2:]))
    meta = dict(info, date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                command=command, reference=reference, reps=args.reps, quick=args.quick,
                threads=args.threads, allocators={a.name: a.preload or "(system malloc)"
                                                  for a in allocators},
                skipped=skipped, duration_s=round(time.monotonic() - started, 1))
    terminal = bench_report.tables(summary, rows, all_columns, reference, markdown=False)
    markdown = bench_report.tables(summary, rows, all_columns, reference, markdown=True)
    header = [f"Machine: {info['cpu']}, {info['cores']} cores. Date: {meta['date']}.",
              f"Command: `{command}` ({args.reps} rep(s), medians; ratio to {reference}; "
              f"lower is better).", ""]
    if skipped:
        header += ["Skipped: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()), ""]
    problems = bench_report.failures(summary)
    figures = bench_report.figures_lines(summary, rows)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write("\n".join(header + markdown))
        if problems:
            f.write("\nFailures:\n\n" + "\n".join(f"- {p}" for p in problems) + "\n")
        f.write("\nWorkload figures (medians):\n\n```\n" + "\n".join(figures) + "\n```\n")
    json_path = os.path.join(args.out, "results.json")
    bench_report.write_json(json_path, meta, runs, summary)
    bench_report.write_csv(os.path.join(args.out, "results.csv"), summary)

    print()
    print("\n".join(terminal))
    print("Workload figures (medians):")
    print("\n".join(figures))
    if problems:
        print("\nFailures:\n  " + "\n  ".join(problems))
    print()
    log(draw_chart(json_path, os.path.join(args.out, "bench.png")))
    log(f"results: {args.out}/results.json, results.csv, table.md "
        f"({(time.monotonic() - started) / 60:.1f} min)")
    return check_verified(args.check_verified, missing_required, skipped, summary, rows, columns_of)


def check_verified(required, missing, skipped, summary, rows, columns_of):
    if not required:
        return 0
    bad = []
    for name in missing:
        bad.append(f"{name}: not available ({skipped.get(name, 'unknown allocator')})")
    for row in rows:
        for name in required:
            if name in missing or name not in columns_of[row["workload"]]:
                continue
            cell = next(c for c in summary if (c["workload"], c["threads"], c["allocator"]) ==
                        (row["workload"], row["threads"], name))
            if cell["status"] != OK or cell["reps_ok"] != cell["reps"]:
                bad.append(f"{row['workload']} T={row['threads']} {name}: {cell['status']} "
                           f"{cell['detail']}".rstrip())
    if bad:
        print("brisk bench: --check-verified FAILED:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    log(f"--check-verified: every workload verified under {', '.join(required)}")
    return 0
