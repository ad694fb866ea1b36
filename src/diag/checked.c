/* SPDX-License-Identifier: MIT */
/* Checked mode (BRISK_CHECK): every free, realloc and size query is checked
 * against the block's trailer; double frees, pointers brisk never returned,
 * interior pointers and writes past the end are reported with the stack of
 * the offending call and of the allocation, then the program stops. */
#include "diag.h"

#include <string.h>

#define CHECK_EXIT_STATUS 86

static NOINLINE __attribute__((noreturn)) void
report(const char *kind, const void *p, const diag_trailer_t *trailer, const char *detail) {
  in_diag_set(true);
  msg_printf(2, "brisk: error: %s of pointer %p\n", kind, p);
  if (detail != NULL) msg_printf(2, "brisk:   %s\n", detail);
  msg_printf(2, "brisk:   at:\n");
  stack_print_current(2, "brisk:     ");
  if (trailer != NULL && trailer->site != 0) {
    msg_printf(2, "brisk:   the block (%llu bytes at %p) was allocated at:\n",
               (unsigned long long)trailer->requested, (void *)trailer->user);
    site_print_trace(2, trailer->site, "brisk:     ");
  }
  msg_printf(2, "brisk: checked mode stops the program (exit status %d)\n", CHECK_EXIT_STATUS);
  platform_exit_now(CHECK_EXIT_STATUS);
}

/* A fault in brisk's code that reads a pointer's bookkeeping is reported as
 * an invalid free; any other fault goes on as before. */
static void checked_fault(const platform_fault *fault) {
  if (!report_code_is_brisk(fault->pc)) return;
  const void *p = report_faulting_pointer(fault);
  char detail[160];
  msg_format(detail, sizeof detail,
             "brisk never returned this pointer: reading its header at %p faulted", fault->address);
  report("invalid free (or realloc, or size query)", p != NULL ? p : fault->address, NULL, detail);
}

void checked_init(void) {
  platform_on_fault(checked_fault);
  platform_fault_stack();
}

static const char *ordinal_suffix(size_t n) {
  if (n % 100 >= 11 && n % 100 <= 13) return "th";
  return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

diag_trailer_t *checked_block(const void *p, const char *action) {
  char detail[200];
  segment_t *segment = segment_of(p);
  if (!segment_map_contains(segment))
    report(action, p, NULL, "brisk never returned this pointer (or its huge block is gone)");
  page_t *page = &segment->pages[0];
  if (segment->kind == SEGMENT_ARENA) {
    bool freed;
    if (arena_block_end(segment, p, &freed) == NULL) {
      if (!freed)
        report(action, p, NULL,
               "no block of brisk's starts there (a pointer into a block, or a stray one)");
      diag_trailer_t note;
      _Static_assert(sizeof note <= ARENA_FREED_NOTE_BYTES, "the note fits");
      memcpy(&note, (const uint8_t *)p + ARENA_FREED_NOTE, sizeof note);
      bool noted = note.user == (uintptr_t)p && note.state == DIAG_FREED;
      report("double free", p, noted ? &note : NULL, "the block was already freed");
    }
  } else if (segment->kind == SEGMENT_HUGE) {
    if (!(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE))
      report(action, p, NULL, "the huge block was already freed (double free)");
    if ((const uint8_t *)p < page->area)
      report(action, p, NULL, "the pointer lies in a block header, not a block");
  } else {
    size_t index = ((uintptr_t)p - (uintptr_t)segment) >> segment->page_shift;
    page = &segment->pages[index];
    if (index >= segment->page_count || !(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE))
      report(action, p, NULL, "no block of this page is allocated (double free or stray pointer)");
    const uint8_t *carved_end = page->area + (size_t)page->capacity * page->block_size;
    if ((const uint8_t *)p < page->area || (const uint8_t *)p >= carved_end)
      report(action, p, NULL, "the pointer is not inside any block brisk handed out");
  }
  diag_trailer_t *trailer = diag_trailer_of(segment, page, p);
  if (trailer->state != DIAG_LIVE && trailer->state != DIAG_FREED)
    report(action, p, NULL, "no block was ever handed out here");
  if (trailer->user != (uintptr_t)p) {
    const uint8_t *user = (const uint8_t *)trailer->user;
    msg_format(
        detail, sizeof detail, "interior pointer: %zd bytes into the %s block %p of %llu bytes",
        (ptrdiff_t)((const uint8_t *)p - user), trailer->state == DIAG_LIVE ? "live" : "freed",
        (const void *)user, (unsigned long long)trailer->requested);
    report(action, p, trailer, detail);
  }
  if (trailer->state == DIAG_FREED)
    report("double free", p, trailer, "the block was already freed");
  uint8_t *end = (uint8_t *)trailer;
  if (trailer->requested > (uint64_t)(end - (const uint8_t *)p))
    report("heap corruption", p, NULL, "the block's trailer was overwritten (write past end)");
  const uint8_t *canary = (const uint8_t *)p + trailer->requested;
  size_t length = canary_length(p, trailer->requested, trailer);
  for (size_t i = 0; i < length; i++) {
    if (canary[i] != CANARY) {
      char which[32] = "first";
      if (i > 0) msg_format(which, sizeof which, "%zu%s", i + 1, ordinal_suffix(i + 1));
      msg_format(detail, sizeof detail,
                 "the %s byte past the end of the %llu-byte block (offset %llu) was overwritten",
                 which, (unsigned long long)trailer->requested,
                 (unsigned long long)(trailer->requested + i));
      report("write past end of block", p, trailer, detail);
    }
  }
  return trailer;
}
