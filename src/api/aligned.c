/* SPDX-License-Identifier: MIT */
/* The aligned allocation functions of the brisk_* API. */
#include "fast_path.h"

#include <errno.h>

void *aligned_malloc(size_t alignment, size_t size) {
  if (alignment <= ALIGNMENT_MIN) return fast_malloc(size); /* every block is 16-aligned */
  if (unlikely(size > SIZE_LIMIT || alignment > SIZE_LIMIT / 2)) return out_of_memory();
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) return out_of_memory();
  if (unlikely(heap == &heap_reporting))
    return (void *)align_up((uintptr_t)report_alloc(size + alignment), alignment);
  if (unlikely(diag_counting)) return diag_malloc(heap, size, alignment, false);
  return alloc_aligned(heap, size, alignment);
}

static bool alignment_valid(size_t alignment) {
  return is_power_of_two(alignment) && alignment % sizeof(void *) == 0;
}

int brisk_posix_memalign(void **result, size_t alignment, size_t size) {
  if (!alignment_valid(alignment)) return EINVAL;
  void *p = aligned_malloc(alignment, size);
  if (p == NULL) return ENOMEM; /* errno is ENOMEM too, as glibc leaves it */
  *result = p;
  return 0;
}

/* memalign and aligned_alloc take what glibc 2.36 takes, since programs
 * written against it rely on that: an alignment up to 16 (0 too) is
 * malloc's; above, one that is not a power of two rounds up to the next;
 * past the largest power of two nothing can be aligned (EINVAL). */
static void *memalign_as_glibc(size_t alignment, size_t size) {
  const size_t largest = (size_t)1 << (sizeof(size_t) * 8 - 1);
  if (alignment <= ALIGNMENT_MIN) return brisk_malloc(size);
  if (alignment > largest) {
    errno = EINVAL;
    return NULL;
  }
  if (!is_power_of_two(alignment))
    alignment = (size_t)1 << (64 - __builtin_clzll(alignment)); /* clzll counts in 64 bits */
  return aligned_malloc(alignment, size);
}

void *brisk_aligned_alloc(size_t alignment, size_t size) {
  return memalign_as_glibc(alignment, size);
}

void *brisk_memalign(size_t alignment, size_t size) {
  return memalign_as_glibc(alignment, size);
}

void *brisk_valloc(size_t size) {
  return aligned_malloc(os_page_size(), size);
}

void *brisk_pvalloc(size_t size) {
  size_t page = os_page_size();
  if (size > SIZE_LIMIT) return out_of_memory();
  size_t rounded = align_up(size == 0 ? 1 : size, page);
  return aligned_malloc(page, rounded);
}
