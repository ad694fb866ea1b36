# SPDX-License-Identifier: MIT
"""`brisk options`: every BRISK_* setting with its value and where it comes from.

Runs a tiny program (`true`) with brisk preloaded and BRISK_VERBOSE=1, with
which libbrisk prints, at start-up, one line per option it read, and shows
those lines. Your BRISK_* variables apply as they would to any program:
`BRISK_STATS=json ./brisk options` shows what a program would get then.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys

import brisk_run


def main(argv):
    parser = argparse.ArgumentParser(
        prog="brisk options",
        description="Print every BRISK_* setting with its value and where it comes from.")
    parser.add_argument("--lib", metavar="PATH", help="the libbrisk.so.0 to ask")
    parser.add_argument("--program", metavar="COMMAND",
                        help="the program to preload it into (default: true); one of the "
                        "library's machine (a 32-bit library: a 32-bit program): its path, or "
                        "a command line, split as the shell does (an ARM64 library: "
                        "'qemu-aarch64-static -L /usr/aarch64-linux-gnu PATH')")
    args = parser.parse_args(argv)
    library, why = brisk_run.find_library(args.lib)
    if library is None:
        print(f"brisk options: {why}", file=sys.stderr)
        return 2
    env = dict(os.environ, LD_PRELOAD=library, BRISK_VERBOSE="1")
    if args.program:
        command = [args.program] if os.path.exists(args.program) else shlex.split(args.program)
    else:
        command = [shutil.which("true") or "/bin/true"]
    if not command:
        parser.error("--program: no program given")
    try:
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except OSError as error:
        print(f"brisk options: cannot run {command[0]}: {error.strerror}", file=sys.stderr)
        return 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    for line in lines:
        print(line)
    if result.returncode != 0:
        print(f"brisk options: {brisk_run.describe_exit('true', result.returncode)} under "
              f"{library}", file=sys.stderr)
        return 1
    if lines:
        return 0
    # A library from before BRISK_VERBOSE: say so, and show what we do know.
    print(f"brisk options: {library} printed nothing with BRISK_VERBOSE=1: it predates option "
          "printing. The BRISK_* variables in your environment:", file=sys.stderr)
    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("BRISK_"))
    for name, value in settings:
        print(f"  {name}={value}", file=sys.stderr)
    if not settings:
        print("  (none: every option has its default)", file=sys.stderr)
    return 1
