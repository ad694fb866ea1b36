/* SPDX-License-Identifier: MIT */
/* A block of 8-64 KiB carved from fresh memory is resident whole when the
 * allocation returns: brisk faults it in with one call, so that the
 * program's first write to each of its OS pages does not fault once per
 * page (a fault costs more than the write).
 *
 * In a fresh process every medium page is fresh, so each block below is
 * carved from memory that reads zero. Of each block, every OS page wholly
 * inside it must be resident (mincore) before the test writes any of it. On
 * a kernel that cannot populate (before Linux 5.14) the test says so and is
 * skipped (exit 77). */
#include "alloc_api.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define KIB ((size_t)1024)

static bool kernel_populates(void) {
  size_t size = 2 * test_page_size();
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  bool ok = madvise(p, size, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
  munmap(p, size);
  return ok;
}

enum { PER_SIZE = 4 };

int main(void) {
  api_init();
  if (!kernel_populates()) {
    printf("skipped: this kernel has no MADV_POPULATE_WRITE (Linux 5.14 and later do)\n");
    return 77;
  }
  const size_t sizes[] = {12 * KIB, 32 * KIB, 60 * KIB};
  size_t page_size = test_page_size();
  uint8_t *blocks[3][PER_SIZE];
  for (int s = 0; s < 3; s++) {
    for (int i = 0; i < PER_SIZE; i++) {
      uint8_t *block = A_MALLOC(sizes[s]);
      REQUIRE(block != NULL);
      blocks[s][i] = block;
      uintptr_t from = ((uintptr_t)block + page_size - 1) & ~(uintptr_t)(page_size - 1);
      uintptr_t to = ((uintptr_t)block + sizes[s]) & ~(uintptr_t)(page_size - 1);
      size_t whole = (to - from) / page_size;
      size_t resident = test_resident_pages((void *)from, to - from);
      CHECK_MSG(resident == whole, "a fresh %zu KiB block has %zu of its %zu OS pages resident",
                sizes[s] / KIB, resident, whole);
    }
  }
  /* They are ordinary blocks: written, read back, freed. */
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < PER_SIZE; i++)
      memset(blocks[s][i], s * PER_SIZE + i + 1, sizes[s]);
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < PER_SIZE; i++) {
      size_t wrong = 0;
      for (size_t k = 0; k < sizes[s]; k++)
        wrong += blocks[s][i][k] != (uint8_t)(s * PER_SIZE + i + 1);
      CHECK_MSG(wrong == 0, "block %d of %zu KiB lost %zu bytes", i, sizes[s] / KIB, wrong);
      A_FREE(blocks[s][i]);
    }
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
