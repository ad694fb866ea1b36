/* SPDX-License-Identifier: MIT */
/* String copying that does not scale: threads each run two nested loops that
 * copy strings of varying length back and forth -- allocate the new string,
 * copy, free the old one -- as `s := Copy(t, ...)` does with Delphi strings.
 * In the account a shared, locked pool made two threads take twice as long
 * as one; per-thread pools scaled. The total work is split across the
 * threads, so perfect scaling shows up as the time falling with the thread
 * count. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SOURCE_LEN = 4096, MAX_COPY = 300 };

typedef struct worker {
  BENCH_CACHE_ALIGNED const char *source;
  long outer, inner, seed;
  uint64_t checksum, expected;
  unsigned long long copies;
} worker;

/* Copies `len` bytes of the source starting at `offset` into a new string
 * and frees the previous one, like assigning a Copy() result. */
static char *assign_copy(char *old, const char *source, size_t offset, size_t len) {
  char *fresh = bench_malloc(len + 1);
  memcpy(fresh, source + offset, len);
  fresh[len] = '\0';
  free(old);
  return fresh;
}

static void *copy_strings(void *arg) {
  worker *w = arg;
  char *a = NULL, *b = NULL;
  uint64_t rng = (uint64_t)w->seed;
  for (long i = 0; i < w->outer; i++) {
    for (long j = 0; j < w->inner; j++) {
      size_t len = bench_rand_range(&rng, 1, MAX_COPY);
      size_t offset = bench_rand_range(&rng, 0, SOURCE_LEN - MAX_COPY);
      a = assign_copy(a, w->source, offset, len);
      /* b copies back from a, as the account copies strings back and forth. */
      size_t half = len / 2 + 1;
      b = assign_copy(b, a, len - half, half);
      /* Sample the copies against the source: cheap, and catches a block
       * handed out twice or overwritten by another thread. */
      w->checksum = w->checksum * 31 + (unsigned char)a[0] + (unsigned char)a[len - 1] * 7u +
                    (unsigned char)b[half - 1] * 13u + strlen(b);
      w->expected = w->expected * 31 + (unsigned char)w->source[offset] +
                    (unsigned char)w->source[offset + len - 1] * 7u +
                    (unsigned char)w->source[offset + len - 1] * 13u + half;
      w->copies += 2;
    }
  }
  free(a);
  free(b);
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long outer = 0, inner = 1000;
  const bench_opt opts[] = {
      {"outer", BENCH_OPT_LONG, &outer, "outer loop iterations in all (default 20000, quick 6000)"},
      {"inner", BENCH_OPT_LONG, &inner, "inner loop iterations (1000)"},
  };
  bench_parse_args(argc, argv, "copy strings of varying length in nested loops", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (outer == 0) outer = common.quick ? 6000 : 20000;

  char source[SOURCE_LEN];
  uint64_t rng = 42;
  for (size_t i = 0; i < SOURCE_LEN; i++)
    source[i] = (char)('!' + bench_rand_next(&rng) % 90);

  long threads = common.threads;
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++)
    workers[t] = (worker){source, outer / threads + (t < outer % threads), inner, t + 1, 0, 0, 0};
  double start = bench_now();
  bench_run_threads(threads, copy_strings, workers, sizeof *workers);
  double secs = bench_now() - start;

  unsigned long long copies = 0;
  for (long t = 0; t < threads; t++) {
    if (workers[t].checksum != workers[t].expected)
      bench_fail("thread %ld: string contents differ from the source", t);
    copies += workers[t].copies;
  }
  free(workers);
  unsigned long long expected_copies = 2ull * (unsigned long long)outer * (unsigned long long)inner;
  if (copies != expected_copies)
    bench_fail("made %llu copies, expected %llu", copies, expected_copies);
  return bench_finish(1, copies, secs, NULL);
}
