#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The heap profile and the leak report in the formats other tools read.

usage: run_heap_profile_tests.py GROUP LIBBRISK LIBBRISK_HEAPPROF HEAP_VICTIM VICTIM_SYMBOLS

VICTIM_SYMBOLS is HEAP_VICTIM built without debug information.

GROUP is one of:
  heap_profile      the folded stacks name keep_three first, its estimated bytes
                    within 10% of the truth, keep_one's a third of it; in-use and
                    allocated space differ as they should; brisk_heap_profile_dump
                    and the signal write numbered profiles; both libraries; a
                    program without debug information named from its symbol table
  heap_profile_pprof Google's pprof reads the profile: `pprof -top` names
                    keep_three first, within 10% of the truth (skipped without pprof)
  heap_profile_flamegraph inferno-flamegraph, or else the vendored
                    tools/vendor/flamegraph/flamegraph.pl on perl, renders the
                    folded stacks as an SVG naming the functions (skipped without both)
  leaks_ci          BRISK_LEAKS_FILE (text, pprof, folded), BRISK_LEAKS_EXITCODE,
                    BRISK_LEAKS_SUPPRESS
Exits 77 (CTest's SKIP) when a tool the group needs is missing, naming it.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

GROUP, LIB, HEAPPROF, VICTIM, VICTIM_SYMBOLS = sys.argv[1:6]
SKIP = 77
RATE = "2048"  # many samples, so 10% is several standard deviations
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {name}")
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}")


def run(args, settings, library=LIB, victim=VICTIM):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    env["LD_PRELOAD"] = library
    env.update(settings)
    # a cross build's program runs through its emulator (qemu-user)
    emulator = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()
    return subprocess.run([*emulator, victim, *args], env=env, capture_output=True, text=True,
                          timeout=300)


def truth(stdout):
    return {name: int(value) for name, value in re.findall(r"^(\w+) (\d+)$", stdout, re.M)}


def folded(path):
    """{innermost function: value} of a folded-stacks file."""
    totals = {}
    with open(path) as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            leaf = stack.split(";")[-1]
            totals[leaf] = totals.get(leaf, 0) + int(value)
    return totals


def within(estimate, true, tolerance=0.10):
    return true > 0 and abs(estimate - true) <= tolerance * true


def tool(name):
    for path in (shutil.which(name), f"/usr/local/bin/{name}",
                 os.path.expanduser(f"~/go/bin/{name}"), os.path.expanduser(f"~/.cargo/bin/{name}")):
        if path and os.access(path, os.X_OK):
            return path
    return None


def profile_run(tmp, library, name):
    path = os.path.join(tmp, f"{name}.pb.gz")
    proc = run(["mix"], {"BRISK_HEAP_PROFILE": path, "BRISK_HEAP_PROFILE_RATE": RATE}, library)
    return proc, path, os.path.join(tmp, f"{name}.inuse.folded"), os.path.join(tmp, f"{name}.alloc.folded")


