/* SPDX-License-Identifier: MIT */
/* The platform contract on Linux, stack capture: platform_backtrace.
 *
 * glibc's backtrace() goes through libgcc's unwinder, which for every frame
 * finds the frame's FDE and runs its CFA program from the start: some
 * 15,000 instructions for the stack of a sampled allocation, most of what a
 * heap profile costs. A frame of a program built without frame pointers
 * needs far less than libgcc keeps: where the caller's stack pointer (the
 * CFA) is, as the stack or frame pointer plus an offset (or, in a routine
 * that realigns its stack, a word it saved below the frame pointer); where
 * the return address is (just below the CFA on x86, where the call pushed
 * it; on ARM64 wherever the routine saved x30, or still in x30 in the
 * innermost frame); and where the frame pointer was saved, if it was. So
 * the rule that holds at a return address is worked out once, from its FDE
 * (found through the module's .eh_frame_hdr table, the module from glibc's
 * _dl_find_object or, on musl, dl_iterate_phdr), and kept in a fixed table
 * of 64-bit words, each written and read with one atomic access; a stack
 * whose rules are all there is walked with table look-ups and loads from
 * the stack. One interpreter serves every CPU; the CPU's part below names
 * its registers, sizes a rule's fields, and reads the walk's first state.
 *
 * What the small interpreter does not follow (other DWARF expressions, a
 * CFA in another register, signal frames, a frame with no FDE, a rule that
 * does not fit its fields, ARM64's signed return addresses) ends the rules'
 * walk. With glibc libgcc then walks the whole stack (backtrace()), so a
 * stack comes out as libgcc would give it or not faster. musl has no
 * backtrace(), and gcc's unwinder built for glibc needs _dl_find_object;
 * musl's own code has no unwind tables, and a module linked without
 * --eh-frame-hdr (a static link, by default) no index to them: there the
 * walk goes on from the frame it could not follow by frame pointers, which
 * brisk keeps on musl (cmake: -fno-omit-frame-pointer where the C library
 * is not glibc).
 *
 * A rule is keyed by the return address alone: a library unloaded and
 * another loaded at the same addresses would meet the old library's rules.
 * The walk then checks each frame stays above the last and within 1 MiB of
 * it, and hands anything odd to libgcc, which has its own view of the
 * loaded modules (musl: to the frame pointers). */
#include "platform.h"
#include "linux_fault.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#ifdef __GLIBC__
#include <execinfo.h>
#endif

/* ---- the CPU --------------------------------------------------------------------
 * DWARF_SP, DWARF_FP, DWARF_RA: the stack pointer's, frame pointer's and
 * return address's DWARF numbers in .eh_frame. CFA_BITS, RA_BITS: the
 * widths of a rule's CFA offset and return-address slot, in words (RA_BITS
 * 0: the return address is always the word below the CFA). RULE_WORDS:
 * table words per rule (each holds the pc's tag and part of the rule).
 * CAPTURE_STATE: the calling function's state, an address inside it and
 * its registers. */
typedef struct frame_state {
  uintptr_t pc, sp, fp, ra;
} frame_state;

#if defined(__x86_64__)
enum { DWARF_FP = 6, DWARF_SP = 7, DWARF_RA = 16, CFA_BITS = 14, RA_BITS = 0, RULE_WORDS = 1 };
#define CAPTURE_STATE(s)                                                                           \
  __asm__ __volatile__("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"                        \
                       : "=r"((s).pc), "=r"((s).sp), "=r"((s).fp));                                \
  (s).ra = 0
#elif defined(__i386__)
enum { DWARF_SP = 4, DWARF_FP = 5, DWARF_RA = 8, CFA_BITS = 18, RA_BITS = 0, RULE_WORDS = 1 };
/* i386 has no pc-relative lea: a call to the next instruction pushes its
 * address, popped at once. */
#define CAPTURE_STATE(s)                                                                           \
  __asm__ __volatile__("call 1f\n1:\n\tpop %0\n\tmov %%esp, %1\n\tmov %%ebp, %2"                   \
                       : "=r"((s).pc), "=r"((s).sp), "=r"((s).fp));                                \
  (s).ra = 0
#elif defined(__aarch64__)
/* A routine built without frame pointers saves x30 where its other
 * registers are, at the bottom of a frame: as far below the CFA as the
 * frame is large. Two table words per rule. */
