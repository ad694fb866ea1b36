/* SPDX-License-Identifier: MIT */
/* realloc growth: strings built by appending short pieces one at a time,
 * growing the block to the exact new length each time -- the naive
 * `s := s + piece` that makes realloc's in-place growth and its copying
 * policy matter. Threads build their share of the strings independently. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PIECE_MAX = 24 };

static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, strings;
  size_t max_len;
  const char *pattern; /* every string is a prefix of pattern + (s % 36) */
  unsigned long long appends, bytes, bad;
} worker;

static void *build_strings(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 15485863 + 5;
  unsigned long long appends = 0, bytes = 0, bad = 0;
  for (long s = 0; s < w->strings; s++) {
    const char *source = w->pattern + s % (long)(sizeof alphabet - 1);
    size_t target = bench_rand_range(&rng, 1, w->max_len);
    char *text = NULL;
    size_t len = 0;
    while (len < target) {
      size_t piece = bench_rand_range(&rng, 1, PIECE_MAX);
      text = bench_realloc(text, len + piece + 1);
      memcpy(text + len, source + len, piece);
      len += piece;
      text[len] = '\0';
      appends++;
    }
    /* realloc must have carried every earlier piece along. */
    bad += memcmp(text, source, len) != 0;
    bytes += len;
    free(text);
  }
  w->appends = appends;
  w->bytes = bytes;
  w->bad = bad;
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long strings = 0, max_len = 8192;
  const bench_opt opts[] = {
      {"strings", BENCH_OPT_LONG, &strings, "strings built in all (default 100000, quick 30000)"},
      {"max-len", BENCH_OPT_LONG, &max_len, "longest string in bytes (8192)"},
  };
  bench_parse_args(argc, argv, "grow strings by appending with realloc", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (strings == 0) strings = common.quick ? 30000 : 100000;
  if (max_len < 1) {
    fprintf(stderr, "append: --max-len must be >= 1\n");
    return 64;
  }
  size_t pattern_len = (size_t)max_len + PIECE_MAX + sizeof alphabet;
  char *pattern = bench_malloc(pattern_len);
  for (size_t i = 0; i < pattern_len; i++)
    pattern[i] = alphabet[i % (sizeof alphabet - 1)];
  long threads = common.threads;
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].id = t;
    workers[t].strings = strings / threads + (t < strings % threads);
    workers[t].max_len = (size_t)max_len;
    workers[t].pattern = pattern;
  }
  double start = bench_now();
  bench_run_threads(threads, build_strings, workers, sizeof *workers);
  double secs = bench_now() - start;
  unsigned long long appends = 0, bytes = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    appends += workers[t].appends;
    bytes += workers[t].bytes;
    bad += workers[t].bad;
  }
  free(workers);
  free(pattern);
  if (bad) bench_fail("%llu strings lost content while growing", bad);
  char extra[64];
  snprintf(extra, sizeof extra, "bytes=%llu", bytes);
  return bench_finish(1, appends, secs, extra);
}
