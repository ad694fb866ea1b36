/* SPDX-License-Identifier: MIT */
/* A program for `brisk top` to watch (brisk_top_test.py): it knows nothing
 * of brisk (plain malloc and free), so that brisk top is shown to need no
 * change and no setting. Two threads each hold HOLD_MIB MiB in 256-byte
 * blocks, allocated and kept; a producer passes 64-byte blocks to a
 * consumer that frees them (remote frees, refills). Writes "ready" to the
 * file named by argv[1] once the blocks are held, then runs until killed. */
#define _GNU_SOURCE /* usleep */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define HOLD_MIB 24
#define HOLD_BLOCK 256
#define RING 4096

static _Atomic(int) held;
static void *_Atomic ring[RING];

static void *holder(void *arg) {
  (void)arg;
  size_t count = (size_t)HOLD_MIB * 1024 * 1024 / HOLD_BLOCK;
  void **blocks = malloc(count * sizeof *blocks);
  for (size_t i = 0; i < count; i++) {
    blocks[i] = malloc(HOLD_BLOCK);
    ((volatile char *)blocks[i])[0] = 1;
  }
  atomic_fetch_add(&held, 1);
  for (;;)
    pause();
  return blocks;
}

static void *producer(void *arg) {
  (void)arg;
  for (unsigned i = 0;; i++) {
    void *block = malloc(64);
    void *expected = NULL;
    while (!atomic_compare_exchange_weak(&ring[i % RING], &expected, block)) {
      expected = NULL;
      usleep(100);
    }
    if (i % 128 == 0) usleep(1000); /* busy, not spinning the machine */
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (unsigned i = 0;; i++) {
    void *block;
    while ((block = atomic_exchange(&ring[i % RING], NULL)) == NULL)
      usleep(100);
    free(block);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: top_workload READY-FILE\n");
    return 64;
  }
  pthread_t threads[4];
  pthread_create(&threads[0], NULL, holder, NULL);
  pthread_create(&threads[1], NULL, holder, NULL);
  while (atomic_load(&held) < 2)
    usleep(1000);
  pthread_create(&threads[2], NULL, producer, NULL);
  pthread_create(&threads[3], NULL, consumer, NULL);
  FILE *ready = fopen(argv[1], "w");
  if (ready == NULL) return 1;
  fputs("ready\n", ready);
  fclose(ready);
  for (;;)
    pause();
}
