/* SPDX-License-Identifier: MIT */
/* Huge blocks (above ARENA_MAX): each in a segment of its own, mapped for it.
 * Recently freed spans wait in a small cache for reuse until the purge delay
 * passes, so that a program replacing big buffers reuses resident memory
 * instead of faulting fresh pages in; past its bounds (HUGE_CACHE_*, core.h)
 * the oldest spans go back to the OS. A request takes the smallest span that
 * fits and gives back what it does not need past one size step; when none
 * fits, the largest grows with the pages of the others, moved in behind it
 * (mremap: no copy, no fault). realloc grows a huge block without copying:
 * in place when the address space after it is free, else by moving its
 * pages with mremap. */
#include "core.h"

#include <string.h>

/* Freed spans; when full, the oldest make room. */
static span_cache cache = {
    .lock = PLATFORM_LOCK_INIT, .capacity = HUGE_CACHE_MAX, .evict_oldest = true};

static size_t cache_budget(void) {
  brisk_memory_info info;
  memory_info(&info);
  size_t budget = info.large_in_use / 4;
  return budget < HUGE_CACHE_BUDGET_MIN   ? HUGE_CACHE_BUDGET_MIN
         : budget > HUGE_CACHE_BUDGET_MAX ? HUGE_CACHE_BUDGET_MAX
                                          : budget;
}

