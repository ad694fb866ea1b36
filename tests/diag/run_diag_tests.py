#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
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
# The victim's C library, by its dynamic loader: glibc's or musl's.
with open(VICTIM, "rb") as victim_file:
    MUSL = b"/ld-musl-" in victim_file.read()
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
    # a cross build's program runs through its emulator (qemu-user)
    emulator = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()
    proc = subprocess.run([*emulator, VICTIM, mode], env=env, capture_output=True, text=True,
                          timeout=120)
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
        ("arena-double", "double free of pointer", "do_arena_double_free", True),
        ("arena-overrun", "write past end of block", "do_arena_overrun", True),
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
    check("check overrun: says which byte",
          "the first byte past the end of the 40-byte block (offset 40)" in err, err[:300])
    status, out, err = run("clean", {"BRISK_CHECK": "1"})
    check("check: a clean run says no errors were found",
          status == 0 and "checked mode found no errors" in err, err[-300:])


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
          re.search(r"16 bytes in 1 block allocated at:\n(brisk:     .*\n)*?.*leak_small_once",
                    err) is not None, err[:1500])
    status, out, err = run("arena-leak", {"BRISK_LEAKS": "1"})
    check("leaks: an arena block left allocated is reported, the freed one not",
          status == 0 and re.search(r"#1 200000 bytes in 1 block allocated at:\n"
                                    r"(brisk:     .*\n)*?.*leak_arena_block", err) is not None
          and "leak report: 200000 bytes in 1 block" in err, err[:1500])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stats.json")
        run("arena-leak", {"BRISK_STATS": "json", "BRISK_STATS_FILE": path})
        try:
            classes = json.load(open(path)).get("classes", [])
        except (OSError, ValueError):
            classes = []
        arena = [c for c in classes if c["size"] == 212992]
        check("stats: arena blocks are counted in their size's class",
              arena and arena[0]["mallocs"] == 2 and arena[0]["frees"] == 1, str(classes))
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
    emulator = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()
    proc = subprocess.run([BRISK, "run", "--lib", LIB, "--check", "--", *emulator, VICTIM, "double"],
                          capture_output=True, text=True, env=env, timeout=120)
    check("brisk run --check: exit status 86", proc.returncode == CHECK_EXIT,
          f"(got {proc.returncode})")
    check("brisk run --check: says where the report went",
          "checked mode" in proc.stderr and "double free" in proc.stderr, proc.stderr[-400:])
    proc = subprocess.run([BRISK, "run", "--lib", LIB, "--", "/nonexistent/program"],
                          capture_output=True, text=True, env=env, timeout=60)
    check("brisk run: a missing program is a clear error, not a traceback",
          proc.returncode == 127 and "Traceback" not in proc.stderr, proc.stderr)


def test_leak_totals():
    """The report's total is the sum of its groups (the program's blocks),
    and the C library's and brisk's own blocks are counted apart."""
    status, out, err = run("leak", {"BRISK_LEAKS": "1"})
    total = re.search(r"leak report: (\d+) bytes in (\d+) blocks? still allocated", err)
    groups = re.findall(r"^brisk: #\d+ (\d+) bytes in (\d+) blocks? ", err, re.M)
    check("leak totals: a total and groups are printed", total is not None and groups, err[:500])
    if total and groups:
        check("leak totals: bytes and blocks equal the sum of the groups",
              (int(total.group(1)), int(total.group(2)))
              == (sum(int(b) for b, _ in groups), sum(int(n) for _, n in groups)),
              f"total {total.groups()} groups {groups}")
    check("leak totals: the program's 12816 bytes in 101 blocks, nothing else",
          total is not None and total.groups() == ("12816", "101"), err[:500])
    check("leak totals: no group is the C library's stdio buffer",
          "_IO_file_doallocate" not in err, err[:1500])
    if MUSL:
        # musl's standard streams have static buffers, and what it keeps for
        # the process (the loader's, locale, time zone, atexit) comes from
        # its internal allocator, which a preloaded malloc does not replace:
        # the C library leaves no block of its own in brisk's heap.
        check("leak totals: no block of the C library's (musl) is counted or set apart",
              "C library" not in err, err[-400:])
    else:
        # glibc's stdout buffer, allocated by its stdio, is still there
        check("leak totals: the C library's own blocks are counted apart",
              "not counted" in err and "C library" in err, err[-400:])
    status, out, err = run("clean", {"BRISK_LEAKS": "1"})
    check("leak totals: a clean run leaks nothing of its own",
          "no blocks left allocated at exit by the program" in err, err[:500])


