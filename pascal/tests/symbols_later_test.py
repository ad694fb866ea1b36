# SPDX-License-Identifier: MIT
"""Symbols later for a Free Pascal Windows program (symbols_later.pas, built
with -gl -Xm), run under Wine: its leak report, written with
BRISK_SYMBOLS_LATER=1, gives the program's frames as
`Z:\\...\\symbols_later.exe+0xOFFSET (timestamp HEX)`, HEX the timestamp of
the program's PE header, and names no function; `brisk symbolize` then
names them
- with the map and the program: UNIT.ROUTINE (FILE:LINE), the lines the
  source marks (`mark: allocated`, `mark: called`);
- with the map alone (the program not at hand): UNIT.ROUTINE+0xN (OBJECT);
- with the program alone: ROUTINE (FILE:LINE), from its DWARF.

usage: symbols_later_test.py CHECKOUT PROGRAM.exe PROGRAM.map SOURCE.pas WINE-COMMAND...
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(what)


def pe_timestamp(path):
    with open(path, "rb") as f:
        data = f.read(4096)
    at, = struct.unpack_from("<I", data, 60)
    return struct.unpack_from("<I", data, at + 8)[0]


def marked_line(source, mark):
    with open(source) as f:
        for number, line in enumerate(f, 1):
            if f"mark: {mark}" in line:
                return number
    sys.exit(f"{source}: no line marked '{mark}'")


def symbolize(brisk, report, *options):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(report)
    try:
        return subprocess.run([brisk, "symbolize", f.name, *options], capture_output=True,
                              text=True, timeout=120)
    finally:
        os.unlink(f.name)


def only_system_modules_missing(stderr):
    """brisk symbolize's warnings name only Windows' own DLLs (C:\\windows\\...),
    which are not on this machine."""
    return all(re.match(r"brisk symbolize: C:\\windows\\", line, re.I)
               for line in stderr.splitlines())


def main(argv):
    checkout, program, map_file, source, *wine = argv
    brisk = os.path.join(checkout, "brisk")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    env.update(BRISK_LEAKS="1", BRISK_SYMBOLS_LATER="1")
    run = subprocess.run(wine + [program], env=env, capture_output=True, text=True, timeout=120)
    report = run.stderr
    print(report)
    name = os.path.basename(program)
    frames = re.findall(rf"#\d+ 0x[0-9a-f]+ (\S*\\{re.escape(name)})\+0x[0-9a-f]+ "
                        rf"\(timestamp ([0-9a-f]{{8}})\)", report)
    check("the leak report carries the program's frames as module+offset (timestamp)",
          len(frames) >= 6, report[:800])
    stamp = f"{pe_timestamp(program):08x}"
    check(f"the timestamp is the PE header's ({stamp})",
          bool(frames) and {f[1] for f in frames} == {stamp}, {f[1] for f in frames})
    check("the report names no routine", "MAKECHAIN" not in report.upper(), report[:800])
    allocated, called = marked_line(source, "allocated"), marked_line(source, "called")
    base = os.path.basename(source)

    result = symbolize(brisk, report, "--map", f"{name}={map_file}")
    print(result.stdout)
    check("map and program: exit status 0, or 2 for Windows' own DLLs only",
          result.returncode == 0 or (result.returncode == 2 and
                                     only_system_modules_missing(result.stderr)),
          f"{result.returncode} {result.stderr}")
    for routine, line in (("SYMBOLS_LATER.MAKECHAIN", allocated),
                          ("SYMBOLS_LATER.LEAKCHAINS", called)):
        check(f"map and program: {routine} ({base}:{line})",
              re.search(rf"#\d+ 0x[0-9a-f]+ {re.escape(routine)} \(\S*{re.escape(base)}:{line}\)",
                        result.stdout) is not None, result.stdout[:1200])
    check("map and program: Free Pascal's RTL named from the map (SYSTEM.)",
          re.search(r"#\d+ 0x[0-9a-f]+ SYSTEM\.\S+\+0x[0-9a-f]+ \(system\.o\)", result.stdout)
          is not None, result.stdout[:1200])

    result = symbolize(brisk, report, "--map", f"{name}={map_file}",
                       "--module", f"{name}={program}.not-here")
    print(result.stdout)
    check("the map alone: SYMBOLS_LATER.MAKECHAIN+0xN (symbols_later.o)",
          re.search(r"#\d+ 0x[0-9a-f]+ SYMBOLS_LATER\.MAKECHAIN\+0x[0-9a-f]+ \(symbols_later\.o\)",
                    result.stdout) is not None, result.stdout[:1200])

    result = symbolize(brisk, report)
    print(result.stdout)
    check(f"the program alone: MAKECHAIN ({base}:{allocated}) from its DWARF",
          re.search(rf"#\d+ 0x[0-9a-f]+ MAKECHAIN \(\S*{re.escape(base)}:{allocated}\)",
                    result.stdout) is not None, result.stdout[:1200])

    wrong = re.sub(r"\(timestamp [0-9a-f]{8}\)", "(timestamp 12345678)", report)
    result = symbolize(brisk, wrong, "--map", f"{name}={map_file}")
    check("another build's report: exit status 2, a warning naming the timestamps",
          result.returncode == 2 and "is not the build the report names (timestamp 12345678"
          in result.stderr, f"{result.returncode} {result.stderr}")
    check("another build's frames are left as they are", "MAKECHAIN" not in result.stdout,
          result.stdout[:600])

    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
