/* Entry points for language bindings that keep heap figures (BriskMM): each
 * does in one call what the binding would otherwise do in three, and keeps
 * the count of bytes in live blocks in the calling thread's heap. */
#include "fast_path.h"

static void binding_count(ptrdiff_t change) {
  heap_t *heap = heap_for_this_thread();
  if (heap != NULL) counter_add(heap->counters.binding_bytes, (int64_t)change);
}

/* Usable size of a block on a page this thread owns, without the general
 * lookup; 0 when the page needs the general one. */
static inline size_t plain_usable_size(const void *p) {
  segment_t *segment = segment_of(p);
  page_t *page = page_of(segment, p);
  return atomic_load_relaxed(&page->xowner_tag) == tl_heap ? page->block_size : 0;
}

void *brisk_binding_malloc(size_t size, size_t *usable) {
  void *p = fast_malloc(size);
  size_t bytes = 0;
  if (p != NULL) {
    bytes = plain_usable_size(p);
    if (bytes == 0) bytes = brisk_usable_size(p);
    binding_count((ptrdiff_t)bytes);
  }
  *usable = bytes;
  return p;
}

size_t brisk_binding_free(void *p) {
  if (p == NULL || !brisk_owns(p)) return 0;
  size_t bytes = plain_usable_size(p);
  if (bytes == 0) bytes = brisk_usable_size(p);
  fast_free(p);
  binding_count(-(ptrdiff_t)bytes);
  return bytes;
}

void *brisk_binding_realloc(void *p, size_t size, size_t *usable) {
  size_t before = p == NULL ? 0 : brisk_usable_size(p);
  void *q = brisk_realloc(p, size);
  size_t after = q == NULL ? (size == 0 ? 0 : before) : brisk_usable_size(q);
  binding_count((ptrdiff_t)after - (ptrdiff_t)before);
  *usable = after;
  return q;
}

static void add_binding_bytes(heap_t *heap, void *arg) {
  *(int64_t *)arg += counter_get(heap->counters.binding_bytes);
}

size_t brisk_binding_bytes_in_use(void) {
  int64_t total = 0;
  heaps_visit(add_binding_bytes, &total);
  return total > 0 ? (size_t)total : 0;
}
