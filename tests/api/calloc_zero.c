/* SPDX-License-Identifier: MIT */
/* calloc skips clearing large blocks carved from memory that reads zero, and
 * only those. Every block calloc returns must read zero however its memory was
 * used before: freed by its own thread or another, taken from a larger class,
 * on a page that came back resident, or on one purged and committed again.
 * Blocks handed out by malloc are filled with a pattern before they are
 * freed, so a block that calloc wrongly takes for fresh shows the pattern.
 * And a program that callocs big blocks and touches a little of each keeps
 * resident only what it touched.
 *
 * Run three ways by CTest: as configured, with BRISK_PURGE_DELAY=0 (free
 * pages purged at once: most pages come back zero) and with -1 (never
 * purged: most come back resident). */
#include <pthread.h>
#include <stdint.h>

#include "alloc_api.h"

#define KIB ((size_t)1024)
#define PATTERN 0xA5

static int reads_zero(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != 0) return 0;
  return 1;
}

/* One of small, medium and large sizes, the direct sizes included. */
static size_t random_size(unsigned long long *rng) {
  unsigned long long pick = test_rand(rng) % 100;
  if (pick < 40) return 1 + test_rand(rng) % 1024;
  if (pick < 70) return 1025 + test_rand(rng) % (8 * KIB);
  if (pick < 95) return 8 * KIB + test_rand(rng) % (120 * KIB);
  return 128 * KIB + test_rand(rng) % (384 * KIB);
}

/* A block from calloc must read zero; then it is used like any other. */
static void *checked_calloc(size_t size) {
  unsigned char *p = A_CALLOC(1, size);
  REQUIRE(p != NULL);
  CHECK_MSG(reads_zero(p, size), "calloc(1, %zu) = %p does not read zero", size, (void *)p);
  memset(p, PATTERN, A_USABLE_SIZE(p));
  return p;
}

static void *patterned_malloc(size_t size) {
  unsigned char *p = A_MALLOC(size);
  REQUIRE(p != NULL);
  memset(p, PATTERN, A_USABLE_SIZE(p));
  return p;
}

/* Random calloc, malloc and free over a table of slots: freed blocks come
 * back through the page's free lists in every order. */
static void churn_one_thread(unsigned long long seed, unsigned long ops) {
  enum { SLOTS = 256 };
  void *slot[SLOTS] = {0};
  unsigned long long rng = seed;
  for (unsigned long op = 0; op < ops; op++) {
    size_t i = test_rand(&rng) % SLOTS;
    if (slot[i] != NULL) {
      A_FREE(slot[i]);
      slot[i] = NULL;
    } else {
      size_t size = random_size(&rng);
      slot[i] = test_rand(&rng) % 2 ? checked_calloc(size) : patterned_malloc(size);
    }
  }
  for (size_t i = 0; i < SLOTS; i++)
    A_FREE(slot[i]);
}

/* Blocks freed by another thread reach their page's free list through its
 * remote list. */
enum { HANDOFF = 512 };
typedef struct handoff {
  void *blocks[HANDOFF];
  size_t count;
} handoff;

static void *free_all(void *arg) {
  handoff *h = arg;
  for (size_t i = 0; i < h->count; i++)
    A_FREE(h->blocks[i]);
  return NULL;
}

static void remote_frees(unsigned long rounds) {
  unsigned long long rng = 77;
  handoff h;
  for (unsigned long r = 0; r < rounds; r++) {
    h.count = 0;
    for (size_t i = 0; i < HANDOFF; i++) {
      size_t size = random_size(&rng) % (16 * KIB) + 1;
      h.blocks[h.count++] = i % 2 ? checked_calloc(size) : patterned_malloc(size);
    }
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, free_all, &h) == 0);
    REQUIRE(pthread_join(t, NULL) == 0);
    for (size_t i = 0; i < HANDOFF; i++) /* the same sizes, mostly the same blocks */
      h.blocks[i] = checked_calloc(random_size(&rng) % (16 * KIB) + 1);
    for (size_t i = 0; i < HANDOFF; i++)
      A_FREE(h.blocks[i]);
  }
}

/* A page's free list that mixes freed blocks with fresh ones: the freed one
 * comes back to calloc after the fresh ones ahead of it. */
