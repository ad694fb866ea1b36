/* SPDX-License-Identifier: MIT */
/* Reports of misuse that brisk catches outside the diagnostic modes (a double
 * free), and the stack traces every report carries, which start at the
 * program's own frame: brisk's frames are left out. */
#include "core.h"

#include <string.h>

/* An ELF linker defines these around the section (weak: none if it is
 * empty); elsewhere brisk's library range stands in (see report_init). */
#ifdef __ELF__
extern const char __start_brisk_pointer_readers[] __attribute__((weak, visibility("hidden")));
extern const char __stop_brisk_pointer_readers[] __attribute__((weak, visibility("hidden")));
#define POINTER_READERS_START ((uintptr_t)__start_brisk_pointer_readers)
#define POINTER_READERS_STOP ((uintptr_t)__stop_brisk_pointer_readers)
#else
#define POINTER_READERS_START ((uintptr_t)0)
#define POINTER_READERS_STOP ((uintptr_t)0)
#endif

/* brisk's code, when brisk is a shared library; when it is linked into the
 * program it has no range of its own, and its frames are skipped by count. */
static uintptr_t own_start, own_end;

/* A pointer brisk never handed out can fault in the free fast path, which
 * reads the segment header below the pointer before any check. The pointer
 * is still in a register when that read faults: the one whose segment is
 * the header's (the first argument's register first). */
const void *report_faulting_pointer(const platform_fault *fault) {
  uintptr_t header = (uintptr_t)fault->address & ~(uintptr_t)SEGMENT_MASK;
  for (int i = 0; i < PLATFORM_FAULT_REGISTERS; i++) {
    uintptr_t value = fault->registers[i];
    if (value != header && value != 0 && ((value - 1) & ~(uintptr_t)SEGMENT_MASK) == header)
      return (const void *)value;
  }
  return NULL;
}

/* A watcher of faults besides this file's own (guard.c's, set through
 * report_fault_watch), asked first. */
static void (*fault_watcher)(const platform_fault *fault);

/* Default mode: a fault in brisk's code while it reads the bookkeeping for a
 * pointer is that pointer's fault, reported as such; any other fault is
 * left to whatever handled faults before. */
static void report_fault(const platform_fault *fault) {
  if (fault_watcher != NULL) fault_watcher(fault);
  if (!report_code_is_brisk(fault->pc)) return;
  const void *p = report_faulting_pointer(fault);
  if (p == NULL) return;
  char detail[200];
  msg_format(detail, sizeof detail,
             "reading brisk's bookkeeping for it at %p faulted: brisk never handed out this "
             "pointer, or its memory was overwritten",
             fault->address);
  misuse_detected("invalid pointer", p, detail);
}

void report_init(void) {
  if (!platform_library_code((const void *)report_init, &own_start, &own_end))
    own_start = own_end = 0;
  if (POINTER_READERS_START != POINTER_READERS_STOP || own_end != 0)
    platform_on_fault(report_fault);
}

void report_fault_watch(void (*watcher)(const platform_fault *fault)) {
  fault_watcher = watcher;
  platform_on_fault(report_fault);
}

bool report_code_is_brisk(uintptr_t pc) {
  uintptr_t start = POINTER_READERS_START, stop = POINTER_READERS_STOP;
  if (start == stop) /* a linker that keeps no bounds (Windows): brisk's library, if any */
    return pc >= own_start && pc < own_end;
  return pc >= start && pc < stop;
}

int stack_capture(void **out, unsigned skip) {
  void *raw[SITE_FRAMES + 8]; /* brisk's own frames, then the caller's */
  int n = platform_backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  /* brisk's own frames are skipped by address when it is a library of its
   * own; linked into the program, by the count the caller knows. */
  int first = own_end != 0 ? 0 : 1 + (int)skip;
  while (first < n && (uintptr_t)raw[first] >= own_start && (uintptr_t)raw[first] < own_end)
    first++;
  int count = n - first;
  if (count > SITE_FRAMES) count = SITE_FRAMES;
  if (count < 0) count = 0;
  memcpy(out, raw + first, (size_t)count * sizeof(void *));
  return count;
}

