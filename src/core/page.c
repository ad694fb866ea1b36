/* SPDX-License-Identifier: MIT */
/* Pages: runs of blocks of one size class, carved lazily, with the queues a
 * heap keeps them on and the free lists inside them.
 *
 * A heap keeps, per size class, a queue of pages that may have free blocks;
 * the first one is what direct[] points at. A page found with nothing free
 * is parked on the heap's full list with XFREE_NOTIFY set, so it costs no
 * more scans until a free brings it back (see free.c). */
#include "core.h"

page_t page_empty; /* free == NULL: every fast path through it fails */
uintptr_t free_secret =
    (uintptr_t)0x9e3779b97f4a7c15u; /* replaced at start-up, before any block exists */

void brief_lock_wait(brief_lock_t *lock) {
  event_note(EVENT_LOCK_WAIT);
  for (unsigned tries = 0;; tries++) {
    if (brief_lock_try(lock)) return;
    if (tries >= 64) platform_sleep_ms(1);
  }
}

/* Blocks carved per extension: about one OS page, so a fresh page touches
 * memory only as it is used; at least four small blocks, but one block of
 * the medium classes (above SMALL_MAX, two OS pages or more).
 * Such a page taken back resident is written as far as its earlier uses
 * reached, so every block carved ahead of need there is resident memory
 * nobody uses, and on a fresh page it raises how far the next use finds the
 * page written: a pool whose bursts end with each class's last page
 * part-carved peaks higher. */
#define EXTEND_BYTES 4096
#define EXTEND_MIN_BLOCKS 4

static uint8_t flags_of(const page_t *page) {
  return atomic_load_relaxed(&page->xflags);
}

/* Every change of flags re-derives the owner tag (the invariant in types.h). */
static void flags_set(heap_t *heap, page_t *page, uint8_t flags) {
  atomic_store_relaxed(&page->xflags, flags);
  bool plain =
      !diag_counting && (flags & PAGE_IN_USE) && !(flags & (PAGE_HAS_ALIGNED | PAGE_IN_FULL));
  atomic_store_relaxed(&page->xowner_tag, plain ? heap : NULL);
}

/* ---- queues ------------------------------------------------------------------ */
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

/* The fast path's view of a class: direct[] points at its first page. */
static void direct_update(heap_t *heap, unsigned size_class) {
  if (allocs_take_long_way) return; /* its fast path stays empty */
  unsigned first, last;
  size_class_direct_slots(size_class, &first, &last);
  page_t *page = heap->queues[size_class].first;
  if (page == NULL) page = &page_empty;
  for (unsigned slot = first; slot <= last; slot++)
    heap->direct[slot] = page;
}

#ifdef BRISK_DEBUG
/* Checks a queue's links and each page's counts after every queue move. */
static void queue_verify(const heap_t *heap, const page_queue_t *queue) {
  const page_t *previous = NULL;
  for (const page_t *page = queue->first; page != NULL; page = page->next) {
    brisk_assert(page->prev == previous);
    brisk_assert(flags_of(page) & PAGE_IN_USE);
    brisk_assert(page->capacity <= page->reserved);
    uint8_t flags = flags_of(page);
    brisk_assert(page->used <= page->capacity + ((flags & PAGE_WARM) != 0));
    bool plain = !diag_counting && !(flags & (PAGE_HAS_ALIGNED | PAGE_IN_FULL));
    brisk_assert(atomic_load_relaxed(&page->xowner_tag) == (plain ? heap : NULL));
    brisk_assert(((flags & PAGE_IN_FULL) != 0) == (queue == &heap->full));
    previous = page;
  }
  brisk_assert(queue->last == previous);
}
#define QUEUE_VERIFY(heap, queue) queue_verify((heap), (queue))
#else
#define QUEUE_VERIFY(heap, queue) ((void)0)
#endif

