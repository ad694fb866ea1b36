# SPDX-License-Identifier: MIT
"""The workloads `brisk bench` runs and how each is invoked.

A workload is one program run at several thread counts. Ordinary workloads
run under every allocator by preloading it; "binary-variant" workloads (the
Free Pascal programs) instead come as one binary per memory manager, and
their variants take the place of the allocators in the table. Workloads may
add reference variants of their own (churn's fixed-size pool, the physical
limit, and the least a preloaded malloc can do): they are shown but never
ranked against the allocators.
"""
import os
import shutil
import textwrap
from dataclasses import dataclass, field


# bench/floor_malloc.c: one thread-local list, no checks, nothing returned;
# churn's loop over it is the floor for any malloc in a shared library.
FLOOR_LIBRARY = "libfloor_malloc.so"
# The reference columns' names, which --alloc may not take.
REFERENCE_NAMES = ("pool", "floor")


@dataclass
class Variant:
    """One column of a row: how to run the workload as this allocator."""
    name: str
    argv_prefix: list  # program (and fixed options) before --threads
    preload: str = ""
    env: dict = field(default_factory=dict)
    # The allocator this variant runs on (for --allocators); "" for a
    # reference that is not an allocator at all.
    allocator: str = ""
    reference: bool = False  # shown, never ranked


@dataclass
class Workload:
    name: str
    does: str  # what the program does, one line
    complaint: str  # the real-world complaint it reproduces
    checks: str  # what it verifies before it reports ok=1
    program: str  # binary name under the bench build folder
    options: list = field(default_factory=list)
    uses_lines: bool = False
    # References: [(name, extra options, library preloaded from the bench
    # folder or "")]; one whose library was not built is left out.
    extra_variants: list = field(default_factory=list)
    # Seconds of one run at the default sizes on 2 cores: the mean over
    # Debian's six allocators (and the references) at 1, 2 and 4 threads, as
    # measured on a 2-core VM under a load average of 2-6, for the time
    # estimate (bench_plan). Slow outliers count: tcmalloc's falseshare,
    # jemalloc's and mimalloc's bigbuffers take 10 s where others take 1.
    estimate_s: float = 1.0
    binary_variants: dict = field(default_factory=dict)  # name -> path (Pascal)
    thread_counts: list = None  # overrides the command's --threads
    quick_thread_counts: list = None  # the same under --quick
    # RESULT key holding the seconds to compare instead of the process's wall
    # time: for workloads that sleep on purpose, the sleeping is not work.
    time_key: str = ""
    memory: bool = False  # a memory workload: its RSS figures lead its row
    figures: list = field(default_factory=list)  # RESULT keys worth showing


