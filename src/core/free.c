/* SPDX-License-Identifier: MIT */
/* The free path, for every free the fast path (api/fast_path.h) does not
 * settle: huge blocks, blocks handed out at an interior offset, the owner's
 * frees into pages that need care, and remote frees.
 *
 * A remote free is one CAS onto the page's xthread_free list, unless the
 * owner parked the page on its full list (XFREE_NOTIFY set): then the first
 * remote freer clears the bit and sends its block through the heap's delayed
 * list instead, which is how the owner learns the page has room again. */
#include "core.h"

#include <string.h>

/* The owner's free of a block whose page needs care (see page_is_plain),
 * under the heap's pages_lock or with the heap claimed: onto local_free, the
 * list of blocks that come back on slow paths. */
static void free_local_slow(heap_t *heap, page_t *page, block_t *block) {
  if (atomic_load_relaxed(&page->xflags) & PAGE_IN_FULL) page_unpark(heap, page);
  block->next = page->local_free;
  page->local_free = block;
  brisk_assert(page->used > 0);
  if (--page->used == 0) page_retire_locked(heap, page);
}

/* The delayed list, remote half: blocks head..tail (linked through next)
 * for a parked page of owner. */
static void free_delayed_push(heap_t *owner, block_t *head, block_t *tail) {
  block_t *seen = atomic_load_relaxed(&owner->xdelayed);
  do {
    tail->next = seen;
  } while (!atomic_cas_weak_release(&owner->xdelayed, &seen, head));
}

/* The delayed list, owner half: the blocks go home, unparking their pages
 * (under pages_lock, or with the heap claimed). */
bool free_delayed_drain(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return false;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  bool drained = block != NULL;
  while (block != NULL) {
    block_t *next = block->next;
    free_local_slow(heap, page_of(segment_of(block), block), block);
    block = next;
  }
  return drained;
}

/* Blocks head..tail, count of them, of another thread's heap: onto their
 * page's remote list, the list's count raised by count (the profile's event
 * noted by the caller). */
static inline void free_remote_push_chain(heap_t *owner, page_t *page, block_t *head, block_t *tail,
                                          uint32_t count) {
  uintptr_t seen = atomic_load_relaxed(&page->xthread_free);
  for (;;) {
    if (unlikely(seen & XFREE_NOTIFY)) {
      if (atomic_cas_strong_acq_rel(&page->xthread_free, &seen, seen & ~XFREE_NOTIFY)) {
        free_delayed_push(owner, head, tail);
        return;
      }
      continue;
    }
    tail->next = XFREE_BLOCK(seen);
    uintptr_t pushed = (uintptr_t)head | ((seen & ~(XFREE_ONE - 1)) + count * XFREE_ONE);
    if (atomic_cas_weak_release(&page->xthread_free, &seen, pushed)) return;
  }
}

static inline void free_remote_push_unnoted(heap_t *owner, page_t *page, block_t *block) {
  free_remote_push_chain(owner, page, block, block, 1);
}

/* Blocks head..tail of one page of a heap whose thread has exited: while the
 * heap is claimed it is ours, so they go straight home (retiring their page
 * when it empties) instead of waiting for a sweep or a new owner. */
static bool free_into_abandoned(heap_t *owner, page_t *page, block_t *head, block_t *tail) {
  if (!heap_is_abandoned(owner) || !heap_claim(owner)) return false;
  for (block_t *block = head, *next; block != NULL; block = next) {
    next = block == tail ? NULL : block->next;
    free_local_slow(owner, page, block);
  }
  heap_unclaim(owner);
  return true;
}

/* ---- remote batches ----------------------------------------------------------
 * A remote free's compare-and-swap is a locked instruction: it waits until
 * the thread's earlier stores have reached the cache, among them the link
 * just written into the block, whose line the owner's core holds when the
 * owner wrote the block last (a message passed from one thread to the
 * next). A thread that frees blocks of up to REMOTE_BATCH_BLOCK_MAX bytes
 * into another's pages therefore chains them into a batch per page in its
 * own heap, with plain stores, and pushes the chain with one
 * compare-and-swap when it holds REMOTE_BATCH_MAX blocks, when another page
 * takes its slot, and at the thread's refills, housekeeping and exit; the
 * background purger pushes the batches of a thread that has gone idle
 * (collect_idle_pages), and brisk_collect() every live thread's, so no
 * block waits long. Only while the purger runs with the fence
 * (xremote_batching): the thread changes its batches with xowner_busy set,
 * the purger and brisk_collect() with the thread kept out and the heap's
 * pages_lock held. remote_batches_open is read without either, as a hint
 * (send_batches_of), so it is stored with relaxed atomics. */

/* A batch goes onto its page's remote list; or, when the page's owner has
 * exited meanwhile, straight home, so that its pages retire now rather than
 * at the next sweep. */
static NOINLINE void remote_batch_push(heap_t *heap, remote_batch_t *batch) {
  heap_t *owner = segment_of(batch->page)->owner;
  if (!free_into_abandoned(owner, batch->page, batch->head, batch->tail))
    free_remote_push_chain(owner, batch->page, batch->head, batch->tail, batch->count);
  batch->page = NULL;
  __atomic_store_n(&heap->remote_batches_open, heap->remote_batches_open - 1, __ATOMIC_RELAXED);
}

/* The slot of page's batch: pages lie 256 bytes apart in a segment
 * header, segments 4 MiB apart. */
static inline remote_batch_t *remote_batch_of(heap_t *heap, const page_t *page) {
  uintptr_t key = (uintptr_t)page;
  key = (key >> PAGE_DESCRIPTOR_SHIFT) ^ (key >> SEGMENT_SHIFT);
  return &heap->remote_batches[key % REMOTE_BATCHES];
}

