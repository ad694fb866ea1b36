/* Segments: SEGMENT_SIZE-aligned mappings cut into pages of one size (small,
 * medium or large), owned by a heap. A heap lists its segments that still
 * have a free page; a segment whose pages are all free goes to a small
 * process-wide cache, where it is purged after the delay and unmapped when
 * the cache is full. */
#include "internal.h"

#include <string.h>

static const uint8_t kind_page_shift[SEGMENT_KIND_COUNT] = {
    [SEGMENT_SMALL] = SMALL_PAGE_SHIFT,
    [SEGMENT_MEDIUM] = MEDIUM_PAGE_SHIFT,
    [SEGMENT_LARGE] = LARGE_PAGE_SHIFT,
    [SEGMENT_HUGE] = HUGE_PAGE_SHIFT,
};

#define SEGMENT_CACHE_MAX 8

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static segment_list_t cache; /* whole free segments, newest first */

void segment_cache_lock(void) {
  mutex_lock_profiled(&cache_lock);
}
void segment_cache_unlock(void) {
  pthread_mutex_unlock(&cache_lock);
}

static size_t header_size(uint16_t page_count) {
  return align_up(sizeof(segment_t) + page_count * sizeof(page_t), 128);
}

/* The OS pages holding the header and page descriptors, never purged. The
 * largest header (small pages) is counted as committed for every segment, so
 * the count stays right when a cached segment changes kind. */
static size_t header_os_bytes(const segment_t *segment) {
  return align_up(header_size(segment->page_count), OS_PAGE_SIZE);
}
#define HEADER_COMMITTED align_up(header_size(MAX_PAGES_PER_SEGMENT), OS_PAGE_SIZE)

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
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)area, OS_PAGE_SIZE);
  *start = aligned;
  *size = bytes - (size_t)(aligned - area);
}

static void segment_layout(segment_t *segment, heap_t *heap, segment_kind kind) {
  uint8_t shift = kind_page_shift[kind];
  uint16_t count = (uint16_t)(SEGMENT_SIZE >> shift);
  segment->owner = heap;
  segment->size = SEGMENT_SIZE;
  segment->page_shift = shift;
  segment->kind = (uint8_t)kind;
  segment->page_count = count;
  segment->used_pages = 0;
  segment->dirty_pages = 0;
  segment->listed = false;
  segment->next = segment->prev = NULL;
  memset(segment->pages, 0, count * sizeof(page_t));
  for (uint16_t i = 0; i < count; i++)
    segment->pages[i].index = (uint8_t)i;
}

/* A heap's list of segments with a free page; `listed` says whether the
 * segment is on it. */
static void list_push(segment_list_t *list, segment_t *segment) {
  segment_list_push(list, segment);
  segment->listed = true;
}

static void list_remove(segment_list_t *list, segment_t *segment) {
  segment_list_remove(list, segment);
  segment->listed = false;
}

static size_t dirty_bytes(const segment_t *segment) {
  size_t total = 0;
  for (uint16_t i = 0; i < segment->page_count; i++)
    if (atomic_load_relaxed(&segment->pages[i].xflags) & PAGE_DIRTY)
      total += (size_t)1 << segment->page_shift;
  return total;
}

static void segment_unmap(segment_t *segment) {
  os_note_committed(-(ptrdiff_t)(dirty_bytes(segment) + HEADER_COMMITTED));
  segment_map_set(segment, false);
  os_unmap(segment, segment->size);
}

/* Purge every dirty page of a segment nobody uses (in the cache). */
static void segment_purge_all(segment_t *segment) {
  size_t bytes = dirty_bytes(segment);
  if (bytes == 0) return;
  size_t keep = header_os_bytes(segment);
  os_purge((uint8_t *)segment + keep, segment->size - keep);
  os_note_committed(-(ptrdiff_t)bytes);
  for (uint16_t i = 0; i < segment->page_count; i++)
    atomic_store_relaxed(&segment->pages[i].xflags, 0);
  segment->dirty_pages = 0;
}

static segment_t *cache_take(segment_kind kind) {
  mutex_lock_profiled(&cache_lock);
  segment_t *best = NULL;
  for (segment_t *s = cache.first; s != NULL; s = s->next) {
    if (s->kind == kind) {
      best = s;
      break;
    }
    if (best == NULL) best = s;
  }
  if (best != NULL) segment_list_remove(&cache, best);
  pthread_mutex_unlock(&cache_lock);
  return best;
}

static segment_t *segment_alloc(heap_t *heap, segment_kind kind) {
  profile_event_note(EVENT_SEGMENT);
  segment_t *segment = cache_take(kind);
  if (segment == NULL) {
    heaps_collect_abandoned(false); /* their empty segments may refill the cache */
    segment = cache_take(kind);
  }
  if (segment != NULL) {
    if (segment->kind == kind) { /* same layout: keep the pages' dirty state */
      segment->owner = heap;
      segment->listed = false;
    } else {
      segment_purge_all(segment); /* a new layout forgets which pages are resident */
      segment_layout(segment, heap, kind);
    }
    return segment;
  }
  segment = os_map_segment(SEGMENT_SIZE, SEGMENT_SIZE, 0);
  if (segment == NULL) return NULL;
  os_note_committed((ptrdiff_t)HEADER_COMMITTED);
  segment_layout(segment, heap, kind);
  segment_map_set(segment, true);
  return segment;
}

