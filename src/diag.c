/* Diagnostic modes (BRISK_STATS, BRISK_LEAKS, BRISK_CHECK). When one is on,
 * every heap is created with an empty fast path, so each malloc and free
 * arrives here; when all are off nothing here runs and the fast paths are
 * the same instructions as in a build without diagnostics.
 *
 * Each block then carries a trailer at its very end: the pointer handed out,
 * the size asked for, the allocation site and a live/freed state. Between the
 * user's bytes and the trailer lie canary bytes, so a write past the end is
 * seen when the block is freed. */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <ucontext.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static bool diag_sites; /* blocks record their allocation site (leaks, check) */
#ifndef BRISK_NO_DIAGNOSTICS
bool diag_counting;
bool diag_check;
#endif

#define CANARY_BYTES 8     /* always at least this many between data and trailer */
#define CANARY_SPAN_MAX 64 /* bytes of canary written and checked */
#define CANARY 0xBD
#define FREED_FILL 0xDF
#define CHECK_EXIT_STATUS 86

typedef diag_trailer_t trailer_t;

static void report(const char *kind, const void *p, const diag_trailer_t *trailer,
                   const char *detail) __attribute__((noreturn));

/* A pointer brisk never handed out can fault in the free fast path, which
 * reads the segment header below the pointer before any check. In checked
 * mode such a fault inside brisk's code is reported as an invalid free; any
 * other fault gets the default action. */
static char fault_stack[16 * 1024];

/* The pointer being freed is still in a register when its header read
 * faults: the one whose segment is the header's (the first argument's
 * register first). */
static const void *faulting_pointer(const ucontext_t *uc, const void *fault_address) {
  static const int order[] = {REG_RDI, REG_RSI, REG_RDX, REG_RCX, REG_R8,
                              REG_R9,  REG_RAX, REG_RBX, REG_RBP, REG_R10,
                              REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  uintptr_t header = (uintptr_t)fault_address & ~(uintptr_t)SEGMENT_MASK;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    uintptr_t value = (uintptr_t)uc->uc_mcontext.gregs[order[i]];
    if (value != header && value != 0 && ((value - 1) & ~(uintptr_t)SEGMENT_MASK) == header)
      return (const void *)value;
  }
  return fault_address;
}

static void checked_fault(int signal_number, siginfo_t *info, void *context) {
  ucontext_t *uc = context;
  uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  if (sites_code_is_brisk(pc)) {
    char detail[160];
    snprintf(detail, sizeof detail,
             "brisk never returned this pointer: reading its header at %p faulted", info->si_addr);
    report("invalid free (or realloc, or size query)", faulting_pointer(uc, info->si_addr), NULL,
           detail);
  }
  signal(signal_number, SIG_DFL); /* not ours: fault again, the default way */
}

static void install_fault_handler(void) {
  stack_t stack = {.ss_sp = fault_stack, .ss_size = sizeof fault_stack, .ss_flags = 0};
  sigaltstack(&stack, NULL);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = checked_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &action, NULL);
  sigaction(SIGBUS, &action, NULL);
}

void diag_init(void) {
  sites_find_own_code();
#ifndef BRISK_NO_DIAGNOSTICS
  diag_check = option_get(OPTION_CHECK) != 0;
  diag_sites = diag_check || option_get(OPTION_LEAKS) != 0;
  diag_counting = diag_sites || option_get(OPTION_STATS) != 0;
  profile_on = option_get(OPTION_PROFILE) != 0;
#endif
  if (diag_check) install_fault_handler();
}

/* The end of the block that holds p, found from the page's geometry so that
 * an interior pointer finds its block too; a huge block ends with its
 * mapping. */
static uint8_t *block_end(segment_t *segment, page_t *page, const void *p) {
  if (segment->kind == SEGMENT_HUGE) return (uint8_t *)segment + segment->size;
  return page_block_start(page, p) + page->block_size;
}

static trailer_t *trailer_of(segment_t *segment, page_t *page, const void *p) {
  return (trailer_t *)(block_end(segment, page, p) - sizeof(trailer_t));
}

static size_t canary_span(const uint8_t *user, size_t requested, const trailer_t *trailer) {
  size_t room = (size_t)((const uint8_t *)trailer - (user + requested));
  return room < CANARY_SPAN_MAX ? room : CANARY_SPAN_MAX;
}

static unsigned stats_class(size_t requested) {
  return requested > LARGE_MAX ? CLASS_COUNT : size_class_of(requested);
}

