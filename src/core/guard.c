/* SPDX-License-Identifier: MIT */
/* Sampled guard pages (BRISK_GUARD=RATE), for programs in production: about
 * one block in RATE of up to GUARD_MAX bytes is served from a region of its
 * own, alone on an OS page between two inaccessible ones, placed against
 * the page's end (or, every other time, its start), so that reading or
 * writing past its end (before its start) faults at once. Freed, its page
 * becomes inaccessible and is used again only after every other slot, so a
 * use after free faults too. The fault is reported with the access's stack
 * and the block's allocation and free stacks, then the program aborts.
 * Bytes between a block's end and the next 16-byte boundary (or, at a
 * page's start, the page's end) are filled and checked at free: a small
 * overflow that does not reach the inaccessible page is found there.
 *
 * Sampling rides on refills: each refill of a small class counts the blocks
 * its page now offers the fast path against the heap's countdown
 * (guard_count), and the allocation after the countdown runs out is guarded
 * (malloc_slow with the size asked for, or small_refill with the class's).
 * So RATE counts blocks that come from refills; a block a thread frees and
 * takes again on its fast path is not counted again. With the setting off,
 * the fast paths are unchanged, and the slow paths test one flag.
 *
 * The region is a segment of its own kind (SEGMENT_GUARD), in the segment
 * map, whose one page descriptor has no owner tag and says PAGE_HUGE: a free
 * of a guarded block takes the slow path to free_unusual, which sends it
 * here. Layout, in OS pages: the header; a guard page; then each slot's data
 * page followed by a guard page. */
#include "core.h"

#include <string.h>

/* Slots in one segment: 256 with 4 KiB OS pages, fewer with larger ones
 * (ARM64's 16 or 64 KiB), set at start-up. */
#define GUARD_SLOTS_MAX 256
#define GUARD_FIRST_DATA 2 /* the header, then a guard page */
#define SLACK_FILL 0xAB

enum { SLOT_UNUSED, SLOT_LIVE, SLOT_FREEING, SLOT_FREED };

typedef struct guard_slot {
  uint8_t *block;
  size_t size;
  _Atomic(uint8_t) xstate;
  bool at_start; /* placed at its page's start: an underflow faults */
  uint32_t alloc_thread, free_thread;
  int alloc_frames, free_frames;
  void *alloc_stack[SITE_FRAMES];
  void *free_stack[SITE_FRAMES];
} guard_slot;

bool guard_on;
static uint8_t *region;
static guard_slot *slots;
static long rate;
/* Slots to hand out next, oldest freed first: a freed page stays
 * inaccessible while every other slot is used once. */
static unsigned slot_count;
static size_t page_size; /* the OS's */
static uint16_t queue[GUARD_SLOTS_MAX];
static unsigned queue_head, queue_count, samples;
static platform_lock_t guard_lock = PLATFORM_LOCK_INIT;

static uint8_t *slot_page(unsigned slot) {
  return region + (GUARD_FIRST_DATA + 2 * (size_t)slot) * page_size;
}

void guard_init(void) {
  rate = option_get(OPTION_GUARD);
  if (rate <= 0) return;
  if (diag_counting) {
    msg_printf(2, "brisk: warning: BRISK_GUARD is off while a diagnostic mode counts every "
                  "call (checked mode checks every block)\n");
    return;
  }
  page_size = os_page_size();
  slot_count = (unsigned)((SEGMENT_SIZE / page_size - GUARD_FIRST_DATA) / 2);
  if (slot_count > GUARD_SLOTS_MAX) slot_count = GUARD_SLOTS_MAX;
  segment_t *segment = memory_reserve(SEGMENT_SIZE, SEGMENT_SIZE, 0);
  slots = platform_table_alloc(GUARD_SLOTS_MAX * sizeof(guard_slot));
  if (segment == NULL || slots == NULL || !memory_commit(segment, page_size) ||
      !platform_protect((uint8_t *)segment + page_size, SEGMENT_SIZE - page_size, false)) {
    msg_printf(2, "brisk: warning: BRISK_GUARD is off: no memory for its region\n");
    return;
  }
  segment->kind = SEGMENT_GUARD;
  segment->size = SEGMENT_SIZE;
  segment_set_page_shift(segment, HUGE_PAGE_SHIFT); /* every address: page 0, owner tag NULL */
  segment->page_count = 1;
  atomic_store_relaxed(&segment->pages[0].xflags, PAGE_IN_USE | PAGE_HUGE);
  region = (uint8_t *)segment;
  for (unsigned i = 0; i < slot_count; i++)
    queue[i] = (uint16_t)i;
  queue_count = slot_count;
  segment_map_set(segment, true);
  report_fault_watch(guard_fault);
  guard_on = true;
}

