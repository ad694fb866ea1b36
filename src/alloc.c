/* The allocation half of the brisk_* API. */
#include "fast_path.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void *malloc_slow(size_t size, bool zero) {
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) {
    errno = ENOMEM;
    return NULL;
  }
  if (unlikely(diag_counting)) return diag_malloc(heap, size, 0, zero);
  if (size <= LARGE_MAX) {
    void *p = page_malloc_generic(heap, size);
    if (zero && p != NULL) memset(p, 0, size);
    return p;
  }
  return huge_malloc(size, 0, zero);
}

void *brisk_malloc(size_t size) {
  return fast_malloc(size);
}

void *brisk_calloc(size_t count, size_t size) {
  size_t total;
  if (unlikely(__builtin_mul_overflow(count, size, &total))) {
    errno = ENOMEM;
    return NULL;
  }
  if (total > LARGE_MAX) return malloc_slow(total, true); /* fresh mappings are zero already */
  void *p = fast_malloc(total);
  if (likely(p != NULL)) memset(p, 0, total);
  return p;
}

void *brisk_realloc(void *p, size_t size) {
  /* Most reallocs of a growing string stay in place: settle those from the
   * page alone when it is this thread's and plain (owner tag set). */
  if (likely(p != NULL && size != 0)) {
    segment_t *segment = segment_of(p);
    page_t *page = page_of(segment, p);
    if (likely(atomic_load_relaxed(&page->xowner_tag) == tl_heap)) {
      size_t usable = page->block_size;
      if (size <= usable && size >= usable / 2) return p;
    }
  }
  if (p == NULL) return fast_malloc(size);
  if (size == 0) { /* glibc frees and returns NULL */
    brisk_free(p);
    return NULL;
  }
  if (unlikely(size > SIZE_LIMIT)) {
    errno = ENOMEM;
    return NULL;
  }
  segment_t *segment = segment_of(p);
  if (segment->kind == SEGMENT_HUGE && size > LARGE_MAX && !diag_counting)
    return huge_realloc(segment, p, size);
  size_t usable = brisk_usable_size(p);
  /* Stay put when the block fits and would not waste more than half. */
  if (size <= usable && size >= usable / 2) return p;
  /* A block that grows moves to at least 25% more room, so a string built
   * by appending is copied a logarithmic number of times, not once per
   * size class. */
  size_t target = size;
  if (size > usable && usable + usable / 4 > size) target = usable + usable / 4;
  void *copy = fast_malloc(target);
  if (copy == NULL && target != size) copy = fast_malloc(size);
  if (copy == NULL) return NULL; /* the old block stays valid */
  memcpy(copy, p, size < usable ? size : usable);
  brisk_free(p);
  return copy;
}

void *brisk_reallocarray(void *p, size_t count, size_t size) {
  size_t total;
  if (unlikely(__builtin_mul_overflow(count, size, &total))) {
    errno = ENOMEM;
    return NULL;
  }
  return brisk_realloc(p, total);
}

/* alignment: a power of two. */
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
  if (unlikely(diag_counting)) return diag_malloc(heap, size, alignment, false);
  if (size + alignment - 1 > LARGE_MAX) return huge_malloc(size, alignment, false);
  uint8_t *block = page_malloc_generic(heap, size + alignment - 1);
  if (block == NULL) return NULL;
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)block, alignment);
  if (aligned != block) page_mark_aligned(page_of(segment_of(block), block));
  return aligned;
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
  /* glibc's memalign rounds a non-power-of-two alignment up, but the issue's
   * contract (and POSIX for posix_memalign) calls it invalid: EINVAL. */
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  return aligned_malloc(alignment, size);
}

void *brisk_valloc(size_t size) {
  return aligned_malloc((size_t)sysconf(_SC_PAGESIZE), size);
}

void *brisk_pvalloc(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_LIMIT) {
    errno = ENOMEM;
    return NULL;
  }
  size_t rounded = align_up(size == 0 ? 1 : size, page);
  return aligned_malloc(page, rounded);
}
