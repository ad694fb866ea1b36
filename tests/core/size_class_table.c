/* SPDX-License-Identifier: MIT */
/* The size-class table, which every allocation trusts: a request is served
 * by a block of its class, so a class too small for a request hands out
 * blocks that overlap the next ones, and one larger than it need be wastes
 * memory that no other test would notice. White-box: it includes the
 * core's header (src/core/core.h) and links the library's objects.
 *
 *   1. class_size[] rises strictly from 16 to MEDIUM_MAX, every entry a
 *      multiple of 16 (ALIGNMENT_MIN: malloc's blocks are 16-aligned, the
 *      only alignment brisk promises for them, whatever their size); up to
 *      128 bytes the classes are the multiples of 16, and above 128 bytes
 *      no class wastes more than an eighth of its size on a request it
 *      serves.
 *   2. For every n from 0 to MEDIUM_MAX, size_class_of(n) is the smallest
 *      class that holds n.
 *   3. The direct slots, which the malloc fast path reads instead
 *      (heap->direct[(n + 7) / 8], src/api/fast_path.h): every slot up to
 *      DIRECT_SLOTS - 1 belongs to exactly one class
 *      (size_class_direct_slots), the class of every size it serves.
 *   4. Through the API, for every n from 1 to ARENA_MAX: brisk_malloc(n)
 *      is 16-aligned and brisk_usable_size() at least n; a block on a page
 *      (n up to MEDIUM_MAX; larger ones come from the heap's arena) lies on
 *      a page of size_class_of(n) and its usable size is that class's;
 *      up to DIRECT_MAX, the thread's direct slot for n then holds that
 *      page. */
#include "check.h"
#include "core.h"

#include <stdio.h>

static void check_table(void) {
  EXPECT(class_size[0] == ALIGNMENT_MIN, "the first class is %u bytes, not %d", class_size[0],
         ALIGNMENT_MIN);
  EXPECT(class_size[CLASS_COUNT - 1] == MEDIUM_MAX, "the last class is %u bytes, not %zu",
         class_size[CLASS_COUNT - 1], (size_t)MEDIUM_MAX);
  for (unsigned c = 0; c < CLASS_COUNT; c++) {
    uint32_t size = class_size[c];
    EXPECT(size % ALIGNMENT_MIN == 0, "class %u: %u bytes, not a multiple of %d", c, size,
           ALIGNMENT_MIN);
    if (c == 0) continue;
    uint32_t below = class_size[c - 1];
    EXPECT(size > below, "class %u: %u bytes, not above class %u's %u", c, size, c - 1, below);
    if (size <= 128)
      EXPECT(size == below + 16, "class %u: %u bytes, not the next multiple of 16", c, size);
    else /* the largest waste: a request one byte above the class below */
      EXPECT((uint64_t)(size - below - 1) * 8 <= size,
             "class %u: %u bytes, wastes %u on a request of %u bytes (more than 1/8)", c, size,
             size - below - 1, below + 1);
  }
  CHECK_MSG(expect_failures == 0, "class_size[] is not as promised (%lu failures)",
            expect_failures);
}

static void check_size_class_of(void) {
  unsigned long before = expect_failures;
  for (size_t n = 0; n <= MEDIUM_MAX; n++) {
    unsigned c = size_class_of(n);
    if (c >= CLASS_COUNT) {
      EXPECT(0, "size_class_of(%zu) = %u, past the last class", n, c);
      continue;
    }
    EXPECT(class_size[c] >= n, "size_class_of(%zu) = class %u of %u bytes: too small", n, c,
           class_size[c]);
    EXPECT(c == 0 || class_size[c - 1] < n,
           "size_class_of(%zu) = class %u of %u bytes, but class %u (%u bytes) holds it", n, c,
           class_size[c], c - 1, c == 0 ? 0 : class_size[c - 1]);
  }
  CHECK_MSG(expect_failures == before,
            "size_class_of is not the smallest class that fits (%lu failures)",
            expect_failures - before);
}