WORKLOADS = [
    Workload(
        "lines", "threads read text files line by line and split each line on Tab into a list",
        "Delphi threads each reading a text file line by line ran no faster than one thread",
        "line, field and byte totals against the generator's expect.txt", "lines",
        uses_lines=True, estimate_s=1.3),
    Workload(
        "strcopy", "threads run nested loops copying strings of varying length",
        "string-copying loops took twice as long in two threads as in one (a locked shared pool)",
        "string contents against the source; the number of copies", "strcopy", estimate_s=0.6),
    Workload(
        "cache", "concurrent key/value cache driven through set, get, inc and remove phases",
        "an in-process cache whose throughput was bounded by the allocations of each operation",
        "every get, inc and remove returns the value stored; the cache is empty at the end",
        "cache", estimate_s=0.65, figures=["set_ops_s", "get_ops_s", "inc_ops_s", "remove_ops_s"]),
    Workload(
        "churn", "rounds of allocating 10,000 blocks of 100 B and freeing them all",
        "malloc many times slower than a hand-written fixed-size pool at this very loop",
        "tags at both ends of every block; the number of pairs", "churn",
        extra_variants=[("pool", ["--pool"], ""), ("floor", [], FLOOR_LIBRARY)], estimate_s=0.3),
    Workload(
        "objects", "a loop over objects that each allocate and free many small objects, "
        "serially then in parallel",
        "a parallel loop scaled 3.9x on 12 cores because frees waited on per-size-class locks",
        "a checksum in every object; objects made = objects freed", "objects", estimate_s=0.15,
        figures=["speedup"]),
    Workload(
        "larson", "server threads replace random blocks in tables that move between threads",
        "servers whose threads free blocks other threads allocated (Larson and Krishnan's test)",
        "tags at both ends of every block; the number of replacements", "larson", estimate_s=0.22),
    Workload(
        "prodcons", "threads in a ring pass messages; every block is freed by another thread",
        "pipelines where the consumer, not the producer, frees every message",
        "each message's checksum and sequence number; the number consumed", "prodcons",
        estimate_s=0.75),
    Workload(
        "fanout", "one thread allocates every block, the others check and free them",
        "a reader thread's records freed by a pool of workers (the classic producer/consumer "
        "stress: one thread allocates while others free)",
        "tags at both ends of every block; blocks freed = blocks made", "fanout",
        estimate_s=0.5),
    Workload(
        "sharing", "rounds of short-lived threads trading objects through a table all threads "
        "share; objects outlive the threads that made them",
        "a thread per task passing results between tasks (mstress-style: frees into the heaps "
        "of exited threads)",
        "tags at both ends of every object; objects made = objects freed", "sharing",
        estimate_s=0.5),
    Workload(
        "falseshare", "threads write their own small blocks over and over",
        "allocators that put different threads' blocks in one cache line (Hoard's "
        "cache-thrash and cache-scratch)", "every write landed; the number of writes",
        "falseshare", estimate_s=1.5, figures=["active_s", "passive_s"]),
    Workload(
        "append", "strings grown one short piece at a time with realloc",
        "`s := s + piece` loops made slow by realloc copying instead of growing in place",
        "every string's content after each growth", "append", estimate_s=0.4),
    Workload(
        "frag", "fill with small blocks, free 90% scattered, then allocate larger blocks",
        "memory that stays resident after a program frees most of its small blocks",
        "tags in every live block; live byte counts per phase", "frag", estimate_s=0.25,
        figures=["live_mb", "rss_mb", "overhead"]),
    Workload(
        "threadchurn", "4000 short-lived threads, 8 at a time, each making 2000 random "
        "8 B-64 KiB allocations and frees and handing 16 live blocks to the main thread; "
        "RSS read at the last join and 1 s later",
        "resident memory that grows with the number of threads that ever ran (a thread per task)",
        "tags at both ends of every block; ops and handed-over blocks counted", "threadchurn",
        estimate_s=2.1, time_key="secs", thread_counts=[8], quick_thread_counts=[8], memory=True,
        figures=["half_rss_mb", "joined_rss_mb", "end_rss_mb"]),
    Workload(
        "bursts", "a pool of threads allocates mixed sizes in bursts (a quarter freed by the "
        "next thread) and idles in between; RSS read 1.5 s into the final idle",
        "servers that keep a burst's memory resident while they wait for the next request",
        "tags at both ends of every block; blocks allocated = blocks freed", "bursts",
        estimate_s=2.6, time_key="secs", memory=True,
        figures=["burst_rss_mb", "idle_rss_mb", "end_rss_mb"]),
    Workload(
        "bigbuffers", "20 buffers of 5-25 MiB kept alive, one replaced at random 2000 times "
        "by a new zero-filled buffer",
        "programs replacing large zero-filled buffers peaking at several times their live memory",
        "a stamp in every MiB of every buffer and the zero bytes beside it", "bigbuffers", estimate_s=4.5,
        memory=True, figures=["live_mb", "end_rss_mb"]),
]

# Pascal variants: FPC's own heap, cmem (FPC's bridge to the C malloc, so to
# whatever is preloaded), BriskMM, the Free Pascal binding of brisk, and
# FastMM4, the Delphi memory manager, and mORMot 2's fpcx64mm in its three
# settings, where their sources were at hand for the build
# (scripts/build-anchors.sh). Few machines have them, so their binaries are
# optional: their absence is not reported as missing.
FPCX64MM = ("fpcx64mm", "fpcx64mm_server", "fpcx64mm_booster")
PASCAL_MANAGERS = ("fpcheap", "cmem", "brisk", "fastmm4") + FPCX64MM
PASCAL_OPTIONAL = ("fastmm4",) + FPCX64MM
PASCAL_RUNS_ON = {"fpcheap": "fpcheap", "cmem": "glibc", "brisk": "brisk", "fastmm4": "fastmm4",
                  **{name: name for name in FPCX64MM}}
PASCAL_THREADS, PASCAL_QUICK_THREADS = [1, 2, 4], [1, 2]
# Workload.estimate_s of the line readers, measured as the C workloads'.
PASCAL_LINES_ESTIMATE_S = {"readln": 3.0, "stream": 2.5}