/* A segment with no page in use leaves its heap for the cache. */
static void segment_release(heap_t *heap, segment_t *segment) {
  if (segment->listed) list_remove(&heap->segments[segment->kind], segment);
  heap->dirty_pages -= segment->dirty_pages;
  segment->owner = NULL;
  segment->freed_ms = os_clock_ms();
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay == 0) segment_purge_all(segment);
  mutex_lock_profiled(&cache_lock);
  bool keep = cache.count < SEGMENT_CACHE_MAX;
  if (keep) segment_list_push(&cache, segment);
  pthread_mutex_unlock(&cache_lock);
  if (!keep) segment_unmap(segment);
}

page_t *segment_page_alloc(heap_t *heap, segment_kind kind) {
  segment_t *segment = heap->segments[kind].first;
  if (segment == NULL) {
    segment = segment_alloc(heap, kind);
    if (segment == NULL) return NULL;
    list_push(&heap->segments[kind], segment);
    heap->dirty_pages += segment->dirty_pages;
  }
  /* Prefer a page that is still resident: it costs no page faults. */
  page_t *chosen = NULL;
  for (uint16_t i = 0; i < segment->page_count; i++) {
    page_t *page = &segment->pages[i];
    uint8_t flags = atomic_load_relaxed(&page->xflags);
    if (flags & PAGE_IN_USE) continue;
    if (flags & PAGE_DIRTY) {
      chosen = page;
      break;
    }
    if (chosen == NULL) chosen = page;
  }
  if (atomic_load_relaxed(&chosen->xflags) & PAGE_DIRTY) {
    segment->dirty_pages--;
    heap->dirty_pages--;
  } else {
    os_note_committed((ptrdiff_t)1 << segment->page_shift);
  }
  atomic_store_relaxed(&chosen->xflags, PAGE_IN_USE);
  if (++segment->used_pages == segment->page_count) list_remove(&heap->segments[kind], segment);
  return chosen;
}

void segment_page_free(heap_t *heap, page_t *page) {
  segment_t *segment = segment_of(page);
  atomic_store_relaxed(&page->xflags, PAGE_DIRTY);
  atomic_store_relaxed(&page->xowner_tag, NULL);
  page->retired_ms = os_clock_ms();
  segment->dirty_pages++;
  heap->dirty_pages++;
  if (!segment->listed) list_push(&heap->segments[segment->kind], segment);
  if (--segment->used_pages == 0) {
    segment_release(heap, segment);
    return;
  }
  if (option_get(OPTION_PURGE_DELAY) == 0) segment_purge_expired(heap, page->retired_ms, true);
}

void segment_purge_expired(heap_t *heap, uint64_t now, bool force) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (heap->dirty_pages == 0 || (delay < 0 && !force)) return;
  for (int kind = 0; kind < SEGMENT_KIND_COUNT; kind++) {
    for (segment_t *segment = heap->segments[kind].first; segment != NULL;
         segment = segment->next) {
      if (segment->dirty_pages == 0) continue;
      for (uint16_t i = 0; i < segment->page_count; i++) {
        page_t *page = &segment->pages[i];
        if (!(atomic_load_relaxed(&page->xflags) & PAGE_DIRTY)) continue;
        if (!force && page->retired_ms + (uint64_t)delay > now) continue;
        uint8_t *start;
        size_t size;
        page_purge_range(segment, page, &start, &size);
        os_purge(start, size);
        os_note_committed(-((ptrdiff_t)1 << segment->page_shift));
        atomic_store_relaxed(&page->xflags, 0);
        segment->dirty_pages--;
        heap->dirty_pages--;
      }
    }
  }
}

void segment_cache_collect(uint64_t now, bool force) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay < 0 && !force) return;
  if (force)
    mutex_lock_profiled(&cache_lock);
  else if (pthread_mutex_trylock(&cache_lock) != 0)
    return;
  segment_t *unmap_list = NULL;
  for (segment_t *s = cache.first, *next; s != NULL; s = next) {
    next = s->next;
    if (!force && s->freed_ms + (uint64_t)delay > now) continue;
    if (force) { /* brisk_collect(): give the address space back too */
      segment_list_remove(&cache, s);
      s->next = unmap_list;
      unmap_list = s;
    } else {
      segment_purge_all(s);
    }
  }
  pthread_mutex_unlock(&cache_lock);
  while (unmap_list != NULL) {
    segment_t *next = unmap_list->next;
    segment_unmap(unmap_list);
    unmap_list = next;
  }
}
