/* SPDX-License-Identifier: MIT */
/* Multithreaded stress with content verification.
 *
 * NTHREADS threads each run a random mix of: malloc / calloc / aligned
 * allocations of random sizes (tiny to a few MiB), frees, realloc chains, and
 * hand-overs of blocks to another thread's mailbox; the receiver verifies the
 * content, then frees it, reallocs it, or adopts it.  Every block carries a
 * seed-derived pattern that is checked before each free/realloc, so
 * overlapping blocks, lost realloc content and double hand-outs show up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "alloc_api.h"
#include "pattern.h"

#define NTHREADS 6
#define SLOTS 256

typedef struct {
  unsigned char *p;
  size_t size;
  size_t align; /* alignment the block was requested with */
  uint32_t seed;
} blk_t;

typedef struct {
  pthread_mutex_t mu;
  blk_t *items;
  size_t n, cap;
} mailbox_t;

static mailbox_t boxes[NTHREADS];
static pthread_barrier_t barrier;
static atomic_ulong n_alloc, n_free, n_handed, n_received, n_realloc, n_bad;
static unsigned long ops_per_thread;

static void bad_block(const blk_t *b, const char *what, size_t off) {
  atomic_fetch_add(&n_bad, 1);
  CHECK_MSG(0, "%s: block %p size %zu align %zu seed %u: bad byte at offset %zu", what,
            (void *)b->p, b->size, b->align, b->seed, off);
}

static void verify(const blk_t *b, const char *what) {
  size_t off = pattern_find_bad(b->p, b->size, b->seed);
  if (off != b->size) bad_block(b, what, off);
}

static size_t random_size(unsigned long long *rng) {
  unsigned r = (unsigned)(test_rand(rng) % 1000);
  if (r < 700) return (size_t)(test_rand(rng) % 257);
  if (r < 960) return 257 + (size_t)(test_rand(rng) % 8000);
  if (r < 997) return 8192 + (size_t)(test_rand(rng) % (256 * 1024));
  return 256 * 1024 + (size_t)(test_rand(rng) % (4u << 20));
}

static uint32_t next_seed(unsigned long long *rng) {
  return (uint32_t)test_rand(rng);
}

/* A new block into *b: malloc, calloc or one of the aligned forms. */
static int new_block(blk_t *b, unsigned long long *rng) {
  size_t n = random_size(rng);
  unsigned kind = (unsigned)(test_rand(rng) % 100);
  size_t align = required_alignment(n);
  void *p = NULL;
  if (kind < 75) {
    p = A_MALLOC(n);
  } else if (kind < 85) {
    p = A_CALLOC(1, n);
    if (p && !all_zero(p, n)) CHECK_MSG(0, "calloc(1, %zu) returned non-zero memory", n);
  } else {
    size_t al = (size_t)16 << (test_rand(rng) % 13); /* 16 .. 64 KiB */
    if (kind < 90) {
      if (A_POSIX_MEMALIGN(&p, al, n) != 0) p = NULL;
    } else if (kind < 95) {
      p = A_ALIGNED_ALLOC(al, n);
    } else {
      p = A_MEMALIGN(al, n);
    }
    if (al > align) align = al;
  }
  if (!CHECK_MSG(p != NULL, "allocation of %zu bytes (kind %u) failed", n, kind)) return 0;
  if (!is_aligned(p, align)) CHECK_MSG(0, "block %p of %zu bytes not aligned to %zu", p, n, align);
  if (A_USABLE_SIZE(p) < n) CHECK_MSG(0, "usable size %zu < %zu", A_USABLE_SIZE(p), n);
  atomic_fetch_add_explicit(&n_alloc, 1, memory_order_relaxed);
  b->p = p;
  b->size = n;
  b->align = align;
  b->seed = next_seed(rng);
  pattern_fill(b->p, n, b->seed);
  return 1;
}

static void free_block(blk_t *b, const char *what) {
  verify(b, what);
  A_FREE(b->p);
  atomic_fetch_add_explicit(&n_free, 1, memory_order_relaxed);
  b->p = NULL;
}

/* realloc to a new random size: the common prefix must survive. */
static void realloc_block(blk_t *b, unsigned long long *rng) {
  verify(b, "before realloc");
  size_t m = random_size(rng);
  unsigned char *q = A_REALLOC(b->p, m);
  if (m == 0 && q == NULL) { /* glibc: realloc(p, 0) frees */
    atomic_fetch_add_explicit(&n_free, 1, memory_order_relaxed);
    b->p = NULL;
    return;
  }
  if (!CHECK_MSG(q != NULL, "realloc(%zu -> %zu) failed", b->size, m)) return;
  atomic_fetch_add_explicit(&n_realloc, 1, memory_order_relaxed);
  size_t keep = m < b->size ? m : b->size;
  size_t off = pattern_find_bad(q, keep, b->seed);
  if (off != keep) {
    blk_t t = {q, keep, 0, b->seed};
    bad_block(&t, "after realloc", off);
  }
  if (!is_aligned(q, required_alignment(m)))
    CHECK_MSG(0, "realloc to %zu: %p misaligned", m, (void *)q);
  b->p = q;
  b->size = m;
  b->align = required_alignment(m);
  b->seed = next_seed(rng);
  pattern_fill(q, m, b->seed);
}

