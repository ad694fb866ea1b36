/* SPDX-License-Identifier: MIT */
/* Bursts: a server-style pool of T threads that handle load in bursts and
 * idle in between. In each burst every thread allocates its share of many
 * blocks of mixed sizes (mostly small, some of a few KiB, a few up to
 * 256 KiB), hands every --share'th block to the next thread, and at the end
 * of the burst frees what it kept plus what it was handed. Between bursts
 * the threads block, as pool threads waiting for work do.
 *
 * What is measured is mostly memory: after the last burst the threads stay
 * alive but idle and nothing calls the allocator for --idle-ms; an allocator
 * that only returns memory on its own slow paths keeps the burst's pages
 * resident all that time. RESULT reports the resident set right after the
 * last burst (burst_rss_mb), after the idle period (idle_rss_mb) and at exit
 * once the threads are gone (end_rss_mb); secs is the time spent in bursts,
 * the pauses and the idle period left out. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, blocks, share;
  bench_block **kept, **outbox; /* this burst's blocks: freed here / by the next thread */
  long n_kept, n_out;
  struct worker *previous; /* whose outbox this thread frees */
  pthread_barrier_t *barrier;
  atomic_int *stop;
  unsigned long long allocated, freed, bad;
} worker;

/* 90% 16-512 B, 9% up to 16 KiB, 1% up to 256 KiB: a request handler's
 * strings and nodes, its buffers, and the odd large payload. */
static uint32_t random_size(uint64_t *rng) {
  uint64_t pick = bench_rand_next(rng) % 100;
  if (pick < 90) return (uint32_t)bench_rand_range(rng, 16, 512);
  if (pick < 99) return (uint32_t)bench_rand_range(rng, 513, 16 << 10);
  return (uint32_t)bench_rand_range(rng, (16 << 10) + 1, 256 << 10);
}

static bench_block *new_block(uint64_t *rng) {
  uint32_t size = random_size(rng);
  void *memory = bench_malloc(size);
  bench_touch_pages(memory, size, 0);
  return bench_block_tag(memory, size);
}

static unsigned long long free_checked(bench_block **blocks, long n) {
  unsigned long long bad = 0;
  for (long i = 0; i < n; i++) {
    bad += !bench_block_intact(blocks[i]);
    free(blocks[i]);
  }
  return bad;
}

static void allocate_burst(worker *w, uint64_t *rng) {
  w->n_kept = w->n_out = 0;
  for (long i = 0; i < w->blocks; i++) {
    bench_block *b = new_block(rng);
    if (i % w->share == 0)
      w->outbox[w->n_out++] = b;
    else
      w->kept[w->n_kept++] = b;
  }
  w->allocated += (unsigned long long)w->blocks;
}

/* Three barrier waits per burst: start (or stop), all allocated, all freed.
 * The main thread takes part in each, to time the bursts and pace them. */
static void *pool_thread(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 7919 + 3;
  for (;;) {
    pthread_barrier_wait(w->barrier);
    if (atomic_load(w->stop)) break;
    allocate_burst(w, &rng);
    pthread_barrier_wait(w->barrier);
    w->bad += free_checked(w->kept, w->n_kept);
    w->bad += free_checked(w->previous->outbox, w->previous->n_out);
    w->freed += (unsigned long long)(w->n_kept + w->previous->n_out);
    pthread_barrier_wait(w->barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long bursts = 0, blocks = 0, share = 4, pause_ms = 50, idle_ms = 1500;
  const bench_opt opts[] = {
      {"bursts", BENCH_OPT_LONG, &bursts, "bursts (default 20, quick 5)"},
      {"blocks", BENCH_OPT_LONG, &blocks, "blocks per burst in all (default 40000, quick 10000)"},
      {"share", BENCH_OPT_LONG, &share, "every Nth block is freed by the next thread (4)"},
      {"pause-ms", BENCH_OPT_LONG, &pause_ms, "idle time between bursts, ms (50)"},
      {"idle-ms", BENCH_OPT_LONG, &idle_ms, "idle time after the last burst, ms (1500)"},
  };
  bench_parse_args(argc, argv, "thread pool allocating in bursts, idle in between", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (bursts == 0) bursts = common.quick ? 5 : 20;
  if (blocks == 0) blocks = common.quick ? 10000 : 40000;
  if (share < 1) {
    fprintf(stderr, "bursts: --share must be at least 1\n");
    return 64;
  }
  long threads = common.threads;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
  atomic_int stop = 0;
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  pthread_t *ids = bench_malloc(sizeof *ids * (size_t)threads);
  for (long t = 0; t < threads; t++) {
    worker *w = &workers[t];
    w->id = t;
    w->blocks = blocks / threads + (t < blocks % threads);
    w->share = share;
    w->kept = bench_malloc(sizeof *w->kept * (size_t)(w->blocks + 1));
    w->outbox = bench_malloc(sizeof *w->outbox * (size_t)(w->blocks + 1));
    w->previous = &workers[(t + threads - 1) % threads];
    w->barrier = &barrier;
    w->stop = &stop;
  }
  for (long t = 0; t < threads; t++)
    if (pthread_create(&ids[t], NULL, pool_thread, &workers[t]))
      bench_fail("pthread_create failed");

  double busy = 0;
  for (long b = 0; b < bursts; b++) {
    double start = bench_now();
    for (int phase = 0; phase < 3; phase++)
      pthread_barrier_wait(&barrier);
    busy += bench_now() - start;
    if (b + 1 < bursts) bench_sleep_ms(pause_ms);
  }
  size_t burst_rss = bench_rss_bytes();
  bench_sleep_ms(idle_ms);
  size_t idle_rss = bench_rss_bytes();
  atomic_store(&stop, 1);
  pthread_barrier_wait(&barrier);
  for (long t = 0; t < threads; t++)
    pthread_join(ids[t], NULL);

  unsigned long long allocated = 0, freed = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    allocated += workers[t].allocated;
    freed += workers[t].freed;
    bad += workers[t].bad;
    free(workers[t].kept);
    free(workers[t].outbox);
  }
  free(ids);
  free(workers);
  pthread_barrier_destroy(&barrier);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  unsigned long long expected = (unsigned long long)bursts * (unsigned long long)blocks;
  if (allocated != expected || freed != expected)
    bench_fail("allocated %llu and freed %llu blocks, expected %llu", allocated, freed, expected);
  char extra[128];
  snprintf(extra, sizeof extra, "burst_rss_mb=%.1f idle_rss_mb=%.1f", bench_mib(burst_rss),
           bench_mib(idle_rss));
  return bench_finish(1, allocated, busy, extra);
}
