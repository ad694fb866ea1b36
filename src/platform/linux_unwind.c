/* SPDX-License-Identifier: MIT */
/* The platform contract on Linux with glibc, stack capture: platform_backtrace.
 *
 * glibc's backtrace() goes through libgcc's unwinder, which for every frame
 * finds the frame's FDE and runs its CFA program from the start: some
 * 15,000 instructions for the stack of a sampled allocation, most of what a
 * heap profile costs. On x86-64 a frame of a program built without frame
 * pointers needs far less than libgcc keeps: where the caller's stack
 * pointer (the CFA) is, as rsp or rbp plus an offset; the return address,
 * at CFA - 8; and where rbp was saved, if it was. So the rule that holds at
 * a return address is worked out once, from its FDE (found with glibc's
 * _dl_find_object and the module's .eh_frame_hdr table), and kept in a
 * fixed table of one 64-bit word per entry, written and read with single
 * atomic accesses; a stack whose rules are all there is walked with table
 * look-ups and loads from the stack.
 *
 * What the small interpreter does not follow (DWARF expressions, a CFA in
 * another register, signal frames, a frame with no FDE, a rule that does not
 * fit the word) is left to libgcc for the whole stack: backtrace() then
 * walks it as before, so a stack comes out as libgcc would give it or not
 * faster. Other CPUs (i386, ARM64) use backtrace() throughout.
 *
 * A rule is keyed by the return address alone: a library unloaded and
 * another loaded at the same addresses would meet the old library's rules.
 * The walk then checks each frame stays above the last and within 1 MiB of
 * it, and hands anything odd to libgcc, which has its own view of the
 * loaded modules. */
#include "platform.h"

#ifdef __GLIBC__
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && __GLIBC_PREREQ(2, 35)
#define FAST_UNWIND 1

/* ---- rules --------------------------------------------------------------------
 * A rule in 29 bits: kind (2), CFA register is rbp (1), CFA offset / 8 (14),
 * rbp saved at CFA - 8 n, n (12; 0: rbp unchanged). The table's word is
 * (pc >> 12) << 29 | rule; the slot's index and pc >> 12 give back the whole
 * pc, so a word that matches is that pc's rule and nothing else's. */
enum { RULE_FRAME, RULE_OUTERMOST, RULE_LIBGCC };
#define RULE_BITS 29
#define RULE_SLOTS 4096
#define CFA_UNITS_MAX (1u << 14)
#define RBP_UNITS_MAX (1u << 12)
#define FRAME_SIZE_MAX ((uintptr_t)1 << 20)

static _Atomic(uint64_t) rules[RULE_SLOTS];

static uint32_t rule_make(int kind, bool cfa_rbp, uint32_t cfa_units, uint32_t rbp_units) {
  return (uint32_t)kind | (uint32_t)cfa_rbp << 2 | cfa_units << 3 | rbp_units << 17;
}