static void check_direct_slots(void) {
  unsigned long before = expect_failures;
  unsigned owner[DIRECT_SLOTS];
  for (unsigned slot = 0; slot < DIRECT_SLOTS; slot++)
    owner[slot] = CLASS_COUNT; /* none */
  for (unsigned c = 0; c < CLASS_COUNT; c++) {
    unsigned first, last;
    size_class_direct_slots(c, &first, &last);
    for (unsigned slot = first; slot <= last; slot++) {
      if (slot >= DIRECT_SLOTS) {
        EXPECT(0, "class %u claims direct slot %u, past the last (%d)", c, slot, DIRECT_SLOTS - 1);
        break;
      }
      EXPECT(owner[slot] == CLASS_COUNT, "direct slot %u belongs to classes %u and %u", slot,
             owner[slot], c);
      owner[slot] = c;
    }
  }
  for (unsigned slot = 0; slot < DIRECT_SLOTS; slot++) {
    EXPECT(owner[slot] != CLASS_COUNT, "direct slot %u belongs to no class", slot);
    if (owner[slot] == CLASS_COUNT) continue;
    /* slot i serves (8 * (i - 1), 8 * i]; slot 0 serves malloc(0) */
    size_t low = slot == 0 ? 0 : 8 * (size_t)(slot - 1) + 1, high = 8 * (size_t)slot;
    for (size_t n = low; n <= high; n++)
      EXPECT(size_class_of(n) == owner[slot],
             "malloc(%zu) reads direct slot %u, class %u's, but its class is %u", n, slot,
             owner[slot], size_class_of(n));
  }
  CHECK_MSG(expect_failures == before,
            "the direct slots do not map sizes to their classes (%lu failures)",
            expect_failures - before);
}

/* One block of n bytes, against its class. */
static void check_block(size_t n) {
  void *p = brisk_malloc(n);
  if (p == NULL) REQUIRE(p != NULL);
  size_t usable = brisk_usable_size(p);
  EXPECT((uintptr_t)p % ALIGNMENT_MIN == 0, "malloc(%zu) = %p, not %d-aligned", n, p,
         ALIGNMENT_MIN);
  EXPECT(usable >= n, "malloc(%zu): usable size %zu", n, usable);
  segment_t *segment = segment_of(p);
  if (n <= MEDIUM_MAX) {
    unsigned c = size_class_of(n);
    page_t *page = page_of(segment, p);
    EXPECT(segment->kind <= SEGMENT_MEDIUM && page->size_class == c &&
               page->block_size == class_size[c],
           "malloc(%zu) is on a page of class %u (%u bytes), not class %u", n, page->size_class,
           page->block_size, c);
    EXPECT(usable == class_size[c], "malloc(%zu): usable size %zu, its class's is %u", n, usable,
           class_size[c]);
    if (n <= DIRECT_MAX) {
      page_t *direct = heap_current()->direct[(n + 7) >> 3];
      EXPECT(direct == page,
             "malloc(%zu): direct slot %zu holds a page of class %u, not the "
             "block's",
             n, (n + 7) >> 3, direct->size_class);
    }
  } else {
    EXPECT(segment->kind == SEGMENT_ARENA, "malloc(%zu): a block of a %d segment, not the arena", n,
           segment->kind);
  }
  brisk_free(p);
}

/* Up, each class's first request finds no page and takes the slow path;
 * down, every class has a page already, and small requests take the fast
 * path through their direct slot. */
static void check_blocks(void) {
  unsigned long before = expect_failures;
  for (size_t n = 1; n <= ARENA_MAX; n++)
    check_block(n);
  for (size_t n = ARENA_MAX; n >= 1; n--)
    check_block(n);
  CHECK_MSG(expect_failures == before, "blocks do not agree with their classes (%lu failures)",
            expect_failures - before);
}

int main(void) {
  check_table();
  check_size_class_of();
  check_direct_slots();
  check_blocks();
  printf("size classes: %d classes, every size to %zu bytes checked\n", CLASS_COUNT,
         (size_t)ARENA_MAX);
  return test_finish();
}