def test_profile_without_events():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "profile.txt")
        status, out, err = run("clean", {"BRISK_PROFILE": "1", "BRISK_PROFILE_FILE": path,
                                         "BRISK_PROFILE_RATE": "1000000"})
        text = open(path).read() if os.path.exists(path) else ""
        check("profile: no events: says how to get samples",
              "no events were traced" in text and "BRISK_PROFILE_RATE=1" in text
              and "BRISK_PROFILE_RATE=1" in err, text[-300:] + err[-300:])


# Every setting: each value users type works; each bad one gets one warning
# naming the variable, the value and what is accepted, and the default holds.
ACCEPTED = {
    "BRISK_STATS": ["1", "0", "true", "FALSE", "yes", "No", "on", "OFF", "text", "json", "JSON"],
    "BRISK_LEAKS": ["1", "0", "true", "false", "yes", "no", "on", "off", "True", "YES"],
    "BRISK_CHECK": ["1", "0", "true", "false", "yes", "no", "on", "off"],
    "BRISK_PROFILE": ["0", "false", "no", "off"],
    "BRISK_PURGE_DELAY": ["0", "10", "5ms", "250MS", "2s", "-1", "never"],
    "BRISK_PROFILE_RATE": ["1", "64", "1024"],
    "BRISK_VERBOSE": ["0", "off"],
}
REJECTED = {
    "BRISK_PURGE_DELAY": ["abc", "5 minutes", "10x", ""],
    "BRISK_STATS": ["weird", "2", ""],
    "BRISK_LEAKS": ["maybe", "2"],
    "BRISK_CHECK": ["json", "checked"],
    "BRISK_PROFILE_RATE": ["0", "-5", "fast"],
}


def settings_of(err):
    """{name: (value, source)} from the BRISK_VERBOSE=1 listing."""
    return {m.group(1): (m.group(2), m.group(3)) for m in
            re.finditer(r"^brisk: setting (BRISK_\w+)=(.*?) \((default|from the environment)\):",
                        err, re.M)}


def test_settings():
    status, out, err = run("clean", {"BRISK_VERBOSE": "1"})
    listed = settings_of(err)
    check("settings: BRISK_VERBOSE=1 lists every setting with its source",
          {"BRISK_PURGE_DELAY", "BRISK_STATS", "BRISK_STATS_FILE", "BRISK_LEAKS", "BRISK_PROFILE",
           "BRISK_PROFILE_FILE", "BRISK_PROFILE_RATE", "BRISK_CHECK", "BRISK_VERBOSE"}
          <= set(listed) and listed["BRISK_PURGE_DELAY"] == ("10ms", "default"), err[:800])
    for name, values in ACCEPTED.items():
        for value in values:
            status, out, err = run("clean", {name: value, "BRISK_VERBOSE": "1"})
            source = settings_of(err).get(name, ("", ""))[1]
            check(f"settings: {name}={value!r} accepted", "warning" not in err
                  and source == "from the environment", err[:400])
    expected = {("BRISK_PURGE_DELAY", "5ms"): "5ms", ("BRISK_PURGE_DELAY", "2s"): "2000ms",
                ("BRISK_PURGE_DELAY", "never"): "never", ("BRISK_STATS", "yes"): "text",
                ("BRISK_STATS", "JSON"): "json", ("BRISK_LEAKS", "true"): "on"}
    for (name, value), shown in expected.items():
        status, out, err = run("clean", {name: value, "BRISK_VERBOSE": "1"})
        check(f"settings: {name}={value!r} means {shown}",
              settings_of(err).get(name, ("",))[0] == shown, err[:400])
    for name, values in REJECTED.items():
        for value in values:
            status, out, err = run("clean", {name: value, "BRISK_VERBOSE": "1"})
            warnings = [l for l in err.splitlines() if "warning" in l]
            check(f"settings: {name}={value!r} gets one warning naming it and what is accepted",
                  len(warnings) == 1 and f'{name}="{value}"' in warnings[0]
                  and "accepted:" in warnings[0], err[:400])
            check(f"settings: {name}={value!r} keeps the default",
                  settings_of(err).get(name, ("", ""))[1] == "default", err[:400])
    status, out, err = run("clean", {"BRISK_PURGE_DELAYS": "5"})
    check("settings: an unknown BRISK_ variable is named in a warning",
          "unknown setting BRISK_PURGE_DELAYS" in err, err[:300])
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "no-such-dir", "stats.txt")
        status, out, err = run("clean", {"BRISK_STATS": "1", "BRISK_STATS_FILE": missing})
        check("settings: an unwritable BRISK_STATS_FILE is reported, the report still appears",
              f"cannot write the statistics to {missing}" in err and "remote_frees" in err,
              err[:400])


for test in (test_checked_errors, test_freed_memory_pattern, test_double_free_outside_checked_mode,
             test_leaks, test_leak_totals, test_profile, test_profile_without_events, test_stats,
             test_settings, test_brisk_run):
    test()
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
