# SPDX-License-Identifier: MIT
"""`brisk symbolize REPORT`: names the frames of a report written with
BRISK_SYMBOLS_LATER=1, whose frames read `MODULE+0xOFFSET (build id HEX)`.

Each frame is named from the module's debug information (addr2line: function,
file and line), else from its ELF symbol table (function+offset), or, for a
module given a linker map with --map (GNU ld's, as `cc -Wl,-Map=FILE`
writes), from the map (symbol+offset and its object file; a map lists
global symbols only).
A module is used only when its build id is the one the report names: a
rebuilt program names the wrong lines, so its frames are left as they are,
with a warning. --module points a module's name at another file (a copy
with its debug information, from another machine). Writes the report to
standard output with the frames named; the rest of it unchanged.
"""
import argparse
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys

FRAME = re.compile(r"^(?P<head>.*#\d+ 0x[0-9a-f]+ )(?P<module>\S+)\+0x(?P<offset>[0-9a-f]+) "
                   r"\((?P<build>build id [0-9a-f]+|no build id|timestamp [0-9a-f]+)\)\s*$")


def elf_sections(data):
    """[(name, type, address, offset, size, link, entsize)] of a 64-bit ELF file."""
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2:
        return None
    e_shoff, = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    raw = []
    for i in range(e_shnum):
        at = e_shoff + i * e_shentsize
        if at + 64 > len(data):
            return None
        raw.append(struct.unpack_from("<IIQQQQIIQQ", data, at))
    names = raw[e_shstrndx][4] if e_shstrndx < len(raw) else 0
    sections = []
    for s in raw:
        end = data.find(b"\0", names + s[0])
        sections.append((data[names + s[0]:end].decode(errors="replace"), s[1], s[3], s[4], s[5],
                         s[6], s[9]))
    return sections


def build_id(data, sections):
    for name, kind, _, offset, size, _, _ in sections:
        if kind != 7:  # SHT_NOTE
            continue
        at, end = offset, offset + size
        while at + 12 <= end:
            name_size, desc_size, note_type = struct.unpack_from("<III", data, at)
            desc = at + 12 + ((name_size + 3) & ~3)
            if note_type == 3 and data[at + 12:at + 12 + name_size] == b"GNU\0":
                return data[desc:desc + desc_size].hex()
            at = desc + ((desc_size + 3) & ~3)
    return None


def symbol_table(data, sections):
    """Sorted [(address, size, name)] of the functions in .symtab or .dynsym."""
    symbols = []
    for kind in (2, 11):  # SHT_SYMTAB, else SHT_DYNSYM
        for _, section_kind, _, offset, size, link, entsize in sections:
            if section_kind != kind:
                continue
            strings = sections[link][3]
            for at in range(offset, offset + size, entsize or 24):
                st_name, st_info, _, _, value, st_size = struct.unpack_from("<IBBHQQ", data, at)
                if st_info & 0xF == 2 and value != 0:  # STT_FUNC
                    end = data.find(b"\0", strings + st_name)
                    symbols.append((value, st_size, data[strings + st_name:end].decode(
                        errors="replace")))
        if symbols:
            break
    symbols.sort()
    return symbols


def nearest(symbols, offset):
    i = bisect.bisect_right(symbols, (offset, float("inf"), "")) - 1
    if i < 0:
        return None
    address, size, name = symbols[i]
    if size and offset >= address + size:
        return None
    return f"{name}+0x{offset - address:x}"


def read_map(path):
    """Sorted [(address, name, object)] from a GNU ld map file."""
    entries, current = [], ""
    in_text = False
    for line in open(path, errors="replace"):
        section = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", line)
        header = re.match(r"^ (\.\S+)\s*$", line)
        if section:
            in_text = section.group(1).startswith(".text")
            current = section.group(4)
            if in_text and int(section.group(2), 16):
                entries.append((int(section.group(2), 16), None, current))
        elif header:
            in_text = header.group(1).startswith(".text")
        elif in_text:
            symbol = re.match(r"^\s+0x([0-9a-f]+)\s+(\S+)\s*$", line)
            if symbol and not symbol.group(2).startswith(("PROVIDE", ".")):
                entries.append((int(symbol.group(1), 16), symbol.group(2), current))
    entries.sort(key=lambda e: (e[0], e[1] is not None))
    return entries


