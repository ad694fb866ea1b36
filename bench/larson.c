/* SPDX-License-Identifier: MIT */
/* Server-style stress after Larson & Krishnan: every thread owns a table of
 * live blocks and keeps replacing random ones (free the old block, allocate
 * one of a random size). Between rounds the tables move on to the next
 * thread, the way a server hands connections between workers, so most frees
 * hit blocks another thread allocated. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table {
  bench_block **slots;
  long n_slots;
} table;

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, threads, rounds, steps;
  size_t min_size, max_size;
  table *tables;
  pthread_barrier_t *barrier;
  unsigned long long replaced, bad;
} worker;

static bench_block *new_block(uint64_t *rng, size_t min_size, size_t max_size) {
  uint32_t size = (uint32_t)bench_rand_range(rng, min_size, max_size);
  return bench_block_tag(bench_malloc(size), size);
}

static void *serve(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 7919 + 17;
  unsigned long long replaced = 0, bad = 0;
  for (long round = 0; round < w->rounds; round++) {
    /* Round r: thread i serves table (i + r) mod T, filled by someone else. */
    table *t = &w->tables[(w->id + round) % w->threads];
    for (long s = 0; s < w->steps; s++) {
      long slot = (long)bench_rand_range(&rng, 0, (size_t)t->n_slots - 1);
      bench_block *old = t->slots[slot];
      bad += !bench_block_intact(old);
      free(old);
      t->slots[slot] = new_block(&rng, w->min_size, w->max_size);
      replaced++;
    }
    pthread_barrier_wait(w->barrier);
  }
  w->replaced = replaced;
  w->bad = bad;
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long slots = 4000, rounds = 20, steps = 0, min_size = 16, max_size = 512;
  const bench_opt opts[] = {
      {"slots", BENCH_OPT_LONG, &slots, "live blocks per table (4000)"},
      {"rounds", BENCH_OPT_LONG, &rounds, "times the tables change hands (20)"},
      {"steps", BENCH_OPT_LONG, &steps,
       "replacements per round in all (default 600000, quick 200000)"},
      {"min", BENCH_OPT_LONG, &min_size, "smallest block (16)"},
      {"max", BENCH_OPT_LONG, &max_size, "largest block (512)"},
  };
  bench_parse_args(argc, argv, "server-style churn with blocks freed by other threads", &common,
                   opts, sizeof opts / sizeof opts[0]);
  if (steps == 0) steps = common.quick ? 200000 : 600000;
  if (slots < 1 || rounds < 1 || min_size < (long)sizeof(bench_block) + 1 || max_size < min_size) {
    fprintf(stderr, "larson: need slots, rounds >= 1 and %zu < min <= max\n", sizeof(bench_block));
    return 64;
  }
  long threads = common.threads;
  table *tables = bench_malloc(sizeof *tables * (size_t)threads);
  uint64_t rng = 1;
  for (long t = 0; t < threads; t++) {
    tables[t].n_slots = slots;
    tables[t].slots = bench_malloc(sizeof(bench_block *) * (size_t)slots);
    for (long s = 0; s < slots; s++)
      tables[t].slots[s] = new_block(&rng, (size_t)min_size, (size_t)max_size);
  }
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].id = t;
    workers[t].threads = threads;
    workers[t].rounds = rounds;
    workers[t].steps = steps / threads + (t < steps % threads);
    workers[t].min_size = (size_t)min_size;
    workers[t].max_size = (size_t)max_size;
    workers[t].tables = tables;
    workers[t].barrier = &barrier;
  }
  double start = bench_now();
  bench_run_threads(threads, serve, workers, sizeof *workers);
  double secs = bench_now() - start;

  unsigned long long replaced = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    replaced += workers[t].replaced;
    bad += workers[t].bad;
  }
  for (long t = 0; t < threads; t++) {
    for (long s = 0; s < slots; s++) {
      bad += !bench_block_intact(tables[t].slots[s]);
      free(tables[t].slots[s]);
    }
    free(tables[t].slots);
  }
  free(tables);
  free(workers);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  if (replaced != (unsigned long long)rounds * (unsigned long long)steps)
    bench_fail("replaced %llu blocks, expected %llu", replaced,
               (unsigned long long)rounds * (unsigned long long)steps);
  return bench_finish(1, replaced, secs, NULL);
}