def pascal_workloads(bench_dir):
    """The Free Pascal workloads whose binaries were built, and a note on
    what is missing (None when all are there)."""
    if not shutil.which("fpc"):
        return [], "Pascal workloads skipped: fpc is not installed"
    found = {}
    for program in ("lines", "objects", "pipeline"):
        found[program] = {m: os.path.join(bench_dir, "pascal", f"{program}_{m}")
                          for m in PASCAL_MANAGERS}
        found[program] = {m: p for m, p in found[program].items() if os.access(p, os.X_OK)}
    workloads = []
    for reader, how in (("readln", "ReadLn"), ("stream", "a stream reader")):
        if found["lines"]:
            workloads.append(Workload(
                f"pascal-lines-{reader}", f"Free Pascal: threads read lines with {how} and split "
                "them into TStringLists", WORKLOADS[0].complaint, "line, field and byte totals",
                "", options=["--reader", reader], uses_lines=True,
                estimate_s=PASCAL_LINES_ESTIMATE_S[reader],
                binary_variants=found["lines"], thread_counts=PASCAL_THREADS,
                quick_thread_counts=PASCAL_QUICK_THREADS))
    if found["objects"]:
        workloads.append(Workload(
            "pascal-objects", "Free Pascal: objects that allocate and free many objects, "
            "in parallel", WORKLOADS[4].complaint, "a checksum over every object", "",
            estimate_s=2.3, binary_variants=found["objects"], thread_counts=PASCAL_THREADS,
            quick_thread_counts=PASCAL_QUICK_THREADS))
    if found["pipeline"]:
        workloads.append(Workload(
            "pascal-pipeline", "Free Pascal: a reader thread hands text lines through a queue "
            "to T workers, which split and free them", "servers whose reader thread feeds a "
            "pool of parsers: every string freed by another thread than the one that made it",
            "line count and a checksum over every field", "", estimate_s=2.0,
            binary_variants=found["pipeline"], thread_counts=PASCAL_THREADS,
            quick_thread_counts=PASCAL_QUICK_THREADS))
    missing = [f"{prog}_{m}" for prog in found for m in PASCAL_MANAGERS
               if m not in found[prog] and m not in PASCAL_OPTIONAL]
    note = None
    if missing:
        note = (f"Pascal binaries missing under {os.path.join(bench_dir, 'pascal')}: "
                f"{', '.join(missing)}" + ("" if workloads else "; Pascal workloads skipped"))
    return workloads, note


def _pascal_variants(workload, allocators, lib_dir):
    """The Pascal binaries as they are, then the cmem binary over every
    preloaded allocator (`cmem+jemalloc`), so BriskMM meets FPC's usual way
    of using a faster malloc."""
    # A Pascal binary linked against brisk finds libbrisk.so in the build folder.
    env = {"LD_LIBRARY_PATH": lib_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")}
    variants = [Variant(name, [path], "", env, PASCAL_RUNS_ON[name])
                for name, path in workload.binary_variants.items()]
    cmem = workload.binary_variants.get("cmem")
    if cmem:
        variants += [Variant(f"cmem+{a.name}", [cmem], a.preload, env, a.name)
                     for a in allocators if a.preload]
    return variants


def variants_for(workload, bench_dir, allocators, lib_dir):
    """The columns of this workload's rows."""
    if workload.binary_variants:
        return _pascal_variants(workload, allocators, lib_dir)
    program = os.path.join(bench_dir, workload.program)
    variants = [Variant(a.name, [program], a.preload, allocator=a.name) for a in allocators]
    for name, options, library in workload.extra_variants:
        preload = os.path.join(bench_dir, library) if library else ""
        if not preload or os.path.exists(preload):
            variants.append(Variant(name, [program, *options], preload, reference=True))
    return variants


def thread_counts(workload, requested, quick):
    """The thread counts of this workload's rows: its own where the pattern
    fixes them, else the command's."""
    own = workload.quick_thread_counts if quick else workload.thread_counts
    return own or requested


def argv_for(variant, workload, threads, quick, lines_dir):
    argv = [*variant.argv_prefix, "--threads", str(threads)]
    if quick:
        argv.append("--quick")
    if workload.uses_lines:
        argv += ["--dir", lines_dir]
    return argv + workload.options


def list_text(width=100):
    """What `--list` prints: each workload, what it does, what it reproduces
    and what it checks."""
    out = []
    for w in WORKLOADS:
        out += textwrap.wrap(w.does, width, initial_indent=f"{w.name:<13}",
                             subsequent_indent=" " * 13)
        for label, text in (("reproduces", w.complaint), ("checks", w.checks)):
            out += textwrap.wrap(f"{label}: {text}", width, initial_indent=" " * 15,
                                 subsequent_indent=" " * 17)
    out += textwrap.wrap("pascal-lines-readln, pascal-lines-stream, pascal-objects, "
                         "pascal-pipeline: the lines and objects patterns and a reader thread "
                         "feeding workers, in Free Pascal, under FPC's heap, cmem (over glibc and "
                         "over each preloaded allocator), BriskMM and, where "
                         "scripts/build-anchors.sh put their sources, FastMM4 and fpcx64mm "
                         "(default, SERVER, BOOSTER), when fpc is installed",
                         width, subsequent_indent=" " * 13)
    return "\n".join(out)
