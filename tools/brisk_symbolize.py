# SPDX-License-Identifier: MIT
"""`brisk symbolize REPORT`: names the frames of a report written with
BRISK_SYMBOLS_LATER=1, whose frames read `MODULE+0xOFFSET (build id HEX)`
(Linux) or `MODULE+0xOFFSET (timestamp HEX)` (Windows: OFFSET from the
module's image base).

Each frame is named from the module's debug information (addr2line: function,
file and line; for a Windows module, the MinGW addr2line where installed),
else from its ELF symbol table (function+offset; 32-bit or 64-bit ELF), or, for a module given a
map with --map, from the map:
- GNU ld's (`cc -Wl,-Map=FILE`; symbol+offset and its object file: a map
  lists global symbols only);
- Free Pascal's (`fpc -Xm`): UNIT.ROUTINE (UNIT.CLASS.METHOD for a method),
  and file and line from the program's DWARF (`fpc -gl`) when the program
  itself is found too (its path in the report, or --module);
- Delphi's detailed map (`-GD`): Unit.Routine (FILE.pas:LINE) from its
  publics and line numbers. Its segments' addresses count from the image
  base: --image-base, else the program's when it is found, else the first
  segment's address less 0x1000 (where Delphi puts .text).
A module is used only when its build id (or PE timestamp) is the one the
report names: a rebuilt program names the wrong lines, so its frames are left
as they are, with a warning. --module points a module's name at another file
(a copy with its debug information, from another machine); --sysroot DIR
reads a module's absolute path under DIR first (a copy of another machine's
files: an ARM64 system's libraries, as qemu-user's -L gives them); a Windows
path on Wine's drive Z: is read from the matching Linux path. Writes the
report to standard output with the frames named; the rest of it unchanged.
"""
import argparse
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys

import brisk_elf

FRAME = re.compile(r"^(?P<head>.*#\d+ 0x[0-9a-f]+ )(?P<module>\S.*?)\+0x(?P<offset>[0-9a-f]+) "
                   r"\((?P<build>build id [0-9a-f]+|no build id|timestamp [0-9a-f]+)\)\s*$")


def symbol_table(data, elf):
    """Sorted [(address, size, name)] of the functions in .symtab or .dynsym."""
    for table in (brisk_elf.SHT_SYMTAB, brisk_elf.SHT_DYNSYM):
        symbols = sorted((value, size, name.decode(errors="replace"))
                         for name, value, size, info in elf.symbols(data, table)
                         if info & 0xF == brisk_elf.STT_FUNC and value != 0)
        if symbols:
            return symbols
    return []


def nearest(symbols, offset):
    i = bisect.bisect_right(symbols, (offset, float("inf"), "")) - 1
    if i < 0:
        return None
    address, size, name = symbols[i]
    if size and offset >= address + size:
        return None
    return f"{name}+0x{offset - address:x}"


def pe_header(data):
    """(image base, timestamp, machine) of a PE file (EXE or DLL), or None."""
    if data[:2] != b"MZ" or len(data) < 64:
        return None
    at, = struct.unpack_from("<I", data, 60)
    if data[at:at + 4] != b"PE\0\0" or at + 24 + 32 > len(data):
        return None
    machine, _, timestamp = struct.unpack_from("<HHI", data, at + 4)
    magic, = struct.unpack_from("<H", data, at + 24)
    if magic == 0x20B:  # PE32+
        base, = struct.unpack_from("<Q", data, at + 24 + 24)
    else:
        base, = struct.unpack_from("<I", data, at + 24 + 28)
    return base, timestamp, machine


