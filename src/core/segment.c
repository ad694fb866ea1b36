/* SPDX-License-Identifier: MIT */
/* Segments: SEGMENT_SIZE-aligned mappings cut into pages of one size (small
 * or medium), owned by a heap. A heap lists its segments that still
 * have a free page; a segment whose pages are all free goes to a
 * process-wide cache, where it is purged after the delay (without the
 * background purger, at once past a few resident ones) and unmapped when the
 * cache is full. */
#include "core.h"

#include <string.h>

static const uint8_t kind_page_shift[SEGMENT_KIND_COUNT] = {
    [SEGMENT_SMALL] = SMALL_PAGE_SHIFT,
    [SEGMENT_MEDIUM] = MEDIUM_PAGE_SHIFT,
    [SEGMENT_HUGE] = HUGE_PAGE_SHIFT,
};

/* Whole free segments, for any heap (the policy's SEGMENT_CACHE_*, core.h);
 * the one that does not fit is unmapped. */
static span_cache cache = {
    .lock = PLATFORM_LOCK_INIT, .capacity = SEGMENT_CACHE_MAX, .evict_oldest = false};

/* When a thread last took up an exited thread's heap (see segment_release). */
static _Atomic(uint64_t) xlast_adoption_ms;

void segment_cache_note_adoption(uint64_t now) {
  atomic_store_relaxed(&xlast_adoption_ms, now);
}

static bool adopted_lately(uint64_t now) {
  long delay = option_get(OPTION_PURGE_DELAY);
  return delay > 0 && atomic_load_relaxed(&xlast_adoption_ms) + (uint64_t)delay > now;
}

void segment_cache_after_fork(void) {
  span_cache_after_fork(&cache);
}

static size_t header_size(uint16_t page_count) {
  return align_up(sizeof(segment_t) + page_count * sizeof(page_t), 128);
}

/* The OS pages holding the header and page descriptors, never purged. The
 * largest header (small pages) is counted as committed for every segment, so
 * the count stays right when a cached segment changes kind. */
static size_t header_os_bytes(const segment_t *segment) {
  return align_up(header_size(segment->page_count), os_page_size());
}
#define HEADER_COMMITTED align_up(header_size(MAX_PAGES_PER_SEGMENT), os_page_size())

size_t segment_page_bytes(const segment_t *segment, const page_t *page, uint8_t **area) {
  uint8_t *base = (uint8_t *)segment;
  uint8_t *start = base + ((size_t)page->index << segment->page_shift);
  uint8_t *end = start + ((size_t)1 << segment->page_shift);
  if (page->index == 0) start = base + header_size(segment->page_count);
  if (area != NULL) *area = start;
  return (size_t)(end - start);
}

/* The OS-page-aligned part of a page that can be purged (page 0 keeps the
 * header's OS pages). */
static void page_purge_range(const segment_t *segment, const page_t *page, uint8_t **start,
                             size_t *size) {
  uint8_t *area;
  size_t bytes = segment_page_bytes(segment, page, &area);
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)area, os_page_size());
  *start = aligned;
  *size = bytes - (size_t)(aligned - area);
}

/* Lays out an empty segment for pages of kind, committing its header. */
static bool segment_layout(segment_t *segment, heap_t *heap, segment_kind kind) {
  uint8_t shift = kind_page_shift[kind];
  uint16_t count = (uint16_t)(SEGMENT_SIZE >> shift);
  if (!memory_commit(segment, align_up(header_size(count), os_page_size()))) return false;
  segment->owner = heap;
  segment->size = SEGMENT_SIZE;
  segment_set_page_shift(segment, shift);
  segment->kind = (uint8_t)kind;
  segment->page_count = count;
  segment->used_pages = 0;
  segment->free_mask = count == 64 ? UINT64_MAX : ((uint64_t)1 << count) - 1;
  segment->dirty_mask = 0;
  segment->listed = false;
  segment->next = segment->prev = NULL;
  memset(segment->pages, 0, count * sizeof(page_t));
  for (uint16_t i = 0; i < count; i++)
    segment->pages[i].index = (uint8_t)i;
  return true;
}

/* A heap's list of segments with a free page; `listed` says whether the
 * segment is on it. */
