/* SPDX-License-Identifier: MIT */
/* Big buffers: a program that keeps 20 buffers of 5-25 MiB alive (about
 * 300 MB) and keeps replacing a random one with a new buffer of a random
 * size, zero-filled right after malloc as `std::make_unique<char[]>(n)` or
 * `calloc`-then-use code does. An allocator that keeps freed huge blocks
 * resident, or that maps fresh pages where a freed span could be reused,
 * shows here as peak RSS far above what is live, or as time in page faults.
 *
 * Each buffer is stamped at every STAMP_STRIDE bytes with its identity and
 * checked before it is freed: a stamp overwritten, or a byte next to it that
 * is no longer zero, means two live buffers overlapped. With T threads each
 * owns every T'th buffer and makes its share of the replacements. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STAMP_STRIDE = 1 << 20 };

typedef struct buffer {
  unsigned char *data;
  size_t size;
  uint64_t generation;
} buffer;

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, threads, n_buffers, replacements;
  size_t min_size, max_size;
  buffer *buffers; /* shared array; this thread touches only its own */
  unsigned long long replaced, bad;
} worker;

static uint64_t stamp_of(long index, uint64_t generation, size_t offset) {
  uint64_t seed = ((uint64_t)index << 40) ^ (generation << 20) ^ offset;
  return bench_rand_next(&seed);
}

static void fill(buffer *b, long index, size_t size) {
  b->data = bench_malloc(size);
  memset(b->data, 0, size);
  b->size = size;
  b->generation++;
  for (size_t off = 0; off + 2 * sizeof(uint64_t) <= size; off += STAMP_STRIDE) {
    uint64_t stamp = stamp_of(index, b->generation, off);
    memcpy(b->data + off, &stamp, sizeof stamp);
  }
}

/* 1 if every stamp is there and the 8 bytes after each are still zero. */
static int intact(const buffer *b, long index) {
  static const unsigned char zero[sizeof(uint64_t)];
  for (size_t off = 0; off + 2 * sizeof(uint64_t) <= b->size; off += STAMP_STRIDE) {
    uint64_t stamp;
    memcpy(&stamp, b->data + off, sizeof stamp);
    if (stamp != stamp_of(index, b->generation, off) ||
        memcmp(b->data + off + sizeof stamp, zero, sizeof zero) != 0)
      return 0;
  }
  return b->data[b->size - 1] == 0;
}

static void *replace_buffers(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 7919 + 5;
  /* This thread's buffers are w->id, w->id + T, ... */
  long owned = (w->n_buffers - w->id + w->threads - 1) / w->threads;
  for (long r = 0; r < w->replacements; r++) {
    long index = w->id + (long)bench_rand_range(&rng, 0, (size_t)owned - 1) * w->threads;
    buffer *b = &w->buffers[index];
    w->bad += !intact(b, index);
    free(b->data);
    fill(b, index, bench_rand_range(&rng, w->min_size, w->max_size));
    w->replaced++;
  }
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long n_buffers = 20, replacements = 0, min_mb = 5, max_mb = 25;
  const bench_opt opts[] = {
      {"buffers", BENCH_OPT_LONG, &n_buffers, "buffers kept alive (20)"},
      {"replace", BENCH_OPT_LONG, &replacements, "replacements in all (default 2000, quick 100)"},
      {"min-mb", BENCH_OPT_LONG, &min_mb, "smallest buffer, MiB (5)"},
      {"max-mb", BENCH_OPT_LONG, &max_mb, "largest buffer, MiB (25)"},
  };
  bench_parse_args(argc, argv, "big zero-filled buffers replaced at random", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (replacements == 0) replacements = common.quick ? 100 : 2000;
  long threads = common.threads;
  if (n_buffers < threads || min_mb < 1 || max_mb < min_mb) {
    fprintf(stderr, "bigbuffers: need --threads <= --buffers and 1 <= --min-mb <= --max-mb\n");
    return 64;
  }
  size_t min_size = (size_t)min_mb << 20, max_size = (size_t)max_mb << 20;
  buffer *buffers = bench_malloc(sizeof *buffers * (size_t)n_buffers);
  memset(buffers, 0, sizeof *buffers * (size_t)n_buffers);
  uint64_t rng = 11;
  for (long i = 0; i < n_buffers; i++)
    fill(&buffers[i], i, bench_rand_range(&rng, min_size, max_size));
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++)
    workers[t] = (worker){.id = t,
                          .threads = threads,
                          .n_buffers = n_buffers,
                          .replacements = replacements / threads + (t < replacements % threads),
                          .min_size = min_size,
                          .max_size = max_size,
                          .buffers = buffers};
  double start = bench_now();
  bench_run_threads(threads, replace_buffers, workers, sizeof *workers);
  double secs = bench_now() - start;

  unsigned long long replaced = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    replaced += workers[t].replaced;
    bad += workers[t].bad;
  }
  size_t live = 0;
  for (long i = 0; i < n_buffers; i++) {
    bad += !intact(&buffers[i], i);
    live += buffers[i].size;
    free(buffers[i].data);
  }
  free(buffers);
  free(workers);
  if (bad) bench_fail("%llu buffers were overwritten while live", bad);
  if (replaced != (unsigned long long)replacements)
    bench_fail("made %llu replacements, expected %ld", replaced, replacements);
  char extra[64];
  snprintf(extra, sizeof extra, "live_mb=%.1f", bench_mib(live));
  return bench_finish(1, replaced, secs, extra);
}