def pascal_name(symbol):
    """UNIT.ROUTINE or UNIT.CLASS.METHOD of a Free Pascal symbol
    (SYSUTILS$_$TSTRINGLIST_$__$$_ADD$ANSISTRING$$LONGINT: SYSUTILS.TSTRINGLIST.ADD;
    a program's routines are P$PROGRAM_$$_...); other names as they are."""
    if "_$$_" not in symbol:
        return symbol
    scope, routine = symbol.split("_$$_", 1)
    pieces = scope.split("$_$")
    unit = pieces[0][2:] if pieces[0][:2] in ("P$", "p$") else pieces[0]
    outer = [piece.split("$")[0].rstrip("_") for piece in pieces[1:]]
    return ".".join([unit] + [o for o in outer if o] + [routine.split("$")[0]])


MAP_SECTION = re.compile(r"^ (\.\S+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*?)\s*$")
MAP_SECTION_NAME = re.compile(r"^ (\.\S+)\s*$")
MAP_SECTION_PLACE = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*?)\s*$")
MAP_SYMBOL = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+(\S+)\s*$")


def read_map(path):
    """("ld", image base, sorted [(address, rank, name, object)]) from a GNU ld
    map or Free Pascal's (which has GNU ld's layout). rank orders the names of
    one address: Pascal routines, other symbols, names taken from a section
    (Free Pascal's .text.n_ROUTINE), none (the start of an object's code)."""
    text = open(path, errors="replace").read()
    base = 0
    found = re.search(r"^Memory map \(ImageBase=0x([0-9a-fA-F]+)\)", text, re.M)  # Free Pascal
    if found:
        base = int(found.group(1), 16)
        text = text[found.end():]
    else:
        found = re.search(r"^\s+0x([0-9a-fA-F]+)\s+__image_base__ = ", text, re.M)  # ld, PE
        base = int(found.group(1), 16) if found else 0
        at = text.find("Linker script and memory map")
        text = text[at:] if at >= 0 else text
    entries, current, in_text, section, empty = [], "", False, "", False

    def place(section_name, address, size, obj):
        nonlocal current, empty
        current, empty = obj, size == 0  # an empty section's symbols name no code
        if in_text and address and size:
            named = section_name.split(".text.n_", 1)
            name = pascal_name(named[1]).upper() if len(named) == 2 else None
            entries.append((address, 1 if name else 0, name, current))

    for line in text.splitlines():
        whole = MAP_SECTION.match(line)
        if whole:
            in_text = whole.group(1).startswith(".text")
            place(whole.group(1), int(whole.group(2), 16), int(whole.group(3), 16), whole.group(4))
            section = ""
            continue
        header = MAP_SECTION_NAME.match(line)
        if header:
            section = header.group(1)
            in_text = section.startswith(".text")
            continue
        where = MAP_SECTION_PLACE.match(line)
        if where and section:  # the place of a section named on the line before
            place(section, int(where.group(1), 16), int(where.group(2), 16), where.group(3))
            section = ""
            continue
        section = ""
        symbol = MAP_SYMBOL.match(line)
        if in_text and not empty and symbol and not symbol.group(2).startswith(
                ("PROVIDE", ".", "$unwind$")):
            name = symbol.group(2)
            entries.append((int(symbol.group(1), 16), 3 if "_$$_" in name else 2,
                            pascal_name(name), current))
    entries.sort(key=lambda e: (e[0], e[1]))
    return "ld", base, entries


def name_from_map(entries, offset):
    """(SYMBOL, 0xN from it, OBJECT) for the map's last name at or before offset
    in the object file that holds it; (None, 0xN from the object's code) when the
    object lists none there (a GNU ld map lists global symbols only)."""
    keys = [e[0] for e in entries]
    i = bisect.bisect_right(keys, offset) - 1
    if i < 0:
        return None
    obj = entries[i][3]
    start = entries[i][0]
    for j in range(i, -1, -1):
        address, _, name, owner = entries[j]
        if owner != obj:
            break
        if name is not None:
            return name, offset - address, os.path.basename(obj)
        start = address
    return None, offset - start, os.path.basename(obj)


DELPHI_ADDRESS = r"([0-9A-Fa-f]{4}):([0-9A-Fa-f]+)"