static void list_push(segment_list_t *list, segment_t *segment) {
  segment->prev = NULL;
  segment->next = list->first;
  if (list->first != NULL) list->first->prev = segment;
  list->first = segment;
  segment->listed = true;
}

static void list_remove(segment_list_t *list, segment_t *segment) {
  if (segment->prev != NULL)
    segment->prev->next = segment->next;
  else
    list->first = segment->next;
  if (segment->next != NULL) segment->next->prev = segment->prev;
  segment->next = segment->prev = NULL;
  segment->listed = false;
}

/* Free pages not purged yet, in bytes. (The bits are counted by hand:
 * __builtin_popcountll becomes a libgcc call without -mpopcnt, and the
 * Pascal unit links libbrisk.a without libgcc.) */
static size_t dirty_bytes(const segment_t *segment) {
  size_t pages = 0;
  for (uint64_t mask = segment->dirty_mask; mask != 0; mask &= mask - 1)
    pages++;
  return pages << segment->page_shift;
}

static void segment_unmap(segment_t *segment) {
  memory_note_committed(-(ptrdiff_t)(dirty_bytes(segment) + HEADER_COMMITTED));
  segment_map_set(segment, false);
  memory_release(segment, segment->size);
}

/* Purge every dirty page of a segment nobody uses (in the cache). The pages
 * are marked purged before the purge, as purge_segment_expired does: a fork
 * in between leaves the child pages it will commit again before use, never
 * pages it believes resident that are not (a fault where decommitting
 * really takes the memory away, as in BRISK_DEBUG builds). */
static void segment_purge_all(segment_t *segment) {
  size_t bytes = dirty_bytes(segment);
  if (bytes == 0) return;
  segment->dirty_mask = 0;
  for (uint16_t i = 0; i < segment->page_count; i++)
    atomic_store_relaxed(&segment->pages[i].xflags, 0);
  memory_note_committed(-(ptrdiff_t)bytes);
  size_t keep = header_os_bytes(segment);
  memory_purge((uint8_t *)segment + keep, segment->size - keep);
}

/* Reusing resident pages for the class they served before, the one carved
 * furthest first. A resident page holds what its last class carved; a class
 * given another class's page, or its own partly carved one while a fuller one
 * waits, carves past what is resident and leaves the rest resident unused,
 * so a program that frees everything and allocates the same again (a pool
 * between bursts of work) would grow its resident set with every round
 * (DESIGN.md, "Segments and the OS"). */

/* At most this many segment headers and free resident pages' descriptors
 * are read to find one page (on the way to page faults that reuse may save). */
#define RESIDENT_SEARCH_PAGES 16

/* segment's free resident page that last served size_class with more blocks
 * carved than *carved (0 to begin with), the most, or -1; *carved is raised
 * to its count. *budget counts the pages looked at down, and drops to 0 at a
 * page carved whole: none can be better. */
static int resident_page_of_class(const segment_t *segment, unsigned size_class, uint32_t *carved,
                                  unsigned *budget) {
  int best = -1;
  for (uint64_t mask = segment->dirty_mask; mask != 0 && *budget != 0; mask &= mask - 1) {
    (*budget)--;
    unsigned index = (unsigned)__builtin_ctzll(mask);
    const page_t *page = &segment->pages[index];
    if (page->size_class != size_class) continue;
    uint32_t count = shared_load_relaxed(&page->capacity); /* >= 1 once used */
    if (count <= *carved) continue;
    best = (int)index;
    *carved = count;
    if (count == page->reserved) *budget = 0;
  }
  return best;
}

/* A cached segment of the same kind keeps its layout; the best has a
 * resident page that served the class, carved furthest. Any other will do.
 * Small-page segments are taken by kind alone: their 64 descriptors are too
 * many to read under the cache's lock. */
#define CACHE_FIT_SAME_KIND 65536
static int64_t cache_fit(segment_t *segment, size_t want) {
  segment_kind kind = (segment_kind)(want >> 8);
  if (segment->kind != kind) return 2 * CACHE_FIT_SAME_KIND;
  if (kind == SEGMENT_SMALL) return 0;
  uint32_t carved = 0;
  unsigned budget = RESIDENT_SEARCH_PAGES;
  if (resident_page_of_class(segment, (unsigned)(want & 255), &carved, &budget) < 0)
    return CACHE_FIT_SAME_KIND;
  return CACHE_FIT_SAME_KIND - 1 - (int64_t)carved; /* carved <= page.reserved < 2^16 */
}

