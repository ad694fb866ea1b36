/* SPDX-License-Identifier: MIT */
/* With the background purger running, a segment that comes back free waits
 * resident in the cache, however many others came back with it, for 100 ms
 * (longer than the purge delay, 10 ms by default), and is purged after
 * that. A pool which frees a hundred megabytes at the end of a burst, even
 * one whose single thread frees everything between bursts 50 ms apart,
 * thus finds them resident at the next burst instead of faulting most of
 * its memory in again after every pause.
 *
 * A thread fills SEGMENTS segments with 1 KiB blocks, writing every one,
 * waits for the purger to have started (a thread of brisk's own, named
 * brisk-purge), and frees them all. Then, as the first argument says:
 *   keep    (run with BRISK_PURGE_DELAY=60s, see CMakeLists.txt: nothing may
 *           expire while the test looks) every segment must still be
 *           resident (mincore); two may be short of it (the heap's warm page,
 *           the segment with the blocks the wait allocated);
 *   expire  (the default purge delay) the segments are purged, but none of
 *           those in the cache sooner than 100 ms after the frees began, and
 *           all within 5 s. */
#include "alloc_api.h"
#include "test_time.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define KIB ((size_t)1024)
#define SEGMENT (4096 * KIB)
#define SEGMENTS 24
#define BLOCK KIB
#define MAX_BLOCKS (SEGMENTS * (SEGMENT / BLOCK))

static void *blocks[MAX_BLOCKS];
static uintptr_t segments[SEGMENTS + 1];
static size_t block_count, segment_count;

static bool expire; /* the mode: see above */

/* Resident share of a segment, in percent. */
static size_t resident_percent(uintptr_t segment) {
  return test_resident_pages((void *)segment, SEGMENT) * test_page_size() * 100 / SEGMENT;
}

static void *pool_thread(void *arg) {
  (void)arg;
  while (block_count < MAX_BLOCKS) {
    void *p = A_MALLOC(BLOCK);
    REQUIRE(p != NULL);
    memset(p, 0x5A, BLOCK);
    uintptr_t segment = (uintptr_t)p & ~(uintptr_t)(SEGMENT - 1);
    bool seen = false;
    for (size_t s = 0; s < segment_count; s++)
      seen |= segments[s] == segment;
    if (!seen) {
      if (segment_count == SEGMENTS) { /* all filled: this one is not counted */
        A_FREE(p);
        break;
      }
      segments[segment_count++] = segment;
    }
    blocks[block_count++] = p;
  }
  /* The purger starts inside an allocation once 16 MiB are committed. */
  int waited_ms = 0;
  while (!test_purger_running() && waited_ms < 5000) {
    A_FREE(A_MALLOC(BLOCK));
    sleep_ms(10);
    waited_ms += 10;
  }
  REQUIRE(segment_count == SEGMENTS); /* else the test shows nothing */
  REQUIRE(test_purger_running());
  double freed_at = now_ms();
  for (size_t i = 0; i < block_count; i++)
    A_FREE(blocks[i]);

  if (!expire) {
    size_t resident = 0;
    for (size_t s = 0; s < segment_count; s++)
      resident += resident_percent(segments[s]) >= 90;
    CHECK_MSG(resident >= SEGMENTS - 2, "%zu of %d freed segments still resident", resident,
              SEGMENTS);
    return NULL;
  }
  /* Every 2 ms: when the first cached segment went (the third segment: the
   * two that stay with the heap keep its free pages only for the purge
   * delay), and when all but two had. */
  double first_purged = -1, all_purged = -1;
  while (all_purged < 0 && now_ms() - freed_at < 5000) {
    size_t purged = 0;
    for (size_t s = 0; s < segment_count; s++)
      purged += resident_percent(segments[s]) < 10;
    double at = now_ms() - freed_at;
    if (purged > 2 && first_purged < 0) first_purged = at;
    if (purged >= SEGMENTS - 2) all_purged = at;
    sleep_ms(2);
  }
  /* brisk reads a coarse clock (CLOCK_MONOTONIC_COARSE: a tick of up to
   * 10 ms), so its 100 ms may end up to a tick early by this one. */
  CHECK_MSG(first_purged >= 90, "a cached segment was purged %.0f ms after the frees began",
            first_purged);
  CHECK_MSG(all_purged >= 0, "freed segments still resident 5 s after the frees");
  printf("the first cached segment purged after %.0f ms, all but two after %.0f ms\n", first_purged,
         all_purged);
  return NULL;
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2 && (strcmp(argv[1], "keep") == 0 || strcmp(argv[1], "expire") == 0));
  expire = strcmp(argv[1], "expire") == 0;
  api_init();
  void *first = A_MALLOC(16); /* the main thread allocates too, as the purger waits for */
  REQUIRE(first != NULL);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, pool_thread, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  A_FREE(first);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
