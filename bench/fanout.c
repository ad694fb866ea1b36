/* SPDX-License-Identifier: MIT */
/* Fan-out: one thread allocates every block and the others free them, as
 * a reader thread makes the records that a pool of workers consumes (the
 * classic producer/consumer stress of allocator papers). The producer deals
 * blocks round-robin into one bounded single-producer/single-consumer queue
 * per consumer; each consumer checks and frees what it takes. Every free is
 * a remote free into the producer's heap, and the producer's memory comes
 * back only through them, so an allocator that is slow to return such
 * frees to their owner shows here as time and as peak memory. With one
 * thread it allocates and frees its own blocks through one queue. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QUEUE_SLOTS = 256, BURST = 32 };

typedef struct queue {
  BENCH_CACHE_ALIGNED atomic_size_t head; /* next slot the consumer reads */
  BENCH_CACHE_ALIGNED atomic_size_t tail; /* next slot the producer writes */
  BENCH_CACHE_ALIGNED bench_block *slots[QUEUE_SLOTS];
} queue;

typedef struct consumer {
  BENCH_CACHE_ALIGNED queue *in;
  atomic_int *done; /* the producer has made every block */
  unsigned long long freed, bad;
} consumer;

static int try_push(queue *q, bench_block *b) {
  size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  if (tail - atomic_load_explicit(&q->head, memory_order_acquire) == QUEUE_SLOTS) return 0;
  q->slots[tail % QUEUE_SLOTS] = b;
  atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
  return 1;
}

static bench_block *try_pop(queue *q) {
  size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  if (head == atomic_load_explicit(&q->tail, memory_order_acquire)) return NULL;
  bench_block *b = q->slots[head % QUEUE_SLOTS];
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
  return b;
}

/* Frees up to `most` blocks from q; how many. */
static long drain(queue *q, long most, unsigned long long *bad) {
  long n = 0;
  bench_block *b;
  while (n < most && (b = try_pop(q)) != NULL) {
    *bad += !bench_block_intact(b);
    free(b);
    n++;
  }
  return n;
}

static void *consume(void *arg) {
  consumer *c = arg;
  unsigned long long freed = 0, bad = 0;
  for (;;) {
    long n = drain(c->in, BURST, &bad);
    freed += (unsigned long long)n;
    if (n == 0) {
      if (atomic_load_explicit(c->done, memory_order_acquire) &&
          atomic_load_explicit(&c->in->head, memory_order_relaxed) ==
              atomic_load_explicit(&c->in->tail, memory_order_acquire))
        break;
      sched_yield();
    }
  }
  c->freed = freed;
  c->bad = bad;
  return NULL;
}

typedef struct producer_args {
  queue *queues;
  long n_queues, blocks;
  size_t min_size, max_size;
  atomic_int *done;
  int frees_itself; /* one thread: it frees its own blocks */
  unsigned long long self_freed, self_bad;
} producer_args;

static void *produce(void *arg) {
  producer_args *p = arg;
  uint64_t rng = 12345;
  long q = 0;
  for (long made = 0; made < p->blocks;) {
    uint32_t size = (uint32_t)bench_rand_range(&rng, p->min_size, p->max_size);
    bench_block *b = bench_block_tag(bench_malloc(size), size);
    /* Deal round-robin, skipping full queues; all full: wait for room. */
    long tries = 0;
    while (!try_push(&p->queues[q], b)) {
      q = (q + 1) % p->n_queues;
      if (++tries % p->n_queues == 0) {
        if (p->frees_itself)
          p->self_freed += (unsigned long long)drain(&p->queues[0], BURST, &p->self_bad);
        else
          sched_yield();
      }
    }
    q = (q + 1) % p->n_queues;
    made++;
  }
  atomic_store_explicit(p->done, 1, memory_order_release);
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long blocks = 0, min_size = 16, max_size = 256;
  const bench_opt opts[] = {
      {"blocks", BENCH_OPT_LONG, &blocks, "blocks in all (default 2000000, quick 500000)"},
      {"min", BENCH_OPT_LONG, &min_size, "smallest block (16)"},
      {"max", BENCH_OPT_LONG, &max_size, "largest block (256)"},
  };
  bench_parse_args(argc, argv, "one thread allocates, the others free", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (blocks == 0) blocks = common.quick ? 500000 : 2000000;
  if (blocks < 1 || min_size < (long)sizeof(bench_block) + 1 || max_size < min_size) {
    fprintf(stderr, "fanout: need blocks >= 1 and %zu < min <= max\n", sizeof(bench_block));
    return 64;
  }
  long consumers = common.threads > 1 ? common.threads - 1 : 1;
  queue *queues = bench_calloc_workers(consumers, sizeof *queues);
  consumer *workers = bench_calloc_workers(consumers, sizeof *workers);
  atomic_int done = 0;
  producer_args p = {
      queues, consumers, blocks, (size_t)min_size, (size_t)max_size, &done, common.threads == 1,
      0,      0};
  unsigned long long freed = 0, bad = 0;
  double start = bench_now();
  if (common.threads > 1) {
    for (long c = 0; c < consumers; c++)
      workers[c] = (consumer){&queues[c], &done, 0, 0};
    pthread_t producer_thread;
    if (pthread_create(&producer_thread, NULL, produce, &p) != 0)
      bench_fail("could not start the producer");
    bench_run_threads(consumers, consume, workers, sizeof *workers);
    pthread_join(producer_thread, NULL);
    for (long c = 0; c < consumers; c++) {
      freed += workers[c].freed;
      bad += workers[c].bad;
    }
  } else {
    produce(&p);
    p.self_freed += (unsigned long long)drain(&queues[0], QUEUE_SLOTS, &p.self_bad);
    freed = p.self_freed;
    bad = p.self_bad;
  }
  double secs = bench_now() - start;
  free(workers);
  free(queues);
  if (bad) bench_fail("%llu blocks were overwritten while live", bad);
  if (freed != (unsigned long long)blocks)
    bench_fail("freed %llu blocks, expected %llu", freed, (unsigned long long)blocks);
  char extra[64];
  snprintf(extra, sizeof extra, "consumers=%ld", common.threads > 1 ? consumers : 0);
  return bench_finish(1, freed, secs, extra);
}
