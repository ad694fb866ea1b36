/* SPDX-License-Identifier: MIT */
/* Remote frees: blocks a thread frees into another thread's heap. One name
 * per side: the freeing thread posts (remote_post, inline in core.h: onto
 * the page's remote list with one compare-and-swap, or into a batch;
 * remote_post_flush sends its batches); the owner collects (remote_collect:
 * its delayed list; a page's own remote list is taken in by page_collect,
 * page.c, with one exchange when the page's `free` runs dry).
 *
 * The delayed list: a parked page has XFREE_NOTIFY set in its remote list's
 * word; the next remote free clears the bit and sends its block (or batch)
 * to the heap's delayed list instead, which is how the owner learns, at its
 * next refill or housekeeping, that the page has room again.
 *
 * Batches: a compare-and-swap waits until the thread's earlier stores reach
 * the cache, among them the link just written into the block, whose line
 * the owner's core often holds. So while the purger runs with the fence, a
 * thread chains its remote frees of small blocks into a batch per page in
 * its own heap, with plain stores under its busy mark, and pushes a chain
 * with one compare-and-swap when it is full, when another page takes its
 * slot, and before the thread takes a fresh page, at its housekeeping and
 * at exit; a block in a batch is still in use for its owner, so the purger
 * sends on the batches of a thread gone idle, and brisk_collect() those of
 * every live thread, each under the thread's pages_lock with the thread
 * kept out by the fence. A full chain leaves its slot with its page: a
 * thread freeing many blocks of one page fills the slot again without a
 * call. */
#include "core.h"

_Atomic(uint8_t) xremote_batching; /* REMOTE_FREES_UNSEEN */

/* ---- the freeing side -------------------------------------------------------- */

/* While the heap is claimed it is ours: the blocks go straight home
 * (retiring their page when it empties), not to a sweep or a new owner. */
bool remote_post_abandoned(heap_t *owner, page_t *page, block_t *head, block_t *tail) {
  if (!heap_is_abandoned(owner) || !heap_claim(owner)) return false;
  for (block_t *block = head, *next; block != NULL; block = next) {
    next = block == tail ? NULL : block->next;
    page_free_locked(owner, page, block);
  }
  heap_unclaim(owner);
  return true;
}

/* The end of a batch's chain: its blocks lie in this thread's cache, just
 * written, so walking them is cheaper than keeping a tail on every free. */
static block_t *remote_batch_tail(const remote_batch_t *batch) {
  block_t *tail = batch->head;
  for (uint32_t i = 1; i < batch->count; i++)
    tail = tail->next;
  return tail;
}

/* A batch whose page's owner has exited meanwhile goes straight home, so
 * that its pages retire now rather than at the next sweep. Out of line: the
 * common push then saves no registers. */
static NOINLINE void remote_batch_push_abandoned(heap_t *owner, remote_batch_t *batch) {
  block_t *tail = remote_batch_tail(batch);
  if (!remote_post_abandoned(owner, batch->page, batch->head, tail))
    remote_push(owner, batch->page, batch->head, tail, batch->count);
  batch->head = NULL;
  batch->count = 0;
}

void remote_batch_push(remote_batch_t *batch) {
  heap_t *owner = segment_of(batch->page)->owner;
  if (unlikely(heap_is_abandoned(owner))) {
    remote_batch_push_abandoned(owner, batch);
    return;
  }
  remote_push(owner, batch->page, batch->head, remote_batch_tail(batch), batch->count);
  batch->head = NULL;
  batch->count = 0;
}

void remote_batch_full(heap_t *heap, remote_batch_t *batch) {
  remote_batch_push(batch);
  fence_owner_leave(heap);
}

void remote_batch_open(heap_t *heap, remote_batch_t *batch, page_t *page, block_t *block) {
  if (batch->count != 0) remote_batch_push(batch);
  batch->page = page;
  batch->head = block;
  batch->count = 1;
  heap->remote_batched = true;
  fence_owner_leave(heap);
}

/* The thread's next refill starts the purger, or its owners' refills
 * (alloc.c) when the thread only frees. */
void remote_post_counted(heap_t *heap, heap_t *owner, page_t *page, block_t *block) {
  if (++heap->remote_frees_unbatched >= PURGER_AFTER_REMOTE_FREES) {
    uint8_t unseen = REMOTE_FREES_UNSEEN;
    atomic_cas_strong_acq_rel(&xremote_batching, &unseen, REMOTE_FREES_SEEN);
    heap->purger_check_due = true;
  }
  remote_push(owner, page, block, block, 1);
}

/* Rare (a fresh page, housekeeping, exit, the purger, brisk_collect), so
 * it walks every slot rather than have each free count the ones in use;
 * not at all in a heap that never batched. */
void remote_post_flush(heap_t *heap) {
  if (!heap->remote_batched) return;
  for (remote_batch_t *batch = heap->remote_batches; batch < heap->remote_batches + REMOTE_BATCHES;
       batch++)
    if (batch->count != 0) remote_batch_push(batch);
}

/* ---- the owner's side ------------------------------------------------------------- */

/* Under pages_lock, or with the heap claimed: the blocks go home, unparking
 * their pages. */
bool remote_collect(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return false;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  bool drained = block != NULL;
  uint64_t count = 0;
  while (block != NULL) {
    block_t *next = block->next;
    page_free_locked(heap, page_of(segment_of(block), block), block);
    block = next;
    count++;
  }
  counter_add(heap->activity.remote_frees_in, count);
  return drained;
}

/* A block whose page its owner has since unparked goes onto that page's
 * remote list, counted with the page's other remote frees (page_release_idle
 * reads them): the owner's fast path may be freeing into such a page, so the
 * purger cannot touch its local lists. A block of a page still parked goes
 * back on the delayed list, for the owner to learn that the page has room. */
void remote_collect_idle(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  while (block != NULL) {
    block_t *next = block->next;
    page_t *page = page_of(segment_of(block), block);
    if (atomic_load_relaxed(&page->xflags) & PAGE_IN_FULL)
      remote_delayed_push(heap, block, block);
    else
      remote_push(heap, page, block, block, 1);
    block = next;
  }
}
