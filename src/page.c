/* The allocation slow path: page queues per size class, lazy carving of
 * blocks, collecting frees, parking full pages and retiring empty ones.
 *
 * A heap keeps, per size class, a queue of pages that may have free blocks;
 * the first one is what direct[] points at. A page found with nothing free
 * is parked on the heap's full list with XFREE_NOTIFY set, so it costs no
 * more scans until a free brings it back. */
#include "internal.h"

#include <errno.h>

page_t page_empty; /* free == NULL: every fast path through it fails */

static void heap_process_delayed(heap_t *heap);

/* Blocks carved per extension: about one OS page, so a fresh page touches
 * memory only as it is used. */
#define EXTEND_BYTES 4096
#define EXTEND_MIN_BLOCKS 4

static uint8_t flags_of(const page_t *page) {
  return atomic_load_relaxed(&page->xflags);
}
static void flags_set(page_t *page, uint8_t flags) {
  atomic_store_relaxed(&page->xflags, flags);
}

static void queue_push_front(page_queue_t *queue, page_t *page) {
  page->prev = NULL;
  page->next = queue->first;
  if (queue->first != NULL)
    queue->first->prev = page;
  else
    queue->last = page;
  queue->first = page;
}

static void queue_push_back(page_queue_t *queue, page_t *page) {
  page->next = NULL;
  page->prev = queue->last;
  if (queue->last != NULL)
    queue->last->next = page;
  else
    queue->first = page;
  queue->last = page;
}

static void queue_remove(page_queue_t *queue, page_t *page) {
  if (page->prev != NULL)
    page->prev->next = page->next;
  else
    queue->first = page->next;
  if (page->next != NULL)
    page->next->prev = page->prev;
  else
    queue->last = page->prev;
  page->next = page->prev = NULL;
}

static void page_queue_update_direct(heap_t *heap, unsigned size_class) {
  if (diag_counting) return; /* its fast path stays empty */
  unsigned first, last;
  size_class_direct_slots(size_class, &first, &last);
  page_t *page = heap->queues[size_class].first;
  if (page == NULL) page = &page_empty;
  for (unsigned slot = first; slot <= last; slot++)
    heap->direct[slot] = page;
}

static void page_restore_owner_tag(heap_t *heap, page_t *page) {
  bool plain = !diag_counting && !(flags_of(page) & (PAGE_HAS_ALIGNED | PAGE_IN_FULL));
  atomic_store_relaxed(&page->xowner_tag, plain ? heap : NULL);
}

uint8_t *page_block_start(const page_t *page, const void *p) {
  size_t offset = (size_t)((const uint8_t *)p - page->area);
  return page->area + offset - offset % page->block_size;
}

static size_t page_collect_thread_free(page_t *page) {
  if (atomic_load_relaxed(&page->xthread_free) == 0) return 0;
  uintptr_t taken = atomic_exchange_acquire(&page->xthread_free, 0);
  block_t *head = (block_t *)(taken & ~XFREE_NOTIFY);
  if (head == NULL) return 0;
  size_t count = 1;
  block_t *tail = head;
  while (tail->next != NULL) {
    tail = tail->next;
    count++;
  }
  tail->next = page->local_free;
  page->local_free = head;
  page->used -= (uint32_t)count;
  return count;
}

/* Make page->free non-empty if the page has anything to give. */
static void page_collect(page_t *page) {
  page_collect_thread_free(page);
  if (page->free == NULL) {
    page->free = page->local_free;
    page->local_free = NULL;
  }
}

static void page_extend(page_t *page) {
  size_t size = page->block_size;
  unsigned count = (unsigned)(EXTEND_BYTES / size);
  if (count < EXTEND_MIN_BLOCKS) count = EXTEND_MIN_BLOCKS;
  unsigned remaining = (unsigned)(page->reserved - page->capacity);
  if (count > remaining) count = remaining;
  uint8_t *start = page->area + (size_t)page->capacity * size;
  for (unsigned i = 0; i + 1 < count; i++)
    ((block_t *)(start + i * size))->next = (block_t *)(start + (i + 1) * size);
  ((block_t *)(start + (size_t)(count - 1) * size))->next = page->free;
  page->free = (block_t *)start;
  page->capacity = (uint16_t)(page->capacity + count);
}

