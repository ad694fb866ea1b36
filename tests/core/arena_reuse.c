/* SPDX-License-Identifier: MIT */
/* Blocks above 64 KiB come from a coalescing arena per heap: the memory that
 * blocks of one size freed serves a request of another size once the freed
 * chunks are merged, and an aligned block is cut from the arena with a
 * header of its own (the room before it and after it going back); without
 * the background purger, what the arena keeps free and resident is bounded.
 * Runs in its own process, so its thread's arena starts empty and the
 * addresses below are its own. */
#include "alloc_api.h"

#include <stdint.h>

#define KIB ((size_t)1024)

enum { N = 8 };

int main(void) {
  api_init();

  /* Cut one after another from the arena's one free chunk. */
  uint8_t *b[N];
  for (int i = 0; i < N; i++) {
    b[i] = A_MALLOC(80 * KIB);
    REQUIRE(b[i] != NULL);
    memset(b[i], i, 80 * KIB);
  }
  for (int i = 1; i < N; i++)
    CHECK_MSG(b[i] > b[i - 1] && (size_t)(b[i] - b[i - 1]) < 88 * KIB,
              "block %d at %p, block %d at %p", i, (void *)b[i], i - 1, (void *)b[i - 1]);

  /* Freed, they are merged with each other and with the free memory after
   * them: a block of 300 KiB, a size none of them had, is cut from where
   * they were. */
  for (int i = 0; i < N; i++)
    A_FREE(b[i]);
  uint8_t *big = A_MALLOC(300 * KIB);
  REQUIRE(big != NULL);
  CHECK_MSG(big >= b[0] && big < b[N - 1] + 80 * KIB,
            "300 KiB at %p, not where the 80 KiB blocks were freed (%p-%p)", (void *)big,
            (void *)b[0], (void *)(b[N - 1] + 80 * KIB));
  CHECK(A_USABLE_SIZE(big) >= 300 * KIB);
  memset(big, 0xA5, A_USABLE_SIZE(big)); /* all of it is the caller's */

  /* Aligned blocks of every alignment from 32 B to 64 KiB, small (from
   * pages) and large (from the arena, cut in three): aligned, writable
   * whole, and each freed on its own. */
  void *aligned[12];
  for (int k = 0; k < 12; k++) {
    size_t alignment = (size_t)32 << k, size = k % 2 ? 80 * KIB : 100;
    aligned[k] = A_ALIGNED_ALLOC(alignment, size);
    REQUIRE(aligned[k] != NULL);
    CHECK_MSG((uintptr_t)aligned[k] % alignment == 0, "%zu bytes aligned to %zu at %p", size,
              alignment, aligned[k]);
    CHECK(A_USABLE_SIZE(aligned[k]) >= size);
    memset(aligned[k], k, A_USABLE_SIZE(aligned[k]));
  }
  for (int k = 0; k < 12; k++)
    A_FREE(aligned[k]);
  A_FREE(big);

  /* What they left is reused: the same blocks again fit in the arena's
   * first 4 MiB, where the first ones were, without growing it. */
  const uintptr_t arena_mask = ~(uintptr_t)(4096 * KIB - 1);
  for (int i = 0; i < N; i++) {
    uint8_t *again = A_MALLOC(80 * KIB);
    REQUIRE(again != NULL);
    CHECK_MSG(((uintptr_t)again & arena_mask) == ((uintptr_t)b[0] & arena_mask),
              "block %d again at %p, outside the 4 MiB of the first ones (%p)", i, (void *)again,
              (void *)b[0]);
    b[i] = again;
  }
  for (int i = 0; i < N; i++)
    A_FREE(b[i]);

  /* This program has one thread, so no background purger: an arena then
   * purges its free chunks once about 4 MiB of them may be resident, as a
   * heap does its free pages. 40 MB of blocks freed leave at most that much
   * resident, and a few segments' headers. */
  enum { BIG = 200 };
  static void *big_blocks[BIG];
  size_t before = test_rss_bytes();
  for (int i = 0; i < BIG; i++) {
    big_blocks[i] = A_MALLOC(200 * KIB);
    REQUIRE(big_blocks[i] != NULL);
    memset(big_blocks[i], 0x3C, 200 * KIB);
  }
  size_t full = test_rss_bytes();
  REQUIRE(full > before + 30 * 1024 * KIB); /* else the check below shows nothing */
  for (int i = 0; i < BIG; i++)
    A_FREE(big_blocks[i]);
  size_t after = test_rss_bytes();
  CHECK_MSG(after <= before + 8 * 1024 * KIB, "%zu KiB resident after freeing %zu KiB (%zu before)",
            after / KIB, (full - before) / KIB, before / KIB);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
