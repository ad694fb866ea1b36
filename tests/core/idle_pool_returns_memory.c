/* SPDX-License-Identifier: MIT */
/* A pool whose threads hand blocks to each other and then wait gets its
 * memory back without calling the allocator again.
 *
 * The owner thread allocates about 48 MiB of small, medium and large blocks
 * (enough for the background purger to start); a second thread frees every
 * fourth block (remote frees, which wait in that thread's batches and on the
 * owner's pages' remote lists)
 * and the owner, after waiting long enough for the purger to visit its heap,
 * frees the rest, slowly, while the purger looks. Then both block on a
 * condition variable, as pool threads waiting for work do, and nothing
 * calls the allocator. Every
 * page the owner used then has all its blocks free, but those freed remotely
 * are still counted in use until the owner takes its remote lists in, which
 * an idle owner never does: the background purger must retire such pages
 * itself, or the process keeps its whole 48 MiB committed and resident.
 *
 * The main thread watches brisk's committed memory, and the resident set,
 * for up to 5 seconds (the purger's rounds slow to one a second when idle).
 * What may stay is the first page of the small class the owner used (its
 * fast path allocates from it without a lock) and a little of the main
 * thread's: the bound is 8 MiB. The resident set is
 * checked too, except under ThreadSanitizer or AddressSanitizer, whose
 * shadow memory for what was touched stays resident. */
#include "alloc_api.h"
#include "test_time.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define KIB ((size_t)1024)
#define MIB (KIB * KIB)

enum { SMALL = 256, MEDIUM = 24 * 1024, LARGE = 200 * 1024 };
enum { SMALL_COUNT = 65536, MEDIUM_COUNT = 640, LARGE_COUNT = 96 }; /* 16 + 15 + 18.75 MiB */
#define BLOCK_COUNT (SMALL_COUNT + MEDIUM_COUNT + LARGE_COUNT)
#define IDLE_BOUND (8 * MIB)
#define WAIT_MS 5000

static void *blocks[BLOCK_COUNT];

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: allocated, 2: the remote frees done, 3: all freed, 4: done */

static void stage_set(int value) {
  pthread_mutex_lock(&mutex);
  stage = value;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
}

static void stage_wait(int value) {
  pthread_mutex_lock(&mutex);
  while (stage < value)
    pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
}

static size_t block_size(size_t i) {
  return i < SMALL_COUNT ? SMALL : i < SMALL_COUNT + MEDIUM_COUNT ? MEDIUM : LARGE;
}

static void *owner(void *arg) {
  (void)arg;
  for (size_t i = 0; i < BLOCK_COUNT; i++) {
    size_t size = block_size(i);
    REQUIRE((blocks[i] = A_MALLOC(size)) != NULL);
    memset(blocks[i], (int)(i & 0xff), size);
  }
  stage_set(1);
  stage_wait(2);
  /* Idle long enough for the purger to visit this heap, then free slowly,
   * so that its visits meet frees under way: pages whose last blocks come
   * back while it looks, some of them the owner's to retire. */
  sleep_ms(700);
  for (size_t i = 0; i < BLOCK_COUNT; i++) {
    if (i % 4 != 0) A_FREE(blocks[i]);
    if (i % 1024 == 0) sleep_ms(1);
  }
  stage_set(3);
  stage_wait(4); /* idle, alive */
  return NULL;
}

static void *remote_freer(void *arg) {
  (void)arg;
  /* A thread with a heap of its own batches its remote frees (see free.c):
   * the batches of a thread gone idle must be sent on all the same. */
  void *own = A_MALLOC(64);
  REQUIRE(own != NULL);
  stage_wait(1);
  for (size_t i = 0; i < BLOCK_COUNT; i += 4) {
    unsigned char *p = blocks[i];
    CHECK_MSG(p[0] == (unsigned char)(i & 0xff) && p[block_size(i) - 1] == p[0],
              "block %zu changed while live", i);
    A_FREE(p);
  }
  stage_set(2);
  stage_wait(4); /* idle, alive */
  A_FREE(own);
  return NULL;
}

static size_t committed(size_t *peak) {
  brisk_memory_info info = {.struct_size = sizeof info};
  REQUIRE(A_INFO_GET(&info) == 0);
  if (peak != NULL) *peak = info.committed_peak;
  return info.committed;
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SHADOW_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif

int main(void) {
  api_init();
  REQUIRE(A_MALLOC(16) != NULL); /* the main thread allocates too: a second thread for the purger */
  pthread_t threads[2];
  REQUIRE(pthread_create(&threads[0], NULL, owner, NULL) == 0);
  REQUIRE(pthread_create(&threads[1], NULL, remote_freer, NULL) == 0);
  stage_wait(3);
  size_t peak_committed, freed_committed = committed(&peak_committed), freed_rss = test_rss_bytes();
  size_t now_committed = freed_committed, now_rss = freed_rss;
  long waited = 0;
  for (; waited < WAIT_MS; waited += 50) {
    now_committed = committed(NULL);
    now_rss = test_rss_bytes();
    if (now_committed <= IDLE_BOUND && now_rss + 32 * MIB <= freed_rss) break;
    sleep_ms(50);
  }
  printf("idle pool: committed %zu KiB, resident %zu KiB once all was freed; after %ld ms idle "
         "committed %zu KiB, resident %zu KiB\n",
         freed_committed >> 10, freed_rss >> 10, waited, now_committed >> 10, now_rss >> 10);
  CHECK_MSG(peak_committed >= 40 * MIB,
            "only %zu KiB committed at the peak: the blocks are "
            "meant to take about 48 MiB",
            peak_committed >> 10);
  CHECK_MSG(now_committed <= IDLE_BOUND,
            "%zu KiB still committed after %d ms with every block free and every thread idle",
            now_committed >> 10, WAIT_MS);
#ifndef SHADOW_MEMORY
  CHECK_MSG(now_rss + 32 * MIB <= freed_rss,
            "resident set %zu KiB after %d ms idle, %zu KiB once all was freed", now_rss >> 10,
            WAIT_MS, freed_rss >> 10);
#endif
  stage_set(4);
  for (int t = 0; t < 2; t++)
    REQUIRE(pthread_join(threads[t], NULL) == 0);
  return test_finish();
}
