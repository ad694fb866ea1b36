/* SPDX-License-Identifier: MIT */
/* Thread heaps. A thread starts on heap_empty, whose direct[] points at a page
 * with nothing free, so its first malloc takes the slow path, which gives it
 * a heap: an abandoned one if any (adopting its pages, live blocks and all),
 * else a new one. When the thread exits, its heap is tidied (or not, while
 * threads come and go: collect.c) and abandoned here. A thread that frees
 * before it ever allocates adopts the abandoned heap it frees into. Heaps
 * are never unmapped, so a late remote free can always reach the delayed
 * list of the heap it names. */
#include "core.h"

#include <string.h>

heap_t heap_empty = {.direct = {[0 ... DIRECT_SLOTS - 1] = &page_empty}};
#ifndef PLATFORM_TLS_WORDS
_Thread_local thread_locals tl_thread
    __attribute__((tls_model("initial-exec"))) = {.heap = &heap_empty};
#endif

static platform_lock_t heaps_mutex = PLATFORM_LOCK_INIT;
static heap_t *abandoned_first;
static heap_t *created_first;
static uint64_t heaps_created, heaps_abandoned;
static _Atomic(unsigned) xthreads_seen;    /* threads that allocated, since start or fork */
static _Atomic(uint64_t) xlast_acquire_ms; /* when a thread last took a heap */
static _Atomic(bool) xthread_churn;        /* a thread took up an exited thread's heap */
/* Heaps are carved from chunks of table memory. */
static uint8_t *chunk_next, *chunk_end;
#define HEAP_CHUNK (256 * KiB)

void heaps_lock(void) {
  lock_acquire(&heaps_mutex);
}
void heaps_unlock(void) {
  lock_release(&heaps_mutex);
}
bool heaps_try_lock(void) {
  return platform_lock_try(&heaps_mutex);
}

/* The lists below are changed by single publishing stores, so a child that
 * inherits them from a thread frozen mid-change can walk them. */
unsigned heaps_threads_seen(void) {
  return atomic_load_relaxed(&xthreads_seen);
}

void heaps_after_fork(void) {
  platform_lock_reset(&heaps_mutex);
  atomic_store_relaxed(&xthreads_seen, 1); /* the child's one thread */
  atomic_store_relaxed(&xthread_churn, false);
  /* The background purger may have been purging this thread's heap. */
  if (heap_current() != &heap_empty) {
    platform_lock_reset(&heap_current()->segments_lock);
    atomic_store_relaxed(&heap_current()->pages_lock, 0);
    atomic_store_relaxed(&heap_current()->xpurger_in, 0);
  }
}

static heap_t *heap_new_locked(void) {
  size_t size = align_up(sizeof(heap_t), 64);
  if (chunk_next == NULL || chunk_next + size > chunk_end) {
    uint8_t *chunk = platform_table_alloc(HEAP_CHUNK);
    if (chunk == NULL) return NULL;
    chunk_next = chunk;
    chunk_end = chunk + HEAP_CHUNK;
  }
  heap_t *heap = (heap_t *)chunk_next;
  chunk_next += size;
  memset(heap, 0, sizeof *heap);
  platform_lock_reset(&heap->segments_lock);
  for (unsigned slot = 0; slot < DIRECT_SLOTS; slot++)
    heap->direct[slot] = &page_empty;
  heap->next_created = created_first;
  store_publish(&created_first, heap);
  heaps_created++;
  return heap;
}

bool heap_claim(heap_t *heap) {
  uint8_t expected = HEAP_ABANDONED;
  return atomic_load_relaxed(&heap->xstate) == HEAP_ABANDONED &&
         atomic_cas_strong_acquire(&heap->xstate, &expected, HEAP_CLAIMED);
}

void heap_unclaim(heap_t *heap) {
  atomic_store_release(&heap->xstate, HEAP_ABANDONED);
}

/* Adopts the first abandoned heap nobody has claimed for the moment, or,
 * when wanted is not NULL, that heap only. The segment cache is told:
 * segments that exiting threads empty are mostly surplus while threads
 * come and go. */
static heap_t *adopt_locked(heap_t *wanted) {
  for (heap_t **link = &abandoned_first; *link != NULL; link = &(*link)->next_abandoned) {
    heap_t *heap = *link;
    if ((wanted != NULL && heap != wanted) || !heap_claim(heap)) continue;
    store_publish(link, heap->next_abandoned);
    heaps_abandoned--;
    segment_cache_note_adoption(platform_clock_ms());
    return heap;
  }
  return NULL;
}

/* The calling thread takes up heap (just unlinked from the abandoned list). */
static heap_t *take_up(heap_t *heap) {
  heap->next_abandoned = NULL;
  atomic_store_relaxed(&heap->xstate, HEAP_IN_USE);
  heap->os_thread = platform_thread_id();
  atomic_add_relaxed(&xthreads_seen, 1);
  atomic_store_relaxed(&xlast_acquire_ms, platform_clock_ms());
  /* The heap first: arming the thread-exit callback may itself allocate. */
  heap_set_current(heap);
  platform_thread_exit_arm(heap);
  return heap;
}

heap_t *heap_acquire(void) {
  heaps_lock();
  heap_t *heap = adopt_locked(NULL);
  bool adopted = heap != NULL;
  if (!adopted) heap = heap_new_locked();
  heaps_unlock();
  if (heap == NULL) return NULL;
  /* Threads come and go: exiting threads leave their pages for the next
   * ones (collect_thread_exit), and the background purger gives back what
   * no thread comes for, so the new thread asks for it at its next refill,
   * however little is committed. */
  if (adopted && !atomic_load_relaxed(&xthread_churn)) {
    atomic_store_relaxed(&xthread_churn, true);
    heap->purger_check_due = true;
  }
  return take_up(heap);
}

bool heap_adopt(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xstate) != HEAP_ABANDONED) return false;
  heaps_lock();
  heap_t *adopted = adopt_locked(heap);
  heaps_unlock();
  if (adopted != NULL) take_up(adopted);
  return adopted != NULL;
}

bool heaps_thread_churn(void) {
  return atomic_load_relaxed(&xthread_churn);
}

uint64_t heaps_last_acquire_ms(void) {
  return atomic_load_relaxed(&xlast_acquire_ms);
}

void heap_abandon(heap_t *heap) {
  if (heap_current() == heap) heap_set_current(&heap_empty);
  heap->abandoned_ms = platform_clock_ms();
  heaps_lock();
  heap->next_abandoned = abandoned_first;
  store_publish(&abandoned_first, heap);
  heaps_abandoned++;
  heaps_unlock();
  heap_unclaim(heap); /* from now on others may claim it */
}

heap_t *heaps_abandoned_first(void) {
  return abandoned_first;
}

/* The list only grows, by one publishing store of a heap made whole before
 * it, and heaps are never unmapped, so it can be walked without the lock. */
void heaps_visit_unlocked(void (*visit)(heap_t *heap, void *arg), void *arg) {
  for (heap_t *heap = shared_load_acquire(&created_first); heap != NULL; heap = heap->next_created)
    visit(heap, arg);
}

void heaps_visit(void (*visit)(heap_t *heap, void *arg), void *arg) {
  heaps_lock();
  heaps_visit_unlocked(visit, arg);
  heaps_unlock();
}

heap_t *const *heaps_list_address(void) {
  return &created_first;
}

void heaps_count(uint64_t *created, uint64_t *abandoned) {
  heaps_lock();
  *created = heaps_created;
  *abandoned = heaps_abandoned;
  heaps_unlock();
}
