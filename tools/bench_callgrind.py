# SPDX-License-Identifier: MIT
"""`brisk bench --callgrind`: instructions per allocation, the measure that
does not drift with the machine's load.

Every C workload runs once at 1 thread with its quick sizes under
`valgrind --tool=callgrind`, preloaded with each allocator. From the call
graph (bench_callgrind_file):

  allocator instructions = the inclusive instruction count (Ir) of every
      call made from outside the allocator into it. "The allocator" is the
      preloaded library's own code, or for glibc the functions of its
      malloc.c in libc.so.6 (malloc, free, _int_malloc, tcache_*, ...).
      Inclusive, so what the allocator calls in turn counts too (memcpy
      inside realloc, mmap and madvise wrappers), and so do its one-time
      set-up and thread-exit work.
  allocation calls = the calls counted into malloc, calloc, realloc,
      reallocarray, aligned_alloc, posix_memalign, memalign, valloc, pvalloc
      and operator new, from the workload and from libc alike.
  instructions per pair = allocator instructions / allocation calls. Each
      allocation is freed once, so this is the cost of one malloc/free pair
      (for realloc-heavy workloads, of one realloc step).

Callgrind runs threads one at a time, and a virtual clock is preloaded
ahead of the allocator (bench/virtual_clock.c: each reading advances time by
1 microsecond), so time-driven work such as purging happens at the same
points in every run and two runs give the same numbers. Kernel work (page faults) is not
counted: bigbuffers' figure is the user-space part only.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import tempfile

import bench_callgrind_file
from bench_allocators import GLIBC

# bench/virtual_clock.c: time advances per reading, not with the machine.
CLOCK_LIBRARY = "libvirtual_clock.so"
GLIBC_MALLOC = re.compile(
    r"^(__libc_)?(malloc|free|cfree|calloc|realloc|reallocarray|memalign|posix_memalign|"
    r"aligned_alloc|valloc|pvalloc|malloc_usable_size)$|^(_int_|_mid_memalign|sysmalloc|tcache|"
    r"ptmalloc|arena_|alloc_new_heap|new_heap|unlink_chunk|malloc_|__malloc_|alloc_perturb|"
    r"systrim|heap_trim|shrink_heap|munmap_chunk|mremap_chunk)")
# Entry points by their linker names (callgrind runs with --demangle=no, so
# operator new is _Znwm): an allocator may export malloc as an alias of its
# own function, and callgrind shows one of the names (rpmalloc's malloc can
# appear as rpmalloc or _Znam).
_OWN_PREFIX = r"(?:__libc_|tc_|je_|mi_|rp|sn_|scalable_)?"
ALLOCATING = re.compile(_OWN_PREFIX + r"(?:malloc|calloc|realloc|reallocarray|aligned_alloc|"
                        r"posix_memalign|memalign|valloc|pvalloc)$|_Zn[wa]m")
FREEING = re.compile(_OWN_PREFIX + r"c?free$|_Zd[la]Pv")


def _in_object(allocator):
    """A predicate on (object, function): is it the allocator's own code?"""
    if not allocator.preload:
        return lambda fn: fn[0].endswith("/libc.so.6") and bool(GLIBC_MALLOC.search(fn[1]))
    own = {os.path.realpath(allocator.preload), allocator.preload}
    return lambda fn: fn[0] in own or os.path.realpath(fn[0]) in own


def _is_stub(fn):
    """PLT stubs: code callgrind cannot place in an object, with no name.
    They only jump on, so they are looked through: a call into a stub is a
    call into whatever the stub jumps to."""
    return fn is not None and fn[0] == "???" and fn[1].startswith("0x")