/* A batch for page in a slot that holds another page's, or none. */
static NOINLINE void remote_batch_open(heap_t *heap, remote_batch_t *batch, page_t *page,
                                       block_t *block) {
  if (batch->page != NULL) remote_batch_push(heap, batch);
  batch->page = page;
  batch->head = batch->tail = block;
  batch->count = 1;
  __atomic_store_n(&heap->remote_batches_open, heap->remote_batches_open + 1, __ATOMIC_RELAXED);
}

/* With heap's thread marked busy. */
static inline void remote_batch_add(heap_t *heap, page_t *page, block_t *block) {
  remote_batch_t *batch = remote_batch_of(heap, page);
  if (unlikely(batch->page != page)) {
    remote_batch_open(heap, batch, page, block);
    return;
  }
  block->next = batch->head;
  batch->head = block;
  if (unlikely(++batch->count == REMOTE_BATCH_MAX)) remote_batch_push(heap, batch);
}

/* Before the purger runs: enough remote frees make it wanted (see
 * xremote_batching); the thread's next slow path starts it. */
static NOINLINE void remote_frees_count(heap_t *heap) {
  if (++heap->remote_frees_unbatched < REMOTE_FREES_WANT_PURGER) return;
  uint8_t unseen = REMOTE_FREES_UNSEEN;
  atomic_compare_exchange_strong(&xremote_batching, &unseen, REMOTE_FREES_SEEN);
  heap->purger_check_due = true;
}

void free_remote_batches_flush(heap_t *heap) {
  for (remote_batch_t *batch = heap->remote_batches; heap->remote_batches_open != 0; batch++)
    if (batch->page != NULL) remote_batch_push(heap, batch);
}

static void free_remote_push(heap_t *owner, page_t *page, block_t *block) {
  event_note(EVENT_REMOTE_FREE);
  free_remote_push_unnoted(owner, page, block);
}

/* The background purger's part of the delayed list, under pages_lock (see
 * page_release_idle): a block whose page its owner has since unparked moves
 * to that page's remote list, where it is counted with the page's other
 * remote frees; the owner's fast path may be freeing into such a page, so
 * the purger cannot push onto its local list. A block of a page still
 * parked goes back on the delayed list, which is how the owner will learn
 * that the page has room. */
void free_delayed_release(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  while (block != NULL) {
    block_t *next = block->next;
    page_t *page = page_of(segment_of(block), block);
    if (atomic_load_relaxed(&page->xflags) & PAGE_IN_FULL)
      free_delayed_push(heap, block, block);
    else
      free_remote_push_unnoted(heap, page, block);
    block = next;
  }
}

/* The block that p was handed out as: p itself, or on a page with aligned
 * blocks the block holding p when p carries its mark. NULL when p is no
 * pointer brisk handed out. */
static block_t *block_handed_out_as(page_t *page, void *p, uint8_t flags) {
  block_t *block = p;
  if ((flags & PAGE_HAS_ALIGNED) && (uint8_t *)p >= page->area) {
    block = (block_t *)page_block_start(page, p);
    if (block != p && *(uintptr_t *)block != aligned_mark(p)) return NULL;
  }
  uint64_t limit = __atomic_load_n(&page->carved_limit, __ATOMIC_RELAXED);
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
    free_local_slow(owner, page, block);
    brief_lock_release(&owner->pages_lock);
  } else if (!free_into_abandoned(owner, page, block, block))
    free_remote_push(owner, page, block);
}

/* Frees that need more than a remote push: diagnostics, huge blocks, the
 * arena's blocks (whose segment's one page says PAGE_HUGE), pages with
 * aligned blocks, and pointers that are no block at all. */
static NOINLINE void free_unusual(heap_t *heap, segment_t *segment, page_t *page, void *p) {
  if (unlikely(heap == &heap_reporting)) return; /* a report is on its way: leave the heap be */
  if (unlikely(diag_counting)) hooks.before_free(segment, page, p); /* checked mode reports */
  if (unlikely(!segment_map_contains(segment))) free_invalid(NULL, p);
  if (segment->kind == SEGMENT_HUGE) {
    huge_free(segment, p);
    return;
  }
  if (segment->kind == SEGMENT_ARENA) {
    arena_free(segment, p);
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
   * there made this path save registers (19 million instructions more on a
   * two-thread producer/consumer ring under callgrind). */
  block_t *block = p;
  uint64_t limit = __atomic_load_n(&page->carved_limit, __ATOMIC_RELAXED);
  if (unlikely(!page_is_block_start(page, block, limit) || block->cookie == free_cookie()))
    free_invalid(page, p);
  block->cookie = free_cookie();
  heap_t *owner = segment->owner;
  /* With the profile on, frees went the long way above: the note of the
   * event is a call, and this path needs no stack frame (a batch's rare
   * turns, opening and pushing it, are calls out of line). */
  if (likely(owner != heap && heap != &heap_empty && !heap_is_abandoned(owner))) {
    uint8_t batching = atomic_load_relaxed(&xremote_batching);
    if (likely(batching == REMOTE_FREES_BATCHED) && page->block_size <= REMOTE_BATCH_BLOCK_MAX &&
        likely(heap_mark_busy(heap))) {
      remote_batch_add(heap, page, block);
      heap_unmark_busy(heap);
      return;
    }
    if (unlikely(batching == REMOTE_FREES_UNSEEN)) remote_frees_count(heap);
    free_remote_push_unnoted(owner, page, block);
  } else {
    free_to_owner(heap, owner, page, block);
  }
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
  if (index >= __atomic_load_n(&page->capacity, __ATOMIC_RELAXED))
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
