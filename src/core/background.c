/* The background purger: a thread of brisk's own that gives memory back
 * while the program does not call the allocator (a server waiting on a
 * socket after a burst, a program that freed most of its memory and then
 * blocks). Without it, memory freed just before every thread goes quiet
 * stays resident until some thread takes a slow path again.
 *
 * It starts the first time the process maps a second segment or a huge
 * block (small programs never get it), runs at the lowest priority with
 * every signal blocked, and each round does what housekeeping does for the
 * parts no thread is tending: the caches, the heaps of exited threads, and
 * the free pages of heaps whose threads are busy elsewhere (it tries their
 * lock and skips them when taken). Rounds come every 50 ms while there is
 * something to purge and back off to one a second when there is not.
 * BRISK_BACKGROUND=0 turns it off. A forked child starts it again when it
 * needs it. */
#include "core.h"

enum { IDLE, RUNNING, OFF };
static _Atomic(int) xstate;

#define ROUND_MIN_MS 50
#define ROUND_MAX_MS 1000

static void purge_idle_heap(heap_t *heap, void *pending) {
  if (segment_purge_idle(heap, platform_clock_ms())) *(bool *)pending = true;
}

/* One round; returns whether anything was left to purge. */
static bool background_round(void) {
  uint64_t maps_before, unmaps_before, purges_before, remaps;
  memory_os_calls(&maps_before, &unmaps_before, &purges_before, &remaps);
  bool pending = false;
  collect_abandoned(false);
  heaps_visit(purge_idle_heap, &pending);
  uint64_t now = platform_clock_ms();
  segment_cache_collect(now, false);
  huge_cache_collect(now, false);
  uint64_t maps, unmaps, purges;
  memory_os_calls(&maps, &unmaps, &purges, &remaps);
  return pending || purges != purges_before || unmaps != unmaps_before;
}

static void background_body(void) {
  tl_in_diag = true; /* its own allocations, if any, are never the program's */
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

/* A process with less mapped than this has little to give back. */
#define BACKGROUND_AFTER (4 * SEGMENT_SIZE)

void background_wanted(void) {
  if (likely(atomic_load_relaxed(&xstate) != IDLE)) return;
  brisk_memory_info info;
  memory_info(&info);
  if (info.mapped < BACKGROUND_AFTER) return;
  int expected = IDLE;
  bool off = !option_get(OPTION_BACKGROUND) || option_get(OPTION_PURGE_DELAY) < 0;
  if (!atomic_compare_exchange_strong(&xstate, &expected, off ? OFF : RUNNING)) return;
  if (!off && !platform_thread_start(background_body, "brisk-purge"))
    atomic_store_relaxed(&xstate, OFF); /* no thread to be had: purging stays on slow paths */
}

void background_after_fork(void) {
  if (atomic_load_relaxed(&xstate) == RUNNING) atomic_store_relaxed(&xstate, IDLE);
}

bool background_running(void) {
  return atomic_load_relaxed(&xstate) == RUNNING;
}
