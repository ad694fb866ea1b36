/* malloc, calloc and free of the brisk_* API, and the size queries. */
#include "fast_path.h"

#include <errno.h>
#include <string.h>

void *malloc_slow(size_t size, bool zero) {
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) {
    errno = ENOMEM;
    return NULL;
  }
  if (unlikely(heap == &heap_reporting)) return report_alloc(size); /* zeroed: fresh pages */
  if (unlikely(diag_counting)) return diag_malloc(heap, size, 0, zero);
  if (size <= LARGE_MAX) {
    void *p = alloc_small(heap, size);
    if (zero && p != NULL) memset(p, 0, size);
    return p;
  }
  background_wanted();
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

READS_POINTER_HEADER void brisk_free(void *p) {
  fast_free(p);
}

READS_POINTER_HEADER void brisk_free_sized(void *p, size_t size) {
  (void)size;
  fast_free(p);
}

READS_POINTER_HEADER size_t brisk_usable_size(const void *p) {
  if (p == NULL) return 0;
  segment_t *segment = segment_of(p);
  if (unlikely(segment->kind == SEGMENT_REPORT)) return report_block_size(p);
  if (unlikely(diag_counting)) return diag_usable_size(p);
  if (segment->kind == SEGMENT_HUGE) return huge_usable_size(segment, p);
  page_t *page = page_of(segment, p);
  const uint8_t *block = p;
  if (atomic_load_relaxed(&page->xflags) & PAGE_HAS_ALIGNED) block = page_block_start(page, p);
  return page->block_size - (size_t)((const uint8_t *)p - block);
}

int brisk_owns(const void *p) {
  if (p == NULL) return 0;
  const segment_t *segment = segment_of(p);
  if (!segment_map_contains(segment)) return 0;
  return (const uint8_t *)p < (const uint8_t *)segment + segment->size;
}
