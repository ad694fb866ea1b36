/* SPDX-License-Identifier: MIT */
/* Short-lived threads sharing objects: rounds of T threads that each work
 * on a small set of their own and trade objects through one table all
 * threads share (an exchange puts a new object in a slot and takes out
 * what was there, whichever thread, live or exited, made it). The table
 * outlives the threads, so many frees land in the heap of a thread that has
 * exited, and objects made in one round are freed in a later one: the
 * pattern of a program that starts a thread per task and passes results
 * between tasks (the classic "mstress" test of allocator benchmarks). Sizes
 * are mostly small, one in 64 up to 32 KiB. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OWN_SLOTS = 64, MIN_SIZE = 16, SMALL_MAX = 1024, LARGE_MAX = 32 << 10 };

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, round, ops;
  long n_shared;
  _Atomic(bench_block *) *shared;
  unsigned long long made, freed, bad;
} worker;

static bench_block *new_block(uint64_t *rng) {
  size_t max = bench_rand_range(rng, 0, 63) == 0 ? LARGE_MAX : SMALL_MAX;
  uint32_t size = (uint32_t)bench_rand_range(rng, MIN_SIZE, max);
  bench_block *b = bench_block_tag(bench_malloc(size), size);
  return b;
}

static void release(bench_block *b, unsigned long long *freed, unsigned long long *bad) {
  if (b == NULL) return;
  *bad += !bench_block_intact(b);
  free(b);
  (*freed)++;
}

static void *task(void *arg) {
  worker *w = arg;
  uint64_t rng = ((uint64_t)w->round << 20) + (uint64_t)w->id * 7919 + 5;
  bench_block *own[OWN_SLOTS] = {0};
  unsigned long long made = 0, freed = 0, bad = 0;
  for (long op = 0; op < w->ops; op++) {
    unsigned what = (unsigned)bench_rand_range(&rng, 0, 99);
    bench_block **mine = &own[bench_rand_range(&rng, 0, OWN_SLOTS - 1)];
    _Atomic(bench_block *) *slot = &w->shared[bench_rand_range(&rng, 0, (size_t)w->n_shared - 1)];
    if (what < 50) { /* work on its own objects */
      release(*mine, &freed, &bad);
      *mine = new_block(&rng);
      made++;
    } else if (what < 85) { /* hand a new object over, free what was there */
      bench_block *b = new_block(&rng);
      made++;
      release(atomic_exchange(slot, b), &freed, &bad);
    } else { /* take one over, to keep a while */
      bench_block *b = atomic_exchange(slot, NULL);
      if (b != NULL) {
        release(*mine, &freed, &bad);
        *mine = b;
      }
    }
  }
  for (long i = 0; i < OWN_SLOTS; i++)
    release(own[i], &freed, &bad);
  w->made = made;
  w->freed = freed;
  w->bad = bad;
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long rounds = 0, ops = 0, n_shared = 1024;
  const bench_opt opts[] = {
      {"rounds", BENCH_OPT_LONG, &rounds, "rounds of T new threads (default 50, quick 20)"},
      {"ops", BENCH_OPT_LONG, &ops, "operations per thread per round (default 40000, quick 10000)"},
      {"shared", BENCH_OPT_LONG, &n_shared, "slots of the table all threads share (1024)"},
  };
  bench_parse_args(argc, argv, "short-lived threads trade objects through a shared table", &common,
                   opts, sizeof opts / sizeof opts[0]);
  if (rounds == 0) rounds = common.quick ? 20 : 50;
  if (ops == 0) ops = common.quick ? 10000 : 40000;
  if (rounds < 1 || ops < 1 || n_shared < 1) {
    fprintf(stderr, "sharing: need rounds, ops and shared >= 1\n");
    return 64;
  }
  long threads = common.threads;
  _Atomic(bench_block *) *shared = bench_malloc(sizeof *shared * (size_t)n_shared);
  for (long i = 0; i < n_shared; i++)
    atomic_init(&shared[i], NULL);
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  unsigned long long made = 0, freed = 0, bad = 0;
  double start = bench_now();
  for (long round = 0; round < rounds; round++) {
    for (long t = 0; t < threads; t++)
      workers[t] = (worker){t, round, ops, n_shared, shared, 0, 0, 0};
    bench_run_threads(threads, task, workers, sizeof *workers);
    for (long t = 0; t < threads; t++) {
      made += workers[t].made;
      freed += workers[t].freed;
      bad += workers[t].bad;
    }
  }
  for (long i = 0; i < n_shared; i++)
    release(atomic_load(&shared[i]), &freed, &bad);
  double secs = bench_now() - start;
  free(shared);
  free(workers);
  if (bad) bench_fail("%llu objects were overwritten while live", bad);
  if (freed != made) bench_fail("made %llu objects but freed %llu", made, freed);
  char extra[64];
  snprintf(extra, sizeof extra, "threads_total=%ld", threads * rounds);
  return bench_finish(1, made, secs, extra);
}
