/* The releasing half of the brisk_* API and size queries. */
#include "fast_path.h"

void brisk_free(void *p) {
  fast_free(p);
}

void brisk_free_sized(void *p, size_t size) {
  (void)size;
  fast_free(p);
}

size_t brisk_usable_size(const void *p) {
  if (p == NULL) return 0;
  if (unlikely(diag_counting)) return diag_usable_size(p);
  segment_t *segment = segment_of(p);
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
