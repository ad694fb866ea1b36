/* SPDX-License-Identifier: MIT */
/* A heap that freed whole segments takes their resident pages back from the
 * cache before it faults in pages of its own it never used. A program that
 * frees everything and then allocates the same again (a pool between rounds
 * of work) would otherwise grow its committed memory every round: were the
 * segment that comes back from the cache first one used only in part, its
 * untouched pages would be faulted in while another segment's resident
 * pages wait in the cache.
 *
 * Run with BRISK_PURGE_DELAY=-1 (see CMakeLists.txt) and in its own process:
 * the thread never gets the background purger, so what it frees stays
 * resident within the bounds kept without one (4 MiB of free pages in the
 * heap, two segments in the cache), which the order of the frees below
 * respects. */
#include "alloc_api.h"

#include <stdint.h>

#define KIB ((size_t)1024)
#define SEGMENT (4096 * KIB)

/* 1 KiB blocks for two segments and a half: A and B used whole, C half. */
enum { BLOCK = 1024, BLOCKS = 10 * 1024 };

static void *blocks[BLOCKS];
static uintptr_t segment_order[BLOCKS]; /* the segments in order of first use */

static size_t allocate(void) {
  size_t segments = 0;
  for (size_t i = 0; i < BLOCKS; i++) {
    blocks[i] = A_MALLOC(BLOCK);
    REQUIRE(blocks[i] != NULL);
    memset(blocks[i], 0x5A, BLOCK);
    uintptr_t segment = (uintptr_t)blocks[i] / SEGMENT;
    if (segments == 0 || segment_order[segments - 1] != segment)
      segment_order[segments++] = segment;
  }
  return segments;
}

static void free_in(uintptr_t segment) {
  for (size_t i = 0; i < BLOCKS; i++)
    if (blocks[i] != NULL && (uintptr_t)blocks[i] / SEGMENT == segment) {
      A_FREE(blocks[i]);
      blocks[i] = NULL;
    }
}

int main(void) {
  api_init();
  REQUIRE(allocate() == 3); /* else the test shows nothing */
  uintptr_t a = segment_order[0], b = segment_order[1], c = segment_order[2];
  size_t first = api_info().committed;
  /* B goes to the cache first, C (used in half) after it, so C comes back
   * first. A keeps the class's warm page and stays with the heap. */
  free_in(b);
  free_in(c);
  free_in(a);

  allocate();
  size_t again = api_info().committed;
  CHECK_MSG(again <= first, "committed %zu KiB the second time, %zu KiB more than the first",
            again / KIB, (again - first) / KIB);
  for (size_t i = 0; i < BLOCKS; i++)
    A_FREE(blocks[i]);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