void guard_after_fork(void) {
  platform_lock_reset(&guard_lock);
}

/* Between half and one and a half times the rate, so that a program whose
 * refills come in a fixed rhythm does not sample the same call each time. */
static int64_t next_interval(heap_t *heap) {
  uint64_t x = heap->guard_random ? heap->guard_random : (uintptr_t)heap ^ free_secret;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  heap->guard_random = x;
  return rate / 2 + 1 + (int64_t)(x % (uint64_t)rate);
}

void guard_count(heap_t *heap, const page_t *page) {
  if (heap->guard_countdown == 0) heap->guard_countdown = next_interval(heap);
  int64_t offered = (int64_t)page->capacity - (int64_t)page->used;
  heap->guard_countdown -= offered > 0 ? offered : 1;
  if (heap->guard_countdown == 0) heap->guard_countdown = -1;
}

/* A stack capture may allocate (the unwinder's first use loads a library):
 * those allocations are not sampled, nor is anything while the unwinder is
 * first loaded (sites_warm_up), whose nested loading could not resume. */
static int capture(void **frames) {
  bool was_in_diag = in_diag();
  in_diag_set(true);
  int count = stack_capture(frames, 2);
  in_diag_set(was_in_diag);
  return count;
}

void *guard_alloc(heap_t *heap, size_t size) {
  if (in_diag()) return NULL; /* brisk's own allocations; the next of the program's is sampled */
  heap->guard_countdown = next_interval(heap);
  if (size > GUARD_MAX) return NULL;
  platform_lock_acquire(&guard_lock);
  if (queue_count == 0) { /* every slot holds a live block */
    platform_lock_release(&guard_lock);
    return NULL;
  }
  unsigned index = queue[queue_head];
  queue_head = (queue_head + 1) % slot_count;
  queue_count--;
  bool at_start = (++samples & 1) == 0;
  platform_lock_release(&guard_lock);
  guard_slot *slot = &slots[index];
  uint8_t *page = slot_page(index);
  if (!platform_protect(page, page_size, true)) return NULL; /* the slot stays out */
  size_t rounded = align_up(size == 0 ? 1 : size, ALIGNMENT_MIN);
  uint8_t *block = at_start ? page : page + page_size - rounded;
  uint8_t *fill_end = at_start ? page + page_size : block + rounded;
  memset(block + size, SLACK_FILL, (size_t)(fill_end - block) - size);
  slot->block = block;
  slot->size = size;
  slot->at_start = at_start;
  slot->alloc_thread = platform_thread_id();
  slot->alloc_frames = capture(slot->alloc_stack);
  slot->free_frames = 0;
  atomic_store_release(&slot->xstate, SLOT_LIVE);
  return block;
}

/* The slot whose data page holds p, or -1. */
static int slot_of(const void *p) {
  size_t page = (size_t)((const uint8_t *)p - region) / page_size;
  if (page < GUARD_FIRST_DATA || (page - GUARD_FIRST_DATA) % 2 != 0) return -1;
  size_t slot = (page - GUARD_FIRST_DATA) / 2;
  return slot < slot_count ? (int)slot : -1;
}