static void freed_among_fresh(void) {
  enum { N = 64 };
  void *blocks[N];
  size_t size = 200 * KIB;
  for (int i = 0; i < 4; i++)
    blocks[i] = patterned_malloc(size);
  void *freed = blocks[1];
  A_FREE(freed);
  int came_back = 0;
  int n = 4;
  for (; n < N && !came_back; n++) {
    blocks[n] = checked_calloc(size);
    came_back = blocks[n] == freed;
  }
  CHECK_MSG(came_back, "the freed %zu-byte block did not come back in %d callocs", size, N);
  for (int i = 0; i < n; i++)
    if (i != 1) A_FREE(blocks[i]);
}

/* Segments of small blocks, all freed, are laid out again for large ones:
 * the first block lies on OS pages that held the old layout's header. */
static void segment_laid_out_again(void) {
  enum { SMALL = 3 << 16, LARGE = 64 };
  static void *blocks[SMALL];
  for (size_t i = 0; i < SMALL; i++)
    blocks[i] = patterned_malloc(48);
  for (size_t i = 0; i < SMALL; i++)
    A_FREE(blocks[i]);
  for (size_t i = 0; i < LARGE; i++)
    blocks[i] = checked_calloc(130 * KIB);
  for (size_t i = 0; i < LARGE; i++)
    A_FREE(blocks[i]);
}

/* A medium request takes a free block of a larger class when its own has
 * none (see medium_reuse.c): that block is not fresh. */
static void borrowed_from_larger(void) {
  void *larger = patterned_malloc(60 * KIB);
  A_FREE(larger);
  void *borrowed = checked_calloc(50 * KIB);
  A_FREE(borrowed);
}

/* A block above 64 KiB is cut from the arena where a freed one of another
 * size was: the front of that chunk is not fresh either. */
static void cut_where_another_was(void) {
  void *larger = patterned_malloc(100 * KIB);
  A_FREE(larger);
  void *cut = checked_calloc(90 * KIB);
  A_FREE(cut);
}

#ifdef __linux__
/* calloc of blocks that are fresh memory, touching only their first bytes:
 * each keeps one or two OS pages resident, not all of them. Measured with
 * mincore over the blocks themselves, so the figure is the allocator's
 * under a sanitizer too. */
static void sparse_tables_stay_small(void) {
  enum { N = 32 };
  const size_t size = 200 * KIB, os_page = test_page_size();
  void *tables[N];
  size_t resident = 0, total = 0;
  for (int i = 0; i < N; i++) {
    tables[i] = A_CALLOC(1, size);
    REQUIRE(tables[i] != NULL);
    memset(tables[i], 1, 64);
  }
  for (int i = 0; i < N; i++) {
    uintptr_t start = (uintptr_t)tables[i] & ~(os_page - 1);
    uintptr_t end = ((uintptr_t)tables[i] + size + os_page - 1) & ~(os_page - 1);
    resident += test_resident_pages(tables[i], size);
    total += (end - start) / os_page;
  }
  printf("sparse calloc: %zu of %zu OS pages resident\n", resident, total);
  /* Without the skip every page is resident; with it, at most the first two
   * of each block, plus the odd block on resident memory. With 64 KiB OS
   * pages a block spans four or five: the first two are half of them. */
  size_t bound = total / 4 > 2 * N + total / 8 ? total / 4 : 2 * N + total / 8;
  CHECK_MSG(resident <= bound, "%zu of %zu OS pages of calloc'd tables are resident (at most %zu)",
            resident, total, bound);
  for (int i = 0; i < N; i++)
    A_FREE(tables[i]);
}
#endif

int main(void) {
  api_init();
#ifdef __linux__
  sparse_tables_stay_small(); /* first, on fresh memory */
#endif
  A_COLLECT(); /* the large segments leave: the next large blocks take small ones */
  segment_laid_out_again();
  freed_among_fresh();
  borrowed_from_larger();
  cut_where_another_was();
  churn_one_thread(1, test_scaled(100000));
  remote_frees(test_scaled(40));
  A_COLLECT(); /* pages purged and committed again */
  churn_one_thread(2, test_scaled(50000));
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
