"""`brisk run`: run any program with brisk preloaded and diagnostics switched on.

Every switch maps to an environment variable read by libbrisk at start-up, so
the same reports come from `BRISK_STATS=1 LD_PRELOAD=libbrisk.so PROGRAM`; this
command only saves typing and says where each report went.
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK_EXIT_STATUS = 86  # libbrisk's exit status after a checked-mode report


def find_library(explicit):
    candidates = [explicit] if explicit else [
        os.path.join(ROOT, "build", "libbrisk.so"),
        "/usr/local/lib/libbrisk.so",
        "/usr/lib/libbrisk.so",
    ]
    for path in candidates:
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return None


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="brisk run",
        description="Run PROGRAM with brisk preloaded and the chosen diagnostics on.",
        usage="brisk run [--stats[=json]] [--profile] [--leaks] [--check] [--lib PATH] "
        "-- PROGRAM [ARGS...]")
    parser.add_argument("--stats", nargs="?", const="1", choices=["1", "json"],
                        help="print statistics at exit (text, or json)")
    parser.add_argument("--stats-file", metavar="FILE", help="write the statistics to FILE")
    parser.add_argument("--profile", action="store_true",
                        help="sample slow paths by call site into PROGRAM.brisk-profile.txt")
    parser.add_argument("--profile-file", metavar="FILE", help="write the profile to FILE")
    parser.add_argument("--profile-rate", type=int, metavar="N",
                        help="trace one refill or remote free in N (default 1024)")
    parser.add_argument("--leaks", action="store_true",
                        help="report blocks still allocated at exit, by call site")
    parser.add_argument("--check", action="store_true",
                        help="checked mode: stop at the first double, invalid or interior free "
                        "or overrun, with stack traces (exit status 86)")
    parser.add_argument("--lib", metavar="PATH", help="libbrisk.so to use")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("no program given (put it after --)")
    return args


def main(argv):
    args = parse(argv)
    library = find_library(args.lib)
    if library is None:
        print("brisk run: libbrisk.so not found; build it first (cmake -S . -B build && "
              "cmake --build build) or pass --lib PATH", file=sys.stderr)
        return 2
    program = args.command[0]
    if shutil.which(program) is None and not os.path.isfile(program):
        print(f"brisk run: {program}: no such program", file=sys.stderr)
        return 127
    env = dict(os.environ)
    env["LD_PRELOAD"] = library + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    notes = []
    if args.stats:
        env["BRISK_STATS"] = args.stats
        if args.stats_file:
            env["BRISK_STATS_FILE"] = os.path.abspath(args.stats_file)
            notes.append(f"statistics: {env['BRISK_STATS_FILE']}")
        else:
            notes.append("statistics: printed on standard error at exit")
    if args.profile or args.profile_file:
        env["BRISK_PROFILE"] = "1"
        name = os.path.basename(program) + ".brisk-profile.txt"
        env["BRISK_PROFILE_FILE"] = os.path.abspath(args.profile_file or name)
        if args.profile_rate:
            env["BRISK_PROFILE_RATE"] = str(args.profile_rate)
        notes.append(f"profile: {env['BRISK_PROFILE_FILE']}")
    if args.leaks:
        env["BRISK_LEAKS"] = "1"
        notes.append("leak report: printed on standard error at exit")
    if args.check:
        env["BRISK_CHECK"] = "1"
        notes.append("checked mode: errors on standard error, exit status "
                     f"{CHECK_EXIT_STATUS}")
    try:
        status = subprocess.call(args.command, env=env)
    except OSError as error:
        print(f"brisk run: cannot run {program}: {error}", file=sys.stderr)
        return 126
    print(f"brisk run: {program} exited with status {status}"
          + (" (a checked-mode error was reported)" if status == CHECK_EXIT_STATUS and args.check
             else ""), file=sys.stderr)
    for note in notes:
        print(f"brisk run: {note}", file=sys.stderr)
    return status if status >= 0 else 128 - status
