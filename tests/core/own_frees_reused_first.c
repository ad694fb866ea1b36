/* SPDX-License-Identifier: MIT */
/* A thread's own frees come back at its next allocation of their class
 * without a refill (the free pushes the block onto the list malloc pops),
 * so a loop that allocates and frees a few blocks stays on the fast path;
 * and the housekeeping on the refill path never retires the page whose
 * blocks the refill is about to hand out.
 *
 * Blocks that come back on the slow paths (other threads' frees, taken in)
 * wait on a second list, which the allocation takes when a page's free list
 * runs out. Housekeeping runs on that path too, and it may retire the very
 * page (its last blocks in use came back from another thread, or it was a
 * warm page with nothing in use), so it must run before the blocks are
 * taken, never after.
 *
 * Part one checks the reuse itself. Part two is the hazard: one thread
 * allocates in five sizes, hands every fourth block to a second thread,
 * which frees it, and frees the rest itself; between bursts it pauses so
 * that housekeeping comes due. Run with BRISK_PURGE_DELAY=1 (housekeeping
 * every millisecond, see CMakeLists.txt). A block handed out from a retired
 * page shows as a free that brisk reports as invalid or double (the process
 * aborts), as a block overwritten while live, or as a heap check that
 * fails. */
#include "alloc_api.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

enum { RING = 256, ROUNDS = 150, PER_ROUND = 2000, KEPT = PER_ROUND - PER_ROUND / 4 };

static const size_t sizes[] = {48, 200, 700, 3000, 20000};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

/* A bounded ring from the allocating thread to the freeing one; NULL ends it. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  void *slots[RING];
  unsigned head, tail;
} ring = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};

static void ring_put(void *p) {
  pthread_mutex_lock(&ring.lock);
  while (ring.tail - ring.head == RING)
    pthread_cond_wait(&ring.changed, &ring.lock);
  ring.slots[ring.tail++ % RING] = p;
  pthread_cond_broadcast(&ring.changed);
  pthread_mutex_unlock(&ring.lock);
}

static void *ring_get(void) {
  pthread_mutex_lock(&ring.lock);
  while (ring.tail == ring.head)
    pthread_cond_wait(&ring.changed, &ring.lock);
  void *p = ring.slots[ring.head++ % RING];
  pthread_cond_broadcast(&ring.changed);
  pthread_mutex_unlock(&ring.lock);
  return p;
}

static _Atomic(unsigned long long) remote_freed;

static void *remote_freer(void *arg) {
  (void)arg;
  for (void *p; (p = ring_get()) != NULL;) {
    A_FREE(p);
    remote_freed++;
  }
  return NULL;
}

static void pause_ms(long ms) {
  struct timespec pause = {0, ms * 1000000L};
  nanosleep(&pause, NULL);
}

int main(void) {
  api_init();

  /* A freed block is the next one handed out in its class, among others
   * live, before any block carved ahead or carved anew. */
  for (size_t i = 0; i < SIZE_COUNT; i++) {
    void *before = A_MALLOC(sizes[i]), *p = A_MALLOC(sizes[i]), *after = A_MALLOC(sizes[i]);
    REQUIRE(before != NULL && p != NULL && after != NULL);
    A_FREE(p);
    void *again = A_MALLOC(sizes[i]);
    CHECK_MSG(again == p, "%zu bytes: %p, freed, came back as %p", sizes[i], p, again);
    A_FREE(again);
    A_FREE(before);
    A_FREE(after);
  }

  /* Bursts: each allocates blocks of every size, hands every fourth to the
   * other thread and frees the rest itself; once the other thread has freed
   * its share too, a pause lets housekeeping come due. The next burst's
   * first allocation in each class then finds its page's free list empty,
   * the thread's own frees on it and the other thread's waiting. */
  pthread_t freer;
  REQUIRE(pthread_create(&freer, NULL, remote_freer, NULL) == 0);
  static unsigned char *kept[KEPT];
  static size_t kept_size[KEPT];
  unsigned long long handed = 0;
  for (int round = 0; round < ROUNDS; round++) {
    unsigned char fill = (unsigned char)(round + 1);
    size_t n_kept = 0;
    for (int k = 0; k < PER_ROUND; k++) {
      size_t size = sizes[k % SIZE_COUNT];
      unsigned char *p = A_MALLOC(size);
      REQUIRE(p != NULL);
      memset(p, fill, size);
      if (k % 4 == 0) {
        ring_put(p);
        handed++;
      } else {
        kept_size[n_kept] = size;
        kept[n_kept++] = p;
      }
    }
    for (size_t k = 0; k < n_kept; k++) {
      CHECK(kept[k][0] == fill && kept[k][kept_size[k] - 1] == fill);
      A_FREE(kept[k]);
    }
    while (remote_freed != handed)
      pause_ms(1);
    pause_ms(2); /* housekeeping comes due */
  }
  ring_put(NULL);
  REQUIRE(pthread_join(freer, NULL) == 0);
  CHECK(handed == (unsigned long long)ROUNDS * (PER_ROUND / 4));
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
