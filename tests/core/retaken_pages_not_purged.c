/* SPDX-License-Identifier: MIT */
/* A thread that allocates again what it freed a while ago takes its free
 * pages back resident: housekeeping does not purge them under it, and
 * purges them once the thread has stopped taking them for the purge delay.
 *
 * A heap's free pages are purged once they have waited the purge delay
 * (10 ms), by the thread's own housekeeping on its slow path; that
 * housekeeping runs in the middle of a refill. A program that empties a
 * table and fills it again (a cache between rounds) would otherwise have
 * the refill purge the free pages it is about to take and fault them in
 * again a moment later. So while a heap is taking free resident pages of a
 * kind, no page of that kind is purged.
 *
 * One thread (so no background purger: what purges is housekeeping alone):
 * 3 MiB of 256-byte blocks, freed (less than the 4 MiB a heap keeps free
 * without a purger), a pause of 30 ms, the same blocks again: no purge may
 * happen while they are allocated, and nothing is committed afresh. Then
 * they are freed again, and after another pause the thread goes on building
 * a list of 48-byte blocks for 50 ms (carving as it grows, so its calls keep
 * reaching the slow path, none of them taking a free page): the 256-byte
 * pages, no longer drawn on, are purged by then. A block freed and allocated
 * again would not do: it comes back on the fast path, which does no
 * housekeeping. */
#include "alloc_api.h"
#include "test_time.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

enum { COUNT = 12288, SIZE = 256, OTHER_SIZE = 48 };
enum { GROWTH_PER_MS = 96, GROWTH_MAX = 96 * 200 }; /* at most 900 KiB of 48-byte blocks */

static void *blocks[COUNT];
static void *grown[GROWTH_MAX];

static void allocate_all(void) {
  for (int i = 0; i < COUNT; i++) {
    REQUIRE((blocks[i] = A_MALLOC(SIZE)) != NULL);
    memset(blocks[i], 0x6b, SIZE);
  }
}

static void free_all(void) {
  for (int i = 0; i < COUNT; i++)
    A_FREE(blocks[i]);
}

int main(void) {
  api_init();
  size_t before = api_info().committed;
  allocate_all();
  size_t full = api_info().committed;
  free_all();
  sleep_ms(30);
  unsigned long long purges_before = api_stats().os_purges;
  allocate_all();
  unsigned long long refill_purges = api_stats().os_purges - purges_before;
  size_t again = api_info().committed;
  printf("retaken pages: %zu KiB committed for the blocks, %zu KiB when allocated again after a "
         "30 ms pause, %llu purges meanwhile\n",
         (full - before) >> 10, (again - before) >> 10, refill_purges);
  CHECK_MSG(refill_purges == 0,
            "%llu purges while the thread took its free pages back: housekeeping purged pages "
            "it was about to take",
            refill_purges);
  CHECK_MSG(again <= full, "allocated again, the blocks committed %zu KiB more than at first",
            (again - full) >> 10);

  /* No longer drawn on, the free pages are purged after all. */
  free_all();
  sleep_ms(30);
  size_t freed = api_info().committed;
  purges_before = api_stats().os_purges;
  long calls = 0;
  for (double start = now_ms(); now_ms() - start < 50 && calls + GROWTH_PER_MS <= GROWTH_MAX;) {
    for (int k = 0; k < GROWTH_PER_MS; k++, calls++) {
      REQUIRE((grown[calls] = A_MALLOC(OTHER_SIZE)) != NULL);
      memset(grown[calls], 0x2d, OTHER_SIZE);
    }
    sleep_ms(1);
  }
  unsigned long long later_purges = api_stats().os_purges - purges_before;
  size_t after = api_info().committed;
  for (long k = 0; k < calls; k++)
    A_FREE(grown[k]);
  printf("retaken pages: %zu KiB committed with the blocks freed; %llu purges while %ld blocks of "
         "%d bytes were allocated over 50 ms, %zu KiB committed then\n",
         (freed - before) >> 10, later_purges, calls, OTHER_SIZE, (after - before) >> 10);
  CHECK_MSG(later_purges > 0 && after + (full - before) / 2 <= freed,
            "the free %d-byte pages stayed committed while the thread allocated other blocks "
            "for 50 ms (%llu purges; %zu KiB committed, %zu KiB before)",
            SIZE, later_purges, (after - before) >> 10, (freed - before) >> 10);
  return test_finish();
}
