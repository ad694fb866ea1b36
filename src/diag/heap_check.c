/* SPDX-License-Identifier: MIT */
/* brisk_heap_check(): the counting identities of types.h, checked by walking
 * the calling thread's heap. Read-only, and only on the owner's own lists,
 * so it is safe while other threads free into the heap. */
#include "diag.h"

#define MAX_BLOCKS_PER_PAGE (((size_t)1 << SMALL_PAGE_SHIFT) / 16)

typedef struct checker {
  int problems;
  uint8_t warm_pages[CLASS_COUNT]; /* pages flagged warm, per class */
  size_t carved_bytes;             /* of the pages walked */
} checker;

static void problem(checker *c, const page_t *page, const char *what, const void *where) {
  c->problems++;
  msg_printf(2, "brisk: heap check: page %p (class %u, %u-byte blocks): %s %p\n",
             (const void *)page, page->size_class, page->block_size, what, where);
}

/* Walks one free list, marking blocks in seen[]; returns how many it holds. */
static size_t walk_list(checker *c, const page_t *page, const block_t *list, uint64_t *seen) {
  size_t count = 0;
  const uint8_t *end = page->area + (size_t)page->capacity * page->block_size;
  for (const block_t *b = list; b != NULL; b = b->next) {
    const uint8_t *at = (const uint8_t *)b;
    if (at < page->area || at >= end || (size_t)(at - page->area) % page->block_size != 0) {
      problem(c, page, "free list points outside the page's blocks:", b);
      break;
    }
    size_t index = (size_t)(at - page->area) / page->block_size;
    if (seen[index / 64] & ((uint64_t)1 << (index % 64))) {
      problem(c, page, "block twice on the free lists (a cycle or a double free):", b);
      break;
    }
    seen[index / 64] |= (uint64_t)1 << (index % 64);
    count++;
  }
  return count;
}

static void check_page(checker *c, heap_t *heap, page_t *page, bool on_full_list) {
  c->carved_bytes += (size_t)page->capacity * page->block_size;
  uint8_t flags = atomic_load_relaxed(&page->xflags);
  if (!(flags & PAGE_IN_USE)) problem(c, page, "queued page not marked in use", page);
  if (on_full_list != ((flags & PAGE_IN_FULL) != 0))
    problem(c, page, "IN_FULL flag disagrees with the list holding the page", page);
  if (page->block_size != class_size[page->size_class])
    problem(c, page, "block size is not its class's", page);
  if (page->capacity > page->reserved || page->capacity > MAX_BLOCKS_PER_PAGE) {
    problem(c, page, "more blocks carved than fit", page);
    return;
  }
  heap_t *tag = atomic_load_relaxed(&page->xowner_tag);
  bool plain = !diag_counting && !(flags & (PAGE_HAS_ALIGNED | PAGE_IN_FULL));
  if (tag != (plain ? heap : NULL)) problem(c, page, "owner tag is wrong:", tag);
  uint64_t seen[MAX_BLOCKS_PER_PAGE / 64] = {0};
  size_t free_blocks = walk_list(c, page, page->free, seen);
  free_blocks += walk_list(c, page, page->local_free, seen);
  /* capacity = used - pin + |free| + |local_free|, counting blocks on their
   * way back from other threads (remote list, delayed list) as used; a warm
   * page's pin is one count in used that is no block. */
  bool warm = (flags & PAGE_WARM) != 0;
  if (warm && c->warm_pages[page->size_class] < UINT8_MAX) c->warm_pages[page->size_class]++;
  bool class_warm = heap_class_has_warm(heap, page->size_class);
  if (warm && !class_warm) problem(c, page, "warm page of a class not marked warm:", page);
  if (warm && page->used == 0) {
    problem(c, page, "warm page without its pin", page);
    return;
  }
  size_t used = page->used - (warm ? 1 : 0);
  if (used + free_blocks > page->capacity)
    problem(c, page, "used + free blocks exceed the carved blocks", page);
  bool pending = (atomic_load_acquire(&page->xthread_free) & ~XFREE_NOTIFY) != 0 ||
                 atomic_load_acquire(&heap->xdelayed) != NULL;
  if (!pending && used + free_blocks != page->capacity)
    problem(c, page, "blocks lost: used + free blocks < carved blocks", page);
}

static void check_queue(checker *c, heap_t *heap, page_queue_t *queue, bool full) {
  const page_t *previous = NULL;
  for (page_t *page = queue->first; page != NULL; page = page->next) {
    if (page->prev != previous) problem(c, page, "queue back-link broken at", page);
    check_page(c, heap, page, full);
    previous = page;
  }
  if (queue->last != previous) problem(c, queue->first, "queue's last page is wrong:", queue->last);
}

int brisk_heap_check(void) {
  heap_t *heap = heap_current();
  if (heap == &heap_empty) return 0;
  checker c = {0};
  brief_lock_acquire(&heap->pages_lock); /* the background purger may be retiring pages */
  for (unsigned size_class = 0; size_class < CLASS_COUNT; size_class++) {
    check_queue(&c, heap, &heap->queues[size_class], false);
    unsigned first, last;
    size_class_direct_slots(size_class, &first, &last);
    page_t *expected = allocs_take_long_way || heap->queues[size_class].first == NULL
                           ? &page_empty
                           : heap->queues[size_class].first;
    for (unsigned slot = first; slot <= last; slot++)
      if (heap->direct[slot] != expected)
        problem(&c, heap->direct[slot], "fast-path slot does not point at its class's first page",
                (void *)(uintptr_t)slot);
  }
  check_queue(&c, heap, &heap->full, true);
  for (unsigned size_class = 0; size_class < CLASS_COUNT; size_class++) {
    bool marked = heap_class_has_warm(heap, size_class);
    if (c.warm_pages[size_class] == (marked ? 1 : 0)) continue;
    c.problems++;
    msg_printf(2, "brisk: heap check: class %u has %u warm pages but is marked %s\n", size_class,
               c.warm_pages[size_class], marked ? "warm" : "not warm");
  }
  /* mallinfo's counts: carved blocks of the pages in use, arena chunks in use */
  if (c.carved_bytes != counter_get(heap->carved_bytes)) {
    c.problems++;
    msg_printf(2, "brisk: heap check: the heap counts %zu bytes carved, its pages hold %zu\n",
               counter_get(heap->carved_bytes), c.carved_bytes);
  }
  brief_lock_release(&heap->pages_lock);
  size_t walked, counted;
  arena_in_use_walk(heap, &walked, &counted);
  if (walked != counted) {
    c.problems++;
    msg_printf(2, "brisk: heap check: the arena counts %zu bytes in use, its chunks hold %zu\n",
               counted, walked);
  }
  return c.problems;
}