static page_t *page_fresh(heap_t *heap, unsigned size_class) {
  page_t *page = segment_page_alloc(heap, size_class_kind(size_class));
  if (page == NULL) return NULL;
  segment_t *segment = segment_of(page);
  page->block_size = class_size[size_class];
  page->size_class = (uint8_t)size_class;
  size_t bytes = segment_page_bytes(segment, page, &page->area);
  page->reserved = (uint16_t)(bytes / page->block_size);
  page->capacity = 0;
  page->used = 0;
  page->free = NULL;
  page->local_free = NULL;
  atomic_store_relaxed(&page->xthread_free, 0);
  flags_set(page, PAGE_IN_USE);
  atomic_store_relaxed(&page->xowner_tag, diag_counting ? NULL : heap);
  page_extend(page);
  queue_push_front(&heap->queues[size_class], page);
  page_queue_update_direct(heap, size_class);
  return page;
}

/* Park a page with nothing free on the full list; false when a remote free
 * arrived meanwhile (collect again instead). */
static bool page_park(heap_t *heap, page_t *page) {
  uintptr_t expected = 0;
  if (!atomic_cas_strong_acq_rel(&page->xthread_free, &expected, XFREE_NOTIFY)) return false;
  page_queue_t *queue = &heap->queues[page->size_class];
  bool was_first = queue->first == page;
  queue_remove(queue, page);
  flags_set(page, flags_of(page) | PAGE_IN_FULL);
  atomic_store_relaxed(&page->xowner_tag, NULL); /* local frees must come and unpark it */
  queue_push_back(&heap->full, page);
  if (was_first) page_queue_update_direct(heap, page->size_class);
  return true;
}

static void page_unpark(heap_t *heap, page_t *page) {
  queue_remove(&heap->full, page);
  flags_set(page, flags_of(page) & ~PAGE_IN_FULL);
  page_collect_thread_free(page); /* clears XFREE_NOTIFY */
  page_restore_owner_tag(heap, page);
  queue_push_back(&heap->queues[page->size_class], page);
  if (heap->queues[page->size_class].first == page)
    page_queue_update_direct(heap, page->size_class);
}

/* Owner-side free of a block whose page needs care (see fast_free). */
static void page_free_local(heap_t *heap, page_t *page, block_t *block) {
  if (flags_of(page) & PAGE_IN_FULL) page_unpark(heap, page);
  block->next = page->local_free;
  page->local_free = block;
  if (--page->used == 0) page_retire(heap, page);
}

static bool page_kept_warm(const page_t *page) {
  return page->block_size <= MEDIUM_MAX;
}

void page_retire(heap_t *heap, page_t *page) {
  if (flags_of(page) & PAGE_IN_FULL) page_unpark(heap, page);
  page_queue_t *queue = &heap->queues[page->size_class];
  /* Keep the only page of a class: a loop allocating and freeing one block
   * at a page boundary would otherwise set up and tear down a page each time.
   * Housekeeping retires it once it has stayed empty. Not a large page: it
   * is a whole segment. */
  if (queue->first == page && queue->last == page && page_kept_warm(page)) return;
  bool was_first = queue->first == page;
  queue_remove(queue, page);
  if (was_first) page_queue_update_direct(heap, page->size_class);
  segment_page_free(heap, page);
}

static NOINLINE page_t *page_find_free(heap_t *heap, unsigned size_class) {
  heap->counters.page_refills++;
  profile_event_note(EVENT_REFILL);
  if ((++heap->slow_calls & 15) == 0 && os_clock_ms() >= heap->next_housekeeping_ms)
    heap_housekeeping(heap, false);
  page_queue_t *queue = &heap->queues[size_class];
  for (int pass = 0; pass < 2; pass++) {
    page_t *page = queue->first;
    while (page != NULL) {
      page_collect(page);
      if (page->free == NULL && page->capacity < page->reserved) page_extend(page);
      if (page->free != NULL) {
        if (queue->first != page) {
          queue_remove(queue, page);
          queue_push_front(queue, page);
        }
        page_queue_update_direct(heap, size_class);
        return page;
      }
      page_t *next = page->next;
      if (page_park(heap, page)) page = next; /* else: look at it again */
    }
    heap_process_delayed(heap); /* full pages that were freed into come back */
  }
  return page_fresh(heap, size_class);
}

