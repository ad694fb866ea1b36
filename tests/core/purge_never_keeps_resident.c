/* SPDX-License-Identifier: MIT */
/* BRISK_PURGE_DELAY=never keeps free memory resident, in a program with one
 * thread too. Such a program runs no background purger; it purges eagerly
 * instead, once a few megabytes are free, and those purges must keep to
 * `never` as well: a pool thread that frees a hundred megabytes between
 * bursts, run with `never` to keep them, would otherwise fault them all in
 * again at every burst (more than twice as slow as with the default).
 *
 * One thread fills eight segments' worth of 1 KiB blocks, and 32 MiB of
 * 100 KiB blocks (which come from the heap's arena), writing every byte.
 * It frees them all but one block per 2 MiB of the small ones and one in
 * eight of the large ones, so that pages retire and chunks go free while no
 * segment empties (an empty segment goes to a cache of bounded size, whose
 * overflow is unmapped). Then nearly every OS page of what it freed must still
 * be resident (mincore).
 *
 * Run with BRISK_PURGE_DELAY=never (see CMakeLists.txt), in its own process. */
#include "alloc_api.h"

#include <stdbool.h>
#include <stdint.h>

#define KIB ((size_t)1024)
#define MIB (KIB * KIB)

enum { SMALL = 1024, LARGE = 100 * 1024, LARGE_KEEP_EVERY = 8 };
#define SMALL_BYTES (32 * MIB)
#define LARGE_BYTES (32 * MIB)
#define SMALL_COUNT (SMALL_BYTES / SMALL)
#define LARGE_COUNT (LARGE_BYTES / LARGE)
#define SMALL_KEEP_EVERY (2 * MIB / SMALL) /* two per segment */

static uint8_t *small[SMALL_COUNT];
static uint8_t *large[LARGE_COUNT];

/* The OS pages of one run of adjacent freed blocks [from, to), whole ones
 * only: how many, and how many are resident. */
static void count_run(uintptr_t from, uintptr_t to, size_t *pages, size_t *resident) {
  size_t page_size = test_page_size();
  from = (from + page_size - 1) & ~(uintptr_t)(page_size - 1);
  to &= ~(uintptr_t)(page_size - 1);
  if (to <= from) return;
  *pages += (to - from) / page_size;
  *resident += test_resident_pages((void *)from, to - from);
}

/* Of the blocks not kept, the OS pages that lie wholly in runs of adjacent
 * ones: how many, and how many are resident. */
static void count_freed(uint8_t **blocks, size_t count, size_t size, size_t keep_every,
                        size_t *pages, size_t *resident) {
  *pages = *resident = 0;
  uintptr_t run_from = 0, run_to = 0;
  for (size_t i = 0; i < count; i++) {
    uintptr_t block = (uintptr_t)blocks[i];
    bool freed = i % keep_every != 0;
    if (run_to != 0 && (!freed || block != run_to)) { /* the run ends */
      count_run(run_from, run_to, pages, resident);
      run_to = 0;
    }
    if (!freed) continue;
    if (run_to == 0) run_from = block;
    run_to = block + size;
  }
  if (run_to != 0) count_run(run_from, run_to, pages, resident);
}

static void fill(uint8_t **blocks, size_t count, size_t size) {
  for (size_t i = 0; i < count; i++) {
    blocks[i] = A_MALLOC(size);
    REQUIRE(blocks[i] != NULL);
    memset(blocks[i], (int)(i & 0xFF) | 1, size);
  }
}

static void free_all_but_kept(uint8_t **blocks, size_t count, size_t keep_every) {
  for (size_t i = 0; i < count; i++)
    if (i % keep_every != 0) A_FREE(blocks[i]);
}

static void check_kept(uint8_t **blocks, size_t count, size_t size, size_t keep_every) {
  for (size_t i = 0; i < count; i += keep_every) {
    size_t wrong = 0;
    for (size_t k = 0; k < size; k++)
      wrong += blocks[i][k] != ((uint8_t)(i & 0xFF) | 1);
    CHECK_MSG(wrong == 0, "kept block %zu lost %zu bytes", i, wrong);
    A_FREE(blocks[i]);
  }
}

int main(void) {
  api_init();
  fill(small, SMALL_COUNT, SMALL);
  fill(large, LARGE_COUNT, LARGE);
  free_all_but_kept(small, SMALL_COUNT, SMALL_KEEP_EVERY);
  free_all_but_kept(large, LARGE_COUNT, LARGE_KEEP_EVERY);

  size_t pages, resident;
  count_freed(small, SMALL_COUNT, SMALL, SMALL_KEEP_EVERY, &pages, &resident);
  REQUIRE(pages > SMALL_BYTES / test_page_size() / 2); /* else the test shows nothing */
  CHECK_MSG(resident * 100 >= pages * 95,
            "of the freed 1 KiB blocks, %zu of %zu OS pages are resident (%zu MiB purged)",
            resident, pages, (pages - resident) * test_page_size() / MIB);
  count_freed(large, LARGE_COUNT, LARGE, LARGE_KEEP_EVERY, &pages, &resident);
  /* A quarter at least: with 64 KiB OS pages, the pages wholly inside
   * runs of freed 100 KiB blocks are about a third of them. */
  REQUIRE(pages > LARGE_BYTES / test_page_size() / 4);
  CHECK_MSG(resident * 100 >= pages * 95,
            "of the freed 100 KiB blocks, %zu of %zu OS pages are resident (%zu MiB purged)",
            resident, pages, (pages - resident) * test_page_size() / MIB);

  check_kept(small, SMALL_COUNT, SMALL, SMALL_KEEP_EVERY);
  check_kept(large, LARGE_COUNT, LARGE, LARGE_KEEP_EVERY);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
