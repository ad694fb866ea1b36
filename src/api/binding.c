/* Entry points for language bindings that keep heap figures (BriskMM): each
 * does in one call what the binding would otherwise do in three, and keeps
 * the count of bytes in live blocks in the calling thread's heap. The common
 * case is the fast path itself plus one counter update. */
#include "fast_path.h"

#include <errno.h>

/* The binding's explicit start: where the program runs no C constructors
 * (Free Pascal and Delphi on Windows), before its first allocation. Calls
 * that come first would set brisk up too, but only this one can report that
 * brisk cannot work before the binding installs itself. */
int brisk_binding_init(void) {
  return process_start() ? 1 : 0;
}

/* The binding's explicit end, where no C destructor runs at exit: the
 * reports of the diagnostic modes, after the program's last unit. */
void brisk_binding_done(void) {
  process_stop();
}

static void count_in(heap_t *heap, ptrdiff_t change) {
  counter_add(heap->counters.binding_bytes, (int64_t)change);
}

/* Counts a block that went through a slow path. */
static NOINLINE void count_slow(ptrdiff_t change) {
  heap_t *heap = heap_for_this_thread();
  if (heap != NULL) count_in(heap, change);
}

/* The slow halves are functions of their own, reached by tail calls, so the
 * fast halves below need no stack frame. */
static NOINLINE void *binding_malloc_slow(size_t size, size_t *usable) {
  void *p = malloc_past_direct(size, false);
  *usable = p != NULL ? brisk_usable_size(p) : 0;
  if (p != NULL) count_slow((ptrdiff_t)*usable);
  return p;
}

void *brisk_binding_malloc(size_t size, size_t *usable) {
  heap_t *heap = heap_current();
  page_t *page = fast_page(heap, size);
  if (unlikely(page == NULL)) return binding_malloc_slow(size, usable);
  *usable = page->block_size;
  count_in(heap, (ptrdiff_t)page->block_size);
  return page_pop(page);
}

static NOINLINE size_t binding_free_slow(heap_t *heap, segment_t *segment, page_t *page, void *p) {
  if (segment->kind == SEGMENT_HUGE &&
      (const uint8_t *)p >= (const uint8_t *)segment + segment->size)
    return 0; /* past the end of a huge block's span: not brisk's */
  size_t bytes = brisk_usable_size(p);
  free_slow(heap, segment, page, p);
  count_slow(-(ptrdiff_t)bytes);
  return bytes;
}

static NOINLINE size_t binding_retire(heap_t *heap, page_t *page, size_t bytes) {
  page_retire(heap, page);
  return bytes;
}

/* Only a huge block's span is smaller than its 4 MiB unit (every other
 * segment fills it), so only there can a pointer past the span, in memory
 * that is not brisk's, still find a segment header. */
size_t brisk_binding_free(void *p) {
  segment_t *segment = segment_of(p);
  if (p == NULL || !segment_map_contains(segment)) return 0;
  page_t *page = page_of(segment, p);
  heap_t *heap = heap_current();
  if (unlikely(!page_is_plain(page, heap))) return binding_free_slow(heap, segment, page, p);
  size_t bytes = page->block_size;
  count_in(heap, -(ptrdiff_t)bytes);
  if (unlikely(free_local_push(page, (block_t *)p))) return binding_retire(heap, page, bytes);
  return bytes;
}

void *brisk_binding_realloc(void *p, size_t size, size_t *usable) {
  if (p != NULL && !brisk_owns(p)) {
    *usable = 0;
    errno = EINVAL;
    return NULL; /* not brisk's: nothing freed, nothing allocated */
  }
  size_t before = p == NULL ? 0 : brisk_usable_size(p);
  void *q = brisk_realloc(p, size);
  size_t after = q == NULL ? (size == 0 ? 0 : before) : brisk_usable_size(q);
  count_slow((ptrdiff_t)after - (ptrdiff_t)before);
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
