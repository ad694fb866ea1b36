# SPDX-License-Identifier: MIT
"""`brisk symbolize --map` with the maps of Windows programs, on reports
written the way a Windows program writes them (BRISK_SYMBOLS_LATER=1:
MODULE+0xOFFSET (timestamp HEX), OFFSET from the image base), for programs
that are not on this machine (so the map is all there is):

- Delphi's detailed map (maps/delphi_detailed.map, written in that format):
  each frame becomes Unit.Routine (FILE:LINE), the line the last line
  number at or before the address in the same unit and segment; a frame in
  a unit without line numbers, Unit.Routine+0xN; a frame outside every
  segment is left as it is; --image-base moves the segments.
- Free Pascal's map (maps/fpc_win64.map, an excerpt of what fpc -Xm wrote):
  UNIT.ROUTINE+0xN (OBJECT), methods UNIT.CLASS.METHOD, a routine with no
  symbol of its own named from its section.

usage: symbolize_maps_test.py CHECKOUT
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(what)


def report(module, base, stamp, rvas):
    """A leak report whose frames are at these offsets from the image base."""
    lines = ["brisk: leak report: 96 bytes in 3 blocks still allocated at exit",
             "brisk: #1 96 bytes in 3 blocks allocated at:",
             "brisk:     (objects of class TNode)"]
    for i, rva in enumerate(rvas):
        lines.append(f"brisk:     #{i} 0x{base + rva:x} {module}+0x{rva:x} (timestamp {stamp})")
    return "\n".join(lines) + "\n"


def symbolize(brisk, text, *options):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([brisk, "symbolize", f.name, *options], capture_output=True,
                              text=True, timeout=60)
    finally:
        os.unlink(f.name)


def frames(stdout):
    """{frame number: what follows its address}"""
    out = {}
    for line in stdout.splitlines():
        parts = line.split("#", 1)
        if len(parts) == 2 and parts[1][:1].isdigit() and " 0x" in parts[1]:
            number, rest = parts[1].split(" ", 1)
            out[int(number)] = rest.split(" ", 1)[1]
    return out


def delphi(brisk):
    module = r"C:\Apps\Leaky.exe"  # not on this machine: the map is all there is
    text_rva, itext_rva = 0x1000, 0x10000  # .text at 0x401000, .itext at 0x410000
    cases = [
        (text_rva + 0xF4B, "System.@GetMem (GETMEM.INC:4731)"),
        (text_rva + 0x2160, "System.TObject.NewInstance (System.pas:18006)"),
        (text_rva + 0x23C4, "System.@ClassCreate (System.pas:18023)"),  # a line's first byte
        (text_rva + 0xD2B7, "LeakyNodes.MakeNode (LeakyNodes.pas:40)"),
        (text_rva + 0xD3D9, "LeakyNodes.LeakSome (LeakyNodes.pas:50)"),
        (text_rva + 0xD6F8, "LeakyNodes.TNodeList.Add (LeakyNodes.pas:62)"),
        (text_rva + 0xDC93, "Leaky.Run (Leaky.dpr:14)"),
        (itext_rva + 0x150, "Leaky (Leaky.dpr:21)"),  # program body: no public, a unit
        (text_rva + 0xD20B, "SysInit.@InitExe+0xf17"),  # SysInit's last byte: no lines
        (0x30000, None),  # in no segment: left as it is
    ]
    text = report(module, 0x400000, "6553a1c0", [rva for rva, _ in cases])
    result = symbolize(brisk, text, "--map", f"Leaky.exe={HERE}/maps/delphi_detailed.map")
    print(result.stdout)
    check("Delphi map: exit status 0, nothing on standard error",
          result.returncode == 0 and result.stderr == "", f"{result.returncode} {result.stderr}")
    named = frames(result.stdout)
    for i, (rva, expected) in enumerate(cases):
        if expected is None:
            check(f"Delphi map: +0x{rva:x} (in no segment) is left as it is",
                  named.get(i) == f"{module}+0x{rva:x} (timestamp 6553a1c0)", named.get(i))
        else:
            check(f"Delphi map: +0x{rva:x} is {expected}", named.get(i) == expected, named.get(i))
    check("Delphi map: the lines around the frames are unchanged",
          result.stdout.splitlines()[:3] == text.splitlines()[:3], result.stdout[:300])

    # the image base given: the same names; another: the segments move away
    result = symbolize(brisk, text, "--map", f"Leaky.exe={HERE}/maps/delphi_detailed.map",
                       "--image-base", "400000")
    check("Delphi map, --image-base 400000: the same names",
          frames(result.stdout) == named, result.stdout)
    result = symbolize(brisk, text, "--map", f"Leaky.exe={HERE}/maps/delphi_detailed.map",
                       "--image-base", "10000000")
    check("Delphi map, --image-base 10000000: no frame named (the segments are elsewhere)",
          "Leaky.exe+0x" in frames(result.stdout).get(3, "") and "System." not in result.stdout,
          result.stdout)


def free_pascal(brisk):
    module = r"Z:\nowhere\leaker.exe"  # Wine's drive Z:, a path that is not there
    cases = [
        (0x16FF, "LEAKER.MAKENODE+0x1f (leaker.o)"),
        (0x174D, "LEAKER.LEAKSOME+0x1d (leaker.o)"),
        (0x1772, "main+0x12 (leaker.o)"),
        (0x1785, "SYSTEM.MAIN_WRAPPER+0x5 (system.o)"),  # no symbol: its section's name
        (0x1798, "SYSTEM.STACKTOP+0x8 (system.o)"),
        (0x145F4, "SYSUTILS.TENCODING.CLONE+0x4 (sysutils.o)"),  # a method
        (0x1690, "SYSINIT._FPC_MAINCRTSTARTUP+0x10 (sysinit.o)"),
    ]
    text = report(module, 0x100000000, "00000000", [rva for rva, _ in cases])
    result = symbolize(brisk, text, "--map", f"leaker.exe={HERE}/maps/fpc_win64.map")
    print(result.stdout)
    check("Free Pascal map: exit status 0, nothing on standard error",
          result.returncode == 0 and result.stderr == "", f"{result.returncode} {result.stderr}")
    named = frames(result.stdout)
    for i, (rva, expected) in enumerate(cases):
        check(f"Free Pascal map: +0x{rva:x} is {expected}", named.get(i) == expected,
              named.get(i))


def main(argv):
    brisk = os.path.join(argv[0], "brisk")
    delphi(brisk)
    free_pascal(brisk)
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
