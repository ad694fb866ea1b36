#!/usr/bin/env python3
"""Diagnostics tests: run diag_victim under brisk with each diagnostic switch
and check the reports: the kind of error, the pointer, the call sites (with
function names and source lines), the exit status, the numbers.

usage: run_diag_tests.py LIBBRISK DIAG_VICTIM BRISK_COMMAND
Ends with 'N passed, N failed'; exits non-zero on any failure.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LIB, VICTIM, BRISK = sys.argv[1:4]
CHECK_EXIT = 86
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {name}")
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}")


def run(mode, env_extra, preload=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = LIB
    env.update(env_extra)
    proc = subprocess.run([VICTIM, mode], env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def announced(stdout):
    match = re.search(r"pointer=(0x[0-9a-f]+)", stdout)
    return match.group(1) if match else None


def section(report, title):
    """The lines of a report after `title` and up to the next 'brisk:   x' heading."""
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if title in line:
            out = []
            for follow in lines[i + 1:]:
                if re.match(r"brisk:   \S", follow) or not follow.startswith("brisk:     "):
                    break
                out.append(follow)
            return "\n".join(out)
    return ""


def test_checked_errors():
    cases = [
        ("double", "double free of pointer", "do_double_free", True),
        ("invalid", "invalid free", "do_invalid_free", False),
        ("interior", "interior pointer", "do_interior_free", True),
        ("overrun", "write past end of block", "do_overrun", True),
    ]
    for mode, kind, culprit, allocated_known in cases:
        status, out, err = run(mode, {"BRISK_CHECK": "1"})
        pointer = announced(out)
        check(f"check {mode}: exit status {CHECK_EXIT}", status == CHECK_EXIT, f"(got {status})")
        check(f"check {mode}: reports '{kind}'", kind in err, err[:400])
        check(f"check {mode}: names the pointer {pointer}",
              pointer is not None and pointer in err, err[:400])
        where = section(err, "brisk:   at:")
        check(f"check {mode}: stack of the offending call names {culprit} in diag_victim.c",
              culprit in where and "diag_victim.c" in where, where[:400])
        check(f"check {mode}: program stopped before finishing", "finished" not in out)
        if allocated_known:
            alloc = section(err, "was allocated at:")
            check(f"check {mode}: allocation stack names alloc_block",
                  "alloc_block" in alloc, alloc[:400])
    status, out, err = run("overrun", {"BRISK_CHECK": "1"})
    check("check overrun: says which byte", "byte 40 past the end of the 40-byte block" in err,
          err[:300])


def test_freed_memory_pattern():
    status, out, _ = run("after-free", {"BRISK_CHECK": "1"})
    check("check: freed memory reads as the 0xDF pattern",
          status == 0 and "after_free=dfdfdfdf" in out, out)
    status, out, _ = run("after-free", {})
    check("without check: no fill (memory left as it was)",
          status == 0 and "after_free=61616161" in out, out)


def test_double_free_outside_checked_mode():
    status, out, err = run("double", {})
    pointer = announced(out)
    check("no check: double free aborts (SIGABRT)", status == -6, f"(got {status})")
    check("no check: double free reported with its pointer",
          "double free of pointer" in err and pointer in err, err[:300])
    check("no check: stack names do_double_free", "do_double_free" in err, err[:400])


def test_leaks():
    status, out, err = run("leak", {"BRISK_LEAKS": "1"})
    check("leaks: program runs to the end", status == 0 and "finished" in out)
    check("leaks: report printed", "leak report" in err, err[:300])
    first = re.search(r"#1 (\d+) bytes in (\d+) blocks allocated at:\n((?:brisk:     .*\n)+)", err)
    check("leaks: largest site is 100 blocks of 128 bytes",
          first is not None and first.group(1) == "12800" and first.group(2) == "100",
          err[:500])
    check("leaks: largest site is named leak_records in diag_victim.c",
          first is not None and "leak_records" in first.group(3)
          and "diag_victim.c" in first.group(3), err[:800])
    check("leaks: the 16-byte leak is listed too",
          re.search(r"16 bytes in 1 blocks allocated at:\n(brisk:     .*\n)*?.*leak_small_once",
                    err) is not None, err[:1500])
    status, out, err = run("clean", {"BRISK_LEAKS": "1"})
    check("leaks: a clean run names no victim function",
          "alloc_block" not in err and "local_churn" not in err, err[:500])


def test_profile():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "victim.brisk-profile.txt")
        status, out, err = run("hot-spot", {"BRISK_PROFILE": "1", "BRISK_PROFILE_FILE": path})
        check("profile: program runs to the end", status == 0 and "finished" in out, err[:300])
        check("profile: file written and announced",
              os.path.exists(path) and path in err, err[:300])
        text = open(path).read() if os.path.exists(path) else ""
        top = re.search(r"\n#1 .*\n((?:    .*\n)+)", text)
        check("profile: the top site is a remote free",
              top is not None and "remote free" in top.group(0), text[:600])
        check("profile: the top site's trace names free_on_other_thread",
              top is not None and "free_on_other_thread" in top.group(1), text[:800])
        events = re.search(r"(\d+)\s+remote free", text)
        estimate = int(events.group(1)) if events else 0
        check("profile: remote-free estimate within 10% of the 200000 hand-offs",
              abs(estimate - 200000) <= 20000, f"(estimate {estimate})")


def test_stats():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stats.json")
        status, out, err = run("hot-spot", {"BRISK_STATS": "json", "BRISK_STATS_FILE": path})
        check("stats: program runs to the end", status == 0 and "finished" in out)
        try:
            stats = json.load(open(path))
        except (OSError, ValueError) as error:
            stats = {}
            check("stats: JSON parses", False, str(error))
        check("stats: counting is on", stats.get("counting") == 1)
        check("stats: at least the 200000 hand-offs are remote frees",
              stats.get("remote_frees", 0) >= 200000, str(stats.get("remote_frees")))
        check("stats: mallocs >= frees >= 201000",
              stats.get("mallocs", 0) >= stats.get("frees", 0) >= 201000,
              f"{stats.get('mallocs')} {stats.get('frees')}")
        forty_eight = [c for c in stats.get("classes", []) if c["size"] == 48]
        check("stats: the 48-byte class saw the 200000 blocks",
              forty_eight and forty_eight[0]["mallocs"] >= 200000, str(forty_eight))
        check("stats: OS figures present",
              stats.get("mapped", 0) > 0 and stats.get("os_maps", 0) > 0
              and stats.get("resident_peak", 0) > 0)
    status, out, err = run("clean", {"BRISK_STATS": "1"})
    check("stats: text report on stderr", "brisk" in err and "remote_frees" in err, err[:300])


def test_brisk_run():
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    proc = subprocess.run([BRISK, "run", "--lib", LIB, "--check", "--", VICTIM, "double"],
                          capture_output=True, text=True, env=env, timeout=120)
    check("brisk run --check: exit status 86", proc.returncode == CHECK_EXIT,
          f"(got {proc.returncode})")
    check("brisk run --check: says where the report went",
          "checked mode" in proc.stderr and "double free" in proc.stderr, proc.stderr[-400:])
    proc = subprocess.run([BRISK, "run", "--lib", LIB, "--", "/nonexistent/program"],
                          capture_output=True, text=True, env=env, timeout=60)
    check("brisk run: a missing program is a clear error, not a traceback",
          proc.returncode == 127 and "Traceback" not in proc.stderr, proc.stderr)


for test in (test_checked_errors, test_freed_memory_pattern, test_double_free_outside_checked_mode,
             test_leaks, test_profile, test_stats, test_brisk_run):
    test()
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