void huge_cache_after_fork(void) {
  span_cache_after_fork(&cache);
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
static size_t span_step(size_t total) {
  size_t step = ((size_t)1 << (63 - __builtin_clzll(total))) / 8;
  return step < os_page_size() ? os_page_size() : step;
}

static size_t huge_span(size_t offset, size_t size) {
  size_t total = offset + (size != 0 ? size : 1); /* a block of 0 bytes still lies inside */
  return align_up(total, span_step(total));
}

static void huge_unmap(segment_t *segment) {
  memory_note_committed(-(ptrdiff_t)segment->size);
  segment_map_set(segment, false);
  memory_release(segment, segment->size);
}

/* The cached span for a request of total bytes: the smallest one that is as
 * large, else the largest one (it will grow). */
static int64_t cache_fit(segment_t *segment, size_t total) {
  if (segment->size >= total) return (int64_t)(segment->size - total);
  return ((int64_t)1 << 50) + (int64_t)(total - segment->size);
}

static void huge_header(segment_t *segment, size_t size) {
  memset(segment, 0, sizeof(segment_t) + sizeof(page_t));
  segment->size = size;
  segment_set_page_shift(segment, HUGE_PAGE_SHIFT);
  segment->kind = SEGMENT_HUGE;
  segment->page_count = 1;
}

/* Puts a span in the cache, unmapping those the cache lets go. */
static void cache_span(segment_t *span, uint64_t freed_ms) {
  segment_t *evicted = span_cache_push(&cache, span, freed_ms, cache_budget());
  for (segment_t *next; evicted != NULL; evicted = next) {
    next = evicted->next;
    huge_unmap(evicted);
  }
}

/* The spare pages of a span reused for total bytes, moved onto a reservation
 * of their own where they make a span of their own; NULL when the OS cannot
 * move pages. */
static segment_t *move_rest(segment_t *segment, size_t total) {
  size_t spare = segment->size - total;
  if (!PLATFORM_MOVES_PAGES) return NULL;
  void *to = memory_reserve(spare, SEGMENT_SIZE, 0);
  if (to == NULL) return NULL;
  if (!memory_move_pages((uint8_t *)segment + total, spare, to)) {
    memory_release(to, spare);
    return NULL;
  }
  return to;
}

/* A span reused for total bytes keeps at most one size step more; the rest
 * becomes a span of its own, back in the cache (it is resident: the next
 * request reuses it). A span's header must start a 4 MiB unit, so the rest
 * either moves its pages to a reservation of its own or, where the OS
 * cannot move pages, starts at the next 4 MiB boundary and what lies
 * between goes back to the OS. */
static void split(segment_t *segment, size_t total) {
  size_t spare = segment->size - total;
  if (spare <= span_step(total) || !PLATFORM_PARTIAL_RELEASE) return;
  size_t cut = align_up(total, SEGMENT_SIZE);
  segment_t *rest = NULL;
  size_t rest_size = spare;
  if (cut > total && spare >= HUGE_SPAN_MIN) rest = move_rest(segment, total);
  if (rest == NULL) {
    if (cut + HUGE_SPAN_MIN <= segment->size) {
      rest = (segment_t *)((uint8_t *)segment + cut);
      rest_size = segment->size - cut;
    } else {
      cut = segment->size;
    }
    if (cut > total) {
      memory_release((uint8_t *)segment + total, cut - total);
      memory_note_committed(-(ptrdiff_t)(cut - total));
    }
  }
  if (rest != NULL) {
    huge_header(rest, rest_size);
    segment_map_set(rest, true);
    cache_span(rest, platform_clock_ms());
  }
  segment->size = total;
}

/* Grows a span to total bytes: in place when the address space after it is
 * free, else its pages move (no copy, no fault for what is resident
 * already). NULL when neither works (the span stays as it was). */
static segment_t *grow_mapping(segment_t *segment, size_t total) {
  size_t size = segment->size;
  if (memory_extend(segment, size, total)) {
    memory_note_committed((ptrdiff_t)(total - size));
    segment->size = total;
    return segment;
  }
  segment_map_set(segment, false);
  segment_t *moved = memory_move_grow(segment, size, total);
  if (moved == NULL) {
    segment_map_set(segment, true);
    return NULL;
  }
  memory_note_committed((ptrdiff_t)(total - size));
  moved->size = total;
  segment_map_set(moved, true);
  return moved;
}

/* A cached span smaller than total grows to it alone; NULL when it cannot
 * (the span is unmapped). */
static segment_t *grow_alone(segment_t *segment, size_t total) {
  segment_t *grown = grow_mapping(segment, total);
  if (grown == NULL) huge_unmap(segment);
  return grown;
}

/* Moves the last `want` bytes of a cached span (all of it, if it has no
 * more) onto at; what is left of it goes back to the cache. Returns the
 * bytes moved: 0 when the OS cannot move pages (the span goes back whole). */
static size_t take_pages(segment_t *donor, size_t want, uint8_t *at) {
  size_t moved = want < donor->size ? want : donor->size;
  size_t left = donor->size - moved;
  if (left == 0) segment_map_set(donor, false);
  if (!memory_move_pages((uint8_t *)donor + left, moved, at)) {
    if (left == 0) segment_map_set(donor, true);
    moved = 0;
    left = donor->size;
  }
  if (left == 0) return moved;
  donor->size = left;
  cache_span(donor, donor->freed_ms);
  return moved;
}

/* Grows a cached span smaller than total to total bytes with the resident
 * pages of other cached spans, moved in behind it, so that only what the
 * cache cannot supply is faulted in fresh. (Growing it alone would fault in
 * every new page while the other spans sit resident until they expire: a
 * program replacing big buffers of random sizes grew a span on every other
 * request.) NULL when the address space is exhausted. */
static segment_t *grow(segment_t *segment, size_t total) {
  if (!PLATFORM_MOVES_PAGES) return grow_alone(segment, total);
  segment_t *donor = span_cache_take(&cache, cache_fit, total - segment->size);
  if (donor == NULL) return grow_alone(segment, total);
  uint8_t *target = memory_reserve(total, SEGMENT_SIZE, 0);
  size_t size = segment->size;
  segment_map_set(segment, false);
  if (target == NULL || !memory_move_pages(segment, size, target)) {
    if (target != NULL) memory_release(target, total);
    segment_map_set(segment, true);
    cache_span(donor, donor->freed_ms);
    return grow_alone(segment, total);
  }
  segment = (segment_t *)target;
  segment_map_set(segment, true);
  size_t filled = size;
  while (donor != NULL) {
    size_t moved = take_pages(donor, total - filled, target + filled);
    filled += moved;
    if (moved == 0 || filled == total) break;
    donor = span_cache_take(&cache, cache_fit, total - filled);
  }
  if (filled < total && !memory_commit(target + filled, total - filled)) {
    memory_note_committed(-(ptrdiff_t)filled); /* out of memory: give it all back */
    segment_map_set(segment, false);
    memory_release(target, total);
    return NULL;
  }
  memory_note_committed((ptrdiff_t)(total - filled));
  segment->size = total;
  return segment;
}

/* A resident span for total bytes from the cache, when it has any. */
static segment_t *reuse(size_t total) {
  segment_t *segment = span_cache_take(&cache, cache_fit, total);
  if (segment == NULL) return NULL;
  if (segment->size < total) return grow(segment, total);
  split(segment, total);
  return segment;
}

void *huge_alloc(size_t size, size_t alignment, bool zero) {
  if (size > SIZE_LIMIT || alignment > SIZE_LIMIT / 2) return out_of_memory();
  size_t offset = huge_offset(alignment);
  size_t total = huge_span(offset, size);
  segment_t *segment = NULL;
  if (offset == huge_offset(0)) segment = reuse(total);
  if (segment != NULL) {
    total = segment->size; /* all of what is left stays the block's */
    if (zero) memset((uint8_t *)segment + offset, 0, size);
  } else {
    size_t base_alignment = alignment > SEGMENT_SIZE ? alignment : SEGMENT_SIZE;
    segment = memory_reserve(total, base_alignment, alignment >= SEGMENT_SIZE ? offset : 0);
    if (segment != NULL && !memory_commit(segment, total)) {
      memory_release(segment, total);
      segment = NULL;
    }
    if (segment == NULL) return out_of_memory();
    memory_note_committed((ptrdiff_t)total);
    segment_map_set(segment, true);
  }
  huge_header(segment, total);
  segment->used_pages = 1;
  segment->huge_block = size;
  page_t *page = &segment->pages[0];
  page->area = (uint8_t *)segment + offset;
  /* Owner tag NULL: frees take free_slow, whose flag test sends them on to huge_free. */
  atomic_store_relaxed(&page->xflags, PAGE_IN_USE | PAGE_HUGE);
  memory_note_large_in_use((ptrdiff_t)size);
  memory_note_huge(1, (ptrdiff_t)segment->size);
  return page->area;
}

/* A pointer the program hands back must be a live huge block's start. */
static void huge_check(const segment_t *segment, const void *p, bool freeing) {
  const char *what = freeing ? "invalid free" : "invalid realloc";
  const page_t *page = &segment->pages[0];
  if (!(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE))
    misuse_detected(freeing ? "double free" : what, p, "the block is already free");
  if (p != page->area) {
    char detail[120];
    msg_format(detail, sizeof detail, "the pointer is %zu bytes into the %zu-byte block at %p",
               (size_t)((const uint8_t *)p - page->area), segment->huge_block, (void *)page->area);
    misuse_detected(what, p, detail);
  }
}

void huge_free(segment_t *segment, const void *p) {
  huge_check(segment, p, true);
  page_t *page = &segment->pages[0];
  atomic_store_relaxed(&page->xflags, 0); /* a second free of it is caught above */
  memory_note_large_in_use(-(ptrdiff_t)segment->huge_block);
  memory_note_huge(-1, -(ptrdiff_t)segment->size);
  bool cacheable = segment->size <= HUGE_CACHE_SPAN_MAX &&
                   segment->pages[0].area == (uint8_t *)segment + huge_offset(0) &&
                   option_get(OPTION_PURGE_DELAY) != 0;
  if (cacheable)
    cache_span(segment, platform_clock_ms());
  else
    huge_unmap(segment);
}

size_t huge_usable_size(const segment_t *segment, const void *p) {
  return (size_t)((const uint8_t *)segment + segment->size - (const uint8_t *)p);
}

void *huge_realloc(segment_t *segment, void *p, size_t size) {
  huge_check(segment, p, false);
  size_t offset = (size_t)((uint8_t *)p - (uint8_t *)segment);
  brisk_assert(size <= SIZE_LIMIT); /* realloc checks it first */
  size_t need = align_up(offset + size, os_page_size());
  memory_note_large_in_use((ptrdiff_t)size - (ptrdiff_t)segment->huge_block);
  if (need <= segment->size) {
    size_t spare = segment->size - need;
    if (spare >= HUGE_SHRINK_MIN && spare >= segment->size / 4) { /* unmap the tail */
      memory_release((uint8_t *)segment + need, spare);
      memory_note_committed(-(ptrdiff_t)spare);
      memory_note_huge(0, -(ptrdiff_t)spare);
      segment->size = need;
    }
    segment->huge_block = size;
    return p;
  }
  /* Grow with headroom, so a string growing by appends moves rarely. */
  size_t grown = align_up(segment->size + segment->size / 2, os_page_size());
  if (grown < need) grown = need;
  size_t old_size = segment->size;
  segment_t *moved = grow_mapping(segment, grown);
  if (moved != NULL) {
    memory_note_huge(0, (ptrdiff_t)(grown - old_size));
    moved->huge_block = size;
    moved->pages[0].area = (uint8_t *)moved + offset;
    return moved->pages[0].area;
  }
  memory_note_large_in_use((ptrdiff_t)segment->huge_block - (ptrdiff_t)size);
  /* No address space to move into: copy as a last resort. */
  void *copy = huge_alloc(size, 0, false);
  if (copy == NULL) return NULL;
  memcpy(copy, p, segment->huge_block);
  huge_free(segment, p);
  return copy;
}

/* Expired spans leave the cache whole. */
static bool cache_expire(segment_t *segment, bool force) {
  (void)segment;
  (void)force;
  return true;
}

void huge_cache_collect(uint64_t now, bool force) {
  span_cache_collect(&cache, now, option_get(OPTION_PURGE_DELAY), force, cache_expire, huge_unmap);
}
