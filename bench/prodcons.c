/* SPDX-License-Identifier: MIT */
/* Producer/consumer: T threads in a ring, each producing messages for the
 * next thread and consuming the messages of the previous one through a
 * bounded single-producer/single-consumer queue. Every message is allocated
 * by one thread and freed by another -- the pipeline pattern that defeats
 * allocators whose thread caches only work for local frees. With one thread
 * the ring closes on itself and all frees are local. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { QUEUE_SLOTS = 1024, BATCH = 64 };

typedef struct message {
  uint64_t seq, check;
  uint32_t size, producer;
} message;

typedef struct queue {
  BENCH_CACHE_ALIGNED atomic_size_t head; /* next slot the consumer reads */
  BENCH_CACHE_ALIGNED atomic_size_t tail; /* next slot the producer writes */
  BENCH_CACHE_ALIGNED message *slots[QUEUE_SLOTS];
} queue;

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, messages;
  size_t min_size, max_size;
  queue *out, *in;
  unsigned long long consumed, bad;
} worker;

static uint64_t message_check(const message *m) {
  return (m->seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)m->producer << 32) ^ m->size;
}

static int try_push(queue *q, message *m) {
  size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  if (tail - atomic_load_explicit(&q->head, memory_order_acquire) == QUEUE_SLOTS) return 0;
  q->slots[tail % QUEUE_SLOTS] = m;
  atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
  return 1;
}

static message *try_pop(queue *q) {
  size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  if (head == atomic_load_explicit(&q->tail, memory_order_acquire)) return NULL;
  message *m = q->slots[head % QUEUE_SLOTS];
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
  return m;
}

static void *pipeline(void *arg) {
  worker *w = arg;
  uint64_t rng = (uint64_t)w->id * 104729 + 3;
  long produced = 0, consumed = 0;
  uint64_t expected_seq = 0;
  unsigned long long bad = 0;
  message *pending = NULL;
  while (produced < w->messages || consumed < w->messages) {
    int progress = 0;
    for (int k = 0; k < BATCH && produced < w->messages; k++) {
      if (!pending) {
        uint32_t size = (uint32_t)bench_rand_range(&rng, w->min_size, w->max_size);
        pending = bench_malloc(size);
        *pending = (message){(uint64_t)produced, 0, size, (uint32_t)w->id};
        pending->check = message_check(pending);
        memset(pending + 1, (int)(produced & 0xff), size - sizeof *pending);
      }
      if (!try_push(w->out, pending)) break;
      pending = NULL;
      produced++;
      progress = 1;
    }
    message *m;
    for (int k = 0; k < BATCH && (m = try_pop(w->in)) != NULL; k++) {
      /* Queues keep order, so each producer's sequence must arrive intact. */
      unsigned char last = ((unsigned char *)m)[m->size - 1];
      bad += m->check != message_check(m) || m->seq != expected_seq ||
             (m->size > sizeof *m && last != (unsigned char)(m->seq & 0xff));
      expected_seq++;
      free(m);
      consumed++;
      progress = 1;
    }
    /* More threads than cores: let the other end of the queue run. */
    if (!progress) sched_yield();
  }
  w->consumed = (unsigned long long)consumed;
  w->bad = bad;
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long messages = 0, min_size = 32, max_size = 1024;
  const bench_opt opts[] = {
      {"messages", BENCH_OPT_LONG, &messages, "messages in all (default 8000000, quick 2000000)"},
      {"min", BENCH_OPT_LONG, &min_size, "smallest message (32)"},
      {"max", BENCH_OPT_LONG, &max_size, "largest message (1024)"},
  };
  bench_parse_args(argc, argv, "producer/consumer ring: blocks freed by the next thread", &common,
                   opts, sizeof opts / sizeof opts[0]);
  if (messages == 0) messages = common.quick ? 2000000 : 8000000;
  if (min_size < (long)sizeof(message) || max_size < min_size) {
    fprintf(stderr, "prodcons: need %zu <= min <= max\n", sizeof(message));
    return 64;
  }
  long threads = common.threads;
  queue *queues = aligned_alloc(BENCH_CACHE_LINE, sizeof(queue) * (size_t)threads);
  if (!queues) bench_fail("aligned_alloc failed");
  for (long t = 0; t < threads; t++) {
    atomic_init(&queues[t].head, 0);
    atomic_init(&queues[t].tail, 0);
  }
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].id = t;
    /* Producer t feeds consumer t + 1, so both ends agree on the count. */
    workers[t].messages = messages / threads;
    workers[t].min_size = (size_t)min_size;
    workers[t].max_size = (size_t)max_size;
    workers[t].out = &queues[t];
    workers[t].in = &queues[(t + threads - 1) % threads];
  }
  double start = bench_now();
  bench_run_threads(threads, pipeline, workers, sizeof *workers);
  double secs = bench_now() - start;

  unsigned long long consumed = 0, bad = 0;
  for (long t = 0; t < threads; t++) {
    consumed += workers[t].consumed;
    bad += workers[t].bad;
  }
  free(workers);
  free(queues);
  if (bad) bench_fail("%llu messages arrived damaged or out of order", bad);
  unsigned long long expected =
      (unsigned long long)(messages / threads) * (unsigned long long)threads;
  if (consumed != expected) bench_fail("consumed %llu messages, expected %llu", consumed, expected);
  return bench_finish(1, consumed, secs, NULL);
}
