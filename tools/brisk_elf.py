# SPDX-License-Identifier: MIT
"""ELF files as `brisk symbolize` and `brisk top` read them: 32-bit (i386)
or 64-bit, either byte order. Reads the file header, the program headers,
the section headers, the build id note and the symbol tables; nothing else.
"""
import struct

SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
PT_LOAD = 1
ET_DYN = 3
STT_FUNC = 2

# Where the two classes put what is read (the ELF specification's Elf32_* and
# Elf64_* structures): the file header's e_type, e_phoff, e_shoff,
# e_phentsize..e_shstrndx; a program header's p_type, p_offset, p_vaddr; a
# section header (the same fields, in the same order, of each class's width);
# a symbol (Elf64_Sym puts st_info, st_other and st_shndx before st_value and
# st_size, Elf32_Sym after them).
_CLASS = {
    32: {"offsets": ("I", 28, 32, 42), "program": "III", "program_size": 32,
         "section": "IIIIIIIIII", "section_size": 40,
         "symbol": "IIIBBH", "symbol_fields": (0, 3, 1, 2), "symbol_size": 16},
    64: {"offsets": ("Q", 32, 40, 54), "program": "IIQQ", "program_size": 56,
         "section": "IIQQQQIIQQ", "section_size": 64,
         "symbol": "IBBHQQ", "symbol_fields": (0, 1, 4, 5), "symbol_size": 24},
}


class Elf:
    """An ELF file's headers.
    bits: 32 or 64; order: "<" or ">"; type: e_type (ET_DYN: loaded anywhere);
    loads: [(p_offset, p_vaddr)] of its PT_LOAD segments;
    sections: [(name, type, address, offset, size, link, entsize)]."""

    def __init__(self, bits, order, kind, loads, sections):
        self.bits, self.order, self.type = bits, order, kind
        self.loads, self.sections = loads, sections

    def build_id(self, data):
        """The NT_GNU_BUILD_ID note's bytes in hex, or None."""
        for _, kind, _, offset, size, _, _ in self.sections:
            if kind != SHT_NOTE:
                continue
            at, end = offset, offset + size
            while at + 12 <= end:
                name_size, desc_size, note_type = struct.unpack_from(self.order + "III", data, at)
                desc = at + 12 + ((name_size + 3) & ~3)
                if note_type == 3 and data[at + 12:at + 12 + name_size] == b"GNU\0":
                    return data[desc:desc + desc_size].hex()
                at = desc + ((desc_size + 3) & ~3)
        return None

    def symbols(self, data, table):
        """(name bytes, st_value, st_size, st_info) of each symbol in the
        sections of type table (SHT_SYMTAB or SHT_DYNSYM)."""
        layout = _CLASS[self.bits]
        entry_format = self.order + layout["symbol"]
        name_at, info_at, value_at, size_at = layout["symbol_fields"]
        for _, kind, _, offset, size, link, entsize in self.sections:
            if kind != table or link >= len(self.sections):
                continue
            strings = self.sections[link][3]
            step = entsize or layout["symbol_size"]
            for at in range(offset, min(offset + size, len(data) - layout["symbol_size"] + 1),
                            step):
                entry = struct.unpack_from(entry_format, data, at)
                start = strings + entry[name_at]
                end = data.find(b"\0", start)
                yield data[start:end], entry[value_at], entry[size_at], entry[info_at]


def read(data):
    """The Elf of a file's bytes, or None when they are not an ELF file (or
    one whose headers lie outside it)."""
    if data[:4] != b"\x7fELF" or len(data) < 52 or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    bits = 32 if data[4] == 1 else 64
    order = "<" if data[5] == 1 else ">"
    layout = _CLASS[bits]
    if len(data) < (52 if bits == 32 else 64):
        return None
    word, phoff_at, shoff_at, counts_at = layout["offsets"]
    e_type, = struct.unpack_from(order + "H", data, 16)
    e_phoff, = struct.unpack_from(order + word, data, phoff_at)
    e_shoff, = struct.unpack_from(order + word, data, shoff_at)
    e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(
        order + "HHHHH", data, counts_at)
    loads = []
    for i in range(e_phnum):
        at = e_phoff + i * e_phentsize
        if at + layout["program_size"] > len(data):
            return None
        # Elf32_Phdr: p_type, p_offset, p_vaddr; Elf64_Phdr: p_type, p_flags, p_offset, p_vaddr
        fields = struct.unpack_from(order + layout["program"], data, at)
        p_type, p_offset, p_vaddr = fields if bits == 32 else (fields[0], fields[2], fields[3])
        if p_type == PT_LOAD:
            loads.append((p_offset, p_vaddr))
    raw = []
    for i in range(e_shnum):
        at = e_shoff + i * e_shentsize
        if at + layout["section_size"] > len(data):
            return None
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link,
        # sh_info, sh_addralign, sh_entsize
        raw.append(struct.unpack_from(order + layout["section"], data, at))
    names = raw[e_shstrndx][4] if e_shstrndx < len(raw) else 0
    sections = []
    for s in raw:
        end = data.find(b"\0", names + s[0])
        sections.append((data[names + s[0]:end].decode(errors="replace"), s[1], s[3], s[4], s[5],
                         s[6], s[9]))
    return Elf(bits, order, e_type, loads, sections)