def test_heap_profile(tmp):
    for library, label in ((LIB, "libbrisk"), (HEAPPROF, "libbrisk-heapprof")):
        proc, pprof_path, inuse_path, alloc_path = profile_run(tmp, library, label)
        real = truth(proc.stdout)
        check(f"{label}: the program ran (exit 0)", proc.returncode == 0, proc.stderr[-400:])
        check(f"{label}: says where the heap profile went",
              f"heap profile written to {pprof_path}" in proc.stderr, proc.stderr[-400:])
        with open(pprof_path, "rb") as f:
            raw = f.read()
        check(f"{label}: the profile is gzip, and inflates", raw[:2] == b"\x1f\x8b" and
              len(gzip.decompress(raw)) > 0)
        inuse, alloc = folded(inuse_path), folded(alloc_path)
        ranked = sorted(inuse, key=inuse.get, reverse=True)
        check(f"{label}: in-use space names keep_three first", ranked[:1] == ["keep_three"],
              str(inuse))
        for name in ("keep_three", "keep_one"):
            check(f"{label}: in-use {name} {inuse.get(name, 0)} within 10% of {real[name]}",
                  within(inuse.get(name, 0), real[name]))
        check(f"{label}: churn holds nothing in use, allocated {alloc.get('churn', 0)} within 10% "
              f"of {real['churn']}", "churn" not in inuse and within(alloc.get("churn", 0),
                                                                      real["churn"]), str(inuse))
        with open(inuse_path) as f:
            line = f.readline()
        check(f"{label}: folded lines are 'outer;...;inner value', main before its callee",
              re.match(r"^\S.*;main;\w+ \d+$", line) is not None, line)

    # a program built without debug information: its frames are named from the
    # symbol table in its file (main and keep_three are no dynamic symbols)
    path = os.path.join(tmp, "symbols.pb.gz")
    proc = run(["mix"], {"BRISK_HEAP_PROFILE": path, "BRISK_HEAP_PROFILE_RATE": RATE},
               HEAPPROF, VICTIM_SYMBOLS)
    with open(os.path.join(tmp, "symbols.inuse.folded")) as f:
        line = f.readline()
    check("without debug information: the first in-use stack ends main;keep_three",
          proc.returncode == 0 and re.match(r"^\S.*;main;keep_three \d+$", line) is not None,
          line + proc.stderr[-400:])

    # brisk_heap_profile_dump: the in-use space falls after keep_three's blocks are freed
    first, second = os.path.join(tmp, "first.pb.gz"), os.path.join(tmp, "second.pb.gz")
    proc = run(["dump", first, second], {"BRISK_HEAP_PROFILE": os.path.join(tmp, "exit.pb.gz"),
                                         "BRISK_HEAP_PROFILE_RATE": RATE}, HEAPPROF)
    check("brisk_heap_profile_dump: returns 0 twice", proc.returncode == 0, proc.stderr[-400:])
    before, after = folded(os.path.join(tmp, "first.inuse.folded")), \
        folded(os.path.join(tmp, "second.inuse.folded"))
    check("brisk_heap_profile_dump: keep_three in use before its blocks are freed, not after",
          before.get("keep_three", 0) > 0 and after.get("keep_three", 0) == 0, f"{before} {after}")
    check("brisk_heap_profile_dump: keep_one still in use in the second profile",
          after.get("keep_one", 0) > 0, str(after))

    # the signal: a numbered profile, written at the next sample after it
    base = os.path.join(tmp, "signalled.pb.gz")
    proc = run(["signal"], {"BRISK_HEAP_PROFILE": base, "BRISK_HEAP_PROFILE_RATE": RATE,
                            "BRISK_HEAP_PROFILE_SIGNAL": "12"}, HEAPPROF)
    numbered = os.path.join(tmp, "signalled.1.pb.gz")
    check("BRISK_HEAP_PROFILE_SIGNAL=12 (SIGUSR2): the program goes on, a profile .1 is written",
          proc.returncode == 0 and os.path.exists(numbered) and
          folded(os.path.join(tmp, "signalled.1.inuse.folded")).get("keep_three", 0) > 0,
          proc.stderr[-400:])
    check("BRISK_HEAP_PROFILE_SIGNAL: the profile at exit is written too", os.path.exists(base))

    proc = run(["mix"], {"BRISK_HEAP_PROFILE_RATE": "lots"})
    check("BRISK_HEAP_PROFILE_RATE=lots: one warning naming it",
          'BRISK_HEAP_PROFILE_RATE="lots" is not valid' in proc.stderr, proc.stderr[-300:])
    missing = os.path.join(tmp, "no-such-folder", "heap.pb.gz")
    proc = run(["mix"], {"BRISK_HEAP_PROFILE": missing})
    check("an unwritable BRISK_HEAP_PROFILE is named, the program still exits 0",
          proc.returncode == 0 and f"cannot write the heap profile to {missing}" in proc.stderr,
          proc.stderr[-300:])


