/* SPDX-License-Identifier: MIT */
/* The background purger: a thread of brisk's own that gives memory back
 * while the program does not call the allocator (a server waiting on a
 * socket after a burst, a program that freed most of its memory and then
 * blocks). Without it, memory freed just before every thread goes quiet
 * stays resident until some thread takes a slow path again.
 *
 * When it starts and how often it runs is the policy table's (PURGER_*,
 * core.h). A single-threaded program never gets it: a second thread would
 * change what the C library allows it (a fork from a signal handler); there,
 * with BRISK_BACKGROUND=0 and in a forked child, memory is purged eagerly
 * instead. It runs with every signal blocked, at the program's priority, not
 * the lowest: a round holds locks that threads starting, exiting or
 * refilling wait for, and at the lowest priority, on a loaded machine, the
 * purger was left off the CPU holding them for hundreds of milliseconds.
 * Each round does housekeeping's work for the parts no thread tends: the
 * caches, exited threads' heaps, and the free pages of heaps whose threads
 * are busy elsewhere (it only tries their locks). */
#include "core.h"

#include <errno.h>

enum { IDLE, RUNNING, OFF };
static _Atomic(int) xstate;
/* Rounds run, and the bytes purged or released while one ran (by the round,
 * or by a thread at the same moment: brisk top shows the rate). */
static _Atomic(uint64_t) xrounds, xround_returned;

static void purge_idle_heap(heap_t *heap, void *pending) {
  uint64_t now = platform_clock_ms();
  bool released = collect_idle_pages(heap, now);
  if (segment_purge_idle(heap, now) || released) *(bool *)pending = true;
  /* An exited thread's arena is tidied by the sweep of abandoned heaps,
   * which claims the heap first (collect_abandoned). */
  if (atomic_load_relaxed(&heap->xstate) == HEAP_IN_USE && arena_purge_expired(heap, false))
    *(bool *)pending = true;
}

/* One round; returns whether anything was left to purge. */
static bool background_round(void) {
  if (!collect_round_try_begin()) return true; /* brisk_collect() is at it */
  uint64_t maps_before, unmaps_before, purges_before, remaps;
  memory_os_calls(&maps_before, &unmaps_before, &purges_before, &remaps);
  uint64_t returned_before = memory_returned_bytes();
  bool pending = false;
  collect_abandoned(false);
  /* Not under the heaps' lock: a round's purges (system calls) held up
   * every thread that started or exited meanwhile. */
  heaps_visit_unlocked(purge_idle_heap, &pending);
  uint64_t now = platform_clock_ms();
  segment_cache_collect(now, false);
  huge_cache_collect(now, false);
  uint64_t maps, unmaps, purges;
  memory_os_calls(&maps, &unmaps, &purges, &remaps);
  atomic_add_relaxed(&xround_returned, memory_returned_bytes() - returned_before);
  atomic_add_relaxed(&xrounds, 1);
  collect_round_end();
  return pending || purges != purges_before || unmaps != unmaps_before;
}

static void background_body(void) {
  in_diag_set(true); /* its own allocations, if any, are never the program's */
  /* Batches need the purger to send an idle thread's on, and the fence. */
  if (fence_start()) atomic_store_relaxed(&xremote_batching, REMOTE_FREES_BATCHED);
  unsigned pause = PURGER_ROUND_MIN_MS;
  for (;;) {
    platform_sleep_ms(pause);
    if (atomic_load_relaxed(&xstate) != RUNNING) return;
    bool busy = background_round();
    long delay = option_get(OPTION_PURGE_DELAY);
    unsigned busy_pause = delay > PURGER_ROUND_MIN_MS ? (unsigned)delay : PURGER_ROUND_MIN_MS;
    pause = busy ? busy_pause : pause * 2 > PURGER_ROUND_MAX_MS ? PURGER_ROUND_MAX_MS : pause * 2;
  }
}

/* Committed, not mapped: mapped counts address space whose pages were
 * purged or never used, which a program with a few threads that each
 * touched a few size classes has much more of than it holds. */
void background_wanted(void) {
  if (likely(atomic_load_relaxed(&xstate) != IDLE)) return;
  if (heaps_threads_seen() < 2) return;
  brisk_memory_info info;
  memory_info(&info);
  if (info.committed < PURGER_AFTER_COMMITTED && !heaps_thread_churn() &&
      atomic_load_relaxed(&xremote_batching) == REMOTE_FREES_UNSEEN)
    return;
  int expected = IDLE;
  bool off = !option_get(OPTION_BACKGROUND) || option_get(OPTION_PURGE_DELAY) < 0;
  if (!atomic_cas_strong_acq_rel(&xstate, &expected, off ? OFF : RUNNING)) return;
  if (off) return;
  atomic_store_relaxed(&xmemory_purge_eagerly, false);
  int saved_errno = errno;
  errno = 0;
  if (!platform_thread_start(background_body, "brisk-purge")) {
    atomic_store_relaxed(&xmemory_purge_eagerly, true);
    /* EBUSY: a fork is under way; a later call tries again. Else no thread
     * is to be had. */
    atomic_store_release(&xstate, errno == EBUSY ? IDLE : OFF);
  }
  errno = saved_errno;
}

/* A forked child does without it: the purger did not come along, and
 * starting one in every child a multithreaded program forks (to exec,
 * mostly) costs more than the few megabytes it would purge; the child
 * purges eagerly instead, as a single-threaded program does. */
void background_after_fork(void) {
  atomic_store_relaxed(&xstate, OFF);
  /* No batches of remote frees: nothing would send an idle thread's on. */
  atomic_store_relaxed(&xremote_batching, REMOTE_FREES_SEEN);
  atomic_store_relaxed(&xmemory_purge_eagerly, true);
}

const void *background_figure_address(bool returned, uint8_t *width) {
  *width = returned ? sizeof xround_returned : sizeof xrounds;
  return returned ? (const void *)&xround_returned : (const void *)&xrounds;
}
