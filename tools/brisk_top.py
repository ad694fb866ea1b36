# SPDX-License-Identifier: MIT
"""`brisk top PID`: a live view of a running program that brisk serves.

Refreshed every second: resident and committed memory, the bytes in use in
each thread's heap, the busiest size classes, remote frees and slow-path
events per second, and what the purger gave back. The program needs no
change and no setting. brisk exports one descriptor, `brisk_introspection`
(src/core/introspection.c), that says where its heaps and figures lie; this
tool finds the symbol in the ELF symbol tables of the modules mapped in the
process (/proc/PID/maps) and reads the process's memory with
process_vm_readv, which needs the rights ptrace needs: root, or the
program's own user where kernel.yama.ptrace_scope allows it. A 32-bit
program is read as a 64-bit one is: the descriptor gives the width of each
word it points at (pointers and size_t are 4 bytes there).

A PID that is not running, a process that brisk does not serve, or a brisk
whose descriptor has another layout or gives widths this tool cannot read
gets one line on stderr and exit status 1; nothing is shown that was not
read from the descriptor's own layout.
"""
import argparse
import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import time

import brisk_elf

SYMBOL = b"brisk_introspection"
MAGIC = b"brisk-introspect"
LAYOUT = 2  # the descriptor layout this tool reads (INTROSPECTION_LAYOUT)
# Figures, in the descriptor's order (memory_figure, then the purger's).
FIGURES = ("mapped", "committed", "committed_peak", "huge_bytes", "os_maps", "os_unmaps",
           "os_purges", "os_remaps", "purged_bytes", "released_bytes", "purger_rounds",
           "purger_returned")
HEAP_FIELDS = ("size", "next", "state", "thread", "carved", "arena_in_use", "refills",
               "remote_in", "class_refills", "class_carved")
# The widths each heap field after "size" may have (of one element for the
# arrays), as the descriptor's heap_widths gives them: a pointer or a size_t
# is 4 or 8 bytes, the counts 8 on every build.
HEAP_WIDTHS = {"next": (4, 8), "state": (1,), "thread": (4,), "carved": (4, 8),
               "arena_in_use": (4, 8), "refills": (8,), "remote_in": (8,),
               "class_refills": (8,), "class_carved": (8,)}
UNSIGNED = {1: "B", 2: "H", 4: "I", 8: "Q"}
HEAP_STATES = {0: "running", 1: "exited", 2: "claimed"}
MAX_HEAPS = 100000


class TopError(Exception):
    """One line for the user; exit status 1."""


# ---- reading another process's memory -----------------------------------------------

class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.process_vm_readv.restype = ctypes.c_ssize_t
_libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.POINTER(_IoVec), ctypes.c_ulong,
                                   ctypes.POINTER(_IoVec), ctypes.c_ulong, ctypes.c_ulong]


class Process:
    def __init__(self, pid):
        self.pid = pid

    def name(self):
        try:
            with open(f"/proc/{self.pid}/comm") as f:
                return f.read().strip()
        except OSError:
            return "?"

    def alive(self):
        """Running: a process that exited but is not yet reaped (a zombie) is not."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False

    def read(self, address, size):
        """size bytes at address in the process; TopError when it cannot."""
        buffer = ctypes.create_string_buffer(size)
        local = _IoVec(ctypes.cast(buffer, ctypes.c_void_p), size)
        remote = _IoVec(address, size)
        got = _libc.process_vm_readv(self.pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got == size:
            return buffer.raw
        code = ctypes.get_errno() if got < 0 else errno.EFAULT
        if code == errno.ESRCH:
            raise TopError(f"process {self.pid} exited")
        if code == errno.EPERM:
            raise TopError(permission_line(self.pid))
        raise TopError(f"process {self.pid}: cannot read {size} bytes at {address:#x} "
                       f"({os.strerror(code)}): its brisk is not what the descriptor says")

    def u64(self, address):
        return struct.unpack("<Q", self.read(address, 8))[0]

    def word(self, address, width):
        """The unsigned little-endian word of width bytes at address."""
        return struct.unpack("<" + UNSIGNED[width], self.read(address, width))[0]


def permission_line(pid):
    scope = ""
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            scope = f" (kernel.yama.ptrace_scope is {f.read().strip()})"
    except OSError:
        pass
    return (f"not allowed to read process {pid}'s memory{scope}: run brisk top as root, or as "
            f"the program's user with ptrace allowed (ptrace_scope 0)")


# ---- finding the descriptor ------------------------------------------------------------

def mapped_modules(pid):
    """{path: lowest start address of a mapping of its file offset 0}."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise TopError(f"no process with PID {pid} is running")
    except PermissionError:
        raise TopError(permission_line(pid))
    modules = {}
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/") or int(parts[2], 16) != 0:
            continue
        path, start = parts[5], int(parts[0].split("-")[0], 16)
        if path.endswith(" (deleted)"):
            continue
        modules[path] = min(start, modules.get(path, start))
    return modules


