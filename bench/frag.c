/* SPDX-License-Identifier: MIT */
/* Fragmentation: fill the heap with small blocks, free 90% of them in a
 * scattered pattern, then allocate larger blocks worth half of what was
 * freed. A perfect allocator would serve phase 3 from the holes phase 2 left
 * and hand whole empty pages back to the OS; RESULT compares live bytes with
 * the resident set after each phase (rss_mb / live_mb = overhead). */
#define _GNU_SOURCE
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KEEP_ONE_IN = 10 };

typedef struct block {
  uint32_t size, tag;
} block;

typedef struct worker {
  BENCH_CACHE_ALIGNED long id;
  size_t small_bytes; /* phase 1 budget */
  block **blocks;
  size_t count, capacity;
  size_t live_bytes, freed_bytes;
  unsigned long long ops, bad;
  int phase;
} worker;

static uint32_t tag_of(const block *b) {
  return (uint32_t)((uintptr_t)b >> 4) * 2654435761u ^ b->size;
}

static block *new_block(size_t size) {
  block *b = bench_malloc(size);
  b->size = (uint32_t)size;
  b->tag = tag_of(b);
  ((unsigned char *)b)[size - 1] = (unsigned char)b->tag;
  return b;
}

static int intact(const block *b) {
  return b->tag == tag_of(b) && ((const unsigned char *)b)[b->size - 1] == (unsigned char)b->tag;
}

static void keep(worker *w, block *b) {
  if (w->count == w->capacity) {
    w->capacity = w->capacity ? w->capacity * 2 : 1024;
    w->blocks = bench_realloc(w->blocks, w->capacity * sizeof *w->blocks);
  }
  w->blocks[w->count++] = b;
  w->live_bytes += b->size;
  w->ops++;
}

static void *run_phase(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 31337 + (uint64_t)w->phase;
  if (w->phase == 1) {
    while (w->live_bytes < w->small_bytes)
      keep(w, new_block(bench_rand_range(&rng, 16, 256)));
  } else if (w->phase == 2) {
    size_t kept = 0;
    for (size_t i = 0; i < w->count; i++) {
      block *b = w->blocks[i];
      w->bad += !intact(b);
      if (bench_rand_next(&rng) % KEEP_ONE_IN == 0) {
        w->blocks[kept++] = b;
      } else {
        w->live_bytes -= b->size;
        w->freed_bytes += b->size;
        free(b);
        w->ops++;
      }
    }
    w->count = kept;
  } else if (w->phase == 3) {
    size_t target = w->live_bytes + w->freed_bytes / 2;
    while (w->live_bytes < target)
      keep(w, new_block(bench_rand_range(&rng, 1024, 4096)));
  } else {
    for (size_t i = 0; i < w->count; i++) {
      w->bad += !intact(w->blocks[i]);
      free(w->blocks[i]);
      w->ops++;
    }
    free(w->blocks);
    w->blocks = NULL;
    w->count = 0;
  }
  return NULL;
}

static size_t run(worker *workers, long threads, int phase) {
  for (long t = 0; t < threads; t++)
    workers[t].phase = phase;
  bench_run_threads(threads, run_phase, workers, sizeof *workers);
  size_t live = 0;
  for (long t = 0; t < threads; t++)
    live += workers[t].live_bytes;
  return live;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long megabytes = 0;
  const bench_opt opts[] = {
      {"mb", BENCH_OPT_LONG, &megabytes,
       "small-block bytes in phase 1, MiB (default 256, quick 96)"},
  };
  bench_parse_args(argc, argv, "fragmentation: live bytes vs resident memory", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (megabytes == 0) megabytes = common.quick ? 96 : 256;
  long threads = common.threads;
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].id = t;
    workers[t].small_bytes = ((size_t)megabytes << 20) / (size_t)threads;
  }
  const double mb = 1024.0 * 1024.0;
  double start = bench_now();
  size_t live_full = run(workers, threads, 1);
  size_t rss_full = bench_rss_bytes();
  size_t live_holes = run(workers, threads, 2);
  size_t rss_holes = bench_rss_bytes();
  size_t live_end = run(workers, threads, 3);
  size_t rss_end = bench_rss_bytes();
  run(workers, threads, 4);
  double secs = bench_now() - start;

  unsigned long long ops = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    ops += workers[t].ops;
    bad += workers[t].bad;
  }
  free(workers);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  if (live_holes >= live_full || live_end <= live_holes)
    bench_fail("live byte counts inconsistent");
  char extra[256];
  snprintf(extra, sizeof extra,
           "live_full_mb=%.1f rss_full_mb=%.1f live_holes_mb=%.1f rss_holes_mb=%.1f "
           "live_mb=%.1f rss_mb=%.1f overhead=%.2f",
           live_full / mb, rss_full / mb, live_holes / mb, rss_holes / mb, live_end / mb,
           rss_end / mb, live_end ? (double)rss_end / (double)live_end : 0.0);
  return bench_finish(1, ops, secs, extra);
}
