# SPDX-License-Identifier: MIT
"""`brisk top PID` watched the way a user watches it: in a terminal (tmux),
against a running program that knows nothing of brisk, the screen read back
with `tmux capture-pane`. The figures must be what the program holds: two
threads keep 24 MiB each in 256-byte blocks (tests/tools/top_workload.c),
and a producer's blocks are freed by a consumer. Then the bad inputs, each
one line on stderr and exit status 1: a PID that is not running, a program
on glibc's malloc, a brisk descriptor of another layout, one that gives a
word a width brisk top cannot read, no rights to read the process, not a
number; and a program that exits while watched. On a 32-bit build the
programs are 32-bit ones, read through the widths their descriptor gives.

usage: brisk_top_test.py CHECKOUT LIBBRISK TOP_WORKLOAD TOP_WORKLOAD_STATIC TOP_OTHER_LAYOUT
Exit 77 (skipped) when tmux is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MiB = 1024 * 1024
HELD = 24 * MiB  # per holder thread (top_workload.c)
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)


def size_value(text):
    number, unit = text.split()
    return float(number) * {"B": 1, "KiB": 1024, "MiB": MiB, "GiB": 1024 * MiB}[unit]


# A cross build's programs run through its emulator (qemu-user), which holds
# a program's memory at the program's own addresses and maps its files.
EMULATOR = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()


def start_workload(program, env_extra):
    ready = tempfile.mktemp(prefix="brisk-top-ready-")
    env = dict(os.environ, **env_extra)
    process = subprocess.Popen([*EMULATOR, program, ready], env=env)
    for _ in range(300):
        if os.path.exists(ready):
            os.unlink(ready)
            return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"FAIL {program} did not get ready")


def read_screen(screen, pid, version, label):
    """Checks one captured screen of brisk top on top_workload."""
    check(f"{label}: the title names the PID and brisk's version",
          f"PID {pid} (" in screen and f"brisk {version}," in screen, screen[:200])
    m = re.search(r"in use ([\d.]+ \w+) in (\d+) heaps", screen)
    check(f"{label}: in use shown", m is not None, screen)
    if m is None:
        return
    in_use = size_value(m.group(1))
    # Blocks carved on pages in use: what the holders keep, plus the
    # producer's few blocks and partly carved pages.
    check(f"{label}: in use {m.group(1)} is what the two holders keep (48-56 MiB)",
          2 * HELD <= in_use <= 2 * HELD + 8 * MiB)
    check(f"{label}: at least 4 heaps (holders, producer, consumer)", int(m.group(2)) >= 4)
    rows = re.findall(r"^\s*\d+\s+(\d+)\s.{15}\s(running|exited|claimed)\s+([\d.]+ \w+)\s+"
                      r"([\d.]+ \w+)\s+(\S+)\s+(\S+)\s*$", screen, re.M)
    holders = [r for r in rows if HELD <= size_value(r[2]) <= HELD + 2 * MiB]
    check(f"{label}: two heaps hold 24-26 MiB each", len(holders) == 2, str(rows))
    check(f"{label}: every running heap names its thread",
          all(int(r[0]) > 0 for r in rows if r[1] == "running"), str(rows))
    resident = re.search(r"resident ([\d.]+ \w+)\s+committed ([\d.]+ \w+)", screen)
    check(f"{label}: resident and committed at least what is held",
          resident is not None and size_value(resident.group(1)) >= 2 * HELD and
          size_value(resident.group(2)) >= 2 * HELD, screen[:400])
    rates = re.search(r"per second: refills (\S+)\s+remote frees (\S+)", screen)
    check(f"{label}: refills and remote frees per second shown, remote frees above 0",
          rates is not None and rates.group(2) not in ("0", "-"), screen)
    classes = re.findall(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+([\d.]+ \w+)\s*$",
                         screen.split("busiest size classes")[-1], re.M)
    class_256 = [c for c in classes if c[1] == "256"]
    check(f"{label}: the 256-byte class is among the busiest with the 48 MiB carved",
          len(class_256) == 1 and 2 * HELD <= size_value(class_256[0][3]) <= 2 * HELD + 2 * MiB,
          str(classes))
    check(f"{label}: the purger line is shown", "purger:" in screen)


def bad_input(what, command, expect, env=None, expect_status=1):
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    lines = result.stderr.strip().splitlines()
    check(f"{what}: exit status {expect_status}, one line naming it",
          result.returncode == expect_status and len(lines) == 1 and expect in lines[0],
          f"status {result.returncode}, stderr {result.stderr!r}")


def main(argv):
    checkout, library, workload, workload_static, other_layout = argv
    if shutil.which("tmux") is None:
        print("SKIPPED: tmux is not installed (scripts/install-deps.sh test installs it)")
        return 77
    brisk = os.path.join(checkout, "brisk")
    version = subprocess.run([brisk, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    top = [brisk, "top"]
    with open(workload, "rb") as f:
        bits = {1: 32, 2: 64}.get(f.read(5)[4])
    print(f"the programs watched are {bits}-bit ones")

    # In a terminal, preloaded: the program is unchanged and has no setting.
    program = start_workload(workload, {"LD_PRELOAD": library})
    server = f"brisk-top-test-{os.getpid()}"
    try:
        subprocess.run(["tmux", "-L", server, "new-session", "-d", "-x", "100", "-y", "48",
                        f"{' '.join(top)} {program.pid}; sleep 60"], check=True,
                       env=dict(os.environ, TERM="xterm"))
        # A few refreshes, so that the rates are measured: the second screen
        # has them (a loaded machine may take seconds to start the tool).
        screen, deadline = "", time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(1.5)
            screen = subprocess.run(["tmux", "-L", server, "capture-pane", "-p"],
                                    capture_output=True, text=True, check=True).stdout
            if "per second: refills" in screen:
                time.sleep(1.5)  # one more, so the rate covers a whole second
                screen = subprocess.run(["tmux", "-L", server, "capture-pane", "-p"],
                                        capture_output=True, text=True, check=True).stdout
                break
        print("---- the screen, as tmux shows it ----\n" + screen.rstrip() + "\n----")
        read_screen(screen, program.pid, version, "tmux, preloaded")
    finally:
        subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True)

    # Rights: another user may not read the program's memory.
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if os.geteuid() == 0 and shutil.which("setpriv") and subprocess.run(
            nobody + [sys.executable, "-c", f"import os; os.stat({checkout!r})"],
            capture_output=True).returncode == 0:
        bad_input("another user's process", nobody + top + [str(program.pid)],
                  "not allowed to read process")
    elif os.geteuid() == 0:
        print("SKIPPED another user's process: user 65534 cannot run python3 on this "
              "checkout here (setpriv missing or the files not readable to it)")
    elif os.geteuid() != 0:
        bad_input("root's process", top + ["1"], "not allowed to read process")

    # A program that exits while watched: said, status 0.
    watcher = subprocess.Popen(top + [str(program.pid)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    program.kill()
    program.wait()
    try:
        _, err = watcher.communicate(timeout=10)
        check("the program exits while watched: brisk top says so and ends with status 0",
              watcher.returncode == 0 and f"process {program.pid} exited" in err,
              f"status {watcher.returncode}, stderr {err!r}")
    except subprocess.TimeoutExpired:
        watcher.kill()
        check("brisk top ends when the program exits", False)

    # brisk linked into the program (static library): found in its own symbols.
    program = start_workload(workload_static, {})
    try:
        result = subprocess.run(top + [str(program.pid), "--count", "2"], capture_output=True,
                                text=True, timeout=60)
        check("linked statically: exit status 0", result.returncode == 0, result.stderr)
        last = "brisk top: PID" + result.stdout.split("brisk top: PID")[-1]
        read_screen(last, program.pid, version, "linked statically")
    finally:
        program.kill()
        program.wait()

    # Bad input.
    gone = subprocess.Popen(["true"])
    gone.wait()
    bad_input("a PID that is not running", top + [str(gone.pid)],
              f"no process with PID {gone.pid} is running")
    bad_input("not a process id", top + ["firefox"], "is not a process id")
    program = start_workload(workload, {})  # glibc's malloc
    try:
        bad_input("a program on glibc's malloc", top + [str(program.pid)],
                  "is not served by brisk")
    finally:
        program.kill()
        program.wait()
    for mode, what, says in (([], "a brisk descriptor of another layout",
                              "whose descriptor has layout 99"),
                             (["widths"], "a descriptor with a word 3 bytes wide",
                              "gives widths this brisk top cannot read: {'carved': 3}")):
        other = subprocess.Popen([*EMULATOR, other_layout, *mode])
        try:
            for _ in range(100):  # until its file is mapped (an emulator takes a while)
                with open(f"/proc/{other.pid}/maps") as f:
                    if os.path.realpath(other_layout) in f.read():
                        break
                time.sleep(0.1)
            time.sleep(0.3)  # and its descriptor written
            bad_input(what, top + [str(other.pid)], says)
        finally:
            other.kill()
            other.wait()

    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