def _allocator_functions(profile, allocator):
    """The allocator's functions: those of its object, plus named functions
    callgrind could not place in any object (tcmalloc keeps malloc and free
    in a section of their own, brisk the code that reads a pointer's
    bookkeeping) that are a preloaded allocator's entry points, or that call
    or are called by its functions. An entry point must be matched by name:
    brisk's free often calls nothing at all."""
    in_object = _in_object(allocator)
    functions = {fn for edge in profile.edges for fn in edge if fn is not None}
    found = {fn for fn in functions if in_object(fn)}
    unplaced = {fn for fn in functions if fn[0] == "???" and not _is_stub(fn)}
    if allocator.preload:  # the entry points called are the preloaded library's
        entries = {fn for fn in unplaced
                   if ALLOCATING.match(fn[1].split("@")[0]) or FREEING.match(fn[1].split("@")[0])}
        found |= entries
        unplaced -= entries
    while unplaced:
        joined = {fn for fn in unplaced if any(
            (fn, other) in profile.edges or (other, fn) in profile.edges for other in found)}
        if not joined:
            break
        found |= joined
        unplaced -= joined
    return found


def count(profile, allocator):
    """{ir, allocs, frees} for one profile."""
    inside = _allocator_functions(profile, allocator)
    jumps_to = {caller: callee for (caller, callee) in profile.edges
                if _is_stub(caller) and callee in inside}
    ir = allocs = frees = 0
    for (caller, callee), (calls, inclusive) in profile.edges.items():
        if caller in inside or _is_stub(caller):
            continue  # the allocator calling itself, or a stub passing a call on
        target = jumps_to.get(callee) if _is_stub(callee) else callee
        if target not in inside:
            continue
        ir += inclusive
        name = target[1].split("@")[0]
        if ALLOCATING.match(name):
            allocs += calls
        elif FREEING.match(name):
            frees += calls
    return {"ir": ir, "allocs": allocs, "frees": frees, "total_ir": profile.total_ir}


def _why_failed(result):
    """The program's own last words (not valgrind's), and how it ended."""
    own = [line for line in result.stderr.splitlines() if line.strip() and
           not line.startswith("==")]
    how = (f"signal {-result.returncode}" if result.returncode < 0 else
           f"exit status {result.returncode}")
    return f"{how}: {own[-1].strip()}" if own else how


def _measure(valgrind, clock, allocator, argv, folder):
    """Runs one workload under callgrind; returns its counts or an error."""
    out_file = os.path.join(folder, f"{allocator.name}-{os.path.basename(argv[0])}.out")
    env = dict(os.environ)
    # The virtual clock first, so the allocator's clock readings reach it.
    env["LD_PRELOAD"] = ":".join(p for p in (clock, allocator.preload) if p)
    command = [valgrind, "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out_file}",
               *argv]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    last = result.stdout.strip().splitlines()[-1:] or [""]
    if result.returncode != 0 or "ok=1" not in last[0]:
        return {"error": _why_failed(result)}
    counts = count(bench_callgrind_file.read(out_file), allocator)
    os.remove(out_file)  # tens of MB each; the counts are what matters
    if not counts["allocs"]:
        return dict(counts, error="no allocation calls found")
    return dict(counts, per_pair=counts["ir"] / counts["allocs"])


def _workload_argv(bench_dir, workload, lines_dir):
    argv = [os.path.join(bench_dir, workload.program), "--threads", "1", "--quick"]
    if workload.uses_lines:
        argv += ["--dir", lines_dir]
    return argv + workload.options


def measure_all(bench_dir, allocators, workloads, lines_dir, log, jobs):
    """{workload: {allocator: counts}}, running `jobs` callgrinds at a time."""
    valgrind = shutil.which("valgrind")
    clock = os.path.join(bench_dir, CLOCK_LIBRARY)
    results = {w.name: {} for w in workloads}
    with tempfile.TemporaryDirectory(prefix="brisk-callgrind-") as folder, \
            concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_measure, valgrind, clock, a,
                               _workload_argv(bench_dir, w, lines_dir), folder): (w.name, a.name)
                   for w in workloads for a in allocators}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            workload, allocator = futures[future]
            results[workload][allocator] = counts = future.result()
            what = counts.get("error") or f"{counts['per_pair']:.1f} instructions per pair"
            log(f"[{done}/{len(futures)}] callgrind {workload} {allocator}: {what}")
    return results


MISCOUNTED = "(?)"