static void page_move_to_front(heap_t *heap, page_t *page) {
  page_queue_t *queue = &heap->queues[page->size_class];
  if (queue->first != page) {
    queue_remove(queue, page);
    queue_push_front(queue, page);
  }
  direct_update(heap, page->size_class);
  QUEUE_VERIFY(heap, queue);
}

/* ---- blocks -------------------------------------------------------------------- */
uint8_t *page_block_start(const page_t *page, const void *p) {
  size_t offset = (size_t)((const uint8_t *)p - page->area);
  return page->area + offset - offset % page->block_size;
}

/* Takes in the page's remote frees; returns how many arrived. When both
 * free lists are in use, which only a page being retired or unparked meets
 * (page_collect leaves a page with blocks on `free` alone), local_free is
 * walked to its end, not the remote list: most often it holds a few blocks
 * freed on the owner's slow paths, where a remote list can hold a quarter
 * of the page, each block on it last written by another core. (A page that
 * left the full list with remote frees keeps those there too, until its
 * `free` runs dry.) */
static inline size_t collect_thread_free(page_t *page) {
  if (atomic_load_relaxed(&page->xthread_free) == 0) return 0;
  xfree_word_t taken = atomic_exchange_acquire(&page->xthread_free, 0);
  block_t *head = XFREE_BLOCK(taken);
  if (head == NULL) return 0;
  uint32_t count = XFREE_COUNT(taken);
  if (page->local_free == NULL) {
    page->local_free = head;
  } else if (page->free == NULL) {
    page->free = page->local_free;
    page->local_free = head;
  } else {
    block_t *tail = page->local_free;
    while (tail->next != NULL)
      tail = tail->next;
    tail->next = head;
  }
  brisk_assert(page->used >= count);
  page->used -= count;
  /* Counted here, by whoever takes the list in, so that a remote free costs
   * the freeing thread nothing more (brisk top's rate). */
  heap_t *owner = segment_of(page)->owner;
  counter_add(owner->activity.remote_frees_in, count);
  return count;
}

/* A page with blocks on `free` is left as it is: the owner's own frees
 * keep it stocked, and taking in the remote list then meant walking it to
 * its end, one cache miss after another on blocks last written by other
 * cores, which a pool of threads that free each other's blocks paid on
 * every collect. Its remote frees come in once `free`
 * runs dry, with one exchange. */
bool page_collect(page_t *page) {
  if (page->free != NULL) return true;
  collect_thread_free(page);
  if (page->free == NULL && page->local_free != NULL) {
    page->free = page->local_free;
    page->local_free = NULL;
  }
  return page->free != NULL;
}

/* A medium block carved from a page that was fresh or purged when it was
 * taken (taken_fresh) is faulted in whole with one call: its
 * program most often writes all of a block of 8 KiB or more, an OS page at
 * a time, and each first write was a fault of its own. The price: a block
 * that its program leaves mostly unwritten is resident whole. Not small
 * blocks, carved an OS page at a time (EXTEND_BYTES), nor the arena's
 * (which a program is likelier to write only in part, and whose free
 * chunks stay resident longer: populating them gained nothing). */
static void populate_block(uint8_t *block, size_t size) {
  uintptr_t from = align_up((uintptr_t)block, os_page_size());
  uintptr_t to = ((uintptr_t)block + size) & ~(uintptr_t)(os_page_size() - 1);
  if (to > from + os_page_size()) memory_populate((void *)from, to - from);
}

/* ---- counting carved bytes ------------------------------------------------------
 * mallinfo's in-use bytes come from a count each heap keeps of the blocks
 * carved on its pages in use (heap_t's carved_bytes), moved only where a
 * page's carved blocks change: carving, a page taken with the blocks it
 * kept, a page retired. The fast paths move blocks between a page's `free`
 * and the program, and count nothing: a block free on a page in use counts
 * as in use, as glibc counts the blocks in a thread's tcache, and so do
 * blocks freed by other threads until the page retires. Each heap's count is
 * changed by whoever may change its queues (its thread, under pages_lock or
 * its busy mark; the background purger and brisk_collect(), under
 * pages_lock with the thread kept out; a thread that claimed the heap), one
 * at a time, so a plain read-modify-write stored with a relaxed store is
 * enough for the relaxed loads of the threads that sum them
 * (stats_usage_get). */