def pprof_top(pprof, path, *options):
    proc = subprocess.run([pprof, "-top", *options, path], capture_output=True, text=True,
                          timeout=120)
    rows = {}
    for line in proc.stdout.splitlines():
        # flat flat% sum% cum cum% name, the figures in pprof's units
        m = re.match(r"^\s*([\d.]+)(\w*)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+\w*\s+[\d.]+%\s+(.+)$", line)
        if m:
            scale = {"": 1, "B": 1, "kB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}.get(m.group(2), 0)
            rows.setdefault(m.group(3).strip(), float(m.group(1)) * scale)
    return proc, rows


def test_heap_profile_pprof(tmp):
    pprof = tool("pprof")
    if pprof is None:
        print("SKIPPED: Google's pprof is not installed (scripts/install-profile-tools.sh "
              "builds it from tools/vendor/pprof with Debian's golang-go)")
        sys.exit(SKIP)
    for library, label in ((HEAPPROF, "libbrisk-heapprof"), (LIB, "libbrisk")):
        proc, path, _, _ = profile_run(tmp, library, label)
        real = truth(proc.stdout)
        top, rows = pprof_top(pprof, path)
        print(top.stdout)
        check(f"{label}: pprof -top reads the profile (exit 0)", top.returncode == 0,
              top.stderr[-400:])
        check(f"{label}: pprof shows inuse_space by default", "Type: inuse_space" in top.stdout)
        names = list(rows)
        check(f"{label}: pprof -top names keep_three first", names[:1] == ["keep_three"], str(names))
        check(f"{label}: pprof's keep_three {rows.get('keep_three', 0):.0f} bytes within 10% of "
              f"{real['keep_three']}", within(rows.get("keep_three", 0), real["keep_three"]))
        check(f"{label}: pprof's keep_one {rows.get('keep_one', 0):.0f} bytes within 10% of "
              f"{real['keep_one']}", within(rows.get("keep_one", 0), real["keep_one"]))
        top, rows = pprof_top(pprof, path, "-sample_index=alloc_space")
        check(f"{label}: pprof -sample_index=alloc_space: churn {rows.get('churn', 0):.0f} within "
              f"10% of {real['churn']}", within(rows.get("churn", 0), real["churn"]), top.stdout)
        lines = subprocess.run([pprof, "-list", "keep_three", path], capture_output=True,
                               text=True, timeout=120)
        check(f"{label}: pprof knows keep_three's file", "heap_victim.c" in lines.stdout,
              lines.stdout[-300:] + lines.stderr[-300:])
    leaks = os.path.join(tmp, "leaks.pb.gz")
    run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_FILE": leaks})
    top, rows = pprof_top(pprof, leaks, "-unit=B")  # whole bytes: the leaks are exact
    print(top.stdout)
    check("leaks: pprof -top reads the leak report: leak_big 10000 bytes, then leak_small 77",
          list(rows)[:2] == ["leak_big", "leak_small"] and rows.get("leak_big") == 10000 and
          round(rows.get("leak_small", 0)) == 77, top.stdout + top.stderr)


FLAMEGRAPH_PL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                             "vendor", "flamegraph", "flamegraph.pl")