enum { DWARF_FP = 29, DWARF_RA = 30, DWARF_SP = 31, CFA_BITS = 17, RA_BITS = 18, RULE_WORDS = 2 };
#define CAPTURE_STATE(s)                                                                           \
  __asm__ __volatile__("adr %0, 1f\n1:\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"                \
                       : "=r"((s).pc), "=r"((s).sp), "=r"((s).fp), "=r"((s).ra))
#endif

/* glibc finds a module's unwind tables without a lock from 2.35 on. */
#ifdef __GLIBC__
#if defined(CAPTURE_STATE) && __GLIBC_PREREQ(2, 35)
#define FAST_UNWIND 1
#endif
#elif defined(CAPTURE_STATE)
#define FAST_UNWIND 1
#else
#error "stack capture on musl needs the CPU's part of linux_unwind.c"
#endif

#ifdef FAST_UNWIND
/* ---- rules --------------------------------------------------------------------
 * A rule's fields, from bit 0: kind (2); the CFA is the frame pointer plus
 * its offset, else the stack pointer (1); the CFA's offset in words
 * (CFA_BITS); the return address at CFA - n words (RA_BITS; n = 0: still
 * in the return-address register, which only the innermost frame may
 * say); the frame pointer saved at CFA - n words (FP_BITS, the rest; 0:
 * unchanged). RULE_REALIGNED, a routine that realigns its stack: the CFA
 * is the word n words below the frame pointer (n: the CFA's field), the
 * caller's frame pointer the word it points to. A table word is
 * (pc >> 12) << WORD_RULE_BITS | a part of the rule: the slot's index and
 * pc >> 12 give back the whole pc, so a word that matches is that pc's and
 * nothing else's, and a rule of two words is used only when both match. */
enum { RULE_FRAME, RULE_OUTERMOST, RULE_LIBGCC, RULE_REALIGNED };
#define TAG_BITS (PLATFORM_ADDRESS_BITS - 12)
#define WORD_RULE_BITS (64 - TAG_BITS)
#define RULE_BITS (WORD_RULE_BITS * RULE_WORDS)
#define CFA_SHIFT 3
#define RA_SHIFT (CFA_SHIFT + CFA_BITS)
#define FP_SHIFT (RA_SHIFT + RA_BITS)
#define FP_BITS (RULE_BITS - FP_SHIFT)
#define FIELD_MAX(bits) (((uint64_t)1 << (bits)) - 1)
#define RULE_SLOTS 4096
#define FRAME_SIZE_MAX ((uintptr_t)1 << 20)
#define WORD ((uintptr_t)sizeof(uintptr_t))

_Static_assert(FP_BITS >= 10, "the frame pointer's slot needs room in a rule");

static _Atomic(uint64_t) rules[RULE_SLOTS][RULE_WORDS];

static uint64_t rule_make(int kind, bool cfa_fp, uint64_t cfa_units, uint64_t ra_units,
                          uint64_t fp_units) {
  return (uint64_t)kind | (uint64_t)cfa_fp << 2 | cfa_units << CFA_SHIFT | ra_units << RA_SHIFT |
         fp_units << FP_SHIFT;
}

static unsigned slot_of(uintptr_t pc) {
  uint64_t tag = (uint64_t)pc >> 12;
  return (unsigned)((pc ^ (tag * 0x9e3779b97f4a7c15ull >> 40)) & (RULE_SLOTS - 1));
}

/* ---- reading .eh_frame -------------------------------------------------------- */
enum {
  PE_OMIT = 0xff,
  PE_ABSPTR = 0x00,
  PE_ULEB128 = 0x01,
  PE_UDATA2 = 0x02,
  PE_UDATA4 = 0x03,
  PE_UDATA8 = 0x04,
  PE_SLEB128 = 0x09,
  PE_SDATA2 = 0x0a,
  PE_SDATA4 = 0x0b,
  PE_SDATA8 = 0x0c,
  PE_PCREL = 0x10,
  PE_DATAREL = 0x30,
  PE_INDIRECT = 0x80,
};