def _miscounted(counts, reference):
    """True when the allocation calls found differ from the reference
    allocator's by more than 1%: the workloads make the same calls under
    every allocator, so some entry point went unrecognised."""
    return reference is not None and abs(counts["allocs"] - reference) > max(0.01 * reference, 100)


def _cell(counts, best, reference):
    if not counts:
        return "-"
    if "per_pair" not in counts:
        return "FAIL"
    text = f"{counts['per_pair']:.1f}"
    if _miscounted(counts, reference):
        return f"{text} {MISCOUNTED}"
    return f"**{text}**" if counts["per_pair"] == best else text


def table(results, allocator_names):
    """The markdown table: instructions per pair, fewest in bold, brisk's
    ratio to the best other allocator."""
    header = ["workload", "allocation calls", *allocator_names, "brisk / best other"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    for workload, by_alloc in results.items():
        reference = by_alloc.get(GLIBC, {}).get("allocs")
        pairs = {a: c["per_pair"] for a, c in by_alloc.items()
                 if "per_pair" in c and not _miscounted(c, reference)}
        best = min(pairs.values(), default=None)
        others = [v for a, v in pairs.items() if a != "brisk"]
        ratio = (f"{pairs['brisk'] / min(others):.2f}" if "brisk" in pairs and others else "-")
        calls = f"{reference:,}" if reference else "-"
        lines.append("| " + " | ".join([workload, calls, *(_cell(by_alloc.get(a), best, reference)
                                                          for a in allocator_names),
                                         ratio]) + " |")
    return lines


def run(workloads, bench_dir, allocators, lines_dir, out, log):
    """The --callgrind command: measure, then write callgrind.md and .json."""
    if not shutil.which("valgrind"):
        log("error: --callgrind needs valgrind (scripts/install-deps.sh installs it)")
        return 1
    if not os.path.exists(os.path.join(bench_dir, CLOCK_LIBRARY)):
        log(f"error: {CLOCK_LIBRARY} is missing from {bench_dir}; rebuild (drop --no-build)")
        return 1
    jobs = os.cpu_count() or 1
    log(f"callgrind: {len(workloads)} workloads x {len(allocators)} allocators, 1 thread, quick "
        f"sizes, {jobs} at a time (callgrind runs programs about 50 times slower)")
    results = measure_all(bench_dir, allocators, workloads, lines_dir, log, jobs)
    rows = table(results, [a.name for a in allocators])
    failed = [f"{a} on {w}: {c['error']}" for w, by in results.items() for a, c in by.items()
              if "error" in c]
    text = ["# Instructions per malloc/free pair (callgrind)", "",
            "Command: `./brisk bench --callgrind`: every workload once at 1 thread with its "
            "quick sizes. Fewest in bold.", "", *rows, ""]
    if failed:
        text += ["Not measured (FAIL in the table):", "", *(f"- {f}" for f in failed), ""]
    if any(MISCOUNTED in row for row in rows):
        text += [f"{MISCOUNTED}: the allocation calls counted under this allocator differ from "
                 "glibc's by more than 1%, so some of its entry points were not recognised and "
                 "the figure is left out of the comparison.", ""]
    text += ["How it is counted:", "", _definition(), ""]
    with open(os.path.join(out, "callgrind.md"), "w") as f:
        f.write("\n".join(text))
    with open(os.path.join(out, "callgrind.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\n".join(rows))
    for failure in failed:
        log(f"not measured: {failure}")
    log(f"callgrind table: {os.path.join(out, 'callgrind.md')}")
    # A peer that cannot run under valgrind is reported, not fatal.
    return 1 if any(f.split(" on ")[0] in (GLIBC, "brisk") for f in failed) else 0


def _definition():
    """The definition in this module's docstring, as markdown."""
    start = __doc__.index("  allocator instructions")
    block, note = __doc__[start:].strip().split("\n\n", 1)
    items = re.split(r"\n  (?=[a-z][a-z ]+ = )", "\n" + block)
    return "\n".join(["- " + " ".join(item.split()) for item in items if item.strip()] +
                     ["", " ".join(note.split())])