def elf_symbol(path, name):
    """(st_value, whether the module is loaded anywhere (ET_DYN), the first
    address of the segment that maps the file's start) of symbol name in the
    ELF file at path (32-bit or 64-bit), from .dynsym or .symtab; None when it
    has none (or is no ELF file)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    elf = brisk_elf.read(data)
    if elf is None:
        return None
    first_vaddr = next((vaddr for offset, vaddr in elf.loads if offset == 0), 0)
    for table in (brisk_elf.SHT_DYNSYM, brisk_elf.SHT_SYMTAB):
        for symbol, value, _, _ in elf.symbols(data, table):
            if symbol == name and value != 0:
                return value, elf.type == brisk_elf.ET_DYN, first_vaddr
    return None


def find_descriptor(process):
    modules = mapped_modules(process.pid)
    try:
        exe = os.readlink(f"/proc/{process.pid}/exe")
    except OSError:
        exe = ""
    # brisk's own library first, then the program (brisk linked in), then the rest.
    order = sorted(modules, key=lambda p: (0 if "brisk" in os.path.basename(p) else
                                           1 if p == exe else 2, p))
    for path in order:
        found = elf_symbol(path, SYMBOL)
        if found is None:
            continue
        value, shared, first_vaddr = found
        return (modules[path] - (first_vaddr & ~0xFFF) + value) if shared else value, path
    raise TopError(f"process {process.pid} ({process.name()}) is not served by brisk: none of "
                   f"its modules has the {SYMBOL.decode()} symbol (glibc's malloc or another "
                   f"allocator serves it, or brisk is linked in and the symbols were stripped)")


class Descriptor:
    HEAD = struct.Struct("<16sII16sQQQII")

    def __init__(self, process, address, path):
        self.process, self.path = process, path
        head = process.read(address, self.HEAD.size)
        (magic, layout, size, version, self.ready, self.heaps, self.classes, self.class_count,
         figure_count) = self.HEAD.unpack(head)
        if magic != MAGIC:
            raise TopError(f"process {process.pid}: {SYMBOL.decode()} in {path} is not brisk's "
                           f"descriptor (no magic tag)")
        self.version = version.split(b"\0")[0].decode(errors="replace")
        if layout != LAYOUT:
            raise TopError(f"process {process.pid} runs brisk {self.version}, whose descriptor "
                           f"has layout {layout}; this brisk top reads layout {LAYOUT}: use "
                           f"the brisk top of brisk {self.version}")
        # the fields' end, padded to 8 bytes (introspection.c checks the same)
        fields = len(FIGURES) * 8 + len(HEAP_FIELDS) * 4 + (len(HEAP_FIELDS) - 1) + len(FIGURES)
        expected = (self.HEAD.size + fields + 7) // 8 * 8
        if size != expected or figure_count != len(FIGURES) or not 0 < self.class_count < 1000:
            raise TopError(f"process {process.pid}: brisk {self.version}'s descriptor is "
                           f"{size} bytes with {figure_count} figures, not layout {LAYOUT}'s "
                           f"{expected} with {len(FIGURES)}")
        rest = process.read(address + self.HEAD.size, size - self.HEAD.size)
        at = 8 * len(FIGURES)
        figure_addresses = struct.unpack_from(f"<{len(FIGURES)}Q", rest)
        self.heap = dict(zip(HEAP_FIELDS, struct.unpack_from(f"<{len(HEAP_FIELDS)}I", rest, at)))
        at += 4 * len(HEAP_FIELDS)
        self.width = dict(zip(HEAP_FIELDS[1:], rest[at:at + len(HEAP_FIELDS) - 1]))
        at += len(HEAP_FIELDS) - 1
        figure_widths = rest[at:at + len(FIGURES)]
        wrong = {f: w for f, w in self.width.items() if w not in HEAP_WIDTHS[f]}
        if self.ready:  # the figures' widths are set with their addresses
            wrong.update({f: w for f, w in zip(FIGURES, figure_widths) if w not in (4, 8)})
        if wrong:
            raise TopError(f"process {process.pid}: brisk {self.version}'s descriptor gives "
                           f"widths this brisk top cannot read: {wrong}")
        ends = {f: self.heap[f] + self.width[f] * (self.class_count if f.startswith("class_")
                                                   else 1) for f in HEAP_FIELDS[1:]}
        if any(end > self.heap["size"] for end in ends.values()):
            raise TopError(f"process {process.pid}: brisk's descriptor names heap fields "
                           f"outside its heap ({self.heap})")
        if self.width["next"] > ctypes.sizeof(ctypes.c_void_p):
            raise TopError(f"process {process.pid} is a {8 * self.width['next']}-bit program "
                           f"and this brisk top runs on a {8 * ctypes.sizeof(ctypes.c_void_p)}"
                           f"-bit python3, which cannot reach its addresses")
        self.figures = {f: (a, w) for f, a, w in zip(FIGURES, figure_addresses, figure_widths)}
        self.address = address


# ---- one sample --------------------------------------------------------------------------

def resident_bytes(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        raise TopError(f"process {pid} exited")


def sample(process, d):
    s = {"time": time.monotonic(), "resident": resident_bytes(process.pid)}
    for name, (address, width) in d.figures.items():
        s[name] = process.word(address, width)
    n = d.class_count
    heaps, seen = [], set()
    address = process.word(d.heaps, d.width["next"])
    while address != 0:
        if address in seen or len(seen) >= MAX_HEAPS:
            raise TopError(f"process {process.pid}: brisk's list of heaps does not end")
        seen.add(address)
        raw = process.read(address, d.heap["size"])

        def field(name, signed=False, count=None, raw=raw):
            code = UNSIGNED[d.width[name]]
            values = struct.unpack_from(f"<{count or 1}{code.lower() if signed else code}", raw,
                                        d.heap[name])
            return values if count else values[0]

        heaps.append({
            "address": address,
            "state": field("state"),
            "thread": field("thread"),
            "in_use": field("carved") + field("arena_in_use"),
            "arena": field("arena_in_use"),
            "refills": field("refills"),
            "remote_in": field("remote_in"),
            "class_refills": field("class_refills", count=n),
            "class_carved": field("class_carved", signed=True, count=n),
        })
        address = field("next")
    s["heaps"] = heaps
    return s


# ---- the screen ----------------------------------------------------------------------------

def size_text(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def rate_text(n):
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    if n >= 1e4:
        return f"{n / 1e3:.0f}k"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}"


def thread_name(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def render(process, d, now, before, classes, interval):
    dt = now["time"] - before["time"] if before else 0.0

    def per_second(new, old):
        return (new - old) / dt if dt > 0 else 0.0

    old_heaps = {h["address"]: h for h in before["heaps"]} if before else {}
    heaps = now["heaps"]
    running = [h for h in heaps if h["state"] != 1]
    in_use = sum(h["in_use"] for h in heaps)
    lines = [f"brisk top: PID {process.pid} ({process.name()}), brisk {d.version}, every "
             f"{interval:g} s (Ctrl-C quits)", ""]
    lines.append(f"resident {size_text(now['resident'])}   committed "
                 f"{size_text(now['committed'])} (peak {size_text(now['committed_peak'])})   "
                 f"mapped {size_text(now['mapped'])}")
    lines.append(f"in use {size_text(in_use)} in {len(heaps)} heaps ({len(running)} running, "
                 f"{len(heaps) - len(running)} of exited threads)   huge blocks "
                 f"{size_text(now['huge_bytes'])}")
    if before:
        os_calls = sum(per_second(now[k], before[k])
                       for k in ("os_maps", "os_unmaps", "os_purges", "os_remaps"))
        refills = sum(per_second(h["refills"], old_heaps[h["address"]]["refills"])
                      for h in heaps if h["address"] in old_heaps)
        remote = sum(per_second(h["remote_in"], old_heaps[h["address"]]["remote_in"])
                     for h in heaps if h["address"] in old_heaps)
        returned = per_second(now["purged_bytes"] + now["released_bytes"],
                              before["purged_bytes"] + before["released_bytes"])
        lines.append(f"per second: refills {rate_text(refills)}   remote frees "
                     f"{rate_text(remote)}   OS calls {rate_text(os_calls)}   returned "
                     f"{size_text(returned)}")
        lines.append(f"purger: {rate_text(per_second(now['purger_rounds'], before['purger_rounds']))}"
                     f" rounds/s, returned {size_text(per_second(now['purger_returned'], before['purger_returned']))}/s,"
                     f" {size_text(now['purger_returned'])} since start")
    else:
        lines.append("per second: (measuring)")
        lines.append(f"purger: {now['purger_rounds']} rounds, returned "
                     f"{size_text(now['purger_returned'])} since start")
    lines.append(f"returned to the OS since start: purged {size_text(now['purged_bytes'])}, "
                 f"unmapped {size_text(now['released_bytes'])}")
    lines.append("")
    lines.append(f"{'heap':>4} {'thread':>8} {'name':<15} {'state':<8} {'in use':>10} "
                 f"{'arena':>10} {'refills/s':>9} {'remote/s':>9}")
    shown = sorted(heaps, key=lambda h: -h["in_use"])[:12]
    index = {h["address"]: i + 1 for i, h in enumerate(reversed(heaps))}  # oldest is heap 1
    for h in shown:
        old = old_heaps.get(h["address"])
        refills = rate_text(per_second(h["refills"], old["refills"])) if old else "-"
        remote = rate_text(per_second(h["remote_in"], old["remote_in"])) if old else "-"
        state = HEAP_STATES.get(h["state"], "?")
        name = thread_name(process.pid, h["thread"]) if h["state"] == 0 else ""
        lines.append(f"{index[h['address']]:>4} {h['thread']:>8} {name[:15]:<15} {state:<8} "
                     f"{size_text(h['in_use']):>10} {size_text(h['arena']):>10} {refills:>9} "
                     f"{remote:>9}")
    if len(heaps) > len(shown):
        lines.append(f"     ... {len(heaps) - len(shown)} more heaps")
    lines.append("")
    lines.append("busiest size classes (all heaps)")
    lines.append(f"{'class':>5} {'size':>8} {'refills/s':>9} {'carved':>10}")
    rows = []
    for c in range(d.class_count):
        carved = sum(h["class_carved"][c] for h in heaps)
        total = sum(h["class_refills"][c] for h in heaps)
        old_total = sum(old_heaps[h["address"]]["class_refills"][c]
                        for h in heaps if h["address"] in old_heaps)
        rate = per_second(total - old_total, 0) if before else 0.0
        if carved or rate:
            rows.append((rate, carved, c))
    for rate, carved, c in sorted(rows, reverse=True)[:8]:
        lines.append(f"{c:>5} {classes[c]:>8} {rate_text(rate):>9} {size_text(carved):>10}")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(prog="brisk top", description=__doc__.split("\n\n")[0])
    parser.add_argument("pid", help="the process to watch")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                        help="seconds between refreshes (default 1)")
    parser.add_argument("--count", type=int, default=0, metavar="N",
                        help="stop after N screens (default: until Ctrl-C)")
    parser.add_argument("--lib", help=argparse.SUPPRESS)  # the installed command passes it
    args = parser.parse_args(argv)
    try:
        pid = int(args.pid)
        if pid <= 0:
            raise ValueError
    except ValueError:
        print(f"brisk top: '{args.pid}' is not a process id", file=sys.stderr)
        return 1
    if args.interval <= 0:
        print("brisk top: --interval must be above 0", file=sys.stderr)
        return 1
    process = Process(pid)
    interactive = sys.stdout.isatty()
    shown, watching = 0, False
    try:
        address, path = find_descriptor(process)
        watching = True  # from here on, the process ending is the end of the watch
        d = Descriptor(process, address, path)
        waited = 0.0
        while not process.u64(address + 40):  # ready: brisk not set up yet
            if waited >= 5:
                raise TopError(f"process {pid} has brisk ({path}) but it has not set itself up")
            time.sleep(0.1)
            waited += 0.1
        d = Descriptor(process, address, path)  # the addresses, now set
        classes = struct.unpack(f"<{d.class_count}I", process.read(d.classes, 4 * d.class_count))
        before = None
        while True:
            now = sample(process, d)
            screen = render(process, d, now, before, classes, args.interval)
            if interactive:
                sys.stdout.write("\x1b[H\x1b[2J" + screen + "\n")
            else:
                sys.stdout.write(screen + "\n\n")
            sys.stdout.flush()
            shown += 1
            if args.count and shown >= args.count:
                return 0
            before = now
            time.sleep(args.interval)
    except TopError as error:
        if watching and not process.alive():
            print(f"brisk top: process {pid} exited", file=sys.stderr)
            return 0
        print(f"brisk top: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