static uint64_t uleb(const uint8_t **p) {
  uint64_t value = 0;
  unsigned shift = 0;
  uint8_t byte;
  do {
    byte = *(*p)++;
    if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  return value;
}

static int64_t sleb(const uint8_t **p) {
  uint64_t value = 0;
  unsigned shift = 0;
  uint8_t byte;
  do {
    byte = *(*p)++;
    if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 64 && (byte & 0x40)) value |= ~(uint64_t)0 << shift;
  return (int64_t)value;
}

/* A 2- or 4-byte field at *p, sign-extended when is_signed. */
static uint64_t fixed(const uint8_t **p, unsigned size, bool is_signed) {
  uint32_t v = 0;
  memcpy(&v, *p, size); /* little-endian: the low bytes */
  *p += size;
  unsigned shift = 32 - 8 * size;
  if (is_signed) return (uint64_t)(int64_t)((int32_t)(v << shift) >> shift);
  return v;
}

/* A pointer in encoding `encoding` at *p (not followed when indirect: only
 * the personality routine's is, and it is skipped); false for an encoding
 * this reader does not know. */
static bool encoded(const uint8_t **p, uint8_t encoding, uintptr_t data_base, uintptr_t *out) {
  const uint8_t *at = *p;
  uint64_t value;
  switch (encoding & 0x0f) {
  case PE_ABSPTR:
    if (sizeof(uintptr_t) == 4) {
      value = fixed(p, 4, false);
      break;
    }
    /* fall through */
  case PE_UDATA8:
  case PE_SDATA8:
    memcpy(&value, at, 8);
    *p += 8;
    break;
  case PE_UDATA4:
  case PE_SDATA4:
    value = fixed(p, 4, (encoding & 0x0f) == PE_SDATA4);
    break;
  case PE_UDATA2:
  case PE_SDATA2:
    value = fixed(p, 2, (encoding & 0x0f) == PE_SDATA2);
    break;
  case PE_ULEB128:
    value = uleb(p);
    break;
  case PE_SLEB128:
    value = (uint64_t)sleb(p);
    break;
  default:
    return false;
  }
  switch (encoding & 0x70) {
  case 0:
    break;
  case PE_PCREL:
    value += (uintptr_t)at;
    break;
  case PE_DATAREL:
    if (data_base == 0) return false;
    value += data_base;
    break;
  default:
    return false;
  }
  *out = (uintptr_t)value;
  return true;
}

/* The .eh_frame_hdr of the module whose code holds pc: glibc finds the
 * module without a lock (_dl_find_object); musl's loader is asked for
 * every module's program headers in turn, on a miss in the table only. */
#ifdef __GLIBC__
static const uint8_t *eh_frame_header(uintptr_t pc) {
  struct dl_find_object found;
  if (_dl_find_object((void *)pc, &found) != 0) return NULL;
  return found.dlfo_eh_frame;
}
#else
typedef struct header_find {
  uintptr_t pc;
  const uint8_t *header;
} header_find;

static int find_header(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  header_find *find = arg;
  const ElfW(Phdr) *table = NULL;
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_GNU_EH_FRAME)
      table = ph;
    else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
             find->pc - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
      inside = true;
  }
  if (!inside) return 0;
  if (table != NULL) find->header = (const uint8_t *)(info->dlpi_addr + table->p_vaddr);
  return 1;
}

static const uint8_t *eh_frame_header(uintptr_t pc) {
  header_find find = {pc, NULL};
  dl_iterate_phdr(find_header, &find);
  return find.header;
}
#endif

/* The FDE covering pc, from the module's .eh_frame_hdr search table. */
static const uint8_t *fde_of(uintptr_t pc) {
  const uint8_t *header = eh_frame_header(pc);
  if (header == NULL) return NULL;
  const uint8_t *p = header + 4;
  uintptr_t ignored, count;
  if (header[0] != 1 || header[3] != (PE_DATAREL | PE_SDATA4) || header[2] == PE_OMIT ||
      !encoded(&p, header[1], (uintptr_t)header, &ignored) ||
      !encoded(&p, header[2], (uintptr_t)header, &count) || count == 0)
    return NULL;
  const int32_t *table = (const int32_t *)(const void *)p; /* (start, FDE) pairs, sorted */
  uintptr_t low = 0, high = count; /* the last entry starting at or below pc */
  while (high - low > 1) {
    uintptr_t middle = low + (high - low) / 2;
    if ((uintptr_t)header + (uintptr_t)(intptr_t)table[2 * middle] <= pc)
      low = middle;
    else
      high = middle;
  }
  if ((uintptr_t)header + (uintptr_t)(intptr_t)table[2 * low] > pc) return NULL;
  return header + (intptr_t)table[2 * low + 1];
}

