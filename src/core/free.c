/* The free path, for every free the fast path (api/fast_path.h) does not
 * settle: huge blocks, blocks handed out at an interior offset, the owner's
 * frees into pages that need care, and remote frees.
 *
 * A remote free is one CAS onto the page's xthread_free list, unless the
 * owner parked the page on its full list (XFREE_NOTIFY set): then the first
 * remote freer clears the bit and sends its block through the heap's delayed
 * list instead, which is how the owner learns the page has room again. */
#include "core.h"

uintptr_t free_secret = 0x9e3779b97f4a7c15u; /* replaced at start-up, before any block exists */

/* The owner's free of a block whose page needs care (see page_is_plain). */
static void free_local_slow(heap_t *heap, page_t *page, block_t *block) {
  if (atomic_load_relaxed(&page->xflags) & PAGE_IN_FULL) page_unpark(heap, page);
  block->next = page->local_free;
  page->local_free = block;
  brisk_assert(page->used > 0);
  if (--page->used == 0) page_retire(heap, page);
}

/* The delayed list, remote half: a block for a parked page of owner. */
static void free_delayed_push(heap_t *owner, block_t *block) {
  block_t *seen = atomic_load_relaxed(&owner->xdelayed);
  do {
    block->next = seen;
  } while (!atomic_cas_weak_release(&owner->xdelayed, &seen, block));
}

/* The delayed list, owner half: the blocks go home, unparking their pages. */
void free_delayed_drain(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  while (block != NULL) {
    block_t *next = block->next;
    free_local_slow(heap, page_of(segment_of(block), block), block);
    block = next;
  }
}

/* A block of another thread's heap: onto its page's remote list. */
static void free_remote_push(heap_t *owner, page_t *page, block_t *block) {
  event_note(EVENT_REMOTE_FREE);
  uintptr_t seen = atomic_load_relaxed(&page->xthread_free);
  for (;;) {
    if (unlikely(seen & XFREE_NOTIFY)) {
      if (atomic_cas_strong_acq_rel(&page->xthread_free, &seen, seen & ~XFREE_NOTIFY)) {
        free_delayed_push(owner, block);
        return;
      }
      continue;
    }
    block->next = (block_t *)seen;
    if (atomic_cas_weak_release(&page->xthread_free, &seen, (uintptr_t)block)) return;
  }
}

/* A block of a heap whose thread has exited: while the heap is claimed it is
 * ours, so the block goes straight home (retiring its page when it empties)
 * instead of waiting for a sweep or a new owner. */
static bool free_into_abandoned(heap_t *owner, page_t *page, block_t *block) {
  if (!heap_claim(owner)) return false;
  free_local_slow(owner, page, block);
  heap_unclaim(owner);
  return true;
}

void free_slow(segment_t *segment, page_t *page, void *p) {
  if (unlikely(diag_counting)) hooks.before_free(segment, page, p);
  if (segment->kind == SEGMENT_HUGE) {
    huge_free(segment);
    return;
  }
  block_t *block = (block_t *)p;
  if (atomic_load_relaxed(&page->xflags) & PAGE_HAS_ALIGNED)
    block = (block_t *)page_block_start(page, p);
  block_mark_free(block, p);
  heap_t *owner = segment->owner;
  if (owner == heap_current())
    free_local_slow(owner, page, block);
  else if (!free_into_abandoned(owner, page, block))
    free_remote_push(owner, page, block);
}
