/* SPDX-License-Identifier: MIT */
/* Remote frees: blocks that a thread frees into another thread's heap. One
 * name per side:
 *
 *   remote_post     the freeing thread: the block goes onto its page's
 *                   remote list (xthread_free) with one compare-and-swap,
 *                   or into a batch (below); into an exited thread's heap,
 *                   straight home (remote_post_abandoned). remote_post_flush
 *                   sends the thread's open batches.
 *   remote_collect  the owner: takes in its heap's delayed list (below). A
 *                   page's own remote list is taken in with one exchange by
 *                   page_collect (page.c), when the page's `free` runs dry.
 *
 * The delayed list (heap_t's xdelayed). A page with nothing free is parked
 * on its heap's full list with XFREE_NOTIFY set in its remote list's word;
 * the next remote free clears the bit and sends its block (or batch) to the
 * heap's delayed list instead, which is how the owner learns the page has
 * room again: it drains the list at its next refill or housekeeping and
 * unparks the page. So a remote free costs one compare-and-swap, plus one
 * push once per parking.
 *
 * Batches. A compare-and-swap is a locked instruction: it waits until the
 * thread's earlier stores have reached the cache, among them the link just
 * written into the block, whose line the owner's core holds when the owner
 * wrote the block last (a message passed from one thread to the next). So
 * while the background purger runs with the fence (xremote_batching), a
 * thread chains its remote frees of blocks up to REMOTE_BATCH_BLOCK_MAX
 * bytes into a batch per page in its own heap, with plain stores and its
 * busy mark set, and pushes a chain with one compare-and-swap when it holds
 * REMOTE_BATCH_MAX blocks, when another page takes its slot, and at the
 * thread's refills, housekeeping and exit. A block in a batch is still in
 * use for its owner, so the purger sends on the batches of a thread gone
 * idle, and brisk_collect() those of every live thread, each under the
 * thread's pages_lock with the thread kept out by the fence.
 * remote_batches_open is read without either, as a hint, so it is stored
 * with relaxed atomics. */
#include "core.h"

_Atomic(uint8_t) xremote_batching; /* REMOTE_FREES_UNSEEN */

/* ---- the freeing side -------------------------------------------------------- */

/* Blocks head..tail of one page of a heap whose thread has exited: while the
 * heap is claimed it is ours, so they go straight home (retiring their page
 * when it empties) instead of waiting for a sweep or a new owner. */
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

/* Before the purger runs: enough remote frees make it wanted (see
 * xremote_batching); the thread's next slow path starts it. */
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

/* The blocks go home, unparking their pages (under pages_lock, or with the
 * heap claimed). */
bool remote_collect(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return false;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  bool drained = block != NULL;
  while (block != NULL) {
    block_t *next = block->next;
    page_free_locked(heap, page_of(segment_of(block), block), block);
    block = next;
  }
  return drained;
}

/* The background purger, under pages_lock, for an owner gone idle (see
 * page_release_idle): a block whose page its owner has since unparked moves
 * to that page's remote list, where it is counted with the page's other
 * remote frees; the owner's fast path may be freeing into such a page, so
 * the purger cannot push onto its local list. A block of a page still
 * parked goes back on the delayed list, which is how the owner will learn
 * that the page has room. */
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
