/* SPDX-License-Identifier: MIT */
/* Medium blocks (8-64 KiB) reuse resident memory across size classes: a
 * request whose class has no free block takes one already free in a class
 * up to one doubling larger before carving new memory, and never one of a
 * smaller class or one more than a doubling larger. Runs in its own process,
 * so its thread's heap starts empty and the addresses below are its own. */
#include "alloc_api.h"

#define KIB ((size_t)1024)

int main(void) {
  api_init();

  /* 60 KiB is class 60 KiB; 50 KiB (class 52 KiB) is two classes below. */
  void *larger = A_MALLOC(60 * KIB);
  REQUIRE(larger != NULL);
  A_FREE(larger);
  void *borrowed = A_MALLOC(50 * KIB);
  CHECK_MSG(borrowed == larger, "50 KiB at %p, not the free 60 KiB block at %p", borrowed, larger);
  CHECK(A_USABLE_SIZE(borrowed) >= 60 * KIB);
  memset(borrowed, 0xA5, A_USABLE_SIZE(borrowed)); /* all of it is the caller's */
  CHECK(A_HEAP_CHECK() == 0);

  /* More than a doubling apart: 20 KiB does not take a free 60 KiB block. */
  A_FREE(borrowed);
  void *small = A_MALLOC(20 * KIB);
  CHECK_MSG(small != larger, "20 KiB took the 60 KiB block at %p", larger);
  CHECK(A_USABLE_SIZE(small) < 24 * KIB);

  /* Never a smaller class: 60 KiB does not take a free 50 KiB block. The
   * free 60 KiB block is taken first, so that 50 KiB gets its own class's. */
  void *held = A_MALLOC(60 * KIB);
  REQUIRE(held != NULL);
  void *own = A_MALLOC(50 * KIB);
  REQUIRE(own != NULL);
  REQUIRE(A_USABLE_SIZE(own) < 60 * KIB); /* else the check below shows nothing */
  A_FREE(own);
  void *bigger = A_MALLOC(60 * KIB);
  CHECK_MSG(bigger != own, "60 KiB took the smaller free block at %p", own);
  CHECK(A_USABLE_SIZE(bigger) >= 60 * KIB);

  A_FREE(small);
  A_FREE(held);
  A_FREE(bigger);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
