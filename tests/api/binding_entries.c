/* SPDX-License-Identifier: MIT */
/* The Free Pascal memory manager's entries (brisk_binding_getmem and the
 * rest, BriskMM's TMemoryManager record): the RTL's contract for each,
 * errors handed to the binding's handler with the pointer and nothing freed,
 * and the count of bytes in live blocks kept through all of them, with
 * blocks freed by another thread too. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "brisk.h"
#include "check.h"

typedef struct handler_call {
  int error;
  void *block;
  size_t size;
  int count;
} handler_call;
static handler_call last;

static void *record_error(int error, void *block, size_t size) {
  last.error = error;
  last.block = block;
  last.size = size;
  last.count++;
  return NULL;
}

static int calls_since(int before) {
  return last.count - before;
}

static void test_getmem_freemem(void) {
  size_t before = brisk_binding_bytes_in_use();
  void *p = brisk_binding_getmem(0); /* a real block, as the RTL's default heap gives */
  REQUIRE(p != NULL);
  size_t size = brisk_binding_memsize(p);
  CHECK(size > 0);
  CHECK(brisk_binding_bytes_in_use() == before + size);
  CHECK(brisk_binding_freemem(p) == size);
  CHECK(brisk_binding_bytes_in_use() == before);
  CHECK(brisk_binding_freemem(NULL) == 0);
  CHECK(brisk_binding_memsize(NULL) == 0);

  const size_t sizes[] = {1, 24, 1024, 1025, 20000, 300000, 5u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *q = brisk_binding_getmem(sizes[i]);
    REQUIRE(q != NULL);
    memset(q, 0x5A, sizes[i]);
    size_t usable = brisk_binding_memsize(q);
    CHECK(usable >= sizes[i] && usable == brisk_usable_size(q));
    CHECK(brisk_binding_bytes_in_use() == before + usable);
    CHECK(brisk_binding_freemem(q) == usable);
  }
  CHECK(brisk_binding_bytes_in_use() == before);
}

static void test_allocmem(void) {
  /* The block freed just before is the one handed out next: it must not
   * come back with its old bytes. */
  for (size_t size = 8; size <= 4096; size *= 2) {
    unsigned char *dirty = brisk_binding_getmem(size);
    REQUIRE(dirty != NULL);
    memset(dirty, 0xA5, size);
    brisk_binding_freemem(dirty);
    unsigned char *clean = brisk_binding_allocmem(size);
    REQUIRE(clean != NULL);
    size_t nonzero = 0;
    for (size_t i = 0; i < size; i++)
      nonzero += clean[i] != 0;
    CHECK_MSG(nonzero == 0, "AllocMem(%zu): %zu bytes not zero", size, nonzero);
    brisk_binding_freemem(clean);
  }
}

static void test_freemem_size(void) {
  size_t before = brisk_binding_bytes_in_use();
  char *p = brisk_binding_getmem(100);
  REQUIRE(p != NULL);
  size_t usable = brisk_binding_memsize(p);
  CHECK(brisk_binding_freemem_size(p, 0) == 0); /* frees nothing, as the default heap */
  CHECK(brisk_binding_freemem_size(NULL, 8) == 0);
  int calls = last.count;
  CHECK(brisk_binding_freemem_size(p, usable + 1) == 0);
  CHECK(calls_since(calls) == 1 && last.error == BRISK_BINDING_SIZE_PAST_BLOCK && last.block == p &&
        last.size == usable + 1);
  CHECK(brisk_binding_memsize(p) == usable); /* still live */
  CHECK(brisk_binding_freemem_size(p, usable) == usable);
  CHECK(brisk_binding_bytes_in_use() == before);
}

static void test_reallocmem(void) {
  size_t before = brisk_binding_bytes_in_use();
  void *p = NULL;
  char *q = brisk_binding_reallocmem(&p, 40); /* ReAllocMem(nil, N) allocates */
  REQUIRE(q != NULL && p == q);
  memcpy(q, "0123456789", 10);
  /* small blocks stay put when they shrink, whatever the size */
  CHECK(brisk_binding_reallocmem(&p, 3) == q && p == q);
  size_t small = brisk_binding_memsize(q);
  CHECK(brisk_binding_bytes_in_use() == before + small);
  char *grown = brisk_binding_reallocmem(&p, 5000);
  REQUIRE(grown != NULL && p == grown);
  CHECK(memcmp(grown, "012", 3) == 0);
  CHECK(brisk_binding_bytes_in_use() == before + brisk_binding_memsize(grown));
  /* a large block shrunk to less than half moves to a smaller one */
  char *shrunk = brisk_binding_reallocmem(&p, 100);
  REQUIRE(shrunk != NULL && p == shrunk);
  CHECK(brisk_binding_memsize(shrunk) < 5000);
  CHECK(memcmp(shrunk, "012", 3) == 0);
  /* out of memory: the handler is told, the block stays */
  int calls = last.count;
  errno = 0;
  CHECK(brisk_binding_reallocmem(&p, SIZE_MAX / 2) == NULL);
  CHECK(calls_since(calls) == 1 && last.error == BRISK_BINDING_OUT_OF_MEMORY &&
        last.block == shrunk && last.size == SIZE_MAX / 2);
  CHECK(errno == ENOMEM);
  CHECK(p == shrunk && memcmp(shrunk, "012", 3) == 0);
  /* ReAllocMem(P, 0) frees P and sets it to nil */
  CHECK(brisk_binding_reallocmem(&p, 0) == NULL && p == NULL);
  CHECK(brisk_binding_bytes_in_use() == before);
}

