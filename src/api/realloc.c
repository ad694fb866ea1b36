/* SPDX-License-Identifier: MIT */
/* realloc and reallocarray of the brisk_* API. */
#include "fast_path.h"

#include <string.h>

/* A new block for p's contents, the old one left as it is (NULL when there
 * is no memory). A block that grows moves to at least 25% more room, so a
 * string built by appending is copied a logarithmic number of times, not
 * once per size class. */
static void *realloc_copy(const void *p, size_t size, size_t usable) {
  size_t target = size;
  if (size > usable && usable + usable / 4 > size) target = usable + usable / 4;
  void *copy = fast_malloc(target);
  if (copy == NULL && target != size) copy = fast_malloc(size);
  if (copy != NULL) memcpy(copy, p, size < usable ? size : usable);
  return copy;
}

/* Everything but the in-place case, out of line so that case needs no stack
 * frame. */
static NOINLINE READS_POINTER_HEADER void *realloc_slow(void *p, size_t size) {
  if (p == NULL) return fast_malloc(size);
  if (size == 0) { /* glibc frees and returns NULL */
    brisk_free(p);
    return NULL;
  }
  if (unlikely(size > SIZE_LIMIT)) return out_of_memory();
  segment_t *segment = segment_of(p);
  /* A sampled block resized where it lies leaves the heap profile. */
  if (unlikely(heap_sampling) && segment_map_contains(segment) &&
      (segment->kind == SEGMENT_HUGE || segment->kind == SEGMENT_ARENA))
    hooks.sampled_free(p);
  if (segment->kind == SEGMENT_HUGE && size_range_of(size) == RANGE_HUGE && !diag_counting)
    return huge_realloc(segment, p, size);
  if (segment->kind == SEGMENT_ARENA && !diag_counting && segment_map_contains(segment)) {
    void *in_place = arena_realloc_in_place(segment, p, size);
    if (in_place != NULL) return in_place;
  }
  size_t usable = brisk_usable_size(p);
  /* Stay put when the block fits and would not waste more than half. */
  if (size <= usable && size >= usable / 2) return p;
  void *copy = realloc_copy(p, size, usable);
  if (copy == NULL) return NULL; /* the old block stays valid */
  brisk_free(p);
  return copy;
}

/* A block of this thread's plain page (already checked: brisk_realloc)
 * that must move: the page already says its size, and the old block goes
 * straight back onto it, unchecked a second time, unless the allocation
 * changed the page's state. */
static NOINLINE READS_POINTER_HEADER void *realloc_move_local(heap_t *heap, page_t *page, void *p,
                                                              size_t size, size_t usable) {
  void *copy = realloc_copy(p, size, usable);
  if (copy == NULL) return NULL; /* the old block stays valid */
  if (likely(page_is_plain(page, heap))) {
    if (page_push_local(page, (block_t *)p)) page_retire(heap, page);
  } else {
    brisk_free(p);
  }
  return copy;
}

READS_POINTER_HEADER void *brisk_realloc(void *p, size_t size) {
  /* Most reallocs of a growing string stay in place: settle those from the
   * page alone when it is this thread's and plain, and move the others
   * without looking the page up again. */
  if (likely(p != NULL && size != 0)) {
    segment_t *segment = segment_of(p);
    page_t *page = page_of(segment, p);
    heap_t *heap = heap_current();
    if (likely(page_is_plain(page, heap))) {
      size_t usable = page->block_size;
      if (unlikely(!page_is_block_start(page, p, page->carved_limit) ||
                   ((block_t *)p)->cookie == free_cookie()))
        free_invalid(page, p);
      if (size <= usable && size >= usable / 2) return p;
      return realloc_move_local(heap, page, p, size, usable);
    }
  }
  /* realloc(NULL, n), as a list grown from nothing starts: malloc itself,
   * not realloc_slow's frame (a call, so the in-place case keeps its
   * registers). */
  if (p == NULL) return brisk_malloc(size);
  return realloc_slow(p, size);
}

void *brisk_reallocarray(void *p, size_t count, size_t size) {
  size_t total;
  if (unlikely(__builtin_mul_overflow(count, size, &total))) return out_of_memory();
  return brisk_realloc(p, total);
}
