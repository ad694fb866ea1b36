/* SPDX-License-Identifier: MIT */
/* Giving memory back: the housekeeping a heap does now and then on its slow
 * path, the tidying of a heap whose thread exits, the sweep of abandoned
 * heaps, and brisk_collect(). */
#include "core.h"

static long housekeeping_interval_ms(void) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay < 0) return HOUSEKEEPING_NEVER_MS;
  return delay / 2 > 1 ? delay / 2 : 1;
}

/* Takes in a heap's remote and delayed frees and retires its empty pages. */
static void collect_pages(heap_t *heap, bool force) {
  remote_post_flush(heap); /* its thread's frees into other heaps */
  remote_collect(heap);
  page_collect_heap(heap, force);
}

void collect_heap(heap_t *heap, bool force) {
  uint64_t now = platform_clock_ms();
  brief_lock_acquire(&heap->pages_lock);
  collect_pages(heap, force);
  heap->next_housekeeping_ms = now + (uint64_t)housekeeping_interval_ms();
  brief_lock_release(&heap->pages_lock);
  segment_purge_expired(heap, now, force);
  /* With the background purger running, the arena is its to purge: its
   * walk of the bins is too long for every refill's housekeeping. */
  if (force || memory_purge_eagerly()) arena_purge_expired(heap, force);
  segment_cache_collect(now, force);
  huge_cache_collect(now, force);
  if (!force) collect_abandoned(false);
}

bool collect_idle_pages(heap_t *heap, uint64_t now) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay < 0 || !brief_lock_try(&heap->pages_lock)) return false;
  size_t released = 0;
  uint64_t idle_ms = delay > IDLE_HEAP_MS ? (uint64_t)delay : IDLE_HEAP_MS;
  if (atomic_load_relaxed(&heap->xstate) == HEAP_IN_USE &&
      now >= heap->next_housekeeping_ms + idle_ms && fence_purger_enter(heap)) {
    remote_post_flush(heap);
    remote_collect_idle(heap);
    released = page_release_idle(heap);
    fence_purger_leave(heap);
  }
  brief_lock_release(&heap->pages_lock);
  return released != 0;
}

/* An exiting thread tidies its heap (frees taken in, empty pages retired,
 * what has waited purged), so a pool whose threads end gives their memory
 * back as they go. Except while threads come and go (one took a heap within
 * the purge delay): then the heap keeps its warm pages, and their segments,
 * for the next thread to adopt without page faults, where retiring them
 * sent whole segments through the cache, too small for a wave of exiting
 * threads. If no thread comes after all, a sweep of abandoned heaps (the
 * purger's, or housekeeping's where there is none) tidies the heap. */
void collect_thread_exit(void *arg) {
  heap_t *heap = arg;
  if (heap == NULL || heap == &heap_empty) return;
  uint64_t now = platform_clock_ms();
  long delay = option_get(OPTION_PURGE_DELAY);
  bool churning = delay > 0 && heaps_last_acquire_ms() + (uint64_t)delay > now;
  /* Held until the heap is abandoned: the background purger looks only at
   * heaps in use, and must not find one that a claim has changed since. */
  brief_lock_acquire(&heap->pages_lock);
  collect_pages(heap, !churning);
  if (!churning) segment_purge_expired(heap, now, false);
  heap_abandon(heap);
  brief_lock_release(&heap->pages_lock);
}

/* A sweep that is not forced (housekeeping, the background purger, a
 * refill about to map a segment) gives up when another thread holds the
 * lock. While the purger runs, it also leaves alone a heap abandoned within
 * the purge delay, which the next thread is likely to adopt (see
 * collect_thread_exit). Without the purger these sweeps are all that bounds
 * what exited threads keep, so there they tidy young heaps too. */
void collect_abandoned(bool force) {
  if (force)
    heaps_lock();
  else if (!heaps_try_lock())
    return;
  uint64_t now = platform_clock_ms();
  long delay = option_get(OPTION_PURGE_DELAY);
  bool settle = !force && delay > 0 && !memory_purge_eagerly();
  uint64_t settle_ms = settle ? (uint64_t)delay : 0;
  for (heap_t *heap = heaps_abandoned_first(); heap != NULL; heap = heap->next_abandoned) {
    if (now < heap->abandoned_ms + settle_ms) continue; /* a thread may come for it */
    if (!heap_claim(heap)) continue;                    /* a thread is freeing into it: next time */
    collect_pages(heap, true);
    segment_purge_expired(heap, now, force);
    arena_purge_expired(heap, force);
    heap_unclaim(heap);
  }
  heaps_unlock();
  segment_cache_collect(now, force);
}

/* brisk_collect's visit to another live thread's heap: its batches of
 * remote frees go out, as the purger sends an idle thread's, so that the
 * pages they hold blocks of can be retired. */
static void send_batches_of(heap_t *heap, void *arg) {
  if (heap == arg || atomic_load_relaxed(&heap->xstate) != HEAP_IN_USE ||
      !brief_lock_try(&heap->pages_lock))
    return;
  if (atomic_load_relaxed(&heap->xstate) == HEAP_IN_USE && fence_purger_enter(heap)) {
    remote_post_flush(heap);
    fence_purger_leave(heap);
  }
  brief_lock_release(&heap->pages_lock);
}

static void collect_all_locked(heap_t *heap) {
  heaps_visit_unlocked(send_batches_of, heap);
  if (heap != &heap_empty) collect_heap(heap, true);
  collect_abandoned(true);
  uint64_t now = platform_clock_ms();
  segment_cache_collect(now, true);
  huge_cache_collect(now, true);
}

/* Held by brisk_collect() and by each round of the background purger, so
 * that brisk_collect() never returns while a round is releasing spans it took
 * out of a cache (the memory would still count as mapped): it waits for the
 * round, then releases what is left itself. Allocation never takes it. */
static platform_lock_t round_lock = PLATFORM_LOCK_INIT;

bool collect_round_try_begin(void) {
  return platform_lock_try(&round_lock);
}

void collect_round_end(void) {
  lock_release(&round_lock);
}

void collect_after_fork(void) {
  platform_lock_reset(&round_lock);
}

void collect_all(heap_t *heap) {
  lock_acquire(&round_lock);
  collect_all_locked(heap);
  lock_release(&round_lock);
}