void *diag_malloc(heap_t *heap, size_t size, size_t alignment, bool zero) {
  if (size > SIZE_LIMIT - CANARY_BYTES - sizeof(trailer_t)) {
    errno = ENOMEM;
    return NULL;
  }
  size_t need = size + CANARY_BYTES + sizeof(trailer_t);
  uint8_t *user;
  if (alignment <= ALIGNMENT_MIN) {
    user = need <= LARGE_MAX ? page_malloc_generic(heap, need) : huge_malloc(need, 0, false);
  } else if (need + alignment - 1 > LARGE_MAX) {
    user = huge_malloc(need, alignment, false);
  } else {
    uint8_t *raw = page_malloc_generic(heap, need + alignment - 1);
    user = raw == NULL ? NULL : (uint8_t *)align_up((uintptr_t)raw, alignment);
    if (user != raw) page_mark_aligned(page_of(segment_of(raw), raw));
  }
  if (user == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  if (zero) memset(user, 0, size);
  segment_t *segment = segment_of(user);
  trailer_t *trailer = trailer_of(segment, page_of(segment, user), user);
  memset(user + size, CANARY, canary_span(user, size, trailer));
  trailer->requested = size;
  trailer->user = (uintptr_t)user;
  trailer->state = DIAG_LIVE;
  trailer->site = diag_sites ? site_capture(0) : 0; /* statistics need no call sites */
  counter_add(heap->counters.mallocs[stats_class(size)], 1);
  counter_add(heap->counters.requested_bytes, (int64_t)size);
  return user;
}

/* ---- checked mode: reports --------------------------------------------------- */
static NOINLINE void report(const char *kind, const void *p, const trailer_t *trailer,
                            const char *detail) {
  tl_in_diag = true;
  fd_printf(2, "brisk: error: %s of pointer %p\n", kind, p);
  if (detail != NULL) fd_printf(2, "brisk:   %s\n", detail);
  fd_printf(2, "brisk:   at:\n");
  site_print_current(2, "brisk:     ");
  if (trailer != NULL && trailer->site != 0) {
    fd_printf(2, "brisk:   the block (%llu bytes at %p) was allocated at:\n",
              (unsigned long long)trailer->requested, (void *)trailer->user);
    site_print_trace(2, trailer->site, "brisk:     ");
  }
  fd_printf(2, "brisk: checked mode stops the program (exit status %d)\n", CHECK_EXIT_STATUS);
  _exit(CHECK_EXIT_STATUS);
}

/* The trailer of the live block that p was handed out as, or a report. */
static trailer_t *checked_block(const void *p, const char *action) {
  char detail[200];
  segment_t *segment = segment_of(p);
  if (!segment_map_contains(segment))
    report(action, p, NULL, "brisk never returned this pointer (or its huge block is gone)");
  page_t *page;
  if (segment->kind == SEGMENT_HUGE) {
    page = &segment->pages[0];
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
  trailer_t *trailer = trailer_of(segment, page, p);
  if (trailer->state != DIAG_LIVE && trailer->state != DIAG_FREED)
    report(action, p, NULL, "no block was ever handed out here");
  if (trailer->user != (uintptr_t)p) {
    const uint8_t *user = (const uint8_t *)trailer->user;
    snprintf(detail, sizeof detail,
             "interior pointer: %zd bytes into the %s block %p of %llu bytes",
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
  size_t span = canary_span(p, trailer->requested, trailer);
  for (size_t i = 0; i < span; i++) {
    if (canary[i] != CANARY) {
      snprintf(
          detail, sizeof detail, "byte %llu past the end of the %llu-byte block was overwritten",
          (unsigned long long)(trailer->requested + i), (unsigned long long)trailer->requested);
      report("write past end of block", p, trailer, detail);
    }
  }
  return trailer;
}

void diag_free(segment_t *segment, page_t *page, void *p) {
  trailer_t *trailer = diag_check ? checked_block(p, "invalid free") : trailer_of(segment, page, p);
  heap_t *heap = heap_for_this_thread();
  size_t requested = trailer->requested;
  if (heap != NULL) {
    counter_add(heap->counters.frees[stats_class(requested)], 1);
    counter_add(heap->counters.requested_bytes, -(int64_t)requested);
    if (segment->kind != SEGMENT_HUGE && segment->owner != heap)
      counter_add(heap->counters.remote_frees, 1);
  }
  trailer->state = DIAG_FREED;
  /* Poison what the program may still read through a dangling pointer. */
  if (diag_check && segment->kind != SEGMENT_HUGE) memset(p, FREED_FILL, requested);

  free_block(segment, page, p);
}

size_t diag_usable_size(const void *p) {
  if (diag_check)
    return checked_block(p, "usable-size query (or realloc) of an invalid pointer")->requested;
  segment_t *segment = segment_of(p);
  return trailer_of(segment, page_of(segment, p), p)->requested;
}

uintptr_t free_secret = 0x9e3779b97f4a7c15u; /* replaced at start-up, before any block exists */

void double_free_detected(const void *p) {
  tl_in_diag = true;
  fd_printf(2, "brisk: error: double free of pointer %p (the block is already free)\n", p);
  fd_printf(2, "brisk:   at:\n");
  site_print_current(2, "brisk:     ");
  fd_printf(2, "brisk:   run with BRISK_CHECK=1 to see where the block was allocated\n");
  abort();
}