def read_delphi_map(path):
    """A Delphi detailed map (-GD): its segments {id: (address, length)}, units
    [(segment, start, end, unit)], publics and line numbers, both
    {segment: sorted [(offset, ...)]}."""
    segments, units, publics, lines = {}, [], {}, {}
    part, header = None, None
    for line in open(path, errors="replace"):
        stripped = line.strip()
        if re.match(r"^Start\s+Length\s+Name\s+Class$", stripped):
            part = "segments"
            continue
        if stripped == "Detailed map of segments":
            part = "units"
            continue
        if re.search(r"Publics by (Name|Value)", stripped):
            part = "publics" if "Value" in stripped else None
            continue
        numbers = re.match(r"^Line numbers for (.+?)\((.+?)\) segment (\S+)$", stripped)
        if numbers:
            part, header = "lines", (numbers.group(1), numbers.group(2))
            continue
        if part == "segments":
            m = re.match(DELPHI_ADDRESS + r"\s+([0-9A-Fa-f]+)H?\s+(\S+)\s+(\S+)$", stripped)
            if m:
                segments[int(m.group(1), 16)] = (int(m.group(2), 16), int(m.group(3), 16))
            elif stripped:
                part = None
        elif part == "units":
            m = re.match(DELPHI_ADDRESS + r"\s+([0-9A-Fa-f]+)\s+C=\S+\s+S=\S+\s+G=\S+\s+M=(.+?)"
                         r"(\s+(ACBP|ALIGN)=\S+)?$", stripped)
            if m:
                start = int(m.group(2), 16)
                units.append((int(m.group(1), 16), start, start + int(m.group(3), 16),
                              m.group(4)))
        elif part == "publics":
            m = re.match(DELPHI_ADDRESS + r"\s+(\S.*)$", stripped)
            if m:
                publics.setdefault(int(m.group(1), 16), []).append((int(m.group(2), 16),
                                                                    m.group(3)))
        elif part == "lines":
            for number, segment, offset in re.findall(r"(\d+)\s+" + DELPHI_ADDRESS, stripped):
                lines.setdefault(int(segment, 16), []).append((int(offset, 16), int(number),
                                                               header[0], header[1]))
            if stripped and not stripped[0].isdigit():  # "Bound resource files", ...
                part = None
    if not segments:
        return None
    for table in (publics, lines):
        for entries in table.values():
            entries.sort()
    return "delphi", segments, units, publics, lines


def name_from_delphi(delphi, base, rva):
    """Unit.Routine (FILE.pas:LINE) of the code at rva, from a Delphi map."""
    _, segments, units, publics, lines = delphi
    for segment, (address, length) in segments.items():
        start = address - base
        if start <= rva < start + length and address >= base:
            offset = rva - start
            break
    else:
        return None
    unit = next((u for s, first, end, u in units if s == segment and first <= offset < end), None)
    name = None
    table = publics.get(segment, [])
    i = bisect.bisect_right(table, (offset, "\uffff")) - 1
    if i >= 0 and (unit is None or table[i][1].startswith(unit + ".")):
        name = table[i][1]
        start_of_name = table[i][0]
    where = None
    table = lines.get(segment, [])
    i = bisect.bisect_right(table, (offset, float("inf"))) - 1
    if i >= 0 and (unit is None or table[i][2] == unit):
        where = f"{table[i][3]}:{table[i][1]}"
    if name is None and unit is None:
        return None
    if name is None:
        first = next(f for s, f, e, u in units if s == segment and u == unit and f <= offset < e)
        name, start_of_name = unit, first
    if where is not None:
        return f"{name} ({where})"
    return f"{name}+0x{offset - start_of_name:x}"


def read_any_map(path):
    """The map, whichever of the three it is."""
    delphi = read_delphi_map(path)
    return delphi if delphi is not None else read_map(path)