/* ---- the CFA program ----------------------------------------------------------- */
/* SAVED_AT_ITSELF: the frame pointer saved where it points (a DWARF
 * expression), in a routine that realigns its stack. */
enum { SAVED_SAME, SAVED_AT_CFA, SAVED_UNDEFINED, SAVED_ELSEWHERE, SAVED_AT_ITSELF };

typedef struct row {
  int cfa_register; /* -1: an expression */
  int64_t cfa_offset;
  bool cfa_loaded; /* the CFA is the word at cfa_register + cfa_offset */
  int fp_how, ra_how;
  int64_t fp_offset, ra_offset;
} row;

typedef struct cie_facts {
  uint64_t code_align;
  int64_t data_align;
  uint64_t ra_register;
  uint8_t fde_encoding;
  bool has_augmentation_data;
  const uint8_t *program, *end;
} cie_facts;

#define REMEMBERED_MAX 8

static void set_saved(row *r, uint64_t reg, uint64_t ra_register, int how, int64_t offset) {
  if (reg == DWARF_FP) {
    r->fp_how = how;
    r->fp_offset = offset;
  } else if (reg == ra_register) {
    r->ra_how = how;
    r->ra_offset = offset;
  }
}

/* The only DWARF expressions followed here, [p, p + size): the frame
 * pointer plus a constant, then a load where `load`. gcc writes them for a
 * routine that realigns its stack (i386's main, x86-64 code with
 * over-aligned locals): the CFA is the word at fp - n, and fp is saved
 * where it points. */
static bool fp_expression(const uint8_t *p, uint64_t size, bool load, int64_t *offset) {
  const uint8_t *end = p + size;
  if (size < 2 || *p++ != 0x70 + DWARF_FP) return false; /* DW_OP_breg<fp> */
  *offset = sleb(&p);
  if (load && (p >= end || *p++ != 0x06)) return false; /* DW_OP_deref */
  return p == end;
}

/* Runs the instructions in [p, end) from location `location` while it is at
 * or below `target`; false for an instruction it does not follow. */