static void carved_note(heap_t *heap, const page_t *page, int64_t blocks) {
  int64_t bytes = blocks * (int64_t)page->block_size;
  counter_add(heap->carved_bytes, (size_t)bytes);
  counter_add(heap->activity.class_carved[page->size_class], (uint64_t)bytes);
}

static void page_extend(heap_t *heap, page_t *page) {
  size_t size = page->block_size;
  unsigned count = (unsigned)(EXTEND_BYTES / size);
  if (count < EXTEND_MIN_BLOCKS) count = size > SMALL_MAX ? 1 : EXTEND_MIN_BLOCKS;
  unsigned remaining = (unsigned)(page->reserved - page->capacity);
  if (count > remaining) count = remaining;
  uint8_t *start = page->area + (size_t)page->capacity * size;
  if (size > SMALL_MAX && page->taken_fresh) populate_block(start, size);
  /* Fresh blocks carry the free cookie like every other free block, so a
   * free of one (a pointer just past a live block, say) is caught. */
  uintptr_t cookie = free_cookie();
  uint8_t *at = start;
  /* Two blocks a round: writing the links is most of what a fresh page costs. */
  for (unsigned pairs = (count - 1) / 2; pairs > 0; pairs--) {
    block_t *first = (block_t *)at, *second = (block_t *)(at + size);
    first->next = second;
    first->cookie = cookie;
    second->next = (block_t *)(at + 2 * size);
    second->cookie = cookie;
    at += 2 * size;
  }
  if ((count - 1) % 2 != 0) {
    ((block_t *)at)->next = (block_t *)(at + size);
    ((block_t *)at)->cookie = cookie;
    at += size;
  }
  block_t *last = (block_t *)at;
  last->next = page->free;
  last->cookie = cookie;
  page->free = (block_t *)start;
  uint32_t capacity = page->capacity + count;
  carved_note(heap, page, count);
  /* Remote freers read both to validate their pointers. */
  shared_store_relaxed(&page->capacity, capacity);
  shared_store_relaxed(&page->carved_limit, (uint64_t)capacity * page->block_excess);
  uint32_t carved_end = capacity * page->block_size;
  if (carved_end > page->written_end) page->written_end = carved_end;
}

/* ---- page life: fresh, parked, retired ------------------------------------------- */
/* Parks a page with nothing free on the full list; false when a remote free
 * arrived meanwhile (collect again instead). */
static bool page_park(heap_t *heap, page_t *page) {
  xfree_word_t expected = 0;
  if (!atomic_cas_strong_acq_rel(&page->xthread_free, &expected, XFREE_NOTIFY)) return false;
  page_queue_t *queue = &heap->queues[page->size_class];
  bool was_first = queue->first == page;
  queue_remove(queue, page);
  flags_set(heap, page, flags_of(page) | PAGE_IN_FULL); /* local frees must come and unpark it */
  queue_push_back(&heap->full, page);
  if (was_first) direct_update(heap, page->size_class);
  QUEUE_VERIFY(heap, queue);
  QUEUE_VERIFY(heap, &heap->full);
  return true;
}

static void page_unpark(heap_t *heap, page_t *page) {
  queue_remove(&heap->full, page);
  collect_thread_free(page); /* clears XFREE_NOTIFY */
  flags_set(heap, page, flags_of(page) & ~PAGE_IN_FULL);
  page_queue_t *queue = &heap->queues[page->size_class];
  queue_push_back(queue, page);
  if (queue->first == page) direct_update(heap, page->size_class);
  QUEUE_VERIFY(heap, queue);
  QUEUE_VERIFY(heap, &heap->full);
}