/* Only a cached segment of the same kind with a resident page: one whose
 * pages cost no faults. */
static int64_t cache_fit_resident(segment_t *segment, size_t want) {
  if (segment->kind != (segment_kind)(want >> 8) || segment->dirty_mask == 0) return -1;
  return cache_fit(segment, want);
}

/* Whether the cache may hold a segment of each kind with resident pages: set
 * when one goes in, cleared by a search that finds none. Only a hint, read
 * without the cache's lock, so that a heap short of pages does not take the
 * lock for nothing each time. */
static _Atomic(uint8_t) xcache_resident[SEGMENT_KIND_COUNT];

/* A segment for heap: from the cache, else (when may_map) newly mapped. With
 * resident_only, only a cached one with resident pages, or NULL. */
static segment_t *segment_alloc(heap_t *heap, segment_kind kind, unsigned size_class, bool may_map,
                                bool resident_only) {
  if (resident_only && !atomic_load_relaxed(&xcache_resident[kind])) return NULL;
  segment_t *segment = span_cache_take(&cache, resident_only ? cache_fit_resident : cache_fit,
                                       ((size_t)kind << 8) | size_class);
  if (segment == NULL) {
    if (resident_only) atomic_store_relaxed(&xcache_resident[kind], 0); /* none there */
    if (resident_only || !may_map) return NULL;
  }
  event_note(EVENT_SEGMENT);
  if (segment != NULL) {
    if (segment->kind == kind) { /* same layout: keep the pages' dirty state */
      segment->owner = heap;
      segment->listed = false;
    } else {
      segment_purge_all(segment); /* a new layout forgets which pages are resident */
      if (!segment_layout(segment, heap, kind)) {
        segment_unmap(segment);
        return NULL;
      }
    }
    return segment;
  }
  segment = memory_reserve(SEGMENT_SIZE, SEGMENT_SIZE, 0);
  if (segment == NULL) return NULL;
  memory_note_committed((ptrdiff_t)HEADER_COMMITTED);
  /* XFREE_HOLDS: see XFREE_COUNT_SHIFT */
  if (!XFREE_HOLDS((uintptr_t)segment) || !segment_layout(segment, heap, kind)) {
    segment_unmap(segment);
    return NULL;
  }
  segment_map_set(segment, true);
  return segment;
}

static bool segment_is_resident(const segment_t *segment) {
  return segment->dirty_mask != 0;
}

/* A segment with no page in use leaves its heap for the cache. */
static void segment_release(heap_t *heap, segment_t *segment) {
  if (segment->listed) list_remove(&heap->segments[segment->kind], segment);
  heap->dirty_bytes -= dirty_bytes(segment);
  segment->owner = NULL;
  /* Resident until it has waited cache_resident_ms() (or the next heap to
   * take it); without the purger, or while threads come and go, only while
   * the cache holds few resident ones. */
  long delay = option_get(OPTION_PURGE_DELAY);
  bool few = memory_purge_eagerly() || adopted_lately(platform_clock_ms());
  if (delay == 0 || (few && delay > 0 && segment_is_resident(segment) &&
                     span_cache_count(&cache, segment_is_resident) >= SEGMENT_CACHE_RESIDENT_MAX))
    segment_purge_all(segment);
  if (segment_is_resident(segment)) atomic_store_relaxed(&xcache_resident[segment->kind], 1);
  if (span_cache_push(&cache, segment, platform_clock_ms(), SIZE_MAX) != NULL)
    segment_unmap(segment);
}

/* The OS pages past the new class's first block that earlier uses wrote are
 * purged, when they come to WARM_TRIM_MIN or more, and committed again at once
 * (the page is in use). Not with huge pages, which a partial purge would
 * split, nor when free memory is to stay resident (BRISK_PURGE_DELAY=never). */
static bool trim_for_class(segment_t *segment, page_t *page, unsigned size_class) {
  if (option_get(OPTION_HUGE_PAGES) || memory_purge_never()) return true;
  uint8_t *area;
  segment_page_bytes(segment, page, &area);
  uint8_t *from = (uint8_t *)align_up((uintptr_t)area + class_size[size_class], os_page_size());
  uint8_t *to = (uint8_t *)align_up((uintptr_t)area + page->written_end, os_page_size());
  if (to < from + WARM_TRIM_MIN) return true;
  page->written_end = (uint32_t)(from - area);
  memory_purge(from, (size_t)(to - from));
  return memory_commit(from, (size_t)(to - from));
}

