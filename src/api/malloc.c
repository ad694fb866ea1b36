/* SPDX-License-Identifier: MIT */
/* malloc, calloc and free of the brisk_* API, and the size queries. */
#include "fast_path.h"

#include <string.h>

NOINLINE void *malloc_slow(size_t size, bool zero) {
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) return out_of_memory();
  if (unlikely(heap == &heap_reporting)) return report_alloc(size); /* zeroed: fresh pages */
  if (unlikely(diag_counting)) return diag_malloc(heap, size, 0, zero);
  if (guard_due(heap) && size <= GUARD_MAX) { /* sampled with the size asked for */
    void *guarded = guard_alloc(heap, size);
    if (guarded != NULL && zero) memset(guarded, 0, size);
    if (guarded != NULL) return guarded;
  }
  if (unlikely(heap_sampling) && !SAMPLING_ON_FAST_PATH)
    return heap_profile_malloc(heap, size, zero);
  return alloc_sized(heap, size, zero);
}

NOINLINE void *malloc_sampled(size_t size, bool zero) {
  heap_t *heap = heap_for_this_thread();
  if (heap != NULL && heap != &heap_reporting && heap_sampling)
    return heap_profile_due(heap, size, zero);
  if (!heap_sampling) /* no heap profile: look again 2 GiB later (a 32-bit constant) */
    thread_word_set(THREAD_SAMPLE, (uintptr_t)INT32_MAX);
  return malloc_slow(size, zero);
}

/* A block past the direct sizes, routed here (size_range_of) with no more
 * checks than the direct fast path makes when its class already has a
 * page: heap_empty and heap_reporting have no pages, and a diagnostic mode
 * must see every call, so those go on to malloc_slow, as huge blocks do. */
static inline __attribute__((always_inline)) void *past_direct(size_t size, bool zero) {
  size_range range = size_range_of(size);
  if (unlikely(allocs_take_long_way) || range == RANGE_HUGE) return malloc_slow(size, zero);
  heap_t *heap = heap_current();
  void *p;
  if (range == RANGE_SMALL) {
    /* A direct size here has found its direct slot's page empty (the
     * binding's getmem): malloc_slow takes it, and the sizes below are past
     * DIRECT_MAX, which keeps size_class_of short. */
    if (unlikely(size <= DIRECT_MAX)) return malloc_slow(size, zero);
    unsigned size_class = size_class_of(size);
    if (unlikely(heap->queues[size_class].first == NULL)) /* or not a thread's own heap */
      return malloc_slow(size, zero);
    p = small_alloc(heap, size_class);
  } else {
    if (unlikely(heap == &heap_empty || heap == &heap_reporting)) return malloc_slow(size, zero);
    if (range == RANGE_ARENA) return arena_alloc(heap, size, zero); /* clears what it must */
    p = medium_alloc(heap, size_class_of(size));
  }
  if (zero && p != NULL) memset(p, 0, size);
  return p;
}

static NOINLINE void *calloc_past_direct(size_t size) {
  return past_direct(size, true);
}

/* malloc's case apart from calloc's, so that every call out of it is a tail
 * call and it saves no registers. */
void *malloc_past_direct(size_t size, bool zero) {
  if (unlikely(zero)) return calloc_past_direct(size);
  return past_direct(size, false);
}

void *brisk_malloc(size_t size) {
  return fast_malloc(size);
}

void *brisk_calloc(size_t count, size_t size) {
  size_t total;
  if (unlikely(__builtin_mul_overflow(count, size, &total))) return out_of_memory();
  /* Past the direct sizes every block comes from the slow path anyway,
   * which knows when it is zero already (huge blocks: fresh mappings). */
  if (total > DIRECT_MAX) {
    SAMPLE_POINT(total, true);
    return malloc_past_direct(total, true);
  }
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
  if (segment->kind == SEGMENT_ARENA) return arena_usable_size(segment, p);
  if (segment->kind == SEGMENT_GUARD) return guard_usable_size(p);
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
