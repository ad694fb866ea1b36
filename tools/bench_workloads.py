"""The workloads `brisk bench` runs and how each is invoked.

A workload is one program run at several thread counts. Ordinary workloads
run under every allocator by preloading it; "binary-variant" workloads (the
Free Pascal programs) instead come as one binary per memory manager, and
their variants take the place of the allocators in the table. Workloads may
add variants of their own (churn's fixed-size pool, the physical limit).
"""
import os
import shutil
from dataclasses import dataclass, field


@dataclass
class Variant:
    """One column of a row: how to run the workload as this allocator."""
    name: str
    argv_prefix: list  # program (and fixed options) before --threads
    preload: str = ""
    env: dict = field(default_factory=dict)


@dataclass
class Workload:
    name: str
    seed: str  # the account it reproduces, or "" for the standard stressors
    summary: str
    program: str  # binary name under the bench build folder
    options: list = field(default_factory=list)
    uses_lines: bool = False
    extra_variants: list = field(default_factory=list)  # [(name, extra options)]
    # Rough seconds of one default run at one thread, for the time estimate.
    estimate_s: float = 1.0
    binary_variants: dict = field(default_factory=dict)  # name -> path (Pascal)
    thread_counts: list = None  # overrides the command's --threads


WORKLOADS = [
    Workload("lines", "000", "threads read text files line by line, split on Tab", "lines",
             uses_lines=True, estimate_s=1.8),
    Workload("strcopy", "001", "nested loops copying strings of varying length", "strcopy",
             estimate_s=1.0),
    Workload("cache", "002", "concurrent key/value cache: set, get, inc, remove", "cache",
             estimate_s=1.0),
    Workload("churn", "003", "1000s of rounds: allocate 10,000 x 100 B, free all", "churn",
             extra_variants=[("pool", ["--pool"])], estimate_s=0.5),
    Workload("objects", "004", "serial vs parallel Execute over objects that allocate",
             "objects", estimate_s=0.5),
    Workload("larson", "", "server-style: blocks freed by other threads", "larson",
             estimate_s=0.5),
    Workload("prodcons", "", "producer/consumer ring, every free remote", "prodcons",
             estimate_s=0.5),
    Workload("falseshare", "", "false sharing between threads' small blocks", "falseshare",
             estimate_s=0.7),
    Workload("append", "", "realloc growth of strings by appending", "append",
             estimate_s=0.6),
    Workload("frag", "", "fragmentation: live bytes vs RSS", "frag", estimate_s=0.7),
]

# The workload's own headline figure(s) for the summary, from its RESULT line.
FIGURES = {
    "cache": ["set_ops_s", "get_ops_s", "inc_ops_s", "remove_ops_s"],
    "objects": ["speedup"],
    "frag": ["live_mb", "rss_mb", "overhead"],
    "falseshare": ["active_s", "passive_s"],
}

PASCAL_MANAGERS = ("fpcheap", "cmem", "brisk")
PASCAL_THREADS = [1, 2, 4]


def pascal_workloads(bench_dir):
    """The Free Pascal workloads whose binaries were built, and a note on
    what is missing (None when all are there)."""
    if not shutil.which("fpc"):
        return [], "Pascal workloads skipped: fpc is not installed"
    found = {}
    for program in ("lines", "objects"):
        found[program] = {m: os.path.join(bench_dir, "pascal", f"{program}_{m}")
                          for m in PASCAL_MANAGERS}
        found[program] = {m: p for m, p in found[program].items() if os.access(p, os.X_OK)}
    workloads = []
    for reader in ("readln", "stream"):
        if found["lines"]:
            workloads.append(Workload(
                f"pascal-lines-{reader}", "000", f"Free Pascal lines, {reader} reader", "",
                options=["--reader", reader], uses_lines=True, estimate_s=2.5,
                binary_variants=found["lines"], thread_counts=PASCAL_THREADS))
    if found["objects"]:
        workloads.append(Workload(
            "pascal-objects", "004", "Free Pascal objects", "", estimate_s=1.0,
            binary_variants=found["objects"], thread_counts=PASCAL_THREADS))
    missing = [f"{prog}_{m}" for prog in found for m in PASCAL_MANAGERS if m not in found[prog]]
    note = None
    if missing:
        note = (f"Pascal binaries missing under {os.path.join(bench_dir, 'pascal')}: "
                f"{', '.join(missing)}" + ("" if workloads else "; Pascal workloads skipped"))
    return workloads, note


def variants_for(workload, bench_dir, allocators, lib_dir):
    """The columns of this workload's rows."""
    if workload.binary_variants:
        # A Pascal binary linked against brisk finds libbrisk.so in the build folder.
        env = {"LD_LIBRARY_PATH": lib_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")}
        return [Variant(name, [path], "", env) for name, path in workload.binary_variants.items()]
    program = os.path.join(bench_dir, workload.program)
    variants = [Variant(a.name, [program], a.preload) for a in allocators]
    for name, options in workload.extra_variants:
        variants.append(Variant(name, [program, *options]))
    return variants


def argv_for(variant, workload, threads, quick, lines_dir):
    argv = [*variant.argv_prefix, "--threads", str(threads)]
    if quick:
        argv.append("--quick")
    if workload.uses_lines:
        argv += ["--dir", lines_dir]
    return argv + workload.options
