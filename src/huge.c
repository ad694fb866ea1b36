/* Huge blocks (above LARGE_MAX): each in a segment of its own, mapped for it.
 * Recently freed spans wait in a small cache for reuse until the purge delay
 * passes. realloc grows a huge block without copying: in place when the
 * address space after it is free, else by moving its pages with mremap. */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define HUGE_CACHE_MAX 16
#define HUGE_CACHE_SPAN_MAX (64 * MiB) /* larger spans go straight back */

static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;
static segment_list_t cache; /* freed spans, newest first */

void huge_cache_lock(void) {
  mutex_lock_profiled(&huge_lock);
}
void huge_cache_unlock(void) {
  pthread_mutex_unlock(&huge_lock);
}

/* Where the block starts in its segment. An alignment of a whole segment or
 * more puts the block at the start of the second 4 MiB unit: segment_of()
 * looks at p - 1, which still falls in the header's unit. */
static size_t huge_offset(size_t alignment) {
  if (alignment >= SEGMENT_SIZE) return SEGMENT_SIZE;
  size_t header = sizeof(segment_t) + sizeof(page_t);
  return align_up(header, alignment > 128 ? alignment : 128);
}

/* Spans are rounded to eight steps per doubling, like the size classes, so a
 * freed span fits the next request of about the same size. The rounding is
 * address space only: pages past the block are never touched. */
static size_t huge_span(size_t offset, size_t size) {
  size_t total = offset + size;
  size_t step = ((size_t)1 << (63 - __builtin_clzll(total))) / 8;
  if (step < OS_PAGE_SIZE) step = OS_PAGE_SIZE;
  return align_up(total, step);
}

static void huge_unmap(segment_t *segment) {
  os_note_committed(-(ptrdiff_t)segment->size);
  segment_map_set(segment, false);
  os_unmap(segment, segment->size);
}

static segment_t *cache_take(size_t total) {
  segment_t *found = NULL;
  mutex_lock_profiled(&huge_lock);
  for (segment_t *s = cache.first; s != NULL; s = s->next) {
    if (s->size >= total && s->size - total <= total / 4) {
      found = s;
      break;
    }
  }
  if (found != NULL) segment_list_remove(&cache, found);
  pthread_mutex_unlock(&huge_lock);
  return found;
}

void *huge_malloc(size_t size, size_t alignment, bool zero) {
  if (size > SIZE_LIMIT || alignment > SIZE_LIMIT / 2) {
    errno = ENOMEM;
    return NULL;
  }
  size_t offset = huge_offset(alignment);
  size_t total = huge_span(offset, size);
  segment_t *segment = NULL;
  if (offset == huge_offset(0)) segment = cache_take(total);
  if (segment != NULL) {
    if (zero) memset((uint8_t *)segment + offset, 0, size);
  } else {
    size_t base_alignment = alignment > SEGMENT_SIZE ? alignment : SEGMENT_SIZE;
    segment = os_map_segment(total, base_alignment, alignment >= SEGMENT_SIZE ? offset : 0);
    if (segment == NULL) {
      errno = ENOMEM;
      return NULL;
    }
    os_note_committed((ptrdiff_t)total);
    segment_map_set(segment, true);
  }
  memset(segment, 0, sizeof(segment_t) + sizeof(page_t));
  segment->size = total;
  segment->page_shift = HUGE_PAGE_SHIFT;
  segment->kind = SEGMENT_HUGE;
  segment->page_count = 1;
  segment->used_pages = 1;
  segment->huge_block = size;
  page_t *page = &segment->pages[0];
  page->area = (uint8_t *)segment + offset;
  atomic_store_relaxed(&page->xflags, PAGE_IN_USE);
  atomic_store_relaxed(&page->xowner_tag, NULL); /* frees take free_slow */
  os_note_large_in_use((ptrdiff_t)size);
  return page->area;
}

