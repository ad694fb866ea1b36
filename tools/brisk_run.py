# SPDX-License-Identifier: MIT
"""`brisk run`: run any program with brisk preloaded and diagnostics switched on.

Every switch maps to an environment variable read by libbrisk at start-up, so
the same reports come from `BRISK_STATS=1 LD_PRELOAD=libbrisk.so.0 PROGRAM`;
this command saves typing and, afterwards, says where each report really went.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK_EXIT_STATUS = 86  # libbrisk's exit status after a checked-mode report
# The build tree's library first, then installed ones (libbrisk.so.0: the
# installed libbrisk.so is a linker script, which cannot be preloaded).
LIBRARY_CANDIDATES = [os.path.join(ROOT, "build", "libbrisk.so"),
                      "/usr/local/lib/libbrisk.so.0", "/usr/lib/libbrisk.so.0",
                      *sorted(glob.glob("/usr/lib/*-linux-gnu/libbrisk.so.0"))]


def is_shared_object(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def find_library(explicit):
    """Returns (absolute path of the libbrisk to preload, None), or (None, why not)."""
    if explicit:
        if not os.path.exists(explicit):
            return None, f"{explicit}: no such file"
        if not os.path.isfile(explicit) or not is_shared_object(explicit):
            return None, (f"{explicit} is not a shared library (an installed libbrisk.so is a "
                          "linker script for -lbrisk: preload libbrisk.so.0)")
        return os.path.abspath(explicit), None
    for path in LIBRARY_CANDIDATES:
        if os.path.isfile(path) and is_shared_object(path):
            return os.path.abspath(path), None
    return None, ("no libbrisk found (looked for " + ", ".join(LIBRARY_CANDIDATES) + "); build it "
                  "with `cmake -S . -B build && cmake --build build` (./brisk test does too), "
                  "or pass --lib PATH")


def heap_profile_library(library):
    """libbrisk-heapprof.so.0 beside library (its allocation fast path counts
    down to the heap profile's samples), or library itself (which samples on
    its slow path, at more cost) when there is none."""
    folder = os.path.dirname(library)
    for name in ("libbrisk-heapprof.so.0", "libbrisk-heapprof.so"):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and is_shared_object(path):
            return path
    return library


def describe_exit(program, status):
    """'exited with status 0' or 'was killed by SIGSEGV (segmentation fault)'."""
    if status >= 0:
        return f"{program} exited with status {status}"
    number = -status
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    meaning = signal.strsignal(number) or ""
    meaning = f" ({meaning[0].lower()}{meaning[1:]})" if meaning else ""
    return f"{program} was killed by {name}{meaning}"


class ReportFile:
    """A report that libbrisk writes to a file at exit: whether this run wrote it."""

    def __init__(self, what, path):
        self.what, self.path = what, path
        self.before = self.state()

    def state(self):
        try:
            st = os.stat(self.path)
            return (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            return None

    def note(self, exited):
        after = self.state()
        if after is not None and after != self.before:
            return f"{self.what}: {self.path}"
        why = ("any message from brisk above says why" if exited else
               "libbrisk writes it when the program exits, and it did not")
        return f"{self.what}: NOT written to {self.path} ({why})"


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="brisk run",
        description="Run PROGRAM with brisk preloaded and the chosen diagnostics on.",
        usage="brisk run [--stats[=json]] [--profile] [--heap-profile FILE] [--leaks] "
        "[--check] [--lib PATH] -- PROGRAM [ARGS...]")
    parser.add_argument("--stats", nargs="?", const="1", choices=["1", "json"],
                        help="print statistics at exit (text, or json)")
    parser.add_argument("--stats-file", metavar="FILE",
                        help="write the statistics to FILE (implies --stats)")
    parser.add_argument("--profile", action="store_true",
                        help="sample slow paths by call site into PROGRAM.brisk-profile.txt")
    parser.add_argument("--profile-file", metavar="FILE",
                        help="write the profile to FILE (implies --profile)")
    parser.add_argument("--profile-rate", type=int, metavar="N",
                        help="trace one refill or remote free in N (default 1024)")
    parser.add_argument("--heap-profile", metavar="FILE",
                        help="sample allocations; at exit write the heap profile to FILE "
                        "(pprof's format) and folded stacks beside it")
    parser.add_argument("--heap-profile-rate", type=int, metavar="BYTES",
                        help="one sample per BYTES allocated on average (default 524288)")
    parser.add_argument("--leaks", action="store_true",
                        help="report blocks still allocated at exit, by call site")
    parser.add_argument("--leaks-file", metavar="FILE",
                        help="write the leak report to FILE: .pb.gz pprof, .folded folded "
                        "stacks, else text (implies --leaks)")
    parser.add_argument("--leaks-exitcode", type=int, metavar="N",
                        help="a program that leaked exits with status N (implies --leaks)")
    parser.add_argument("--leaks-suppress", metavar="FILE",
                        help="functions or libraries whose leaks are not reported, one "
                        "pattern a line (implies --leaks)")
    parser.add_argument("--check", action="store_true",
                        help="checked mode: stop at the first double, invalid or interior free "
                        "or overrun, with stack traces (exit status 86)")
    parser.add_argument("--lib", metavar="PATH", help="the libbrisk.so.0 to preload")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("no program given (put it after --)")
    if args.stats_file and not args.stats:
        args.stats = "1"
    if args.leaks_file or args.leaks_exitcode or args.leaks_suppress:
        args.leaks = True
    if args.heap_profile_rate is not None and args.heap_profile_rate < 1:
        parser.error("--heap-profile-rate takes a number of bytes of at least 1")
    if args.heap_profile_rate and not args.heap_profile:
        parser.error("--heap-profile-rate needs --heap-profile FILE")
    if args.leaks_exitcode is not None and not 1 <= args.leaks_exitcode <= 255:
        parser.error("--leaks-exitcode takes a status from 1 to 255")
    return args


def main(argv):
    args = parse(argv)
    library, why = find_library(args.lib)
    if library is None:
        print(f"brisk run: {why}", file=sys.stderr)
        return 2
    program = args.command[0]
    if shutil.which(program) is None and not os.path.isfile(program):
        print(f"brisk run: {program}: no such program", file=sys.stderr)
        return 127
    if args.heap_profile and not args.lib:
        library = heap_profile_library(library)
    env = dict(os.environ)
    env["LD_PRELOAD"] = library + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    files, on_stderr = [], []  # reports written to files, reports printed on stderr
    if args.stats:
        env["BRISK_STATS"] = args.stats
        if args.stats_file:
            env["BRISK_STATS_FILE"] = os.path.abspath(args.stats_file)
        if env.get("BRISK_STATS_FILE"):
            files.append(ReportFile("statistics", env["BRISK_STATS_FILE"]))
        else:
            on_stderr.append("statistics")
    if args.profile or args.profile_file:
        env["BRISK_PROFILE"] = "1"
        name = os.path.basename(program) + ".brisk-profile.txt"
        env["BRISK_PROFILE_FILE"] = os.path.abspath(args.profile_file or name)
        if args.profile_rate:
            env["BRISK_PROFILE_RATE"] = str(args.profile_rate)
        files.append(ReportFile("profile", env["BRISK_PROFILE_FILE"]))
    if args.heap_profile:
        env["BRISK_HEAP_PROFILE"] = os.path.abspath(args.heap_profile)
        if args.heap_profile_rate:
            env["BRISK_HEAP_PROFILE_RATE"] = str(args.heap_profile_rate)
        files.append(ReportFile("heap profile", env["BRISK_HEAP_PROFILE"]))
    if args.leaks:
        env["BRISK_LEAKS"] = "1"
        if args.leaks_file:
            env["BRISK_LEAKS_FILE"] = os.path.abspath(args.leaks_file)
            files.append(ReportFile("leak report", env["BRISK_LEAKS_FILE"]))
        else:
            on_stderr.append("leak report")
        if args.leaks_exitcode:
            env["BRISK_LEAKS_EXITCODE"] = str(args.leaks_exitcode)
        if args.leaks_suppress:
            env["BRISK_LEAKS_SUPPRESS"] = os.path.abspath(args.leaks_suppress)
    if args.check:
        env["BRISK_CHECK"] = "1"
    try:
        status = subprocess.call(args.command, env=env)
    except OSError as error:
        print(f"brisk run: cannot run {program}: {error}", file=sys.stderr)
        return 126

    notes = [describe_exit(program, status)]
    if args.check:
        if status == CHECK_EXIT_STATUS:
            notes.append("checked mode: brisk found an error (above) and stopped the program")
        elif status >= 0:
            notes.append("checked mode: no error found")
    if args.leaks_exitcode and status == args.leaks_exitcode:
        notes.append(f"leaks: the program leaked (exit status {status}, --leaks-exitcode)")
    exited = status >= 0
    for what in on_stderr:
        notes.append(f"{what}: printed on standard error above" if exited else
                     f"{what}: none (libbrisk prints it when the program exits)")
    notes += [report.note(exited) for report in files]
    for note in notes:
        print(f"brisk run: {note}", file=sys.stderr)
    return status if exited else 128 - status
