# SPDX-License-Identifier: MIT
"""What `brisk bench` leaves behind: a folder per run (and the `latest`
link), table.md with its header of conditions and warnings, results.json,
results.csv, the same tables on the terminal, and the chart."""
import datetime
import json
import os
import subprocess
import sys

import bench_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(ROOT, "bench-results")


def output_folder(out):
    """--out as given, else a new timestamped folder under bench-results/ with
    bench-results/latest pointing at it; earlier runs are never overwritten."""
    if out:
        os.makedirs(out, exist_ok=True)
        return out
    stamp = datetime.datetime.now().strftime("%Y-%m-%dT%H%M")
    folder, n = os.path.join(RESULTS_DIR, stamp), 1
    while os.path.exists(folder):
        n += 1
        folder = os.path.join(RESULTS_DIR, f"{stamp}-{n}")
    os.makedirs(folder)
    latest = os.path.join(RESULTS_DIR, "latest")
    if os.path.islink(latest) or not os.path.exists(latest):
        temporary = f"{latest}.{os.getpid()}"
        os.symlink(os.path.basename(folder), temporary)
        os.replace(temporary, latest)  # atomic: latest always points somewhere whole
    return folder


def header(meta):
    """The lines above the tables: warnings first, then what ran where."""
    lines = []
    if meta["busy"]:
        lines += ["**WARNING: the machine was busy during this run** -- "
                  + "; ".join(meta["busy"]) + ". Timings are noisy; rerun on a quiet machine "
                  "before drawing conclusions.", ""]
    load = meta["load_start"], meta["load_end"]
    lines += [f"Machine: {meta['cpu']}, {meta['cores']} cores, Linux {meta['kernel']}"
              f" ({meta['os']}). Date: {meta['date']}.",
              f"Load average (1/5/15 min): {' '.join(map(str, load[0]))} at start, "
              f"{' '.join(map(str, load[1]))} at end; other processes used "
              f"{meta['others_cpu_share']:.0%} of the CPU during the run.",
              f"Command: `{meta['command']}` ({meta['reps']} interleaved reps per cell).",
              "Each cell: median (spread: min-max below 5 reps, interquartile range from 5). "
              "The winner column names an allocator only when its spread lies wholly below "
              "every other's; otherwise the row is a tie between the allocators whose "
              "spreads overlap the best one's. `pool` (churn's fixed-size free list, the "
              "physical limit) and `floor` (churn over bench/floor_malloc.c, the least a "
              "preloaded malloc can do) are shown but never ranked. bursts' time is the "
              "time spent in bursts, the idle pauses left out.", ""]
    lines.append("Allocators: " + "; ".join(f"{name} = {info['version']}"
                                            for name, info in meta["allocators"].items()))
    if meta.get("pascal_managers"):
        lines.append("Pascal memory managers: " + "; ".join(
            f"{name} = {info['version']}" for name, info in meta["pascal_managers"].items()))
    if meta["skipped"]:
        lines.append("Skipped: " + "; ".join(f"{k} ({v})" for k, v in meta["skipped"].items()))
    return lines + [""]


def write_all(out, meta, runs, cells, verdicts, rows, columns_of, log):
    head = header(meta)
    problems = bench_report.failures(cells)
    figures = bench_report.figures_lines(cells, rows)
    markdown = bench_report.tables(cells, verdicts, rows, columns_of, markdown=True)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(head + markdown))
        if problems:
            f.write("\nFailures:\n\n" + "\n".join(f"- {p}" for p in problems) + "\n")
        f.write("\nWorkload figures (medians):\n\n```\n" + "\n".join(figures) + "\n```\n")
    json_path = os.path.join(out, "results.json")
    bench_report.write_json(json_path, meta, runs, cells, verdicts)
    bench_report.write_csv(os.path.join(out, "results.csv"), cells)
    print()
    print("\n".join(line.replace("**", "") for line in head))
    print("\n".join(bench_report.tables(cells, verdicts, rows, columns_of, markdown=False)))
    print("Workload figures (medians):")
    print("\n".join(figures))
    if problems:
        print("\nFailures:\n  " + "\n  ".join(problems))
    if meta["busy"]:
        print("\nWARNING: the machine was busy: " + "; ".join(meta["busy"]))
    print()
    log(draw_chart(json_path, os.path.join(out, "bench.png")))


def draw_chart(json_path, png_path):
    """Draws the chart with matplotlib, from this Python or the system's.
    Returns a message saying what happened."""
    try:
        import bench_chart
        with open(json_path) as f:
            bench_chart.draw(json.load(f), png_path)
        return f"chart: {png_path}"
    except ImportError:
        pass
    system_python = "/usr/bin/python3"
    if os.path.exists(system_python) and os.path.realpath(system_python) != os.path.realpath(
            sys.executable):
        script = os.path.join(ROOT, "tools", "bench_chart.py")
        result = subprocess.run([system_python, script, json_path, png_path],
                                capture_output=True, text=True)
        if result.returncode == 0:
            return f"chart: {png_path}"
    return ("chart skipped: matplotlib is not installed (scripts/install-deps.sh bench installs "
            "python3-matplotlib as root)")