void huge_free(segment_t *segment) {
  page_t *page = &segment->pages[0];
  if (!(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE)) double_free_detected(page->area);
  atomic_store_relaxed(&page->xflags, 0); /* a second free of it is caught above */
  os_note_large_in_use(-(ptrdiff_t)segment->huge_block);
  bool cacheable = segment->size <= HUGE_CACHE_SPAN_MAX &&
                   segment->pages[0].area == (uint8_t *)segment + huge_offset(0) &&
                   option_get(OPTION_PURGE_DELAY) != 0;
  segment_t *evicted = NULL;
  if (cacheable) {
    segment->freed_ms = os_clock_ms();
    mutex_lock_profiled(&huge_lock);
    if (cache.count == HUGE_CACHE_MAX) { /* drop the oldest: the list's tail */
      evicted = cache.first;
      while (evicted->next != NULL)
        evicted = evicted->next;
      segment_list_remove(&cache, evicted);
    }
    segment_list_push(&cache, segment);
    pthread_mutex_unlock(&huge_lock);
  } else {
    evicted = segment;
  }
  if (evicted != NULL) huge_unmap(evicted);
}

size_t huge_usable_size(const segment_t *segment, const void *p) {
  return (size_t)((const uint8_t *)segment + segment->size - (const uint8_t *)p);
}

void *huge_realloc(segment_t *segment, void *p, size_t size) {
  size_t offset = (size_t)((uint8_t *)p - (uint8_t *)segment);
  if (size > SIZE_LIMIT) {
    errno = ENOMEM;
    return NULL;
  }
  size_t need = align_up(offset + size, OS_PAGE_SIZE);
  os_note_large_in_use((ptrdiff_t)size - (ptrdiff_t)segment->huge_block);
  if (need <= segment->size) {
    size_t spare = segment->size - need;
    if (spare >= MiB && spare >= segment->size / 4) { /* shrink: unmap the tail */
      os_unmap((uint8_t *)segment + need, spare);
      os_note_committed(-(ptrdiff_t)spare);
      segment->size = need;
    }
    segment->huge_block = size;
    return p;
  }
  /* Grow with headroom, so a string growing by appends moves rarely. */
  size_t grown = align_up(segment->size + segment->size / 2, OS_PAGE_SIZE);
  if (grown < need) grown = need;
  if (os_extend_in_place(segment, segment->size, grown)) {
    os_note_committed((ptrdiff_t)(grown - segment->size));
    segment->size = grown;
    segment->huge_block = size;
    return p;
  }
  size_t old_size = segment->size;
  segment_map_set(segment, false);
  segment_t *moved = os_move_grow(segment, old_size, grown);
  if (moved != NULL) {
    os_note_committed((ptrdiff_t)(grown - old_size));
    moved->size = grown;
    moved->huge_block = size;
    moved->pages[0].area = (uint8_t *)moved + offset;
    segment_map_set(moved, true);
    return moved->pages[0].area;
  }
  segment_map_set(segment, true);
  os_note_large_in_use((ptrdiff_t)segment->huge_block - (ptrdiff_t)size);
  /* No address space to move into: copy as a last resort. */
  void *copy = huge_malloc(size, 0, false);
  if (copy == NULL) return NULL;
  memcpy(copy, p, segment->huge_block);
  huge_free(segment);
  return copy;
}

void huge_cache_collect(uint64_t now, bool force) {
  long delay = option_get(OPTION_PURGE_DELAY);
  if (delay < 0 && !force) return;
  if (force)
    mutex_lock_profiled(&huge_lock);
  else if (pthread_mutex_trylock(&huge_lock) != 0)
    return;
  segment_t *expired = NULL;
  for (segment_t *s = cache.first, *next; s != NULL; s = next) {
    next = s->next;
    if (!force && s->freed_ms + (uint64_t)delay > now) continue;
    segment_list_remove(&cache, s);
    s->next = expired;
    expired = s;
  }
  pthread_mutex_unlock(&huge_lock);
  while (expired != NULL) {
    segment_t *next = expired->next;
    huge_unmap(expired);
    expired = next;
  }
}