/* A string built by appending pieces moves a logarithmic number of times,
 * not once per size class it passes. */
static void test_append_moves(void) {
  size_t before = brisk_binding_bytes_in_use();
  void *p = brisk_binding_getmem(16);
  REQUIRE(p != NULL);
  memset(p, 'x', 16);
  int moves = 0;
  for (size_t size = 24; size <= 1024; size += 8) {
    void *old = p;
    REQUIRE(brisk_binding_reallocmem(&p, size) == p && p != NULL);
    if (p != old) moves++;
    CHECK(((char *)p)[0] == 'x' && ((char *)p)[15] == 'x');
  }
  CHECK(moves <= 7); /* 16 -> 32 -> 64 -> ... -> 1024 */
  brisk_binding_freemem(p);
  CHECK(brisk_binding_bytes_in_use() == before);
}

static void test_out_of_memory(void) {
  int calls = last.count;
  errno = 0;
  CHECK(brisk_binding_getmem(SIZE_MAX / 2) == NULL);
  CHECK(calls_since(calls) == 1 && last.error == BRISK_BINDING_OUT_OF_MEMORY &&
        last.block == NULL && last.size == SIZE_MAX / 2);
  CHECK(errno == ENOMEM);
  CHECK(brisk_binding_allocmem(SIZE_MAX / 2) == NULL);
  CHECK(calls_since(calls) == 2);
}

/* A pointer brisk did not allocate (into a static buffer): each entry hands
 * it to the handler and frees or changes nothing. */
static void test_foreign(void) {
  static char outside[64];
  size_t before = brisk_binding_bytes_in_use();
  void *p = outside + 16;
  int calls = last.count;
  CHECK(brisk_binding_freemem(p) == 0);
  CHECK(calls_since(calls) == 1 && last.error == BRISK_BINDING_FOREIGN_FREEMEM && last.block == p);
  CHECK(brisk_binding_memsize(p) == 0);
  CHECK(calls_since(calls) == 2 && last.error == BRISK_BINDING_FOREIGN_MEMSIZE && last.block == p);
  CHECK(brisk_binding_freemem_size(p, 8) == 0);
  CHECK(calls_since(calls) == 3 && last.error == BRISK_BINDING_FOREIGN_FREEMEM_SIZE &&
        last.block == p && last.size == 8);
  void *q = p;
  CHECK(brisk_binding_reallocmem(&q, 100) == NULL && q == p);
  CHECK(calls_since(calls) == 4 && last.error == BRISK_BINDING_FOREIGN_REALLOCMEM &&
        last.block == p && last.size == 100);
  CHECK(brisk_binding_bytes_in_use() == before);

  /* without a handler: the same results, nobody told */
  brisk_binding_set_error_handler(NULL);
  CHECK(brisk_binding_freemem(p) == 0);
  CHECK(brisk_binding_getmem(SIZE_MAX / 2) == NULL);
  CHECK(calls_since(calls) == 4);
  brisk_binding_set_error_handler(record_error);
}

/* Blocks allocated on one thread and freed with FreeMem on another: the
 * count is per thread, and the sum comes back to where it was. */
enum { HANDED = 2000 };
static void *handed[HANDED];

static void *free_handed(void *arg) {
  size_t *freed = arg;
  for (int i = 0; i < HANDED; i++)
    *freed += brisk_binding_freemem(handed[i]);
  return NULL;
}

static void test_other_thread(void) {
  size_t before = brisk_binding_bytes_in_use();
  size_t made = 0, freed = 0;
  unsigned long long rng = 7;
  for (int i = 0; i < HANDED; i++) {
    handed[i] = brisk_binding_getmem(1 + test_rand(&rng) % 3000);
    REQUIRE(handed[i] != NULL);
    made += brisk_binding_memsize(handed[i]);
  }
  CHECK(brisk_binding_bytes_in_use() == before + made);
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, free_handed, &freed) == 0);
  pthread_join(t, NULL);
  CHECK(freed == made);
  CHECK(brisk_binding_bytes_in_use() == before);
}

int main(void) {
  brisk_binding_set_error_handler(record_error);
  test_getmem_freemem();
  test_allocmem();
  test_freemem_size();
  test_reallocmem();
  test_append_moves();
  test_out_of_memory();
  test_foreign();
  test_other_thread();
  return test_finish();
}