/* BRISK_SYMBOLS_LATER: each frame as its module, offset and build id, for
 * `brisk symbolize` to name where the program's debug information (or a
 * .map file) is; the report itself runs no addr2line. */
static void stack_print_located(int fd, void *const *frames, int count, const char *indent) {
  for (int i = 0; i < count; i++) {
    char module[300], build[80];
    uintptr_t offset;
    if (platform_code_location(frames[i], module, sizeof module, &offset, build, sizeof build))
      msg_printf(fd, "%s#%d %p %s+0x%zx (%s)\n", indent, i, frames[i], module, (size_t)offset,
                 build[0] ? build : "no build id");
    else
      msg_printf(fd, "%s#%d %p ??\n", indent, i, frames[i]);
  }
  if (count == 0) msg_printf(fd, "%s(no stack trace)\n", indent);
}

void stack_print(int fd, void *const *frames, int count, const char *indent) {
  if (option_get(OPTION_SYMBOLS_LATER)) {
    stack_print_located(fd, frames, count, indent);
    return;
  }
  char line[400];
  platform_symbols_prepare(frames, (size_t)count);
  for (int i = 0; i < count; i++) {
    platform_symbol_describe(frames[i], line, sizeof line);
    msg_printf(fd, "%s#%d %p %s\n", indent, i, frames[i], line);
  }
  if (count == 0) msg_printf(fd, "%s(no stack trace)\n", indent);
}

void stack_print_current(int fd, const char *indent) {
  void *frames[SITE_FRAMES];
  int count = stack_capture(frames, 1);
  stack_print(fd, frames, count, indent);
}

/* ---- while a report runs ---------------------------------------------------
 * A report may be about a heap that is already damaged, so the reporting
 * thread leaves it: its heap becomes heap_reporting, whose fast paths are
 * empty, and the API serves its allocations (the unwinder's, the symbol
 * lookup's) from a region of their own, bump-allocated, never freed, taking
 * no lock; its frees are dropped. */
heap_t heap_reporting = {.direct = {[0 ... DIRECT_SLOTS - 1] = &page_empty}};
static _Atomic(uintptr_t) xreport_next;
static uintptr_t report_end;
#define REPORT_REGION SEGMENT_SIZE
#define REPORT_HEADER 16 /* each block starts with its size */

void report_begin(void) {
  in_diag_set(true);
  atomic_store_relaxed(&xfrees_take_long_way, true); /* before its frees go to heap_reporting */
  heap_set_current(&heap_reporting);
  if (atomic_load_acquire(&xreport_next) != 0) return;
  segment_t *region = platform_reserve_aligned(REPORT_REGION, SEGMENT_SIZE, 0);
  if (region == NULL || !platform_commit(region, REPORT_REGION)) return;
  region->kind = SEGMENT_REPORT;
  region->size = REPORT_REGION;
  segment_set_page_shift(region, HUGE_PAGE_SHIFT); /* every address: page 0, owner tag NULL */
  region->page_count = 1;
  uintptr_t first = align_up((uintptr_t)region + sizeof(segment_t) + sizeof(page_t), 16);
  uintptr_t expected = 0;
  if (atomic_cas_strong_acq_rel(&xreport_next, &expected, first))
    report_end = (uintptr_t)region + REPORT_REGION; /* else another thread's region serves */
  else
    platform_release(region, REPORT_REGION);
}

void *report_alloc(size_t size) {
  size_t need = align_up(size + REPORT_HEADER, 16);
  if (need < size) return NULL;
  uintptr_t at = atomic_add_relaxed(&xreport_next, need);
  if (at == 0 || at + need > report_end) return NULL;
  *(size_t *)at = size;
  return (void *)(at + REPORT_HEADER);
}

size_t report_block_size(const void *p) {
  return *(const size_t *)((uintptr_t)p - REPORT_HEADER);
}

void misuse_detected(const char *what, const void *p, const char *detail) {
  report_begin();
  msg_printf(2, "brisk: error: %s of pointer %p\n", what, p);
  if (detail != NULL) msg_printf(2, "brisk:   %s\n", detail);
  msg_printf(2, "brisk:   at:\n");
  stack_print_current(2, "brisk:     ");
  msg_printf(2, "brisk:   run with BRISK_CHECK=1 to see where the block was allocated\n");
  platform_abort();
}
