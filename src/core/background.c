/* SPDX-License-Identifier: MIT */
/* The background purger: a thread of brisk's own that gives memory back
 * while the program does not call the allocator (a server waiting on a
 * socket after a burst, a program that freed most of its memory and then
 * blocks). Without it, memory freed just before every thread goes quiet
 * stays resident until some thread takes a slow path again.
 *
 * It starts once a second thread has allocated and the process has
 * committed 16 MiB: below that there is little to give back, and the thread
 * costs some 100-200 KiB of resident memory of its own (its stack, and the C
 * library code it runs). Or sooner, once a thread takes up the heap of one
 * that exited: a program that starts threads as it goes has its exiting
 * threads leave their pages for the next ones (collect_thread_exit), and
 * only the purger gives back what no thread comes for while the program is
 * quiet; without it, too, the limits below would purge what such threads
 * free (4000 threads started eight at a time: 0.69 s without it, 0.36 s
 * with it). A single-threaded program never gets it: it would make the
 * program multithreaded, which changes what the C library does for it (a
 * fork from a signal handler is only safe single-threaded); there, and
 * with BRISK_BACKGROUND=0, free memory is instead purged as soon as a heap
 * holds 4 MiB of it or the segment cache holds two segments, as in a forked
 * child. It runs at the lowest priority with every signal blocked, and each
 * round does what housekeeping does for the parts no thread is tending: the
 * caches, the heaps of exited threads, and the free pages of heaps whose
 * threads are busy elsewhere (it tries their lock and skips them when
 * taken). Rounds come every 50 ms while there is something to purge and back
 * off to one a second when there is not. BRISK_BACKGROUND=0 turns it off. */
#include "core.h"

enum { IDLE, RUNNING, OFF };
static _Atomic(int) xstate;

#ifdef BRISK_EAGER_PURGER
#define ROUND_MIN_MS 1
#else
#define ROUND_MIN_MS 50
#endif
#define ROUND_MAX_MS 1000

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
  collect_round_end();
  return pending || purges != purges_before || unmaps != unmaps_before;
}

static void background_body(void) {
  in_diag_set(true); /* its own allocations, if any, are never the program's */
  /* Batches need the purger to send an idle thread's on, and the fence. */
  if (fence_start()) atomic_store_relaxed(&xremote_batching, REMOTE_FREES_BATCHED);
  unsigned pause = ROUND_MIN_MS;
  for (;;) {
    platform_sleep_ms(pause);
    if (atomic_load_relaxed(&xstate) != RUNNING) return;
    bool busy = background_round();
    long delay = option_get(OPTION_PURGE_DELAY);
    unsigned busy_pause = delay > ROUND_MIN_MS ? (unsigned)delay : ROUND_MIN_MS;
    pause = busy ? busy_pause : pause * 2 > ROUND_MAX_MS ? ROUND_MAX_MS : pause * 2;
  }
}

/* A process with less committed than this has little to give back. (Mapped
 * counts address space whose pages were purged or never used: a program with
 * a few threads that each touched a few size classes maps 16 MiB while it
 * holds 2 MiB.) */
#ifdef BRISK_EAGER_PURGER
#define BACKGROUND_AFTER OS_PAGE_SIZE
#else
#define BACKGROUND_AFTER (4 * SEGMENT_SIZE)
#endif

void background_wanted(void) {
  if (likely(atomic_load_relaxed(&xstate) != IDLE)) return;
  if (heaps_threads_seen() < 2) return;
  brisk_memory_info info;
  memory_info(&info);
  if (info.committed < BACKGROUND_AFTER && !heaps_thread_churn() &&
      atomic_load_relaxed(&xremote_batching) == REMOTE_FREES_UNSEEN)
    return;
  int expected = IDLE;
  bool off = !option_get(OPTION_BACKGROUND) || option_get(OPTION_PURGE_DELAY) < 0;
  if (!atomic_compare_exchange_strong(&xstate, &expected, off ? OFF : RUNNING)) return;
  if (off) return;
  atomic_store_relaxed(&xmemory_purge_eagerly, false);
  if (!platform_thread_start(background_body, "brisk-purge")) {
    atomic_store_relaxed(&xmemory_purge_eagerly, true); /* no thread to be had */
    atomic_store_relaxed(&xstate, OFF);
  }
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

bool background_running(void) {
  return atomic_load_relaxed(&xstate) == RUNNING;
}
