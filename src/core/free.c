/* SPDX-License-Identifier: MIT */
/* The free path, for every free the fast path (api/fast_path.h) does not
 * settle: huge blocks, the arena's blocks, blocks handed out at an interior
 * offset, the owner's frees into pages that need care, and remote frees
 * (validated here, posted by remote.c). */
#include "core.h"

#include <string.h>

/* The block that p was handed out as: p itself, or on a page with aligned
 * blocks the block holding p when p carries its mark. NULL when p is no
 * pointer brisk handed out. */
static block_t *block_handed_out_as(page_t *page, void *p, uint8_t flags) {
  block_t *block = p;
  if ((flags & PAGE_HAS_ALIGNED) && (uint8_t *)p >= page->area) {
    block = (block_t *)page_block_start(page, p);
    if (block != p && *(uintptr_t *)block != aligned_mark(p)) return NULL;
  }
  uint64_t limit = shared_load_relaxed(&page->carved_limit);
  if (!page_is_block_start(page, block, limit) || block->cookie == free_cookie()) return NULL;
  return block;
}

/* A validated block whose owner is the caller, or a heap without a thread
 * (which the caller may adopt or claim), or else a live thread's heap. */
static NOINLINE void free_to_owner(heap_t *heap, heap_t *owner, page_t *page, block_t *block) {
  /* A thread that frees before it ever allocates (one that tears down what
   * an exited thread built, say) adopts the heap it frees into, if that was
   * abandoned: its next frees there are then its own, on the fast path,
   * instead of a claim of the heap each. */
  if (owner == heap || (heap == &heap_empty && heap_adopt(owner))) {
    brief_lock_acquire(&owner->pages_lock);
    page_free_locked(owner, page, block);
    brief_lock_release(&owner->pages_lock);
  } else if (!remote_post_abandoned(owner, page, block, block)) {
    event_note(EVENT_REMOTE_FREE);
    remote_push(owner, page, block, block, 1);
  }
}

/* A thread that has never allocated frees a live thread's block (a
 * consumer that only frees what a producer made): it takes a heap of its
 * own, once, so that its remote frees are batched like any other thread's;
 * its batches go at its exit, or with the purger's help. */
static NOINLINE void free_without_heap(heap_t *owner, page_t *page, block_t *block) {
  heap_t *heap = heap_acquire();
  if (heap == NULL || heap == owner || heap_is_abandoned(owner))
    free_to_owner(heap != NULL ? heap : &heap_empty, owner, page, block);
  else
    remote_post(heap, owner, page, block);
}

/* Frees that need more than a remote push: diagnostics, huge blocks, the
 * arena's blocks (whose segment's one page says PAGE_HUGE), pages with
 * aligned blocks, and pointers that are no block at all. */
static NOINLINE void free_unusual(heap_t *heap, segment_t *segment, page_t *page, void *p) {
  if (unlikely(heap == &heap_reporting)) return; /* a report is on its way: leave the heap be */
  if (unlikely(diag_counting)) hooks.before_free(segment, page, p); /* checked mode reports */
  if (unlikely(!segment_map_contains(segment))) free_invalid(NULL, p);
  if (segment->kind == SEGMENT_HUGE) {
    if (unlikely(heap_sampling)) hooks.sampled_free(p);
    huge_free(segment, p);
    return;
  }
  if (segment->kind == SEGMENT_ARENA) {
    if (unlikely(heap_sampling)) hooks.sampled_free(p);
    arena_free(segment, p);
    return;
  }
  if (segment->kind == SEGMENT_GUARD) {
    guard_free(p);
    return;
  }
  uint8_t flags = atomic_load_relaxed(&page->xflags);
  block_t *block = (flags & PAGE_IN_USE) ? block_handed_out_as(page, p, flags) : NULL;
  if (unlikely(block == NULL)) free_invalid(page, p);
  block->cookie = free_cookie();
  free_to_owner(heap, segment->owner, page, block);
}

/* Shaped for the common case, a block of another live thread's plain page:
 * every call out of it is a tail call, so it saves one register, not four. */
void free_slow(heap_t *heap, segment_t *segment, page_t *page, void *p) {
  uint8_t flags;
  if (unlikely(frees_take_long_way()) || unlikely(!segment_map_contains(segment)) ||
      ((flags = atomic_load_relaxed(&page->xflags)) &
       (PAGE_IN_USE | PAGE_HAS_ALIGNED | PAGE_HUGE)) != PAGE_IN_USE) {
    free_unusual(heap, segment, page, p);
    return;
  }
  /* block_handed_out_as for a page without aligned blocks, written out: the
   * compiler does not see that its aligned branch is dead here, and its call
   * there made this path save registers on every remote free. */
  block_t *block = p;
  uint64_t limit = shared_load_relaxed(&page->carved_limit);
  if (unlikely(!page_is_block_start(page, block, limit) || block->cookie == free_cookie()))
    free_invalid(page, p);
  block->cookie = free_cookie();
  heap_t *owner = segment->owner;
  /* With the profile on, frees went the long way above: the note of the
   * event is a call, and this path needs no stack frame (a batch's rare
   * turns, opening and pushing it, are calls out of line). */
  if (likely(owner != heap && heap != &heap_empty && !heap_is_abandoned(owner)))
    remote_post(heap, owner, page, block);
  else if (heap == &heap_empty && !heap_is_abandoned(owner))
    free_without_heap(owner, page, block);
  else
    free_to_owner(heap, owner, page, block);
}

/* ---- what was wrong ---------------------------------------------------------- */
static const char *why_invalid(segment_t *segment, page_t *page, const void *p, char *detail,
                               size_t size) {
  if (page == NULL || !segment_map_contains(segment))
    return "brisk never handed out this pointer (no block of brisk's is there)";
  uint8_t flags = atomic_load_relaxed(&page->xflags);
  if (!(flags & PAGE_IN_USE))
    return "no block of this page is allocated (a stray pointer, or a block freed twice)";
  if ((const uint8_t *)p < page->area) return "the pointer lies in brisk's own bookkeeping";
  const uint8_t *start = page_block_start(page, p);
  size_t index = (size_t)(start - page->area) / page->block_size;
  if (index >= shared_load_relaxed(&page->capacity))
    return "the pointer lies where no block has been handed out yet";
  block_t *block = (block_t *)start;
  if ((const uint8_t *)p == start || *(const uintptr_t *)start == aligned_mark(p)) {
    if (block->cookie == free_cookie()) return "the block is already free (double free)";
  }
  msg_format(detail, size, "the pointer is %zu bytes into the %u-byte block at %p",
             (size_t)((const uint8_t *)p - start), page->block_size, (const void *)start);
  return detail;
}

void free_invalid(page_t *page, const void *p) {
  char detail[160];
  const char *why = why_invalid(segment_of(p), page, p, detail, sizeof detail);
  misuse_detected(strstr(why, "double free") ? "double free" : "invalid free", p, why);
}
