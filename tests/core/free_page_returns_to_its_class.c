/* SPDX-License-Identifier: MIT */
/* A free page that is still resident goes back to the class it served
 * before, the one that class carved furthest first. A program that frees
 * everything and then allocates the same again (a pool between bursts of
 * work) then finds each class's blocks where they were, instead of carving
 * into pages another class left resident while its own resident pages wait,
 * which would grow the resident set with every round.
 *
 * Run with BRISK_PURGE_DELAY=-1 (see CMakeLists.txt), so that every freed
 * page stays resident, and in its own process, so that its thread's heap
 * starts empty. The two sizes are more than a doubling apart, so neither
 * class takes the other's free blocks (medium_reuse.c). */
#include "alloc_api.h"

#include <stdbool.h>
#include <stdint.h>

#define KIB ((size_t)1024)
#define MEDIUM_PAGE (512 * KIB)

enum { OTHER_BLOCKS = 60, CLASS_BLOCKS = 30 };

static uintptr_t page_of(const void *p) {
  return (uintptr_t)p / MEDIUM_PAGE;
}

/* Allocates n blocks of size, records their pages in order of first use. */
static size_t allocate(void **blocks, size_t n, size_t size, uintptr_t *pages) {
  size_t page_count = 0;
  for (size_t i = 0; i < n; i++) {
    blocks[i] = A_MALLOC(size);
    REQUIRE(blocks[i] != NULL);
    memset(blocks[i], 0x5A, size);
    if (page_count == 0 || pages[page_count - 1] != page_of(blocks[i]))
      pages[page_count++] = page_of(blocks[i]);
  }
  return page_count;
}

static bool listed(const uintptr_t *pages, size_t count, uintptr_t page) {
  for (size_t i = 0; i < count; i++)
    if (pages[i] == page) return true;
  return false;
}

int main(void) {
  api_init();
  const size_t other_size = 18000, class_size = 40000;
  static void *other[OTHER_BLOCKS], *blocks[CLASS_BLOCKS];
  uintptr_t other_pages[OTHER_BLOCKS], first[CLASS_BLOCKS], again[CLASS_BLOCKS];

  /* The other class first, so its pages come before the class's in the
   * segment: a page chosen by position alone would be one of them. */
  size_t other_count = allocate(other, OTHER_BLOCKS, other_size, other_pages);
  size_t first_count = allocate(blocks, CLASS_BLOCKS, class_size, first);
  REQUIRE(first_count >= 3); /* 30 blocks of 40 KiB fill two pages and start a third */
  for (size_t i = 0; i < OTHER_BLOCKS; i++)
    A_FREE(other[i]);
  for (size_t i = 0; i < CLASS_BLOCKS; i++)
    A_FREE(blocks[i]);

  /* The same blocks again: on the same pages, none of the other class's. */
  size_t again_count = allocate(blocks, CLASS_BLOCKS, class_size, again);
  CHECK_MSG(again_count == first_count, "%zu pages the second time, %zu the first", again_count,
            first_count);
  for (size_t i = 0; i < again_count; i++) {
    CHECK_MSG(listed(first, first_count, again[i]), "page %zu (%#lx) is not one the class used", i,
              (unsigned long)again[i]);
    CHECK_MSG(!listed(other_pages, other_count, again[i]), "page %zu (%#lx) served the other class",
              i, (unsigned long)again[i]);
  }
  /* The partly carved page last: the fuller ones are taken first. */
  CHECK_MSG(again[again_count - 1] == first[first_count - 1],
            "the last page taken (%#lx) is not the one carved least (%#lx)",
            (unsigned long)again[again_count - 1], (unsigned long)first[first_count - 1]);
  for (size_t i = 0; i < CLASS_BLOCKS; i++)
    A_FREE(blocks[i]);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