static unsigned slot_of(uintptr_t pc) {
  uint64_t tag = pc >> 12;
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

/* The FDE covering pc, from the module's .eh_frame_hdr search table. */
static const uint8_t *fde_of(uintptr_t pc) {
  struct dl_find_object found;
  if (_dl_find_object((void *)pc, &found) != 0 || found.dlfo_eh_frame == NULL) return NULL;
  const uint8_t *header = found.dlfo_eh_frame, *p = header + 4;
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
enum { SAVED_SAME, SAVED_AT_CFA, SAVED_UNDEFINED, SAVED_ELSEWHERE };
enum { RBP = 6, RSP = 7 };

typedef struct row {
  int cfa_register; /* -1: an expression */
  int64_t cfa_offset;
  int rbp_how, ra_how;
  int64_t rbp_offset, ra_offset;
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
  if (reg == RBP) {
    r->rbp_how = how;
    r->rbp_offset = offset;
  } else if (reg == ra_register) {
    r->ra_how = how;
    r->ra_offset = offset;
  }
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
      if (reg == RBP) r->rbp_how = initial->rbp_how, r->rbp_offset = initial->rbp_offset;
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
      if (reg == RBP) r->rbp_how = initial->rbp_how, r->rbp_offset = initial->rbp_offset;
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
      break;
    case 0x0d: /* def_cfa_register */
      r->cfa_register = (int)uleb(&p);
      break;
    case 0x0e: /* def_cfa_offset */
      r->cfa_offset = (int64_t)uleb(&p);
      break;
    case 0x0f: /* def_cfa_expression */
      value = uleb(&p);
      p += value;
      r->cfa_register = -1;
      break;
    case 0x10: /* expression */
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
      break;
    case 0x13: /* def_cfa_offset_sf */
      r->cfa_offset = sleb(&p) * cie->data_align;
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

/* The rule at return address pc: the row of the instruction before it. */
static uint32_t rule_compute(uintptr_t pc) {
  uintptr_t target = pc - 1;
  const uint8_t *fde = fde_of(target);
  if (fde == NULL) return rule_make(RULE_LIBGCC, false, 0, 0);
  uint32_t length, cie_offset;
  memcpy(&length, fde, 4);
  memcpy(&cie_offset, fde + 4, 4);
  if (length == 0 || length == 0xffffffffu || cie_offset == 0)
    return rule_make(RULE_LIBGCC, false, 0, 0);
  cie_facts cie;
  if (!read_cie(fde + 4 - cie_offset, &cie)) return rule_make(RULE_LIBGCC, false, 0, 0);
  const uint8_t *p = fde + 8, *end = fde + 4 + length;
  uintptr_t start, range;
  if (!encoded(&p, cie.fde_encoding, 0, &start) ||
      !encoded(&p, cie.fde_encoding & 0x0f, 0, &range) || target < start || target - start >= range)
    return rule_make(RULE_LIBGCC, false, 0, 0);
  if (cie.has_augmentation_data) {
    uint64_t size = uleb(&p);
    p += size;
  }
  row initial = {.cfa_register = RSP, .rbp_how = SAVED_SAME, .ra_how = SAVED_SAME};
  if (!run_program(cie.program, cie.end, 0, UINTPTR_MAX, &cie, &initial, &initial))
    return rule_make(RULE_LIBGCC, false, 0, 0);
  row r = initial;
  if (!run_program(p, end, start, target, &cie, &initial, &r))
    return rule_make(RULE_LIBGCC, false, 0, 0);
  if (r.ra_how == SAVED_UNDEFINED) return rule_make(RULE_OUTERMOST, false, 0, 0);
  bool fits = r.ra_how == SAVED_AT_CFA && r.ra_offset == -8 &&
              (r.cfa_register == RSP || r.cfa_register == RBP) && r.cfa_offset > 0 &&
              r.cfa_offset % 8 == 0 && (uint64_t)r.cfa_offset / 8 < CFA_UNITS_MAX;
  uint32_t rbp_units = 0;
  if (r.rbp_how == SAVED_AT_CFA) {
    fits = fits && r.rbp_offset < 0 && r.rbp_offset % 8 == 0 &&
           (uint64_t)-r.rbp_offset / 8 < RBP_UNITS_MAX;
    rbp_units = fits ? (uint32_t)(-r.rbp_offset / 8) : 0;
  } else if (r.rbp_how != SAVED_SAME) {
    fits = false;
  }
  if (!fits) return rule_make(RULE_LIBGCC, false, 0, 0);
  return rule_make(RULE_FRAME, r.cfa_register == RBP, (uint32_t)(r.cfa_offset / 8), rbp_units);
}

static uint32_t rule_of(uintptr_t pc) {
  if (pc < 4096 || pc >> 47 != 0) return rule_make(RULE_LIBGCC, false, 0, 0);
  _Atomic(uint64_t) *slot = &rules[slot_of(pc)];
  uint64_t word = atomic_load_explicit(slot, memory_order_relaxed);
  if (word >> RULE_BITS == pc >> 12) return (uint32_t)word & ((1u << RULE_BITS) - 1);
  uint32_t rule = rule_compute(pc);
  atomic_store_explicit(slot, (uint64_t)(pc >> 12) << RULE_BITS | rule, memory_order_relaxed);
  return rule;
}

/* ---- the walk ------------------------------------------------------------------- */
/* The return addresses above the frame whose state (pc, sp, bp) the caller
 * captured, innermost first, as libgcc would give them; -1 where libgcc
 * must walk this stack. */
static int walk(uintptr_t pc, uintptr_t sp, uintptr_t bp, void **frames, int max) {
  int count = 0;
  while (count < max) {
    uint32_t rule = rule_of(pc);
    int kind = (int)(rule & 3);
    if (kind == RULE_OUTERMOST && count > 0) return count;
    if (kind != RULE_FRAME) return -1;
    uintptr_t cfa = ((rule >> 2) & 1 ? bp : sp) + ((rule >> 3) & (CFA_UNITS_MAX - 1)) * 8;
    if (cfa <= sp || cfa - sp > FRAME_SIZE_MAX || cfa % 8 != 0) return -1;
    uintptr_t ra = ((const uintptr_t *)cfa)[-1];
    uint32_t rbp_units = rule >> 17;
    if (rbp_units != 0) bp = ((const uintptr_t *)cfa)[-(intptr_t)rbp_units];
    sp = cfa;
    if (ra == 0) return count; /* libgcc's NULL above _start, which backtrace() drops */
    frames[count++] = (void *)ra;
    pc = ra;
  }
  return count;
}

/* Where the calling function is: an address inside it, its rsp and rbp. */
#define CAPTURE_STATE(pc, sp, bp)                                                                  \
  __asm__ __volatile__("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"                        \
                       : "=r"(pc), "=r"(sp), "=r"(bp))
#endif /* x86-64 */

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
    uintptr_t pc, sp, bp;
    CAPTURE_STATE(pc, sp, bp);
    int count = walk(pc, sp, bp, frames, max);
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

#endif /* glibc */

__attribute__((noinline)) int platform_backtrace_cached(void **frames, int max) {
#ifdef FAST_UNWIND
  uintptr_t pc, sp, bp;
  CAPTURE_STATE(pc, sp, bp);
  return walk(pc, sp, bp, frames, max);
#else
  (void)frames;
  (void)max;
  return -1;
#endif
}