def addr2line(path, offsets, base=0, tools=("addr2line",)):
    """{offset: (function, "file:line" or None)} for the offsets the module's
    debug information names (addresses: base + offset)."""
    names = {}
    tool = next((t for t in map(shutil.which, tools) if t), None)
    if tool is None or not offsets:
        return names
    result = subprocess.run([tool, "-C", "-f", "-e", path] + [f"0x{base + o:x}" for o in offsets],
                            capture_output=True, text=True)
    lines = result.stdout.splitlines()
    for i, offset in enumerate(offsets):
        if 2 * i + 1 >= len(lines):
            break
        function, where = lines[2 * i], lines[2 * i + 1]
        known_file = not where.startswith(("??", ":"))
        if function == "??" and not known_file:
            continue
        if known_file:  # lib//../src/unit.pas:12: src/unit.pas:12
            file, colon, line = where.rpartition(":")
            where = os.path.normpath(file) + colon + line if colon else os.path.normpath(where)
        names[offset] = (function, where if known_file else None)
    return names


def pairs(values, what):
    out = {}
    for value in values or []:
        if "=" not in value:
            sys.exit(f"brisk symbolize: {what} takes MODULE=FILE, not '{value}'")
        key, path = value.split("=", 1)
        out[key] = path
    return out


def base_name(module):
    """The file name of a module's path, Linux's or Windows'."""
    return re.split(r"[\\/]", module)[-1]


def lookup(table, module):
    return table.get(module) or table.get(base_name(module))


def local_path(module, sysroot=None):
    """Where a module named in a report is on this machine: an absolute path
    under sysroot where the file is there; a Windows path on Wine's drive Z:
    is the Linux path; one on another drive is not here."""
    if sysroot is not None and module.startswith("/"):
        under = os.path.join(sysroot, module.lstrip("/"))
        if os.path.isfile(under):
            return under
    drive = re.match(r"^([A-Za-z]):[\\/]", module)
    if drive is None:
        return module
    if drive.group(1) in "zZ":
        return "/" + module[3:].replace("\\", "/")
    return None


def check_build(path, data, build):
    """(what the module's file is, a line why it is not the build the report
    names, or None)."""
    elf = brisk_elf.read(data)
    if elf is not None:
        found = elf.build_id(data)
        wanted = build[len("build id "):] if build.startswith("build id ") else None
        if wanted is not None and found != wanted:
            return elf, (f"{path} is not the build the report names (build id {wanted}, "
                         f"the file's {found or 'none'})")
        return elf, None
    pe = pe_header(data)
    if pe is not None:
        wanted = int(build[len("timestamp "):], 16) if build.startswith("timestamp ") else None
        if wanted is not None and pe[1] != wanted:
            return pe, (f"{path} is not the build the report names (timestamp {wanted:08x}, the "
                        f"file's {pe[1]:08x})")
        return pe, None
    return None, f"{path} is neither an ELF file nor a PE file"