def name_from_map(entries, offset):
    """SYMBOL+0xN (OBJECT) for the map's last symbol at or before offset in the
    object file that holds it; OBJECT+0xN when the object lists none there
    (a map lists global symbols only)."""
    keys = [e[0] for e in entries]
    i = bisect.bisect_right(keys, offset) - 1
    if i < 0:
        return None
    obj = entries[i][2]
    for j in range(i, -1, -1):
        address, name, owner = entries[j]
        if owner != obj:
            break
        if name is not None:
            return f"{name}+0x{offset - address:x} ({os.path.basename(obj)})"
        start = address
    return f"{os.path.basename(obj)}+0x{offset - start:x}"


def addr2line(path, offsets):
    """{offset: 'function (file:line)'} for the offsets addr2line names."""
    names = {}
    tool = shutil.which("addr2line")
    if tool is None or not offsets:
        return names
    result = subprocess.run([tool, "-C", "-f", "-e", path] + [f"0x{o:x}" for o in offsets],
                            capture_output=True, text=True)
    lines = result.stdout.splitlines()
    for i, offset in enumerate(offsets):
        if 2 * i + 1 >= len(lines):
            break
        function, where = lines[2 * i], lines[2 * i + 1]
        if function == "??":
            continue
        known_file = not where.startswith(("??", ":"))
        names[offset] = f"{function} ({where if known_file else os.path.basename(path)}" + (
            ")" if known_file else f"+0x{offset:x})")
    return names


def pairs(values, what):
    out = {}
    for value in values or []:
        if "=" not in value:
            sys.exit(f"brisk symbolize: {what} takes MODULE=FILE, not '{value}'")
        key, path = value.split("=", 1)
        out[key] = path
    return out


def lookup(table, module):
    return table.get(module) or table.get(os.path.basename(module))


def main(argv):
    parser = argparse.ArgumentParser(prog="brisk symbolize", description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="the report (a file, or - for standard input)")
    parser.add_argument("--map", action="append", metavar="MODULE=FILE",
                        help="name MODULE's frames from this linker map (repeatable)")
    parser.add_argument("--module", action="append", metavar="MODULE=FILE",
                        help="read MODULE (a path or file name in the report) from FILE")
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
        named = {}
        map_file = lookup(maps, module)
        if map_file is not None:
            try:
                entries = read_map(map_file)
            except OSError as error:
                print(f"brisk symbolize: cannot read {map_file}: {error.strerror}",
                      file=sys.stderr)
                return 1
            named = {o: n for o in offsets if (n := name_from_map(entries, o))}
        else:
            path = lookup(moved, module) or module
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                print(f"brisk symbolize: {module}: not found (give --module {os.path.basename(module)}"
                      f"=FILE); its frames are left as they are", file=sys.stderr)
                status = 2
                continue
            sections = elf_sections(data)
            if sections is None:
                print(f"brisk symbolize: {path} is no 64-bit ELF file; {module}'s frames are "
                      f"left as they are", file=sys.stderr)
                status = 2
                continue
            found = build_id(data, sections)
            wanted = build[len("build id "):] if build.startswith("build id ") else None
            if wanted is not None and found != wanted:
                print(f"brisk symbolize: {path} is not the build the report names (build id "
                      f"{wanted}, the file's {found or 'none'}): {module}'s frames are left as "
                      f"they are", file=sys.stderr)
                status = 2
                continue
            named = addr2line(path, offsets)
            symbols = None
            for o in offsets:
                if o in named:
                    continue
                if symbols is None:
                    symbols = symbol_table(data, sections)
                n = nearest(symbols, o)
                if n is not None:
                    named[o] = f"{n} ({os.path.basename(module)}+0x{o:x})"
        for i, offset in places:
            if offset in named:
                head = FRAME.match(lines[i])["head"]
                lines[i] = head + named[offset]
    sys.stdout.write("\n".join(lines) + ("\n" if text.endswith("\n") else ""))
    return status
