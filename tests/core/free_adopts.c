/* SPDX-License-Identifier: MIT */
/* A thread that frees before it ever allocates adopts the abandoned heap it
 * frees into: a thread that tears down what an exited thread built then
 * frees on its own fast path, instead of claiming that heap for each block.
 * Runs in its own process, so the only abandoned heap is the builder's. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "alloc_api.h"

#define BLOCKS 4000

static void *blocks[BLOCKS];
static uint64_t abandoned_during_teardown;
static int check_during_teardown = -1;

static uint64_t abandoned_heaps(void) {
  brisk_stats stats = {.struct_size = sizeof stats};
  REQUIRE(A_STATS_GET(&stats) == 0);
  return stats.heaps_abandoned;
}

static void *build(void *arg) {
  (void)arg;
  for (size_t i = 0; i < BLOCKS; i++) {
    blocks[i] = A_MALLOC(16 + i % 200);
    REQUIRE(blocks[i] != NULL);
    memset(blocks[i], (int)(i & 0xff), 16 + i % 200);
  }
  return NULL;
}

static void *tear_down(void *arg) {
  (void)arg;
  for (size_t i = 0; i < BLOCKS; i++) {
    unsigned char *p = blocks[i];
    CHECK(p[0] == (unsigned char)(i & 0xff) && p[15 + i % 200] == (unsigned char)(i & 0xff));
    A_FREE(p);
  }
  abandoned_during_teardown = abandoned_heaps();
  check_during_teardown = A_HEAP_CHECK(); /* the adopted heap, with every block back */
  return NULL;
}

static void run(void *(*body)(void *)) {
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, body, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
}

int main(void) {
  api_init();
  run(build);
  uint64_t abandoned = abandoned_heaps();
  CHECK_MSG(abandoned >= 1, "the builder's heap was not abandoned (%llu abandoned)",
            (unsigned long long)abandoned);
  run(tear_down);
  CHECK_MSG(abandoned_during_teardown == abandoned - 1,
            "%llu heaps abandoned while the freeing thread ran, %llu before: it did not adopt "
            "the builder's heap",
            (unsigned long long)abandoned_during_teardown, (unsigned long long)abandoned);
  CHECK(check_during_teardown == 0);
  CHECK(abandoned_heaps() == abandoned); /* given back when the freeing thread exits */
  return test_finish();
}
