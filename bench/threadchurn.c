/* SPDX-License-Identifier: MIT */
/* Thread churn: many short-lived threads, a few at a time, as a program that
 * starts a thread per task does. Each thread makes random-size allocations
 * and frees (8 B to 64 KiB, uniformly, so medium and small size classes are
 * all touched) and finally hands a few live blocks to the main
 * thread, which frees them after joining it. The work is small; what is
 * measured is mostly memory: an allocator that keeps per-thread memory after
 * the thread exits grows with the number of threads that ever ran, not with
 * what is live. RESULT reports the resident set halfway (half_rss_mb), right
 * after the last thread is joined and its blocks freed (joined_rss_mb), and
 * at exit (end_rss_mb), after --idle-ms in which nothing calls the
 * allocator: what an allocator that releases free memory after a delay
 * still holds once the program stops allocating, as one that releases it at
 * once holds at the join. secs leaves the idle time out.
 *
 * --threads T is how many threads run at a time; --total threads run in all,
 * in waves of T. */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 64, MIN_SIZE = 8, MAX_SIZE = 64 << 10 };

typedef struct worker {
  BENCH_CACHE_ALIGNED long index, ops, handoff;
  bench_block **handed; /* the blocks left live for main, `handoff` of them */
  unsigned long long done, bad;
} worker;

static bench_block *new_block(uint64_t *rng) {
  uint32_t size = (uint32_t)bench_rand_range(rng, MIN_SIZE, MAX_SIZE);
  void *memory = bench_malloc(size);
  bench_touch_pages(memory, size, 0);
  return bench_block_tag(memory, size);
}

/* One short-lived thread: `ops` random allocations and frees over a small
 * working set, then all but `handoff` blocks freed and those handed over. */
static void *short_life(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->index * 7919 + 1;
  bench_block *slots[SLOTS] = {0};
  unsigned long long bad = 0;
  for (long op = 0; op < w->ops; op++) {
    bench_block **slot = &slots[bench_rand_range(&rng, 0, SLOTS - 1)];
    if (*slot) {
      bad += !bench_block_intact(*slot);
      free(*slot);
      *slot = NULL;
    } else {
      *slot = new_block(&rng);
    }
  }
  long handed = 0;
  for (long s = 0; s < SLOTS; s++) {
    if (!slots[s]) continue;
    if (handed < w->handoff) {
      w->handed[handed++] = slots[s];
    } else {
      bad += !bench_block_intact(slots[s]);
      free(slots[s]);
    }
  }
  while (handed < w->handoff) /* too few left live: top up */
    w->handed[handed++] = new_block(&rng);
  w->done = (unsigned long long)w->ops;
  w->bad = bad;
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long total = 0, ops = 0, handoff = 16, idle_ms = 1000;
  const bench_opt opts[] = {
      {"total", BENCH_OPT_LONG, &total, "threads started in all (default 4000, quick 400)"},
      {"ops", BENCH_OPT_LONG, &ops, "allocations + frees per thread (default 2000, quick 500)"},
      {"handoff", BENCH_OPT_LONG, &handoff, "live blocks each thread hands to main (16)"},
      {"idle-ms", BENCH_OPT_LONG, &idle_ms, "idle time after the last join, ms (1000)"},
  };
  bench_parse_args(argc, argv, "short-lived threads, T at a time, hand live blocks to main",
                   &common, opts, sizeof opts / sizeof opts[0]);
  if (total == 0) total = common.quick ? 400 : 4000;
  if (ops == 0) ops = common.quick ? 500 : 2000;
  if (handoff > SLOTS) {
    fprintf(stderr, "threadchurn: --handoff must be at most %d\n", SLOTS);
    return 64;
  }
  long wave = common.threads;
  worker *workers = bench_calloc_workers(wave, sizeof *workers);
  bench_block **handed = bench_malloc(sizeof *handed * (size_t)(wave * handoff + 1));
  unsigned long long done = 0, bad = 0, freed_by_main = 0;
  size_t half_rss = 0;
  double start = bench_now();
  for (long first = 0; first < total; first += wave) {
    long n = total - first < wave ? total - first : wave;
    for (long t = 0; t < n; t++)
      workers[t] = (worker){first + t, ops, handoff, handed + t * handoff, 0, 0};
    bench_run_threads(n, short_life, workers, sizeof *workers);
    for (long t = 0; t < n; t++) {
      done += workers[t].done;
      bad += workers[t].bad;
      for (long k = 0; k < handoff; k++) {
        bad += !bench_block_intact(workers[t].handed[k]);
        free(workers[t].handed[k]);
        freed_by_main++;
      }
    }
    if (!half_rss && first + n >= total / 2) half_rss = bench_rss_bytes();
  }
  double secs = bench_now() - start;
  free(handed);
  free(workers);
  size_t joined_rss = bench_rss_bytes();
  if (idle_ms > 0) bench_sleep_ms(idle_ms);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  if (done != (unsigned long long)total * (unsigned long long)ops ||
      freed_by_main != (unsigned long long)total * (unsigned long long)handoff)
    bench_fail("counted %llu ops and %llu handed blocks, expected %llu and %llu", done,
               freed_by_main, (unsigned long long)total * (unsigned long long)ops,
               (unsigned long long)total * (unsigned long long)handoff);
  char extra[128];
  snprintf(extra, sizeof extra, "threads_total=%ld half_rss_mb=%.1f joined_rss_mb=%.1f", total,
           bench_mib(half_rss), bench_mib(joined_rss));
  return bench_finish(1, done, secs, extra);
}