page_t *page_queue_find_free(heap_t *heap, unsigned size_class, bool may_carve) {
  page_queue_t *queue = &heap->queues[size_class];
  page_t *page = queue->first;
  while (page != NULL) {
    page_collect(page);
    bool carvable = page->capacity < page->reserved;
    if (page->free == NULL && carvable && may_carve) page_extend(heap, page);
    if (page->free != NULL) {
      page_move_to_front(heap, page);
      return page;
    }
    page_t *next = page->next;
    if (carvable)
      page = next; /* room left, not carved yet: not full */
    else if (page_park(heap, page))
      page = next; /* else: a remote free came in, look at it again */
  }
  return NULL;
}

/* A medium block is several OS pages, and a thread that asks for many
 * medium sizes would otherwise keep a few free blocks of each class
 * resident while carving new memory for the next class up or down, and
 * hold far more than it has live. So before carving, a medium request takes a block that is already
 * free in a class up to one doubling larger: memory that is resident
 * anyway, at the cost of a bigger block than asked for. Only the first page
 * of each class is looked at, so this costs a few loads per refill. */
#define BORROW_CLASSES 8 /* one doubling: 8 classes per doubling */

page_t *page_borrow_larger(heap_t *heap, unsigned size_class) {
  unsigned last = size_class + BORROW_CLASSES;
  for (unsigned larger = size_class + 1; larger <= last && larger < CLASS_COUNT; larger++) {
    page_t *page = heap->queues[larger].first;
    if (page != NULL && page_collect(page)) return page; /* first in its queue already */
  }
  return NULL;
}

/* floor(2^64 / size) + 1 (see page_is_block_start). */
static uint64_t block_magic_of(uint32_t size) {
  uint64_t quotient = UINT64_MAX / size;
  if (UINT64_MAX % size == size - 1) quotient++; /* size divides 2^64 */
  return quotient + 1;
}

/* ---- warm pages ---------------------------------------------------------------
 * A live thread's heap keeps one page per small or medium class *warm*: the
 * page holds one extra count in `used`, a pin, so the free that gives back
 * its last block does not bring `used` to zero and retires nothing. A loop
 * that allocates and frees one block at a page boundary (one string built
 * and dropped at a time), or a pool thread that frees everything at the end
 * of each burst, would otherwise build and tear down a page, and fault it in
 * again, each time; and the pin costs the free path nothing, where testing
 * "is this the page to keep?" at every emptying free did. Housekeeping
 * unpins a warm page that is empty while its class has other pages; thread
 * exit, brisk_collect() and the sweep of abandoned heaps unpin them all
 * (except that while threads come and go an exiting thread leaves them to
 * the thread that adopts its heap, see collect_thread_exit). */
static void class_warm_set(heap_t *heap, unsigned size_class, bool warm) {
  uint64_t bit = (uint64_t)1 << (size_class % 64);
  if (warm)
    heap->warm_classes[size_class / 64] |= bit;
  else
    heap->warm_classes[size_class / 64] &= ~bit;
}

/* Whether a fresh page for the class is to be its warm page: the class has
 * none, and the heap's thread runs. */
static bool page_wants_pin(heap_t *heap, unsigned size_class) {
  return !heap_class_has_warm(heap, size_class) &&
         atomic_load_relaxed(&heap->xstate) == HEAP_IN_USE;
}

/* Makes a fresh page its class's warm page. */
static void page_pin(heap_t *heap, page_t *page) {
  class_warm_set(heap, page->size_class, true);
  flags_set(heap, page, flags_of(page) | PAGE_WARM);
  page->used++;
}

/* Takes the pin out; true when no block of the page is left in use. */
static bool page_unpin(heap_t *heap, page_t *page) {
  brisk_assert(flags_of(page) & PAGE_WARM);
  brisk_assert(page->used >= 1);
  class_warm_set(heap, page->size_class, false);
  flags_set(heap, page, flags_of(page) & ~PAGE_WARM);
  return --page->used == 0;
}

