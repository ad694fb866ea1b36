/* SPDX-License-Identifier: MIT */
/* The block-start check, which every free and realloc trusts before it
 * touches a list: page_is_block_start (src/core/core.h) tells a block's
 * start from every other address of its page with one multiplication by
 * the page's block_magic and one comparison with its carved_limit. If it
 * accepted an interior, misaligned, past-the-end, uncarved or header
 * pointer, free would push memory that is not a free block onto a list and
 * hand it out again; if it rejected a block's start, a valid free would
 * abort. White-box: it includes the core's header and links the library's
 * objects.
 *
 * For every size class, on a page the library laid out for it: once with
 * its first blocks carved and once carved whole, every byte address of the
 * page, from its start (for a segment's first page, inside the segment's
 * header) to its end, must be accepted exactly when it is the start of a
 * carved block, as a plain count of offsets says; and every byte of a
 * carved block must lead page_block_start (the division that finds the
 * block an aligned pointer lies in) to that block's start. The page's
 * arithmetic must also be as core.h describes it: block_size is the
 * class's, block_size * block_magic = 2^64 + block_excess with
 * 1 <= block_excess <= block_size, carved_limit = capacity * block_excess,
 * block_magic above 2^41, and the blocks 16-aligned.
 *
 * Every class lives on pages (blocks above MEDIUM_MAX come from the heap's
 * arena, which has no classes), so brisk_malloc reaches every class's pages. */
#include "check.h"
#include "core.h"

#include <stdio.h>
#include <string.h>

/* A block of class c, from a page of that class. */
static void *take(heap_t *heap, unsigned c) {
  (void)heap;
  void *p = brisk_malloc(class_size[c]);
  if (p == NULL) REQUIRE(p != NULL);
  return p;
}

/* The page's arithmetic, as core.h describes it. */
static void check_layout(const page_t *page, unsigned c) {
  unsigned long before = expect_failures;
  uint32_t size = page->block_size;
  EXPECT(page->size_class == c && size == class_size[c],
         "class %u: a page of class %u with %u-byte blocks, not %u", c, page->size_class, size,
         class_size[c]);
  EXPECT((uint64_t)size * page->block_magic == page->block_excess && page->block_excess >= 1 &&
             page->block_excess <= size,
         "class %u: %u * block_magic %llu = %llu mod 2^64, block_excess %u", c, size,
         (unsigned long long)page->block_magic, (unsigned long long)(size * page->block_magic),
         page->block_excess);
  EXPECT(page->block_magic > ((uint64_t)1 << 41), "class %u: block_magic %llu not above 2^41", c,
         (unsigned long long)page->block_magic);
  EXPECT(page->carved_limit == (uint64_t)page->capacity * page->block_excess,
         "class %u: carved_limit %llu, capacity %u * block_excess %u", c,
         (unsigned long long)page->carved_limit, page->capacity, page->block_excess);
  EXPECT((uintptr_t)page->area % ALIGNMENT_MIN == 0 && size % ALIGNMENT_MIN == 0,
         "class %u: blocks at %p + k * %u, not %d-aligned", c, (void *)page->area, size,
         ALIGNMENT_MIN);
  CHECK_MSG(expect_failures == before, "class %u: the page is not laid out as core.h says", c);
}

/* Every byte address of the page against an independent count of offsets
 * from its first block: q blocks and r bytes past it. */
static void check_addresses(const page_t *live, unsigned c, const char *state) {
  page_t page; /* a copy: the sweep reads nothing another thread may write */
  memcpy(&page, live, sizeof page);
  segment_t *segment = segment_of(live);
  uint8_t *area;
  size_t bytes = segment_page_bytes(segment, live, &area);
  REQUIRE(area == page.area);
  uint8_t *start = (uint8_t *)segment + ((size_t)page.index << segment->page_shift);
  uint8_t *end = area + bytes;
  uint32_t size = page.block_size, capacity = page.capacity;
  unsigned long before = expect_failures, accepted = 0;
  for (uint8_t *p = start; p < area; p++) /* the segment's header, on its first page */
    EXPECT(!page_is_block_start(&page, p, page.carved_limit),
           "class %u (%u B, %s): header address area - %zu accepted as a block's start", c, size,
           state, (size_t)(area - p));
  uint32_t q = 0, r = 0;
  for (uint8_t *p = area; p < end; p++) {
    bool want = r == 0 && q < capacity;
    bool got = page_is_block_start(&page, p, page.carved_limit);
    accepted += got;
    EXPECT(got == want, "class %u (%u B, %s, %u of %u blocks carved): area + %u * %u + %u %s", c,
           size, state, capacity, page.reserved, q, size, r,
           want ? "rejected, yet a block's start" : "accepted as a block's start");
    if (q < capacity) {
      uint8_t *block = page_block_start(&page, p);
      EXPECT(block == area + (size_t)q * size,
             "class %u (%u B, %s): page_block_start(area + %u * %u + %u) = area + %td", c, size,
             state, q, size, r, block - area);
    }
    if (++r == size) {
      r = 0;
      q++;
    }
  }
  EXPECT(accepted == capacity, "class %u (%u B, %s): %lu addresses accepted, %u blocks carved", c,
         size, state, accepted, capacity);
  CHECK_MSG(expect_failures == before, "class %u (%u B), %s: the block-start check is wrong", c,
            size, state);
}

int main(void) {
  void *first = brisk_malloc(1); /* the thread's heap; freed last (see below) */
  heap_t *heap = heap_current();
  REQUIRE(heap != &heap_empty);
  enum { MOST = 4096 + 1 }; /* a small page holds at most 4096 blocks (16 B) */
  static void *blocks[MOST];
  for (unsigned c = 0; c < CLASS_COUNT; c++) {
    size_t count = 0;
    blocks[count++] = take(heap, c);
    page_t *page = page_of(segment_of(blocks[0]), blocks[0]);
    REQUIRE(page->reserved < MOST);
    check_layout(page, c);
    if (page->capacity < page->reserved) check_addresses(page, c, "carved in part");
    while (page->capacity < page->reserved && count < MOST)
      blocks[count++] = take(heap, c);
    REQUIRE(page->capacity == page->reserved);
    check_layout(page, c);
    check_addresses(page, c, "carved whole");
    /* Only now: were the check wrong, these frees would abort. */
    while (count > 0)
      brisk_free(blocks[--count]);
  }
  brisk_free(first);
  printf("block start: every address of a page of each of %d classes checked\n", CLASS_COUNT);
  return test_finish();
}