static bool run_program(const uint8_t *p, const uint8_t *end, uintptr_t location, uintptr_t target,
                        const cie_facts *cie, const row *initial, row *r) {
  row remembered[REMEMBERED_MAX];
  int depth = 0;
  while (p < end && location <= target) {
    uint8_t op = *p++;
    uint64_t reg, value;
    uintptr_t address;
    switch (op & 0xc0) {
    case 0x40: /* advance_loc */
      location += (op & 0x3f) * cie->code_align;
      continue;
    case 0x80: /* offset */
      value = uleb(&p);
      set_saved(r, op & 0x3f, cie->ra_register, SAVED_AT_CFA, (int64_t)value * cie->data_align);
      continue;
    case 0xc0: /* restore */
      reg = op & 0x3f;
      if (reg == DWARF_FP) r->fp_how = initial->fp_how, r->fp_offset = initial->fp_offset;
      if (reg == cie->ra_register) r->ra_how = initial->ra_how, r->ra_offset = initial->ra_offset;
      continue;
    }
    switch (op) {
    case 0x00: /* nop */
      break;
    case 0x01: /* set_loc */
      if (!encoded(&p, cie->fde_encoding, 0, &address)) return false;
      location = address;
      break;
    case 0x02: /* advance_loc1 */
      location += *p++ * cie->code_align;
      break;
    case 0x03: { /* advance_loc2 */
      uint16_t delta;
      memcpy(&delta, p, 2);
      p += 2;
      location += delta * cie->code_align;
      break;
    }
    case 0x04: { /* advance_loc4 */
      uint32_t delta;
      memcpy(&delta, p, 4);
      p += 4;
      location += delta * cie->code_align;
      break;
    }
    case 0x05: /* offset_extended */
      reg = uleb(&p);
      value = uleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_AT_CFA, (int64_t)value * cie->data_align);
      break;
    case 0x06: /* restore_extended */
      reg = uleb(&p);
      if (reg == DWARF_FP) r->fp_how = initial->fp_how, r->fp_offset = initial->fp_offset;
      if (reg == cie->ra_register) r->ra_how = initial->ra_how, r->ra_offset = initial->ra_offset;
      break;
    case 0x07: /* undefined */
      set_saved(r, uleb(&p), cie->ra_register, SAVED_UNDEFINED, 0);
      break;
    case 0x08: /* same_value */
      set_saved(r, uleb(&p), cie->ra_register, SAVED_SAME, 0);
      break;
    case 0x09: /* register */
      reg = uleb(&p);
      (void)uleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_ELSEWHERE, 0);
      break;
    case 0x0a: /* remember_state */
      if (depth == REMEMBERED_MAX) return false;
      remembered[depth++] = *r;
      break;
    case 0x0b: /* restore_state */
      if (depth == 0) return false;
      *r = remembered[--depth];
      break;
    case 0x0c: /* def_cfa */
      r->cfa_register = (int)uleb(&p);
      r->cfa_offset = (int64_t)uleb(&p);
      r->cfa_loaded = false;
      break;
    case 0x0d: /* def_cfa_register */
      reg = uleb(&p);
      r->cfa_register = r->cfa_loaded ? -1 : (int)reg;
      break;
    case 0x0e: /* def_cfa_offset */
      r->cfa_offset = (int64_t)uleb(&p);
      if (r->cfa_loaded) r->cfa_register = -1;
      break;
    case 0x0f: { /* def_cfa_expression */
      int64_t offset;
      value = uleb(&p);
      bool followed = fp_expression(p, value, true, &offset);
      r->cfa_register = followed ? DWARF_FP : -1;
      r->cfa_offset = followed ? offset : 0;
      r->cfa_loaded = followed;
      p += value;
      break;
    }
    case 0x10: { /* expression */
      int64_t offset;
      reg = uleb(&p);
      value = uleb(&p);
      bool itself = reg == DWARF_FP && fp_expression(p, value, false, &offset) && offset == 0;
      p += value;
      set_saved(r, reg, cie->ra_register, itself ? SAVED_AT_ITSELF : SAVED_ELSEWHERE, 0);
      break;
    }
    case 0x16: /* val_expression */
      reg = uleb(&p);
      value = uleb(&p);
      p += value;
      set_saved(r, reg, cie->ra_register, SAVED_ELSEWHERE, 0);
      break;
    case 0x11: /* offset_extended_sf */
      reg = uleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_AT_CFA, sleb(&p) * cie->data_align);
      break;
    case 0x12: /* def_cfa_sf */
      r->cfa_register = (int)uleb(&p);
      r->cfa_offset = sleb(&p) * cie->data_align;
      r->cfa_loaded = false;
      break;
    case 0x13: /* def_cfa_offset_sf */
      r->cfa_offset = sleb(&p) * cie->data_align;
      if (r->cfa_loaded) r->cfa_register = -1;
      break;
    case 0x14: /* val_offset */
      reg = uleb(&p);
      (void)uleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_ELSEWHERE, 0);
      break;
    case 0x15: /* val_offset_sf */
      reg = uleb(&p);
      (void)sleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_ELSEWHERE, 0);
      break;
    case 0x2e: /* GNU_args_size */
      (void)uleb(&p);
      break;
    case 0x2f: /* GNU_negative_offset_extended */
      reg = uleb(&p);
      value = uleb(&p);
      set_saved(r, reg, cie->ra_register, SAVED_AT_CFA, -(int64_t)value * cie->data_align);
      break;
    default:
      return false;
    }
  }
  return true;
}

/* The CIE's facts; false for a CIE this reader does not follow (a signal
 * frame's among them: 'S'). */
static bool read_cie(const uint8_t *cie, cie_facts *facts) {
  uint32_t length;
  memcpy(&length, cie, 4);
  if (length == 0 || length == 0xffffffffu) return false;
  const uint8_t *p = cie + 8, *end = cie + 4 + length;
  uint8_t version = *p++;
  if (version != 1 && version != 3) return false;
  const char *augmentation = (const char *)p;
  p += strlen(augmentation) + 1;
  facts->code_align = uleb(&p);
  facts->data_align = sleb(&p);
  facts->ra_register = version == 1 ? *p++ : uleb(&p);
  facts->fde_encoding = PE_ABSPTR;
  facts->has_augmentation_data = augmentation[0] == 'z';
  if (facts->has_augmentation_data) {
    uint64_t size = uleb(&p);
    const uint8_t *data_end = p + size;
    for (const char *a = augmentation + 1; *a; a++) {
      uintptr_t ignored;
      if (*a == 'R')
        facts->fde_encoding = *p++;
      else if (*a == 'L')
        p++;
      else if (*a == 'P') {
        uint8_t encoding = *p++;
        if (!encoded(&p, encoding & (uint8_t)~PE_INDIRECT & (uint8_t)~0x70, 0, &ignored))
          return false;
      } else
        return false; /* 'S' (a signal frame), or a letter not known here */
    }
    p = data_end;
  } else if (augmentation[0] != 0) {
    return false;
  }
  facts->program = p;
  facts->end = end;
  return true;
}

