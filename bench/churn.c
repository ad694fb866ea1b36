/* SPDX-License-Identifier: MIT */
/* Rounds of "allocate 10,000 blocks of 100 bytes, then free them all", the
 * test of a published complaint that malloc is a tortoise next to a
 * fixed-size pool -- 1,000 rounds in the account (VC2008 malloc 3.854 s,
 * FastMM 0.14 s, a fixed-size pool 0.0806 s). The rounds are split across
 * the threads, so the total work is the same at every thread count. --pool
 * replaces malloc with a trivial per-thread fixed-size free list: the
 * physical limit any general allocator is measured against. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pool: blocks carved from big chunks, recycled through a singly linked
 * free list threaded through the blocks themselves. One per thread, so it
 * needs no lock, exactly like the account's FixedAlloc. */
typedef struct pool_block {
  struct pool_block *next;
} pool_block;

typedef struct pool {
  size_t block_size;
  pool_block *free_list;
  void **chunks;
  size_t n_chunks;
} pool;

enum { POOL_CHUNK_BLOCKS = 4096 };

static void *pool_alloc(pool *p) {
  if (!p->free_list) {
    char *chunk = bench_malloc(p->block_size * POOL_CHUNK_BLOCKS);
    p->chunks = bench_realloc(p->chunks, (p->n_chunks + 1) * sizeof *p->chunks);
    p->chunks[p->n_chunks++] = chunk;
    for (size_t i = POOL_CHUNK_BLOCKS; i-- > 0;) {
      pool_block *block = (pool_block *)(chunk + i * p->block_size);
      block->next = p->free_list;
      p->free_list = block;
    }
  }
  pool_block *block = p->free_list;
  p->free_list = block->next;
  return block;
}

static void pool_free(pool *p, void *ptr) {
  pool_block *block = ptr;
  block->next = p->free_list;
  p->free_list = block;
}

static void pool_destroy(pool *p) {
  for (size_t i = 0; i < p->n_chunks; i++)
    free(p->chunks[i]);
  free(p->chunks);
}

typedef struct worker {
  BENCH_CACHE_ALIGNED long rounds, blocks, block_size;
  int use_pool;
  unsigned long long pairs, bad;
} worker;

static void *churn(void *arg) {
  worker *w = arg;
  size_t size = (size_t)w->block_size;
  /* Round the pool's stride up so every block stays pointer-aligned. */
  pool p = {(size + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *), NULL, NULL, 0};
  unsigned char **ptrs = bench_malloc(sizeof *ptrs * (size_t)w->blocks);
  for (long r = 0; r < w->rounds; r++) {
    for (long n = 0; n < w->blocks; n++) {
      unsigned char *block = w->use_pool ? pool_alloc(&p) : bench_malloc(size);
      /* Tag both ends: overlapping blocks would overwrite each other's tags. */
      block[0] = (unsigned char)n;
      block[size - 1] = (unsigned char)(n >> 8);
      ptrs[n] = block;
    }
    for (long n = 0; n < w->blocks; n++) {
      unsigned char *block = ptrs[n];
      w->bad += block[0] != (unsigned char)n || block[size - 1] != (unsigned char)(n >> 8);
      if (w->use_pool)
        pool_free(&p, block);
      else
        free(block);
    }
    w->pairs += (unsigned long long)w->blocks;
  }
  free(ptrs);
  pool_destroy(&p);
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long rounds = 0, blocks = 10000, block_size = 100;
  int use_pool = 0;
  const bench_opt opts[] = {
      {"rounds", BENCH_OPT_LONG, &rounds,
       "rounds in all (default 3000, quick 1000; the account ran 1000)"},
      {"blocks", BENCH_OPT_LONG, &blocks, "blocks per round (10000)"},
      {"size", BENCH_OPT_LONG, &block_size, "block size in bytes (100)"},
      {"pool", BENCH_OPT_FLAG, &use_pool, "use a fixed-size free-list pool, not malloc"},
  };
  bench_parse_args(argc, argv, "allocate N fixed-size blocks, free them all, repeat", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (rounds == 0) rounds = common.quick ? 1000 : 3000;
  if (blocks < 1 || block_size < 2) {
    fprintf(stderr, "churn: --blocks must be >= 1 and --size >= 2\n");
    return 64;
  }
  long threads = common.threads;
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++)
    workers[t] =
        (worker){rounds / threads + (t < rounds % threads), blocks, block_size, use_pool, 0, 0};
  double start = bench_now();
  bench_run_threads(threads, churn, workers, sizeof *workers);
  double secs = bench_now() - start;

  unsigned long long pairs = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    pairs += workers[t].pairs;
    bad += workers[t].bad;
  }
  free(workers);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  if (pairs != (unsigned long long)rounds * (unsigned long long)blocks)
    bench_fail("made %llu malloc/free pairs, expected %llu", pairs,
               (unsigned long long)rounds * (unsigned long long)blocks);
  char extra[64];
  snprintf(extra, sizeof extra, "allocator=%s", use_pool ? "pool" : "malloc");
  return bench_finish(1, pairs, secs, extra);
}
