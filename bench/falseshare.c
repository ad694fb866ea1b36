/* SPDX-License-Identifier: MIT */
/* False sharing between threads' small blocks (after Hoard's cache-thrash
 * and cache-scratch). Each thread repeatedly allocates an 8-byte block,
 * writes it many times and frees it. Active phase: if the allocator hands
 * neighbouring bytes of one cache line to different threads, their writes
 * fight over the line. Passive phase: the main thread first allocates one
 * small block per thread back to back and hands them out; a thread that frees
 * its block and gets it (or its neighbour) back inherits the shared line. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct worker {
  BENCH_CACHE_ALIGNED long iterations, writes;
  volatile uint64_t *inherited; /* passive phase: a block from the main thread */
  unsigned long long done, bad;
} worker;

static void *write_blocks(void *arg) {
  worker *w = arg;
  unsigned long long done = 0, bad = 0;
  if (w->inherited) free((void *)w->inherited);
  for (long i = 0; i < w->iterations; i++) {
    volatile uint64_t *block = bench_malloc(sizeof *block);
    *block = 0;
    for (long k = 0; k < w->writes; k++)
      *block += 1;
    bad += *block != (uint64_t)w->writes;
    done += (unsigned long long)w->writes;
    free((void *)block);
  }
  w->done = done;
  w->bad = bad;
  return NULL;
}

static double run_phase(long threads, long iterations, long writes, int passive,
                        unsigned long long *done) {
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].iterations = iterations / threads + (t < iterations % threads);
    workers[t].writes = writes;
    if (passive) workers[t].inherited = bench_malloc(sizeof(uint64_t));
  }
  double start = bench_now();
  bench_run_threads(threads, write_blocks, workers, sizeof *workers);
  double secs = bench_now() - start;
  for (long t = 0; t < threads; t++) {
    if (workers[t].bad)
      bench_fail("thread %ld: a block lost writes (%llu times)", t, workers[t].bad);
    *done += workers[t].done;
  }
  free(workers);
  return secs;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long iterations = 0, writes = 1000;
  const bench_opt opts[] = {
      {"iterations", BENCH_OPT_LONG, &iterations,
       "blocks allocated per phase in all (default 1000000, quick 300000)"},
      {"writes", BENCH_OPT_LONG, &writes, "writes to each block (1000)"},
  };
  bench_parse_args(argc, argv, "false sharing between threads' small blocks", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (iterations == 0) iterations = common.quick ? 300000 : 1000000;
  unsigned long long done = 0;
  double active = run_phase(common.threads, iterations, writes, 0, &done);
  double passive = run_phase(common.threads, iterations, writes, 1, &done);
  unsigned long long expected = 2ull * (unsigned long long)iterations * (unsigned long long)writes;
  if (done != expected) bench_fail("did %llu writes, expected %llu", done, expected);
  char extra[96];
  snprintf(extra, sizeof extra, "active_s=%.4f passive_s=%.4f", active, passive);
  return bench_finish(1, done, active + passive, extra);
}