/* Lays a page out for a class, with no block carved yet. */
static void page_lay_out(page_t *page, unsigned size_class) {
  page->block_size = class_size[size_class];
  page->block_magic = block_magic_of(page->block_size);
  page->block_excess = (uint32_t)(page->block_size * page->block_magic); /* mod 2^64 */
  page->size_class = (uint8_t)size_class;
  size_t bytes = segment_page_bytes(segment_of(page), page, &page->area);
  page->reserved = (uint16_t)(bytes / page->block_size);
  shared_store_relaxed(&page->capacity, 0);
  shared_store_relaxed(&page->carved_limit, 0);
  page->free = NULL;
  page->local_free = NULL;
}

/* A page taken again by the class it served, still resident, keeps the
 * blocks it carved on its lists: handing them out needs no carving, which
 * rewrote every block's link: the main cost of a program that allocates
 * thousands of blocks and frees them all, round after round. */
page_t *page_fresh(heap_t *heap, unsigned size_class, bool may_map) {
  bool pin = page_wants_pin(heap, size_class);
  page_t *page = segment_page_alloc(heap, size_class_kind(size_class), size_class, may_map, pin);
  if (page == NULL) return NULL;
  if (!page->blocks_kept || page->size_class != size_class) {
    page_lay_out(page, size_class);
  } else if (page->free == NULL) {
    page->free = page->local_free;
    page->local_free = NULL;
  }
  page->blocks_kept = false;
  carved_note(heap, page, page->capacity); /* what it kept; 0 when laid out afresh */
  page->used = 0;
  atomic_store_relaxed(&page->xthread_free, 0);
  flags_set(heap, page, PAGE_IN_USE);
  if (pin) page_pin(heap, page);
  if (page->free == NULL) page_extend(heap, page);
  queue_push_front(&heap->queues[size_class], page);
  direct_update(heap, size_class);
  QUEUE_VERIFY(heap, &heap->queues[size_class]);
  return page;
}

/* Retires a page whose blocks have all come back: its remote frees taken
 * in and its pin taken out, all the blocks it carved are on its two lists,
 * and stay there while it is resident: a small page keeps them for its
 * class (blocks_kept). */
static void retire_from_queue(heap_t *heap, page_queue_t *queue, page_t *page) {
  collect_thread_free(page);
  if (flags_of(page) & PAGE_WARM) page_unpin(heap, page);
  brisk_assert(page->used == 0 && atomic_load_relaxed(&page->xthread_free) == 0);
  page->blocks_kept = page->block_size <= SMALL_MAX;
  carved_note(heap, page, -(int64_t)page->capacity);
  bool was_first = queue->first == page;
  queue_remove(queue, page);
  flags_set(heap, page, 0); /* no longer in use: frees of it take the slow path */
  if (was_first) direct_update(heap, page->size_class);
  QUEUE_VERIFY(heap, queue);
  segment_page_free(heap, page);
}

static void page_retire_locked(heap_t *heap, page_t *page) {
  brisk_assert(!(flags_of(page) & PAGE_WARM)); /* its pin keeps `used` above zero */
  if (flags_of(page) & PAGE_IN_FULL) page_unpark(heap, page);
  retire_from_queue(heap, &heap->queues[page->size_class], page);
}

void page_retire(heap_t *heap, page_t *page) {
  brief_lock_acquire(&heap->pages_lock);
  page_retire_locked(heap, page);
  brief_lock_release(&heap->pages_lock);
}

void page_free_locked(heap_t *heap, page_t *page, block_t *block) {
  if (flags_of(page) & PAGE_IN_FULL) page_unpark(heap, page);
  block->next = page->local_free;
  page->local_free = block;
  brisk_assert(page->used > 0);
  if (--page->used == 0) page_retire_locked(heap, page);
}