def flamegraph_command():
    """inferno-flamegraph where installed, else Brendan Gregg's flamegraph.pl,
    vendored, on perl; (None, reason) when neither can run."""
    inferno = tool("inferno-flamegraph")
    if inferno is not None:
        return [inferno, "--countname", "bytes"], "inferno-flamegraph"
    perl = shutil.which("perl")
    if perl is None:
        return None, "neither inferno-flamegraph nor perl (for flamegraph.pl) is installed"
    # Debian's perl-base alone lacks the modules flamegraph.pl uses (the perl package has them).
    probe = subprocess.run([perl, "-MGetopt::Long", "-Mopen=:std,:utf8", "-e", "1"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None, ("no inferno-flamegraph, and perl lacks the modules flamegraph.pl uses "
                      f"(install Debian's perl package): {probe.stderr.strip()[:200]}")
    return [perl, os.path.normpath(FLAMEGRAPH_PL), "--countname", "bytes"], "flamegraph.pl"


def test_heap_profile_flamegraph(tmp):
    command, name = flamegraph_command()
    if command is None:
        print(f"SKIPPED: {name} (scripts/install-deps.sh test installs perl)")
        sys.exit(SKIP)
    _, _, inuse_path, _ = profile_run(tmp, HEAPPROF, "flame")
    with open(inuse_path) as f:
        proc = subprocess.run(command, stdin=f, capture_output=True, text=True, timeout=120)
    check(f"{name} renders the folded stacks (exit 0)", proc.returncode == 0, proc.stderr[-400:])
    svg = proc.stdout.lstrip()
    check(f"{name}: the flame graph is an SVG naming keep_three and keep_one",
          svg.startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>") and
          "keep_three" in svg and "keep_one" in svg, proc.stdout[:200])
    # A frame's width is its share of the bytes: keep_three holds three times keep_one's.
    widths = {}
    for frame, width in re.findall(r"<title>(keep_three|keep_one) \(([\d,]+) bytes", svg):
        widths[frame] = widths.get(frame, 0) + int(width.replace(",", ""))
    check(f"{name}: keep_three's frame counts about three times keep_one's bytes ({widths})",
          widths.get("keep_one", 0) > 0 and
          within(widths.get("keep_three", 0), 3 * widths["keep_one"], 0.25), svg[:300])


def test_leaks_ci(tmp):
    text = os.path.join(tmp, "leaks.txt")
    proc = run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_FILE": text})
    with open(text) as f:
        report = f.read()
    check("BRISK_LEAKS_FILE: the report is in the file, with both call sites",
          "10077 bytes in 11 blocks" in report and "leak_big" in report and
          "leak_small" in report, report[:500])
    check("BRISK_LEAKS_FILE: standard error names the file",
          f"written to {text}" in proc.stderr and "#1" not in proc.stderr, proc.stderr[-300:])
    check("without BRISK_LEAKS_EXITCODE a leaking program keeps its exit status 0",
          proc.returncode == 0)

    proc = run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_EXITCODE": "23"})
    check("BRISK_LEAKS_EXITCODE=23: a program that leaked exits with 23", proc.returncode == 23,
          f"(got {proc.returncode})")
    check("BRISK_LEAKS_EXITCODE=23: says why, after the report",
          proc.stderr.find("exit status 23") > proc.stderr.find("leak report"), proc.stderr[-300:])
    proc = run(["clean"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_EXITCODE": "23"})
    check("BRISK_LEAKS_EXITCODE=23: a program that freed everything exits 0",
          proc.returncode == 0, f"(got {proc.returncode}) {proc.stderr[-300:]}")

    suppressions = os.path.join(tmp, "suppress.txt")
    with open(suppressions, "w") as f:
        f.write("# ours, on purpose\n\nleak:leak_sm*\n")
    proc = run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_SUPPRESS": suppressions,
                          "BRISK_LEAKS_EXITCODE": "23"})
    check("BRISK_LEAKS_SUPPRESS: leak_small's block is not reported, leak_big's is",
          "10000 bytes in 10 blocks still allocated" in proc.stderr and
          "leak_small" not in proc.stderr, proc.stderr[-600:])
    check("BRISK_LEAKS_SUPPRESS: the suppressed block is counted apart",
          "77 bytes in 1 block allocated where BRISK_LEAKS_SUPPRESS names" in proc.stderr)
    with open(suppressions, "w") as f:
        f.write("leak_*\n")
    proc = run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_SUPPRESS": suppressions,
                          "BRISK_LEAKS_EXITCODE": "23"})
    check("BRISK_LEAKS_SUPPRESS: with every leak suppressed, exit 0 and no leak reported",
          proc.returncode == 0 and "no blocks left allocated" in proc.stderr, proc.stderr[-300:])
    with open(suppressions, "w") as f:
        f.write(os.path.basename(VICTIM) + "\n")
    proc = run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_SUPPRESS": suppressions})
    check("BRISK_LEAKS_SUPPRESS: a module's name suppresses its leaks",
          "no blocks left allocated" in proc.stderr, proc.stderr[-300:])
    proc = run(["leak"], {"BRISK_LEAKS": "1",
                          "BRISK_LEAKS_SUPPRESS": os.path.join(tmp, "missing.txt")})
    check("BRISK_LEAKS_SUPPRESS naming a missing file: a warning naming it, the report follows",
          "BRISK_LEAKS_SUPPRESS=" in proc.stderr and "cannot be read" in proc.stderr and
          "leak_small" in proc.stderr, proc.stderr[-300:])

    folded_path = os.path.join(tmp, "leaks.folded")
    run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_FILE": folded_path})
    stacks = folded(folded_path)
    check("BRISK_LEAKS_FILE=*.folded: folded stacks, bytes per stack",
          stacks.get("leak_big") == 10000 and stacks.get("leak_small") == 77, str(stacks))
    pprof_path = os.path.join(tmp, "leaks.pb.gz")
    run(["leak"], {"BRISK_LEAKS": "1", "BRISK_LEAKS_FILE": pprof_path})
    with open(pprof_path, "rb") as f:
        raw = gzip.decompress(f.read())
    check("BRISK_LEAKS_FILE=*.pb.gz: a gzipped profile naming leak_big and leaked_space",
          b"leak_big" in raw and b"leaked_space" in raw)
    proc = run(["leak"], {"BRISK_LEAKS_EXITCODE": "23"})
    check("BRISK_LEAKS_EXITCODE without BRISK_LEAKS: a warning, the exit status stays",
          proc.returncode == 0 and "do nothing without BRISK_LEAKS=1" in proc.stderr,
          proc.stderr[-300:])


GROUPS = {"heap_profile": test_heap_profile, "heap_profile_pprof": test_heap_profile_pprof,
          "heap_profile_flamegraph": test_heap_profile_flamegraph, "leaks_ci": test_leaks_ci}
with tempfile.TemporaryDirectory(prefix="brisk-heap-profile-") as scratch:
    GROUPS[GROUP](scratch)
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
