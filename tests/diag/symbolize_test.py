# SPDX-License-Identifier: MIT
"""Symbols later: guard_victim's use after free, reported with
BRISK_SYMBOLS_LATER=1, carries each frame as MODULE+0xOFFSET (build id HEX),
the build id the module's NT_GNU_BUILD_ID note says (readelf -n), and no
function names. `brisk symbolize` then names the program's frames with
function, file and line from its debug information; for the same program
built without debug information but with a linker map, `--map` names them
from the map; a report whose build id is not the file's is left as it is,
with a warning and exit status 2. The ELF reader (32-bit or 64-bit, as the
build is) finds the build id readelf finds and the functions nm lists, with
their addresses: what names a frame where addr2line is not installed.

usage: symbolize_test.py CHECKOUT LIBBRISK GUARD_VICTIM GUARD_VICTIM_MAP MAP_FILE
"""
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(what)


def report_of(library, victim):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    env.update(LD_PRELOAD=library, BRISK_GUARD="1", BRISK_SYMBOLS_LATER="1")
    # a cross build's program runs through its emulator (qemu-user)
    emulator = os.environ.get("CROSSCOMPILING_EMULATOR", "").split()
    return subprocess.run([*emulator, victim, "use-after-free"], env=env, capture_output=True,
                          text=True, timeout=60).stderr


def readelf_build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def nm_functions(path):
    """{name: address} of the functions (T, t) nm lists in path."""
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    return {name: int(address, 16) for address, kind, name in
            (line.split() for line in out.splitlines() if len(line.split()) == 3)
            if kind in "Tt"}


def check_elf_reader(checkout, path):
    sys.path.insert(0, os.path.join(checkout, "tools"))
    import brisk_elf
    import brisk_symbolize
    data = open(path, "rb").read()
    elf = brisk_elf.read(data)
    header = subprocess.run(["readelf", "-h", path], capture_output=True, text=True).stdout
    bits = re.search(r"Class:\s+ELF(\d+)", header)
    check(f"the ELF reader reads {os.path.basename(path)} as ELF{bits and bits.group(1)}",
          elf is not None and bits is not None and elf.bits == int(bits.group(1)),
          f"reader: {elf and elf.bits}, readelf: {header[:200]}")
    if elf is None:
        return
    check("the ELF reader's build id is readelf's",
          elf.build_id(data) == readelf_build_id(path),
          f"{elf.build_id(data)} {readelf_build_id(path)}")
    table = brisk_symbolize.symbol_table(data, elf)
    symbols = {name: address for address, _, name in table}
    listed = nm_functions(path)
    for function in ("touch", "allocate_watched", "release_watched", "main"):
        check(f"the ELF reader's symbol table has {function}() where nm has it",
              function in listed and symbols.get(function) == listed[function],
              f"reader: {symbols.get(function)}, nm: {listed.get(function)}")
        # the name a frame 4 bytes into the function gets without addr2line
        check(f"a frame 4 bytes into {function}() is named {function}+0x4 from it",
              function in listed and brisk_symbolize.nearest(table, listed[function] + 4) ==
              f"{function}+0x4", listed.get(function))


def symbolize(brisk, report_text, *options):
    # a program run under qemu-user names its C library by the path it had
    # there (/lib/libc.so.6): the file is under qemu's -L folder
    sysroot = os.environ.get("QEMU_LD_PREFIX")
    if sysroot:
        options = ("--sysroot", sysroot, *options)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(report_text)
    try:
        return subprocess.run([brisk, "symbolize", f.name, *options], capture_output=True,
                              text=True, timeout=60)
    finally:
        os.unlink(f.name)


def main(argv):
    checkout, library, victim, victim_map, map_file = argv
    brisk = os.path.join(checkout, "brisk")
    report = report_of(library, victim)
    name = os.path.basename(victim)
    frames = re.findall(rf"#\d+ 0x[0-9a-f]+ (\S*{name})\+0x([0-9a-f]+) \(build id ([0-9a-f]+)\)",
                        report)
    check("the report carries the program's frames as module+offset (build id)", len(frames) >= 5,
          report)
    check("the build id is the module's NT_GNU_BUILD_ID",
          bool(frames) and {f[2] for f in frames} == {readelf_build_id(victim)}, report)
    check("no frame is named in the report itself", "allocate_watched" not in report, report)
    result = symbolize(brisk, report)
    print(result.stdout)
    check("brisk symbolize: exit status 0", result.returncode == 0, result.stderr)
    for section, function in (("at (thread", "touch"), ("allocated by", "allocate_watched"),
                              ("freed by", "release_watched")):
        text = result.stdout.split(section, 1)[-1]
        check(f"the {section!r} stack names {function}() with its file and line",
              re.search(rf"#0 0x[0-9a-f]+ {function} \(.*guard_victim\.c:\d+\)", text) is not None
              or (section == "at (thread" and re.search(
                  rf"#1 0x[0-9a-f]+ {function} \(.*guard_victim\.c:\d+\)", text) is not None),
              text[:600])
    # glibc's start-up is __libc_start_main or its parts; musl's libc, its own
    # loader, exports few symbols: a frame there is named by the nearest one
    with open(victim, "rb") as f:
        musl = b"/ld-musl-" in f.read(4096)
    libc_frame = (r"#\d+ 0x[0-9a-f]+ \w+ \(ld-musl[^)]*\+0x" if musl
                  else r"#\d+ 0x[0-9a-f]+ __libc_start_\w+ \(")
    check("the C library's frames are named (" + ("in musl's loader" if musl else
                                                  "__libc_start_main or its parts") + ")",
          re.search(libc_frame, result.stdout) is not None, result.stdout[:800])
    check("the rest of the report is unchanged", result.stdout.splitlines()[:2] ==
          report.splitlines()[:2], result.stdout[:300])

    # A program without debug information, named from its linker map.
    report = report_of(library, victim_map)
    result = symbolize(brisk, report, "--map", f"{os.path.basename(victim_map)}={map_file}")
    print(result.stdout)
    check("--map: exit status 0", result.returncode == 0, result.stderr)
    for function in ("touch", "allocate_watched", "release_watched", "main"):
        check(f"--map names {function}() from the map",
              re.search(rf"#\d+ 0x[0-9a-f]+ {function}\+0x[0-9a-f]+ \(guard_victim\.c\.o\)",
                        result.stdout) is not None, result.stdout[:800])

    # Another build: refused, said, left as it is.
    wrong = re.sub(r"build id [0-9a-f]+", "build id 00112233", report_of(library, victim))
    result = symbolize(brisk, wrong)
    check("another build's report: exit status 2 and a warning naming the build ids",
          result.returncode == 2 and "is not the build the report names" in result.stderr,
          f"{result.returncode} {result.stderr}")
    check("another build's frames are left as they are",
          len(re.findall(r"\+0x[0-9a-f]+ \(build id 00112233\)", result.stdout)) >= 5,
          result.stdout[:400])
    result = symbolize(brisk, "no frames here\n")
    check_elf_reader(checkout, victim_map)
    check("a report without frames: exit status 1, one line", result.returncode == 1 and
          len(result.stderr.strip().splitlines()) == 1, result.stderr)

    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