def main(argv):
    parser = argparse.ArgumentParser(prog="brisk symbolize", description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="the report (a file, or - for standard input)")
    parser.add_argument("--map", action="append", metavar="MODULE=FILE",
                        help="name MODULE's frames from this map: GNU ld's, Free Pascal's "
                             "(-Xm) or Delphi's detailed map (-GD) (repeatable)")
    parser.add_argument("--module", action="append", metavar="MODULE=FILE",
                        help="read MODULE (a path or file name in the report) from FILE")
    parser.add_argument("--sysroot", metavar="DIR",
                        help="read a module's absolute path under DIR where it is there (the "
                             "reporting machine's files, e.g. qemu-user's -L folder)")
    parser.add_argument("--image-base", metavar="HEX", type=lambda v: int(v, 16),
                        help="a Delphi program's image base, when the program is not at hand "
                             "(default: its map's first segment less 0x1000)")
    parser.add_argument("--lib", help=argparse.SUPPRESS)  # the installed command passes it
    args = parser.parse_args(argv)
    maps, moved = pairs(args.map, "--map"), pairs(args.module, "--module")
    try:
        text = sys.stdin.read() if args.report == "-" else open(args.report, errors="replace").read()
    except OSError as error:
        print(f"brisk symbolize: cannot read {args.report}: {error.strerror}", file=sys.stderr)
        return 1
    lines = text.splitlines()
    frames = [(i, m) for i, m in ((i, FRAME.match(line)) for i, line in enumerate(lines)) if m]
    if not frames:
        print(f"brisk symbolize: {args.report} has no frames to name (write the report with "
              f"BRISK_SYMBOLS_LATER=1)", file=sys.stderr)
        return 1
    by_module = {}
    for i, m in frames:
        by_module.setdefault((m["module"], m["build"]), []).append((i, int(m["offset"], 16)))
    status = 0
    for (module, build), places in by_module.items():
        offsets = sorted({o for _, o in places})
        short = base_name(module)
        mapped = None
        map_file = lookup(maps, module)
        if map_file is not None:
            try:
                mapped = read_any_map(map_file)
            except OSError as error:
                print(f"brisk symbolize: cannot read {map_file}: {error.strerror}",
                      file=sys.stderr)
                return 1
        path = lookup(moved, module) or local_path(module, args.sysroot)
        data = None
        try:
            if path is not None:
                with open(path, "rb") as f:
                    data = f.read()
        except OSError:
            pass
        if data is None and mapped is None:
            print(f"brisk symbolize: {module}: not found (give --module {short}=FILE); its frames "
                  f"are left as they are", file=sys.stderr)
            status = 2
            continue
        kind = None
        if data is not None:
            kind, wrong = check_build(path, data, build)
            if wrong is not None and (kind is not None or mapped is None):
                print(f"brisk symbolize: {wrong}: {module}'s frames are left as they are",
                      file=sys.stderr)
                status = 2
                continue
        # the module's debug information: function, file and line
        debug, pe = {}, None
        if isinstance(kind, brisk_elf.Elf):
            debug = addr2line(path, offsets)
        elif kind is not None:
            pe = kind
            mingw = {0x8664: "x86_64-w64-mingw32-addr2line", 0x14C: "i686-w64-mingw32-addr2line"}
            debug = addr2line(path, offsets, pe[0], (mingw.get(pe[2], "addr2line"), "addr2line"))
        named, symbols = {}, None
        if mapped is not None and mapped[0] == "delphi":
            base = args.image_base if args.image_base is not None else pe[0] if pe else (
                min(mapped[1].items())[1][0] - 0x1000)
        for o in offsets:
            if mapped is not None and mapped[0] == "delphi":
                n = name_from_delphi(mapped, base, o)
                if n is not None:
                    named[o] = n
                continue
            where = debug.get(o, (None, None))[1]
            if mapped is not None:
                found = name_from_map(mapped[2], o + mapped[1])
                if found is not None:
                    symbol, distance, obj = found
                    if symbol is None:
                        named[o] = f"{obj}+0x{distance:x}"
                    elif where is not None:
                        named[o] = f"{symbol} ({where})"
                    else:
                        named[o] = f"{symbol}+0x{distance:x} ({obj})"
                    continue
            if o in debug:
                function = debug[o][0]
                named[o] = f"{function} ({where})" if where else f"{function} ({short}+0x{o:x})"
            elif isinstance(kind, brisk_elf.Elf):
                symbols = symbols if symbols is not None else symbol_table(data, kind)
                n = nearest(symbols, o)
                if n is not None:
                    named[o] = f"{n} ({short}+0x{o:x})"
        for i, offset in places:
            if offset in named:
                head = FRAME.match(lines[i])["head"]
                lines[i] = head + named[offset]
    sys.stdout.write("\n".join(lines) + ("\n" if text.endswith("\n") else ""))
    return status