static page_t *page_alloc_locked(heap_t *heap, segment_kind kind, unsigned size_class, bool may_map,
                                 bool to_keep) {
  /* A resident page that served the class, carved furthest... */
  segment_t *segment = NULL, *resident = NULL;
  int index = -1;
  uint32_t carved = 0;
  unsigned budget = RESIDENT_SEARCH_PAGES;
  for (segment_t *s = heap->segments[kind].first; s != NULL && budget != 0; s = s->next) {
    budget--; /* its header is a read too */
    if (resident == NULL && s->dirty_mask != 0) resident = s;
    int found = resident_page_of_class(s, size_class, &carved, &budget);
    if (found >= 0) {
      segment = s;
      index = found;
    }
  }
  /* ...else any resident one of the heap's... */
  if (segment == NULL) segment = resident;
  /* ...else one in a cached segment, before one of the heap's that faults: a
   * heap that freed whole segments between two rounds of work would
   * otherwise fault in new pages while its old ones sat in the cache... */
  if (segment == NULL) {
    segment_t *listed = heap->segments[kind].first;
    segment_t *taken = segment_alloc(heap, kind, size_class, may_map, listed != NULL);
    if (taken != NULL) {
      list_push(&heap->segments[kind], taken);
      heap->dirty_bytes += dirty_bytes(taken);
      budget = RESIDENT_SEARCH_PAGES;
      index = resident_page_of_class(taken, size_class, &carved, &budget);
      segment = taken;
    } else if (listed != NULL) {
      segment = listed;
    } else {
      return NULL;
    }
  }
  /* ...else a purged one (or, in a segment just taken, any resident one). */
  brisk_assert(segment->free_mask != 0);
  uint64_t candidates = segment->dirty_mask != 0 ? segment->dirty_mask : segment->free_mask;
  if (index < 0) index = __builtin_ctzll(candidates);
  page_t *chosen = &segment->pages[index];
  brisk_assert(!(atomic_load_relaxed(&chosen->xflags) & PAGE_IN_USE));
  uint64_t bit = (uint64_t)1 << index;
  segment->free_mask &= ~bit;
  segment->dirty_mask &= ~bit;
  if (atomic_load_relaxed(&chosen->xflags) & PAGE_DIRTY) {
    heap->drawn_ms[kind] = platform_clock_ms();
    heap->dirty_bytes -= (size_t)1 << segment->page_shift;
    chosen->taken_fresh = false;
    if (to_keep && kind == SEGMENT_MEDIUM && chosen->size_class != size_class &&
        !trim_for_class(segment, chosen, size_class))
      return NULL;
  } else {
    uint8_t *start;
    size_t size;
    page_purge_range(segment, chosen, &start, &size);
    if (!memory_commit(start, size)) return NULL;
    memory_note_committed((ptrdiff_t)1 << segment->page_shift);
    chosen->taken_fresh = true;
    chosen->written_end = 0;     /* the only reset: a purged page is dirty again only once taken */
    chosen->blocks_kept = false; /* purged or never used: its lists are gone */
  }
  atomic_store_relaxed(&chosen->xflags, PAGE_IN_USE);
  if (++segment->used_pages == segment->page_count) list_remove(&heap->segments[kind], segment);
  return chosen;
}

page_t *segment_page_alloc(heap_t *heap, segment_kind kind, unsigned size_class, bool may_map,
                           bool to_keep) {
  lock_acquire(&heap->segments_lock);
  page_t *page = page_alloc_locked(heap, kind, size_class, may_map, to_keep);
  lock_release(&heap->segments_lock);
  return page;
}

/* Purges a segment's dirty pages that have waited delay ms by now (all,
 * when force), adjacent ones with one call. */
