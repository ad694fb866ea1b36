/* The aligned allocation functions of the brisk_* API. */
#include "fast_path.h"

#include <errno.h>

void *aligned_malloc(size_t alignment, size_t size) {
  if (alignment <= ALIGNMENT_MIN) return fast_malloc(size); /* every block is 16-aligned */
  if (unlikely(size > SIZE_LIMIT || alignment > SIZE_LIMIT / 2)) {
    errno = ENOMEM;
    return NULL;
  }
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) {
    errno = ENOMEM;
    return NULL;
  }
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
  int saved = errno;
  void *p = aligned_malloc(alignment, size);
  if (p == NULL) {
    errno = saved;
    return ENOMEM;
  }
  *result = p;
  return 0;
}

void *brisk_aligned_alloc(size_t alignment, size_t size) {
  /* glibc accepts any power of two here (C17 dropped the multiple-of-size rule). */
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  return aligned_malloc(alignment, size);
}

void *brisk_memalign(size_t alignment, size_t size) {
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  return aligned_malloc(alignment, size);
}

void *brisk_valloc(size_t size) {
  return aligned_malloc(platform_page_size(), size);
}

void *brisk_pvalloc(size_t size) {
  size_t page = platform_page_size();
  if (size > SIZE_LIMIT) {
    errno = ENOMEM;
    return NULL;
  }
  size_t rounded = align_up(size == 0 ? 1 : size, page);
  return aligned_malloc(page, rounded);
}