static void print_stacks(const guard_slot *slot) {
  msg_printf(2, "brisk:   the block was allocated by thread %u at:\n", slot->alloc_thread);
  stack_print(2, slot->alloc_stack, slot->alloc_frames, "brisk:     ");
  if (atomic_load_relaxed(&slot->xstate) == SLOT_FREED) {
    msg_printf(2, "brisk:   and freed by thread %u at:\n", slot->free_thread);
    stack_print(2, slot->free_stack, slot->free_frames, "brisk:     ");
  }
  msg_printf(2, "brisk:   found by BRISK_GUARD, which watches about one block in %ld\n", rate);
}

/* A guarded block's misuse found at its free (a second free, bytes written
 * past its end): said with its stacks, then the program aborts. */
static void __attribute__((noreturn))
misuse_at_free(const char *what, const guard_slot *slot, const void *p, const char *detail) {
  report_begin();
  msg_printf(2, "brisk: error: %s of pointer %p\n", what, p);
  msg_printf(2, "brisk:   %s\n", detail);
  msg_printf(2, "brisk:   at (thread %u):\n", platform_thread_id());
  stack_print_current(2, "brisk:     ");
  if (slot != NULL) print_stacks(slot);
  platform_abort();
}

void guard_free(const void *p) {
  int index = slot_of(p);
  guard_slot *slot = index >= 0 ? &slots[index] : NULL;
  /* Claimed with one compare-and-swap, so that two threads freeing it at
   * once do not both queue its slot. */
  uint8_t state = SLOT_LIVE;
  if (slot == NULL || slot->block != p ||
      !atomic_cas_strong_acq_rel(&slot->xstate, &state, SLOT_FREEING)) {
    if (slot != NULL && slot->block == p && state >= SLOT_FREEING)
      misuse_at_free("double free", slot, p, "the block is already free (double free)");
    misuse_at_free("invalid free", NULL, p,
                   "the pointer lies in brisk's guard pages but no "
                   "guarded block starts there");
  }
  uint8_t *at = slot->block + slot->size;
  uint8_t *fill_end = slot->at_start ? slot_page((unsigned)index) + page_size
                                     : slot->block + align_up(slot->size ? slot->size : 1, 16);
  /* A word at a time where the fill is whole words: a page's worth of
   * bytes one by one cost more than the rest of the free. */
  const uint64_t fill_word = 0x0101010101010101u * SLACK_FILL;
  while (at < fill_end && ((uintptr_t)at & 7) != 0 && *at == SLACK_FILL)
    at++;
  while (at + 8 <= fill_end && ((uintptr_t)at & 7) == 0 && *(const uint64_t *)at == fill_word)
    at += 8;
  for (; at < fill_end; at++) {
    if (*at == SLACK_FILL) continue;
    char detail[200];
    msg_format(detail, sizeof detail,
               "heap overflow found at free: the byte %zu past the end of the %zu-byte block "
               "was written",
               (size_t)(at - (slot->block + slot->size)), slot->size);
    misuse_at_free("heap overflow", slot, p, detail);
  }
  slot->free_thread = platform_thread_id();
  slot->free_frames = capture(slot->free_stack);
  atomic_store_release(&slot->xstate, SLOT_FREED);
  platform_protect(slot_page((unsigned)index), page_size, false);
  platform_lock_acquire(&guard_lock);
  queue[(queue_head + queue_count) % slot_count] = (uint16_t)index;
  queue_count++;
  platform_lock_release(&guard_lock);
}

/* A block guard_alloc just handed out that its caller cannot use (an
 * aligned allocation marks its page): back at the front of the queue, as if
 * never handed out. */
void guard_unsample(void *p) {
  int index = slot_of(p);
  atomic_store_relaxed(&slots[index].xstate, SLOT_UNUSED);
  platform_protect(slot_page((unsigned)index), page_size, false);
  platform_lock_acquire(&guard_lock);
  queue_head = (queue_head + slot_count - 1) % slot_count;
  queue[queue_head] = (uint16_t)index;
  queue_count++;
  platform_lock_release(&guard_lock);
}