static void mailbox_push(int to, const blk_t *b) {
  mailbox_t *mb = &boxes[to];
  pthread_mutex_lock(&mb->mu);
  if (mb->n == mb->cap) {
    size_t cap = mb->cap ? mb->cap * 2 : 64;
    blk_t *items = A_REALLOCARRAY(mb->items, cap, sizeof(blk_t));
    REQUIRE(items != NULL);
    mb->items = items;
    mb->cap = cap;
  }
  mb->items[mb->n++] = *b;
  pthread_mutex_unlock(&mb->mu);
  atomic_fetch_add_explicit(&n_handed, 1, memory_order_relaxed);
}

/* Takes everything out of this thread's mailbox and deals with it. */
static void mailbox_drain(int self, blk_t *slots, unsigned long long *rng) {
  mailbox_t *mb = &boxes[self];
  blk_t local[128];
  for (;;) {
    size_t got = 0;
    pthread_mutex_lock(&mb->mu);
    while (mb->n > 0 && got < 128)
      local[got++] = mb->items[--mb->n];
    pthread_mutex_unlock(&mb->mu);
    if (got == 0) return;
    for (size_t k = 0; k < got; k++) {
      blk_t *b = &local[k];
      atomic_fetch_add_explicit(&n_received, 1, memory_order_relaxed);
      verify(b, "received from another thread");
      unsigned r = (unsigned)(test_rand(rng) % 10);
      if (r < 5 || !slots) {
        free_block(b, "free of a received block");
      } else if (r < 8) {
        realloc_block(b, rng);
        if (b->p) free_block(b, "free after remote realloc");
      } else {
        size_t s = (size_t)(test_rand(rng) % SLOTS);
        if (slots[s].p) free_block(&slots[s], "free of an evicted slot");
        slots[s] = *b; /* adopt it */
      }
    }
  }
}

static void *worker(void *arg) {
  int self = (int)(intptr_t)arg;
  unsigned long long rng = 0x9E3779B97F4A7C15ull * (unsigned long long)(self + 1);
  blk_t *slots = A_CALLOC(SLOTS, sizeof(blk_t));
  REQUIRE(slots != NULL);
  for (unsigned long op = 0; op < ops_per_thread; op++) {
    unsigned r = (unsigned)(test_rand(&rng) % 100);
    blk_t *s = &slots[test_rand(&rng) % SLOTS];
    if (r < 40) {
      if (s->p) free_block(s, "free before reuse of a slot");
      new_block(s, &rng);
    } else if (r < 58) {
      if (s->p) free_block(s, "free");
    } else if (r < 72) {
      if (s->p)
        realloc_block(s, &rng);
      else
        new_block(s, &rng);
    } else if (r < 90) {
      if (s->p) {
        int to = (int)(test_rand(&rng) % NTHREADS);
        if (to == self) to = (to + 1) % NTHREADS;
        mailbox_push(to, s);
        s->p = NULL;
      }
    } else {
      mailbox_drain(self, slots, &rng);
    }
    if (op % 4096 == 4095)
      A_COLLECT(); /* purge free pages while this and other threads hold live blocks */
    if (op % 16384 == 8191) {
      /* idle past the purge delay: delayed purging runs while blocks are live */
      struct timespec ts = {0, 15 * 1000000L};
      nanosleep(&ts, NULL);
    }
    if (test_failures() > 20) break;
  }
  /* nobody hands out blocks after this barrier */
  pthread_barrier_wait(&barrier);
  mailbox_drain(self, NULL, &rng);
  for (int k = 0; k < SLOTS; k++)
    if (slots[k].p) free_block(&slots[k], "final free");
  A_FREE(slots);
  /* the thread's own heap must still add up after all that */
  CHECK_MSG(A_HEAP_CHECK() == 0, "heap check found problems in a stress worker");
  return NULL;
}

int main(void) {
  api_init();
  ops_per_thread = test_scaled(100000);
  printf("stress through the %s API: %d threads x %lu operations\n", API_NAME, NTHREADS,
         ops_per_thread);
  brisk_memory_info before = api_info();
  pthread_t t[NTHREADS];
  REQUIRE(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0);
  for (int k = 0; k < NTHREADS; k++) {
    REQUIRE(pthread_mutex_init(&boxes[k].mu, NULL) == 0);
    boxes[k].items = NULL;
    boxes[k].n = boxes[k].cap = 0;
  }
  for (int k = 0; k < NTHREADS; k++)
    REQUIRE(pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k) == 0);
  for (int k = 0; k < NTHREADS; k++)
    REQUIRE(pthread_join(t[k], NULL) == 0);
  for (int k = 0; k < NTHREADS; k++) {
    CHECK(boxes[k].n == 0);
    A_FREE(boxes[k].items);
  }
  unsigned long a = atomic_load(&n_alloc), f = atomic_load(&n_free);
  printf("allocs %lu frees %lu reallocs %lu handed %lu received %lu\n", a, f,
         atomic_load(&n_realloc), atomic_load(&n_handed), atomic_load(&n_received));
  CHECK(a > ops_per_thread); /* the test really ran */
  CHECK_MSG(a == f, "allocations %lu != frees %lu", a, f);
  CHECK(atomic_load(&n_handed) == atomic_load(&n_received));
  CHECK(atomic_load(&n_handed) > 1000 || ops_per_thread < 20000);
  CHECK(atomic_load(&n_bad) == 0);
  /* everything is freed: the large blocks are gone from the books */
  A_COLLECT();
  brisk_memory_info after = api_info();
  CHECK_MSG(after.large_in_use <= before.large_in_use, "large_in_use %zu -> %zu",
            before.large_in_use, after.large_in_use);
  CHECK(after.mapped_peak >= after.mapped);
  CHECK(after.committed <= after.mapped);
  return test_finish();
}
