/* SPDX-License-Identifier: MIT */
/* A resident medium page that one class used and another takes as its warm
 * page keeps only the new class's first block resident: the rest of what the
 * old class wrote is purged. A warm page stays with its thread as long as
 * the thread runs, so whatever of the old data it kept would stay resident,
 * unused, that long.
 *
 * Two pages of 60 KiB blocks are filled and freed: the first stays the
 * class's warm page, the second goes back free and resident. A 20 KiB
 * block, of a class with no page yet, is then cut from the second page.
 *
 * Run with BRISK_PURGE_DELAY=60s (see CMakeLists.txt), in its own process:
 * nothing else may purge the page while the test looks. */
#include "alloc_api.h"

#include <stdint.h>

#define KIB ((size_t)1024)

enum { OLD_BLOCK = 60 * 1024, OLD_BLOCKS = 16, NEW_BLOCK = 20 * 1024 };

int main(void) {
  api_init();
  uint8_t *old[OLD_BLOCKS];
  for (int i = 0; i < OLD_BLOCKS; i++) {
    old[i] = A_MALLOC(OLD_BLOCK);
    REQUIRE(old[i] != NULL);
    memset(old[i], 0x5A, OLD_BLOCK);
  }
  /* The second page: where the blocks stop following one another. */
  int second = 1;
  while (second < OLD_BLOCKS && old[second] == old[second - 1] + OLD_BLOCK)
    second++;
  REQUIRE(second < OLD_BLOCKS && second >= 4); /* else the test shows nothing */
  uint8_t *page = old[second];
  size_t written = (size_t)(OLD_BLOCKS - second) * OLD_BLOCK;
  REQUIRE(written >= 256 * KIB);
  size_t before = test_resident_pages(page, written);
  for (int i = 0; i < OLD_BLOCKS; i++)
    A_FREE(old[i]);

  uint8_t *block = A_MALLOC(NEW_BLOCK);
  REQUIRE(block != NULL);
  CHECK_MSG(block == page, "the 20 KiB block at %p, not at the freed page (%p)", (void *)block,
            (void *)page);
  memset(block, 0xA5, NEW_BLOCK);
  size_t page_size = test_page_size();
  uint8_t *past = block + ((NEW_BLOCK + page_size - 1) / page_size) * page_size;
  size_t left = test_resident_pages(past, (size_t)(page + written - past));
  CHECK_MSG(left == 0, "%zu of %zu OS pages past the new block still resident (%zu before)", left,
            (size_t)(page + written - past) / page_size, before);

  /* The purged part reads zero as it is carved again, and holds what is
   * written there. */
  uint8_t *more[8];
  for (int i = 0; i < 8; i++) {
    more[i] = A_CALLOC(1, NEW_BLOCK);
    REQUIRE(more[i] != NULL);
    size_t dirty = 0;
    for (size_t k = 0; k < NEW_BLOCK; k++)
      dirty += more[i][k] != 0;
    CHECK_MSG(dirty == 0, "calloc'd block %d has %zu bytes not zero", i, dirty);
    memset(more[i], i, NEW_BLOCK);
  }
  for (int i = 0; i < 8; i++) {
    size_t wrong = 0;
    for (size_t k = 0; k < NEW_BLOCK; k++)
      wrong += more[i][k] != (uint8_t)i;
    CHECK_MSG(wrong == 0, "block %d lost %zu bytes", i, wrong);
    A_FREE(more[i]);
  }
  A_FREE(block);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