void *page_malloc_generic(heap_t *heap, size_t size) {
  unsigned size_class = size_class_of(size);
  page_t *page = heap->queues[size_class].first;
  if (page == NULL || page->free == NULL) {
    page = page_find_free(heap, size_class);
    if (page == NULL) {
      errno = ENOMEM;
      return NULL;
    }
  }
  block_t *block = page->free;
  page->free = block->next;
  page->used++;
  block->cookie = 0;
  return block;
}

static void heap_process_delayed(heap_t *heap) {
  if (atomic_load_relaxed(&heap->xdelayed) == NULL) return;
  block_t *block = atomic_exchange_acquire(&heap->xdelayed, NULL);
  while (block != NULL) {
    block_t *next = block->next;
    page_free_local(heap, page_of(segment_of(block), block), block);
    block = next;
  }
}

/* Collect every queued page; retire the empty ones. force also retires the
 * first page of each class, which retire() keeps warm. */
void page_collect_heap(heap_t *heap, uint64_t now, bool force) {
  (void)now;
  heap_process_delayed(heap);
  for (unsigned size_class = 0; size_class < CLASS_COUNT; size_class++) {
    page_queue_t *queue = &heap->queues[size_class];
    for (page_t *page = queue->first, *next; page != NULL; page = next) {
      next = page->next;
      page_collect_thread_free(page);
      if (page->used != 0) continue;
      bool was_first = queue->first == page;
      if (was_first && !force && queue->last == page && page_kept_warm(page)) continue;
      queue_remove(queue, page);
      if (was_first) page_queue_update_direct(heap, size_class);
      segment_page_free(heap, page);
    }
  }
}

void free_slow(segment_t *segment, page_t *page, void *p) {
  if (unlikely(diag_counting))
    diag_free(segment, page, p);
  else
    free_block(segment, page, p);
}

void free_block(segment_t *segment, page_t *page, void *p) {
  if (segment->kind == SEGMENT_HUGE) {
    huge_free(segment);
    return;
  }
  block_t *block = (block_t *)p;
  if (flags_of(page) & PAGE_HAS_ALIGNED) block = (block_t *)page_block_start(page, p);
  if (unlikely(block->cookie == free_cookie(block))) double_free_detected(p);
  block->cookie = free_cookie(block);
  heap_t *owner = segment->owner;
  if (owner == tl_heap) {
    page_free_local(owner, page, block);
    return;
  }
  /* Remote free: one CAS, unless the owner parked the page and wants to hear
   * of it; then this block travels through the heap's delayed list instead. */
  profile_event_note(EVENT_REMOTE_FREE);
  uintptr_t seen = atomic_load_relaxed(&page->xthread_free);
  for (;;) {
    if (unlikely(seen & XFREE_NOTIFY)) {
      if (atomic_cas_strong_acq_rel(&page->xthread_free, &seen, seen & ~XFREE_NOTIFY)) {
        heap_push_delayed(owner, block);
        break;
      }
      continue;
    }
    block->next = (block_t *)seen;
    if (atomic_cas_weak_release(&page->xthread_free, &seen, (uintptr_t)block)) break;
  }
  heap_note_remote_free(owner);
}

/* Mark a page whose block is handed out at an interior offset, so frees and
 * size queries find the block start. */
void page_mark_aligned(page_t *page) {
  if (flags_of(page) & PAGE_HAS_ALIGNED) return;
  flags_set(page, flags_of(page) | PAGE_HAS_ALIGNED);
  atomic_store_relaxed(&page->xowner_tag, NULL);
}