size_t guard_usable_size(const void *p) {
  int index = slot_of(p);
  return index >= 0 && slots[index].block == p ? slots[index].size : 0;
}

/* ---- the fault ---------------------------------------------------------------- */

/* The slot a fault at address is about, and what kind of access it was. */
static int fault_slot(const uint8_t *address, const char **kind) {
  size_t page = (size_t)(address - region) / page_size;
  if (page >= GUARD_FIRST_DATA && (page - GUARD_FIRST_DATA) % 2 == 0) {
    *kind = "use after free";
    return slot_of(address);
  }
  /* A guard page: an overflow of the slot before it, or an underflow of the
   * slot after it, whichever block lies nearer the access. */
  int before = page >= GUARD_FIRST_DATA + 1 ? (int)(page - GUARD_FIRST_DATA - 1) / 2 : -1;
  int after = before + 1 < (int)slot_count ? before + 1 : -1;
  size_t past_end = SIZE_MAX, to_start = SIZE_MAX;
  if (before >= 0 && atomic_load_relaxed(&slots[before].xstate) != SLOT_UNUSED)
    past_end = (size_t)(address - (slots[before].block + slots[before].size));
  if (after >= 0 && atomic_load_relaxed(&slots[after].xstate) != SLOT_UNUSED)
    to_start = (size_t)(slots[after].block - address);
  if (past_end == SIZE_MAX && to_start == SIZE_MAX) {
    *kind = "wild access";
    return -1;
  }
  *kind = past_end <= to_start ? "heap overflow" : "heap underflow";
  return past_end <= to_start ? before : after;
}

void guard_fault(const platform_fault *fault) {
  const uint8_t *address = fault->address;
  if (region == NULL || address < region || address >= region + SEGMENT_SIZE) return;
  const char *kind;
  int index = fault_slot(address, &kind);
  report_begin();
  if (index < 0) {
    msg_printf(2, "brisk: error: %s at %p, in brisk's guard pages but near no guarded block\n",
               kind, (const void *)address);
  } else {
    const guard_slot *slot = &slots[index];
    const uint8_t *end = slot->block + slot->size;
    bool freed = atomic_load_relaxed(&slot->xstate) == SLOT_FREED;
    msg_printf(2, "brisk: error: %s: access at %p, ", kind, (const void *)address);
    if (address >= end)
      msg_printf(2, "%zu bytes past the end of", (size_t)(address - end));
    else if (address < slot->block)
      msg_printf(2, "%zu bytes before", (size_t)(slot->block - address));
    else
      msg_printf(2, "%zu bytes into", (size_t)(address - slot->block));
    msg_printf(2, " the %zu-byte block at %p%s\n", slot->size, (const void *)slot->block,
               freed ? ", freed" : "");
  }
  msg_printf(2, "brisk:   at (thread %u):\n", platform_thread_id());
  /* The faulting instruction first (one byte on, as a return address is
   * named), then its callers: the handler's own stack after the frame of
   * the fault, or all of it where the unwinder does not see that frame
   * (frame pointers, as on musl, stop at the signal frame). */
  void *frames[SITE_FRAMES + 1];
  frames[0] = (void *)(fault->pc + 1);
  void *captured[SITE_FRAMES];
  int count = stack_capture(captured, 1), first = 0;
  for (int i = 0; i < count; i++)
    if ((uintptr_t)captured[i] - fault->pc <= 1) first = i + 1; /* the fault's own frame */
  int shown = 1;
  for (int i = first; i < count && shown < SITE_FRAMES + 1; i++)
    frames[shown++] = captured[i];
  stack_print(2, frames, shown, "brisk:     ");
  if (index >= 0) print_stacks(&slots[index]);
  platform_abort();
}
