/* SPDX-License-Identifier: MIT */
/* A program that does one wrong or notable thing per mode, for the
 * diagnostics tests (run_diag_tests.py) to run under brisk and check the
 * reports of. Each mode prints the pointer it misuses first, so the test can
 * match it in the report. Built without inlining so function names survive. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static void *kept[100];

static NOINLINE char *alloc_block(size_t size) {
  char *block = malloc(size);
  memset(block, 'a', size);
  return block;
}

static void announce(const void *p) {
  printf("pointer=%p\n", p);
  fflush(stdout);
}

static NOINLINE void do_double_free(void) {
  char *block = alloc_block(40);
  char *other = alloc_block(40);
  announce(block);
  free(block);
  free(other); /* not consecutive: the cookie check must still see it */
  free(block);
}

static NOINLINE void do_invalid_free(void) {
  static char not_from_malloc[256];
  announce(not_from_malloc + 64);
  free(not_from_malloc + 64);
}

static NOINLINE void do_interior_free(void) {
  char *block = alloc_block(100);
  announce(block + 24);
  free(block + 24);
}

static NOINLINE void do_overrun(void) {
  char *block = alloc_block(40);
  announce(block);
  block[40] = 'X'; /* one past the end */
  free(block);
}

/* The same misuses on blocks of the heap's arena (64-512 KiB), which the
 * diagnostic modes serve as release builds do. */
enum { ARENA_BLOCK = 200000 };

static NOINLINE void do_arena_double_free(void) {
  char *block = alloc_block(ARENA_BLOCK);
  char *other = alloc_block(ARENA_BLOCK);
  announce(block);
  free(block);
  free(other);
  free(block);
}

static NOINLINE void do_arena_overrun(void) {
  char *block = alloc_block(ARENA_BLOCK);
  announce(block);
  block[ARENA_BLOCK] = 'X'; /* one past the end */
  free(block);
}

static NOINLINE void leak_arena_block(void) {
  kept[1] = alloc_block(ARENA_BLOCK);
}

/* Prints what a dangling pointer reads after free (checked mode fills it). */
static NOINLINE void do_read_after_free(void) {
  unsigned char *block = (unsigned char *)alloc_block(64);
  volatile unsigned char *dangling = block;
  free(block);
  printf("after_free=%02x%02x%02x%02x\n", dangling[32], dangling[33], dangling[40], dangling[63]);
}

static NOINLINE void leak_records(void) {
  for (int i = 0; i < 100; i++)
    kept[i] = alloc_block(128);
}

static NOINLINE void leak_small_once(void) {
  kept[0] = malloc(16);
}

/* The hot spot: one thread allocates, this one frees, many times. */
enum { HANDOFFS = 200000, RING = 512 };
static void *_Atomic ring[RING];

static NOINLINE void free_on_other_thread(void *block) {
  free(block);
}

static void *consumer(void *arg) {
  (void)arg;
  for (long taken = 0, i = 0; taken < HANDOFFS; i = (i + 1) % RING) {
    void *block = __atomic_exchange_n(&ring[i], NULL, __ATOMIC_ACQUIRE);
    if (block != NULL) {
      free_on_other_thread(block);
      taken++;
    }
  }
  return NULL;
}

static NOINLINE void local_churn(void) {
  for (int i = 0; i < 1000; i++)
    free(alloc_block(32));
}

static NOINLINE void do_hot_spot(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, consumer, NULL);
  for (long made = 0, i = 0; made < HANDOFFS; i = (i + 1) % RING) {
    if (__atomic_load_n(&ring[i], __ATOMIC_ACQUIRE) == NULL) {
      __atomic_store_n(&ring[i], alloc_block(48), __ATOMIC_RELEASE);
      made++;
    }
  }
  pthread_join(thread, NULL);
  local_churn();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "double"))
    do_double_free();
  else if (!strcmp(mode, "invalid"))
    do_invalid_free();
  else if (!strcmp(mode, "interior"))
    do_interior_free();
  else if (!strcmp(mode, "overrun"))
    do_overrun();
  else if (!strcmp(mode, "arena-double"))
    do_arena_double_free();
  else if (!strcmp(mode, "arena-overrun"))
    do_arena_overrun();
  else if (!strcmp(mode, "arena-leak")) {
    leak_arena_block();
    char *freed = alloc_block(ARENA_BLOCK); /* allocated and freed: no leak */
    free(freed);
  } else if (!strcmp(mode, "after-free"))
    do_read_after_free();
  else if (!strcmp(mode, "leak")) {
    leak_records();
    leak_small_once();
  } else if (!strcmp(mode, "hot-spot"))
    do_hot_spot();
  else if (!strcmp(mode, "clean"))
    local_churn();
  else {
    fprintf(stderr, "usage: diag_victim double|invalid|interior|overrun|arena-double|arena-overrun|"
                    "arena-leak|after-free|leak|hot-spot|clean\n");
    return 2;
  }
  printf("finished\n");
  return 0;
}
