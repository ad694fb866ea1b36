/* SPDX-License-Identifier: MIT */
/* A page that comes back free gives back the part of its memory an earlier
 * use wrote and its last use did not reach, and commits it again before a
 * later use carves into it. A pool whose bursts ask for a different number
 * of its largest blocks each time would otherwise keep every page resident
 * as far as its largest burst had ever written.
 *
 * Blocks this large come from the heap's arena but in the diagnostic modes,
 * which keep them on 4 MiB pages: the test runs with BRISK_STATS=on, so its
 * blocks carry a trailer and lie a size class apart, which it measures.
 *
 * One 4 MiB page of 320 KiB blocks: filled whole, freed, used again for one
 * block (blocks this large are carved one at a time) and freed; the part
 * past that block must then no longer be resident (mincore). Filled whole
 * once more, the page must hand out writable blocks past it: the debug
 * build keeps purged memory inaccessible, so a missing commit faults there.
 *
 * Run with BRISK_PURGE_DELAY=60s (see CMakeLists.txt): nothing else may
 * purge the page or the cached segment while the test looks at them. */
#include "alloc_api.h"

#include <stdint.h>

#define KIB ((size_t)1024)
#define SEGMENT (4096 * KIB)
#define BLOCK (320 * KIB) /* a class of the largest blocks, 4 MiB pages */
#define MAX_BLOCKS 16

static void *blocks[MAX_BLOCKS];

/* Fills the page with blocks; returns how many fit. */
static size_t fill_page(void) {
  size_t n = 0;
  for (; n < MAX_BLOCKS; n++) {
    blocks[n] = A_MALLOC(BLOCK);
    REQUIRE(blocks[n] != NULL);
    if (n > 0 && (uintptr_t)blocks[n] / SEGMENT != (uintptr_t)blocks[0] / SEGMENT) {
      A_FREE(blocks[n]);
      break;
    }
    memset(blocks[n], 0x5A, BLOCK);
  }
  return n;
}

static void free_all(size_t n) {
  for (size_t i = 0; i < n; i++)
    A_FREE(blocks[i]);
}

int main(void) {
  api_init();
  size_t full = fill_page();
  REQUIRE(full >= 8); /* else the page is not the one the test means */
  uint8_t *first = blocks[0];
  size_t stride =
      (size_t)((uint8_t *)blocks[1] - first); /* the block, its trailer, the rest of its class */
  REQUIRE(stride >= BLOCK && stride < 2 * BLOCK);
  /* Past the one block's room, from the OS page after it (the page's blocks
   * start past its header). */
  uint8_t *tail = (uint8_t *)(((uintptr_t)first + stride + 4095) & ~(uintptr_t)4095);
  size_t tail_bytes = (size_t)(first + full * stride - tail);
  /* every block after the first written whole */
  CHECK(test_resident_pages(tail, tail_bytes) * 4096 >= (full - 1) * BLOCK - stride);
  free_all(full);

  void *one = A_MALLOC(BLOCK);
  REQUIRE(one == first); /* the same page, taken back from the cache */
  memset(one, 0x33, BLOCK);
  A_FREE(one);
  size_t left = test_resident_pages(tail, tail_bytes);
  CHECK_MSG(left == 0, "%zu of the page's unused tail (%zu KiB) still resident", left * 4,
            tail_bytes / KIB);

  /* Used whole again: every block writable and intact. */
  REQUIRE(fill_page() == full);
  REQUIRE(blocks[0] == first);
  for (size_t i = 0; i < full; i++) {
    const uint8_t *b = blocks[i];
    CHECK(b[0] == 0x5A && b[BLOCK - 1] == 0x5A);
  }
  free_all(full);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