/* A saved register's place as n words below the CFA, where it fits `bits`
 * bits; 0 where it does not. */
static uint64_t words_below_cfa(int64_t offset, unsigned bits) {
  if (offset >= 0 || offset % (int64_t)WORD != 0) return 0;
  uint64_t units = (uint64_t)-offset / WORD;
  return units <= FIELD_MAX(bits) ? units : 0;
}

/* The rule at return address pc: the row of the instruction before it. */
static uint64_t rule_compute(uintptr_t pc) {
  const uint64_t libgcc = rule_make(RULE_LIBGCC, false, 0, 0, 0);
  uintptr_t target = pc - 1;
  const uint8_t *fde = fde_of(target);
  if (fde == NULL) return libgcc;
  uint32_t length, cie_offset;
  memcpy(&length, fde, 4);
  memcpy(&cie_offset, fde + 4, 4);
  if (length == 0 || length == 0xffffffffu || cie_offset == 0) return libgcc;
  cie_facts cie;
  if (!read_cie(fde + 4 - cie_offset, &cie) || cie.ra_register != DWARF_RA) return libgcc;
  const uint8_t *p = fde + 8, *end = fde + 4 + length;
  uintptr_t start, range;
  if (!encoded(&p, cie.fde_encoding, 0, &start) ||
      !encoded(&p, cie.fde_encoding & 0x0f, 0, &range) || target < start || target - start >= range)
    return libgcc;
  if (cie.has_augmentation_data) {
    uint64_t size = uleb(&p);
    p += size;
  }
  row initial = {.cfa_register = DWARF_SP, .fp_how = SAVED_SAME, .ra_how = SAVED_SAME};
  if (!run_program(cie.program, cie.end, 0, UINTPTR_MAX, &cie, &initial, &initial)) return libgcc;
  row r = initial;
  if (!run_program(p, end, start, target, &cie, &initial, &r)) return libgcc;
  if (r.ra_how == SAVED_UNDEFINED) return rule_make(RULE_OUTERMOST, false, 0, 0, 0);
  int64_t cfa_offset = r.cfa_loaded ? -r.cfa_offset : r.cfa_offset;
  if ((r.cfa_register != DWARF_SP && r.cfa_register != DWARF_FP) || cfa_offset < 0 ||
      cfa_offset % (int64_t)WORD != 0 || (uint64_t)cfa_offset / WORD > FIELD_MAX(CFA_BITS) ||
      r.cfa_loaded != (r.fp_how == SAVED_AT_ITSELF))
    return libgcc;
  uint64_t ra_units = 0, fp_units = 0;
  if (r.ra_how == SAVED_AT_CFA) {
    ra_units = words_below_cfa(r.ra_offset, RA_BITS == 0 ? 1 : RA_BITS);
    if (ra_units == 0 || (RA_BITS == 0 && ra_units != 1)) return libgcc;
  } else if (r.ra_how != SAVED_SAME || RA_BITS == 0) {
    return libgcc; /* SAVED_SAME: still in the register */
  }
  if (r.fp_how == SAVED_AT_CFA) {
    fp_units = words_below_cfa(r.fp_offset, FP_BITS);
    if (fp_units == 0) return libgcc;
  } else if (r.fp_how != SAVED_SAME && r.fp_how != SAVED_AT_ITSELF) {
    return libgcc;
  }
  return rule_make(r.cfa_loaded ? RULE_REALIGNED : RULE_FRAME, r.cfa_register == DWARF_FP,
                   (uint64_t)cfa_offset / WORD, RA_BITS == 0 ? 0 : ra_units, fp_units);
}

