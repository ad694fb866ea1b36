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
 * slot, and at the thread's refills, housekeeping and exit; a block in a
 * batch is still in use for its owner, so the purger sends on the batches
 * of a thread gone idle, and brisk_collect() those of every live thread,
 * each under the thread's pages_lock with the thread kept out by the fence.
 * remote_batches_open is also read as a hint, without either. */
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

/* A batch goes onto its page's remote list; or, when the page's owner has
 * exited meanwhile, straight home, so that its pages retire now rather than
 * at the next sweep. */
void remote_batch_push(heap_t *heap, remote_batch_t *batch) {
  heap_t *owner = segment_of(batch->page)->owner;
  if (!remote_post_abandoned(owner, batch->page, batch->head, batch->tail))
    remote_push(owner, batch->page, batch->head, batch->tail, batch->count);
  batch->page = NULL;
  counter_add(heap->remote_batches_open, -1);
}

void remote_batch_open(heap_t *heap, remote_batch_t *batch, page_t *page, block_t *block) {
  if (batch->page != NULL) remote_batch_push(heap, batch);
  batch->page = page;
  batch->head = batch->tail = block;
  batch->count = 1;
  counter_add(heap->remote_batches_open, 1);
}

/* The thread's next slow path starts the purger. */
void remote_frees_count(heap_t *heap) {
  if (++heap->remote_frees_unbatched < PURGER_AFTER_REMOTE_FREES) return;
  uint8_t unseen = REMOTE_FREES_UNSEEN;
  atomic_cas_strong_acq_rel(&xremote_batching, &unseen, REMOTE_FREES_SEEN);
  heap->purger_check_due = true;
}

void remote_post_flush(heap_t *heap) {
  for (remote_batch_t *batch = heap->remote_batches; heap->remote_batches_open != 0; batch++)
    if (batch->page != NULL) remote_batch_push(heap, batch);
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