static void purge_segment_expired(heap_t *heap, segment_t *segment, uint64_t now, long delay,
                                  bool force) {
  uint8_t *run_start = NULL, *run_end = NULL;
  for (uint16_t i = 0; i <= segment->page_count; i++) {
    bool dirty = i < segment->page_count && ((segment->dirty_mask >> i) & 1);
    page_t *page = dirty ? &segment->pages[i] : NULL;
    bool purge = dirty && (force || page->retired_ms + (uint64_t)delay <= now);
    uint8_t *start = NULL;
    size_t size = 0;
    if (purge) page_purge_range(segment, page, &start, &size);
    if (run_start != NULL && (!purge || start != run_end)) { /* the run ends here */
      memory_purge(run_start, (size_t)(run_end - run_start));
      run_start = NULL;
    }
    if (!purge) continue;
    if (run_start == NULL) run_start = start;
    run_end = start + size;
    memory_note_committed(-((ptrdiff_t)1 << segment->page_shift));
    /* The mask first: a fork that freezes this thread in between leaves the
     * child a page it takes for purged and commits again, never one it
     * takes for resident that is not. */
    segment->dirty_mask &= ~((uint64_t)1 << i);
    atomic_store_relaxed(&page->xflags, 0);
    heap->dirty_bytes -= (size_t)1 << segment->page_shift;
  }
}

static void purge_expired_locked(heap_t *heap, uint64_t now, bool force) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (heap->dirty_bytes == 0 || (delay < 0 && !force)) return;
  for (int kind = 0; kind < SEGMENT_KIND_COUNT; kind++) {
    /* A heap drawing on its free pages of a kind keeps them: it is about
     * to take the rest (a cache refilled after its entries were removed
     * had a third of its pages purged and faulted in again). */
    if (!force && now < heap->drawn_ms[kind] + (uint64_t)delay) continue;
    for (segment_t *segment = heap->segments[kind].first; segment != NULL; segment = segment->next)
      if (segment->dirty_mask != 0) purge_segment_expired(heap, segment, now, delay, force);
  }
}

void segment_page_free(heap_t *heap, page_t *page) {
  segment_t *segment = segment_of(page);
  lock_acquire(&heap->segments_lock);
  brisk_assert(atomic_load_relaxed(&page->xowner_tag) == NULL);
  atomic_store_relaxed(&page->xflags, PAGE_DIRTY);
  page->retired_ms = platform_clock_ms();
  uint64_t bit = (uint64_t)1 << page->index; /* set last: see purge_segment_expired */
  segment->free_mask |= bit;
  segment->dirty_mask |= bit;
  heap->dirty_bytes += (size_t)1 << segment->page_shift;
  if (!segment->listed) list_push(&heap->segments[segment->kind], segment);
  if (--segment->used_pages == 0)
    segment_release(heap, segment);
  else if (option_get(OPTION_PURGE_DELAY) == 0 ||
           (memory_purge_eagerly() && heap->dirty_bytes > HEAP_DIRTY_MAX && !memory_purge_never()))
    purge_expired_locked(heap, page->retired_ms, true);
  lock_release(&heap->segments_lock);
}

void segment_purge_expired(heap_t *heap, uint64_t now, bool force) {
  lock_acquire(&heap->segments_lock);
  purge_expired_locked(heap, now, force);
  lock_release(&heap->segments_lock);
}

bool segment_purge_idle(heap_t *heap, uint64_t now) {
  if (!platform_lock_try(&heap->segments_lock)) return false; /* its thread is at it */
  bool dirty = heap->dirty_bytes != 0;
  if (dirty) purge_expired_locked(heap, now, false);
  lock_release(&heap->segments_lock);
  return dirty;
}

/* Expired cached segments are purged; brisk_collect() (force) unmaps them all. */
static bool cache_expire(segment_t *segment, bool force) {
  if (force) return true; /* brisk_collect(): give the address space back too */
  segment_purge_all(segment);
  return false;
}

/* How long a cached segment stays resident: never purged, purged at once,
 * or SEGMENT_CACHE_RESIDENT_MS or the purge delay, whichever is longer. */
static long cache_resident_ms(void) {
  long delay = option_get(OPTION_PURGE_DELAY);
  return delay <= 0 || delay >= SEGMENT_CACHE_RESIDENT_MS ? delay : SEGMENT_CACHE_RESIDENT_MS;
}

void segment_cache_collect(uint64_t now, bool force) {
  span_cache_collect(&cache, now, cache_resident_ms(), force, cache_expire, segment_unmap);
}