static inline __attribute__((always_inline)) uint64_t rule_of(uintptr_t pc) {
  if (pc < 4096 || (uint64_t)pc >> PLATFORM_ADDRESS_BITS != 0)
    return rule_make(RULE_LIBGCC, false, 0, 0, 0);
  _Atomic(uint64_t) *slot = rules[slot_of(pc)];
  uint64_t tag = (uint64_t)pc >> 12, rule = 0;
  bool found = true;
  for (int i = 0; i < RULE_WORDS; i++) {
    uint64_t word = atomic_load_explicit(&slot[i], memory_order_relaxed);
    found = found && word >> WORD_RULE_BITS == tag;
    rule |= (word & FIELD_MAX(WORD_RULE_BITS)) << (i * WORD_RULE_BITS);
  }
  if (found) return rule;
  rule = rule_compute(pc);
  for (int i = 0; i < RULE_WORDS; i++)
    atomic_store_explicit(&slot[i],
                          tag << WORD_RULE_BITS |
                              (rule >> (i * WORD_RULE_BITS) & FIELD_MAX(WORD_RULE_BITS)),
                          memory_order_relaxed);
  return rule;
}

/* ---- the walk ------------------------------------------------------------------- */
/* The return addresses above the frame in state *state, innermost first,
 * as libgcc would give them. Where the rules do not follow a frame the
 * walk stops, *state that frame's: -1 - the frames found before it. Inlined
 * in each caller, so that the state stays in registers. */
static inline __attribute__((always_inline)) int walk(frame_state *state, void **frames, int max) {
  frame_state s = *state;
  int count = 0;
  while (count < max) {
    uint64_t rule = rule_of(s.pc);
    int kind = (int)(rule & 3);
    uintptr_t cfa_units = (uintptr_t)(rule >> CFA_SHIFT & FIELD_MAX(CFA_BITS)), cfa, fp = s.fp;
    if (kind == RULE_FRAME) {
      cfa = (rule & 4 ? s.fp : s.sp) + cfa_units * WORD;
    } else if (kind == RULE_REALIGNED && s.fp >= s.sp && s.fp - s.sp <= FRAME_SIZE_MAX &&
               s.fp % WORD == 0 && cfa_units * WORD <= s.fp - s.sp) {
      cfa = ((const uintptr_t *)s.fp)[-(intptr_t)cfa_units];
      fp = ((const uintptr_t *)s.fp)[0];
    } else {
      if (kind == RULE_OUTERMOST && count > 0) return count;
      break;
    }
    if (cfa < s.sp || cfa - s.sp > FRAME_SIZE_MAX || cfa % WORD != 0) break;
    const uintptr_t *top = (const uintptr_t *)cfa;
    uintptr_t ra_units = RA_BITS == 0 ? 1 : (uintptr_t)(rule >> RA_SHIFT & FIELD_MAX(RA_BITS));
    uintptr_t ra;
    if (ra_units != 0)
      ra = top[-(intptr_t)ra_units];
    else if (count == 0)
      ra = s.ra;
    else
      break;
    uintptr_t fp_units = (uintptr_t)(rule >> FP_SHIFT);
    if (fp_units != 0) fp = top[-(intptr_t)fp_units];
    s.fp = fp;
    s.sp = cfa;
    if (ra == 0) return count; /* libgcc's NULL above _start, which backtrace() drops */
    frames[count++] = (void *)ra;
    s.pc = ra;
  }
  if (count == max) return count;
  *state = s;
  return -1 - count;
}
#endif /* FAST_UNWIND */

#ifdef __GLIBC__
/* frames[0] is the return address of this function (into its caller),
 * whichever way the stack is walked. The first call goes to libgcc, which
 * glibc loads then: at start-up (sites_warm_up), not inside some malloc. */
#define LIBGCC_FRAMES_MAX 128
#define LIBGCC_SKIP_MAX 4
static _Atomic(bool) libgcc_loaded;

