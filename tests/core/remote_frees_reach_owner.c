/* SPDX-License-Identifier: MIT */
/* Every block a thread frees into another thread's pages reaches that
 * page, even when the freeing thread then goes idle: otherwise each page
 * keeps a block or two counted in use and can never be retired or purged.
 * Such frees wait in the freeing thread's batches (src/core/free.c), which
 * the background purger sends on for an idle thread, and brisk_collect()
 * at once.
 *
 * The owner allocates blocks of one size; a second thread, which has a heap
 * of its own, frees them all, then waits, as a pool thread does between
 * tasks. In a first round those remote frees make the background purger
 * wanted (a program with little memory committed has none until then); the
 * test waits for it to run. In the second round, of blocks of another size,
 * the frees are batched:
 * each page's last few blocks wait in the freeing thread's batches (a page
 * holds a number of these blocks that is not a multiple of
 * REMOTE_BATCH_MAX), and only the purger can send them on once that thread
 * is idle. Every page of the second round must then come back free and be
 * purged, so that brisk commits no more than before that round: without
 * the purger's help each page keeps a few blocks in use, and the whole
 * round, 800 KiB, stays committed. A third round checks that
 * brisk_collect() sends the other thread's batches on at once. */
#include "alloc_api.h"
#include "test_time.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* The first round's blocks are of another size than the second's, so that
 * the second's pages hold nothing but the second round's blocks. */
enum { BLOCKS = 4096, WARM_SIZE = 48, SIZE = 200, WAIT_MS = 5000 };
/* What an idle heap keeps: the first page of each small class it used. */
#define IDLE_SLACK (192 * 1024)

static void *round_blocks[BLOCKS];
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int allocated_rounds, freed_rounds, done;

/* Frees each round's blocks once the owner has allocated them, then waits. */
static void *remote_freer(void *arg) {
  (void)arg;
  void *own = A_MALLOC(64); /* a heap of its own: its remote frees are batched */
  REQUIRE(own != NULL);
  for (int round = 1; round <= 3; round++) {
    pthread_mutex_lock(&mutex);
    while (allocated_rounds < round)
      pthread_cond_wait(&changed, &mutex);
    pthread_mutex_unlock(&mutex);
    for (int i = 0; i < BLOCKS; i++)
      if (round_blocks[i] != NULL) A_FREE(round_blocks[i]);
    if (round == 1) { /* a slow path of this thread's: the purger, wanted now, starts here */
      void *other = A_MALLOC(3000);
      REQUIRE(other != NULL);
      A_FREE(other);
    }
    pthread_mutex_lock(&mutex);
    freed_rounds = round;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mutex);
  }
  pthread_mutex_lock(&mutex); /* idle, alive, until the owner is done */
  while (!done)
    pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
  A_FREE(own);
  return NULL;
}

/* The owner frees every 64th block itself, so that none of its pages stays
 * parked as full: the background purger retires an idle heap's pages whose
 * blocks have all come back, but not parked ones (their owner takes those
 * back on its next refill). */
static void allocate_round(size_t size) {
  pthread_mutex_lock(&mutex);
  for (int i = 0; i < BLOCKS; i++)
    REQUIRE((round_blocks[i] = A_MALLOC(size)) != NULL);
  for (int i = 0; i < BLOCKS; i += 64) {
    A_FREE(round_blocks[i]);
    round_blocks[i] = NULL;
  }
  allocated_rounds++;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
}

static void wait_freed(int round) {
  pthread_mutex_lock(&mutex);
  while (freed_rounds < round)
    pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
}

int main(void) {
  api_init();
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, remote_freer, NULL) == 0);
  allocate_round(WARM_SIZE);
  wait_freed(1);
  long waited = 0;
  for (; !test_purger_running() && waited < WAIT_MS; waited += 10)
    sleep_ms(10);
  CHECK_MSG(test_purger_running(), "%d remote frees did not start the background purger", BLOCKS);

  A_COLLECT();
  size_t before = api_info().committed;
  allocate_round(SIZE);
  size_t full = api_info().committed;
  CHECK_MSG(full >= before + (size_t)BLOCKS * SIZE / 2,
            "the round's %d blocks of %d bytes committed only %zu KiB", BLOCKS, SIZE,
            (full - before) >> 10);
  wait_freed(2);
  /* Both threads idle now: the purger sends the freeing thread's batches
   * on after IDLE_HEAP_MS (half a second), in a round that may come a second
   * late, then retires and purges this thread's pages. */
  size_t after = full, idle_bound = before + IDLE_SLACK;
  long idle = 0;
  for (; idle < WAIT_MS && after > idle_bound; idle += 100) {
    sleep_ms(100);
    after = api_info().committed;
  }
  printf("remote frees: purger running after %ld ms; committed %zu KiB before the round, "
         "%zu KiB with its blocks live, %zu KiB %ld ms after another thread freed them and "
         "went idle\n",
         waited, before >> 10, full >> 10, after >> 10, idle);
  CHECK_MSG(after <= idle_bound,
            "%zu KiB of the round's pages stay committed after %d ms: blocks that an idle thread "
            "freed never came back (still in its batches?)",
            (after - before) >> 10, WAIT_MS);

  /* brisk_collect() sends every thread's batches on, without waiting. */
  allocate_round(SIZE);
  wait_freed(3);
  A_COLLECT();
  after = api_info().committed;
  printf("remote frees: %zu KiB committed right after brisk_collect()\n", after >> 10);
  CHECK_MSG(after <= before + 64 * 1024,
            "%zu KiB of the round's pages stay committed after brisk_collect(): blocks that "
            "another thread freed are still in its batches",
            (after - before) >> 10);

  pthread_mutex_lock(&mutex);
  done = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
  REQUIRE(pthread_join(thread, NULL) == 0);
  return test_finish();
}