/* The page's blocks in use, its pin included: `used` less the remote frees
 * waiting on its list (more may come meanwhile, never fewer). */
static uint32_t page_in_use(const page_t *page) {
  return page->used - XFREE_COUNT(atomic_load_relaxed(&page->xthread_free));
}

/* Only the pages it retires take in their remote frees (see page_collect). */
void page_collect_heap(heap_t *heap, bool force) {
  for (unsigned size_class = 0; size_class < CLASS_COUNT; size_class++) {
    page_queue_t *queue = &heap->queues[size_class];
    for (page_t *page = queue->first, *next; page != NULL; page = next) {
      next = page->next;
      uint32_t in_use = page_in_use(page);
      bool warm = flags_of(page) & PAGE_WARM;
      if (warm) {
        /* Kept while it has blocks in use or is its class's only page. */
        bool alone = queue->first == page && queue->last == page;
        if (!force && (in_use > 1 || alone)) continue;
        if (in_use > 1) { /* forced: it stays, in use, without its pin */
          page_unpin(heap, page);
          continue;
        }
      } else if (in_use != 0) {
        continue;
      }
      retire_from_queue(heap, queue, page);
    }
  }
  if (!force) return;
  /* A parked warm page has every block it carved in use (or on its way
   * back), so losing the pin leaves it in use. */
  for (page_t *page = heap->full.first; page != NULL; page = page->next)
    if (flags_of(page) & PAGE_WARM) {
      bool empty = page_unpin(heap, page);
      brisk_assert(!empty);
      (void)empty;
    }
}

/* ---- an idle heap's empty pages ------------------------------------------------
 * A thread that frees other threads' blocks and then waits (a pool between
 * bursts of work) leaves them on their owners' remote lists, and an owner
 * that waits too never takes them in: its pages stay in use, every block in
 * them free, and nothing purges them. The background purger retires such
 * pages itself, under the heap's pages_lock; the owner's fast paths, which
 * take no lock, never touch them (heap_t's pages_lock, types.h, says why).
 * Such a page is one whose `used`, read with acquire order (page_used_drop),
 * counts only its remote frees and its pin (remote_collect_idle first moves
 * blocks on the heap's delayed list onto their pages' remote lists where it
 * can). A parked page is left to its owner. */
static bool page_all_back(const page_t *page) {
  xfree_word_t remote = atomic_load_acquire(&page->xthread_free);
  if (remote & XFREE_NOTIFY) return false;
  uint32_t pin = (flags_of(page) & PAGE_WARM) != 0;
  uint32_t used = shared_load_acquire(&page->used);
  /* A count of zero is the owner's free of the last block, on its way to
   * page_retire (waiting for the lock): that page is the owner's to retire. */
  return used == pin + XFREE_COUNT(remote) && used != 0;
}

size_t page_release_idle(heap_t *heap) {
  size_t released = 0;
  for (unsigned size_class = 0; size_class < CLASS_COUNT; size_class++) {
    page_queue_t *queue = &heap->queues[size_class];
    if (queue->first == NULL) continue;
    /* The owner takes medium blocks under the lock, even from the first
     * page. */
    page_t *start = class_size[size_class] > SMALL_MAX ? queue->first : queue->first->next;
    for (page_t *page = start, *next; page != NULL; page = next) {
      next = page->next;
      if (!page_all_back(page)) continue;
      /* No remote free can come now (every block is free), so the list
       * the retirement takes in is the one counted; it joins local_free,
       * where a later taker of the page for this class finds it. */
      retire_from_queue(heap, queue, page);
      released++;
    }
  }
  return released;
}

/* Marks a page whose block is handed out at an interior offset, so frees and
 * size queries find the block start. */
void page_mark_aligned(heap_t *heap, page_t *page) {
  if (flags_of(page) & PAGE_HAS_ALIGNED) return;
  flags_set(heap, page, flags_of(page) | PAGE_HAS_ALIGNED);
}
