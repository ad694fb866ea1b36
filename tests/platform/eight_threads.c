/* SPDX-License-Identifier: MIT */
/* Eight threads allocate and free through malloc & co with brisk linked
 * into the program (statically, musl and all, where the build links test
 * programs with -static; under qemu-user for ARM64), half of each thread's
 * blocks freed by the next thread. Every block is filled with a pattern of
 * its own and checked before it is freed, and every block must be brisk's
 * (brisk_owns): the C library's malloc was replaced, not called. */
#include "check.h"
#include "pattern.h"

#include <brisk.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define PER_ROUND 256

typedef struct handoff {
  pthread_mutex_t lock;
  unsigned char *blocks[PER_ROUND];
  size_t sizes[PER_ROUND];
  unsigned seeds[PER_ROUND];
  unsigned count;
} handoff;

static handoff inbox[THREADS]; /* thread t's blocks, left there for thread t + 1 */
static check_counter blocks_done;

/* Sizes from 1 byte to 256 KiB, a few of 1 MiB (huge blocks): every size range. */
static size_t size_of(unsigned i, unsigned round) {
  unsigned k = (i * 2654435761u + round * 40503u) >> 7;
  if (k % 97 == 0) return 1u << 20;
  return (size_t)1 + (k % (k % 5 == 0 ? 262144u : 2048u));
}

/* Frees the blocks the previous thread left, after checking each. */
static void take_handoff(unsigned from) {
  handoff *h = &inbox[from];
  pthread_mutex_lock(&h->lock);
  for (unsigned i = 0; i < h->count; i++) {
    CHECK(pattern_ok(h->blocks[i], h->sizes[i], h->seeds[i]));
    free(h->blocks[i]);
    check_counter_add(blocks_done);
  }
  h->count = 0;
  pthread_mutex_unlock(&h->lock);
}

static void *worker(void *arg) {
  unsigned t = (unsigned)(uintptr_t)arg;
  unsigned char *mine[PER_ROUND];
  size_t sizes[PER_ROUND];
  unsigned rounds = (unsigned)test_scaled(20);
  for (unsigned round = 0; round < rounds; round++) {
    for (unsigned i = 0; i < PER_ROUND; i++) {
      sizes[i] = size_of(i + t * PER_ROUND, round);
      mine[i] = i % 7 == 0 ? calloc(1, sizes[i]) : malloc(sizes[i]);
      if (!CHECK(mine[i] != NULL) || !CHECK(brisk_owns(mine[i]))) return NULL;
      if (i % 7 == 0) CHECK(mine[i][0] == 0 && mine[i][sizes[i] - 1] == 0);
      pattern_fill(mine[i], sizes[i], t * 1000003u + round * PER_ROUND + i);
    }
    /* every other block grows or shrinks in place or moves, keeping its bytes */
    for (unsigned i = 1; i < PER_ROUND; i += 2) {
      size_t keep = sizes[i] < 64 ? sizes[i] : 64;
      unsigned char *grown = realloc(mine[i], sizes[i] * 3);
      if (!CHECK(grown != NULL)) return NULL;
      CHECK(pattern_ok(grown, keep, t * 1000003u + round * PER_ROUND + i));
      pattern_fill(grown, sizes[i] * 3, t * 1000003u + round * PER_ROUND + i);
      mine[i] = grown;
      sizes[i] *= 3;
    }
    /* half to the next thread, half freed here */
    handoff *h = &inbox[t];
    pthread_mutex_lock(&h->lock);
    for (unsigned i = 0; i < PER_ROUND; i++) {
      unsigned seed = t * 1000003u + round * PER_ROUND + i;
      if (i % 2 == 0 && h->count < PER_ROUND) {
        h->blocks[h->count] = mine[i];
        h->sizes[h->count] = sizes[i];
        h->seeds[h->count++] = seed;
      } else {
        CHECK(pattern_ok(mine[i], sizes[i], seed));
        free(mine[i]);
        check_counter_add(blocks_done);
      }
    }
    pthread_mutex_unlock(&h->lock);
    take_handoff((t + THREADS - 1) % THREADS);
  }
  return NULL;
}

int main(void) {
  pthread_t threads[THREADS];
  for (unsigned t = 0; t < THREADS; t++)
    pthread_mutex_init(&inbox[t].lock, NULL);
  for (unsigned t = 0; t < THREADS; t++)
    REQUIRE(pthread_create(&threads[t], NULL, worker, (void *)(uintptr_t)t) == 0);
  for (unsigned t = 0; t < THREADS; t++)
    REQUIRE(pthread_join(threads[t], NULL) == 0);
  for (unsigned t = 0; t < THREADS; t++)
    take_handoff(t); /* what the last round left */
  unsigned long done = (unsigned long)check_counter_get(blocks_done);
  unsigned long made = (unsigned long)THREADS * test_scaled(20) * PER_ROUND;
  CHECK_MSG(done == made, "%lu blocks freed, %lu allocated", done, made);
  printf("%d threads: %lu blocks allocated by malloc, calloc and realloc (brisk %s), each checked "
         "and freed, half by another thread\n",
         THREADS, done, brisk_version());
  return test_finish();
}