__attribute__((noinline)) int platform_backtrace(void **frames, int max) {
  if (max <= 0) return 0;
#ifdef FAST_UNWIND
  if (atomic_load_explicit(&libgcc_loaded, memory_order_relaxed)) {
    frame_state s;
    CAPTURE_STATE(s);
    int count = walk(&s, frames, max);
    if (count >= 0) return count;
  }
#endif
  atomic_store_explicit(&libgcc_loaded, true, memory_order_relaxed);
  /* raw[0] is this function, unless a sanitizer's interceptor of
   * backtrace() puts its own frame first: start at the return address. */
  void *raw[LIBGCC_FRAMES_MAX + LIBGCC_SKIP_MAX];
  if (max > LIBGCC_FRAMES_MAX) max = LIBGCC_FRAMES_MAX;
  int total = backtrace(raw, max + LIBGCC_SKIP_MAX);
  int skip = 1;
  for (int i = 0; i < total && i < LIBGCC_SKIP_MAX; i++)
    if (raw[i] == __builtin_return_address(0)) {
      skip = i;
      break;
    }
  int count = total - skip < max ? total - skip : max;
  if (count <= 0) return 0;
  memcpy(frames, raw + skip, (size_t)count * sizeof *frames);
  return count;
}

__attribute__((noinline)) int platform_backtrace_cached(void **frames, int max) {
#ifdef FAST_UNWIND
  frame_state s;
  CAPTURE_STATE(s);
  int count = walk(&s, frames, max);
  return count >= 0 ? count : -1;
#else
  (void)frames;
  (void)max;
  return -1;
#endif
}

#else /* musl */
/* Past the frames the rules follow: the frame-pointer chain from the frame
 * pointer fp of a frame whose stack pointer is sp ([fp]: the caller's frame
 * pointer, [fp + 1 word]: the return address, on each CPU here), while it
 * goes up the stack in steps under 1 MiB. The chain ends at a frame pointer
 * of 0 (_start clears it). */
static int walk_frame_pointers(uintptr_t fp, uintptr_t sp, void **frames, int count, int max) {
  while (count < max && fp >= sp && fp - sp <= FRAME_SIZE_MAX && fp % WORD == 0) {
    const uintptr_t *record = (const uintptr_t *)fp;
    if (record[1] < 4096) break; /* not a return address */
    frames[count++] = (void *)record[1];
    sp = fp + 2 * WORD;
    fp = record[0];
  }
  return count;
}

/* The interrupted code's state, from the fault handler's context. */
static void context_state(const ucontext_t *uc, frame_state *s) {
#if defined(__x86_64__)
  s->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  s->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
  s->ra = 0;
#elif defined(__i386__)
  s->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
  s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_ESP];
  s->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_EBP];
  s->ra = 0;
#elif defined(__aarch64__)
  s->pc = (uintptr_t)uc->uc_mcontext.pc;
  s->sp = (uintptr_t)uc->uc_mcontext.sp;
  s->fp = (uintptr_t)uc->uc_mcontext.regs[29];
  s->ra = (uintptr_t)uc->uc_mcontext.regs[30];
#endif
}

/* A walk that reached the fault handler's return into the C library
 * (linux_fault.h) goes on from the interrupted code: its faulting
 * instruction, then its callers, by their rules (which know a function
 * still in its prologue) and past them by frame pointers. */
static int walk_past_signal(void **frames, int count, int max) {
  const ucontext_t *uc = linux_fault_context;
  if (uc == NULL || count == 0 || count >= max ||
      (uintptr_t)frames[count - 1] != linux_fault_return)
    return -1;
  frame_state s;
  context_state(uc, &s);
  frames[count++] = (void *)s.pc;
  int more = walk(&s, frames + count, max - count);
  if (more >= 0) return count + more;
  return walk_frame_pointers(s.fp, s.sp, frames, count + (-1 - more), max);
}

/* frames[0] is the return address of this function (into its caller). */
__attribute__((noinline)) int platform_backtrace(void **frames, int max) {
  if (max <= 0) return 0;
  frame_state s;
  CAPTURE_STATE(s);
  int count = walk(&s, frames, max);
  if (count >= 0) return count;
  int through_signal = walk_past_signal(frames, -1 - count, max);
  if (through_signal >= 0) return through_signal;
  return walk_frame_pointers(s.fp, s.sp, frames, -1 - count, max);
}

/* -1 where the rules do not follow even this function's frame. */
__attribute__((noinline)) int platform_backtrace_cached(void **frames, int max) {
  frame_state s;
  CAPTURE_STATE(s);
  int count = walk(&s, frames, max);
  if (count >= -1) return count;
  return walk_frame_pointers(s.fp, s.sp, frames, -1 - count, max);
}
#endif
