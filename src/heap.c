/* Thread heaps. A thread starts on heap_empty, whose direct[] points at a page
 * with nothing free, so its first malloc takes the slow path, which gives it
 * a heap: an abandoned one if any (adopting its pages, live blocks and
 * all), else a new one. At thread exit the heap is tidied and abandoned.
 * Heaps are never unmapped, so a late remote free can always reach the
 * delayed list of the heap it names. */
#include "internal.h"

#include <string.h>

heap_t heap_empty = {.direct = {[0 ... DIRECT_SLOTS - 1] = &page_empty}};
_Thread_local heap_t *tl_heap __attribute__((tls_model("initial-exec"))) = &heap_empty;

static pthread_mutex_t heaps_mutex = PTHREAD_MUTEX_INITIALIZER;
static heap_t *abandoned_first;
static heap_t *created_first;
static uint64_t heaps_created, heaps_abandoned;
/* Heaps are carved from chunks of reserved memory. */
static uint8_t *chunk_next, *chunk_end;
#define HEAP_CHUNK (256 * KiB)

void heaps_lock(void) {
  mutex_lock_profiled(&heaps_mutex);
}
void heaps_unlock(void) {
  pthread_mutex_unlock(&heaps_mutex);
}

static heap_t *heap_new_locked(void) {
  size_t size = align_up(sizeof(heap_t), 64);
  if (chunk_next == NULL || chunk_next + size > chunk_end) {
    uint8_t *chunk = os_reserve(HEAP_CHUNK);
    if (chunk == NULL) return NULL;
    chunk_next = chunk;
    chunk_end = chunk + HEAP_CHUNK;
  }
  heap_t *heap = (heap_t *)chunk_next;
  chunk_next += size;
  memset(heap, 0, sizeof *heap);
  for (unsigned slot = 0; slot < DIRECT_SLOTS; slot++)
    heap->direct[slot] = &page_empty;
  heap->next_created = created_first;
  created_first = heap;
  heaps_created++;
  return heap;
}

static long housekeeping_interval_ms(void) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay < 0) return 1000;
  return delay / 2 > 1 ? delay / 2 : 1;
}

heap_t *heap_for_this_thread(void) {
  heap_t *heap = tl_heap;
  if (likely(heap != &heap_empty)) return heap;
  process_init();
  heaps_lock();
  heap = abandoned_first;
  if (heap != NULL) {
    abandoned_first = heap->next_abandoned;
    heaps_abandoned--;
  } else {
    heap = heap_new_locked();
  }
  heaps_unlock();
  if (heap == NULL) return NULL;
  atomic_store_relaxed(&heap->xin_use, true);
  heap->next_abandoned = NULL;
  /* tl_heap first: pthread_setspecific may itself allocate. */
  tl_heap = heap;
  pthread_setspecific(thread_exit_key, heap);
  return heap;
}

void heap_push_delayed(heap_t *heap, block_t *block) {
  block_t *seen = atomic_load_relaxed(&heap->xdelayed);
  do {
    block->next = seen;
  } while (!atomic_cas_weak_release(&heap->xdelayed, &seen, block));
}

void heap_housekeeping(heap_t *heap, bool force) {
  uint64_t now = os_clock_ms();
  page_collect_heap(heap, now, force);
  segment_purge_expired(heap, now, force);
  segment_cache_collect(now, force);
  huge_cache_collect(now, force);
  if (!force) heaps_collect_abandoned(false);
  heap->next_housekeeping_ms = now + (uint64_t)housekeeping_interval_ms();
}

void heap_thread_exit(void *arg) {
  heap_t *heap = arg;
  if (heap == NULL || heap == &heap_empty) return;
  uint64_t now = os_clock_ms();
  page_collect_heap(heap, now, true); /* hand empty pages back to their segments */
  segment_purge_expired(heap, now, false);
  if (tl_heap == heap) tl_heap = &heap_empty;
  heaps_lock();
  atomic_store_relaxed(&heap->xin_use, false);
  heap->next_abandoned = abandoned_first;
  abandoned_first = heap;
  heaps_abandoned++;
  heaps_unlock();
}

/* Tidy the heaps of exited threads: take in their remote frees, retire their
 * empty pages, purge what has waited long enough. A background sweep (force
 * false) gives up when another thread holds the lock. */
void heaps_collect_abandoned(bool force) {
  if (force)
    heaps_lock();
  else if (pthread_mutex_trylock(&heaps_mutex) != 0)
    return;
  uint64_t now = os_clock_ms();
  for (heap_t *heap = abandoned_first; heap != NULL; heap = heap->next_abandoned) {
    page_collect_heap(heap, now, true);
    segment_purge_expired(heap, now, force);
  }
  heaps_unlock();
  segment_cache_collect(now, force);
}

/* Frees into a heap whose thread has exited stay there until someone tidies
 * it; a thread that keeps freeing into such heaps does so itself, now and
 * then, so their memory goes back to the process instead of waiting for a
 * new thread to adopt them. */
#define ABANDONED_FREES_PER_SWEEP 256
static _Thread_local uint32_t tl_abandoned_frees;

void heap_note_remote_free(heap_t *owner) {
  if (atomic_load_relaxed(&owner->xin_use)) return;
  if (++tl_abandoned_frees < ABANDONED_FREES_PER_SWEEP) return;
  tl_abandoned_frees = 0;
  heaps_collect_abandoned(false);
}

void heaps_visit(void (*visit)(heap_t *heap, void *arg), void *arg) {
  heaps_lock();
  for (heap_t *heap = created_first; heap != NULL; heap = heap->next_created)
    visit(heap, arg);
  heaps_unlock();
}

void heaps_count(uint64_t *created, uint64_t *abandoned) {
  heaps_lock();
  *created = heaps_created;
  *abandoned = heaps_abandoned;
  heaps_unlock();
}
