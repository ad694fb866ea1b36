/* SPDX-License-Identifier: MIT */
/* The asymmetric fence between a thread taking blocks of 8-64 KiB and the
 * background purger, each side held where the other must find it.
 *
 * A thread takes such blocks with no lock, only marking itself busy, while
 * the purger may retire the first page it takes them from; the purger
 * announces itself and fences every running thread before it reads the
 * mark. This test uses the hooks of the eager purger's test library
 * (BRISK_EAGER_PURGER, test_hooks in src/core/core.h; run with
 * BRISK_PURGE_DELAY=1, see CMakeLists.txt):
 *   1. the owner, inside its mark, waits: the purger, visiting its idle
 *      heap, must find it busy and leave the heap alone;
 *   2. the purger, inside the owner's heap, waits: the owner, taking a
 *      block, must find it there and wait for the lock instead.
 * An owner that did not mark itself, or one that did not look for the
 * purger, fails the first or the second. Where the OS has no such fence
 * (Linux before 4.14), and in a ThreadSanitizer build (which keeps the
 * lock), the test says so and is skipped (exit 77). */
#include "alloc_api.h"
#include "test_time.h"

/* linux/membarrier.h's commands (musl-gcc's include path has no kernel headers) */
#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* As test_hooks_t in src/core/core.h. */
typedef struct test_hooks_s {
  _Atomic(void (*)(const void *heap)) owner_marked;
  _Atomic(void (*)(const void *heap)) purger_in;
  _Atomic(unsigned) purger_found_busy;
  _Atomic(unsigned) owner_found_purger;
} test_hooks_t;
extern test_hooks_t brisk_test_hooks;

#define KIB ((size_t)1024)
enum { BLOCK = 16 * 1024, COUNT = 8, WAIT_MS = 5000 };

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&t, NULL);
}

/* Waits up to WAIT_MS for *counter to pass start; whether it did. */
static bool wait_past(_Atomic(unsigned) *counter, unsigned start) {
  double until = now_ms() + WAIT_MS;
  while (atomic_load(counter) == start) {
    if (now_ms() > until) return false;
    pause_ms(1);
  }
  return true;
}

static _Atomic(const void *) owner_heap;
static _Atomic(bool) found_busy, purger_holding, found_purger;

/* Hook 1, on the owner inside its mark. */
static void owner_waits_for_purger(const void *heap) {
  atomic_store(&owner_heap, heap);
  atomic_store(&found_busy, wait_past(&brisk_test_hooks.purger_found_busy,
                                      atomic_load(&brisk_test_hooks.purger_found_busy)));
}

/* Hook 2, on the purger inside a heap: the owner's only. */
static void purger_waits_for_owner(const void *heap) {
  if (heap != atomic_load(&owner_heap) || atomic_load(&purger_holding)) return;
  unsigned start = atomic_load(&brisk_test_hooks.owner_found_purger);
  atomic_store(&purger_holding, true);
  atomic_store(&found_purger, wait_past(&brisk_test_hooks.owner_found_purger, start));
}

static void *freer(void *arg) {
  void **blocks = arg;
  for (int i = 0; i < COUNT; i++)
    A_FREE(blocks[i]);
  return NULL;
}

/* Blocks of one class, freed by another thread: their page has every block
 * back, which is what the purger retires. Then the heap is left idle. */
static void fill_and_hand_over(void) {
  void *blocks[COUNT];
  for (int i = 0; i < COUNT; i++) {
    blocks[i] = A_MALLOC(BLOCK);
    REQUIRE(blocks[i] != NULL);
    memset(blocks[i], i + 1, BLOCK);
  }
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, freer, blocks) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  pause_ms(20); /* longer than the eager purger waits for an idle heap */
}

static void *owner(void *arg) {
  (void)arg;
  fill_and_hand_over();
  double until = now_ms() + WAIT_MS;
  while (!test_purger_running() && now_ms() < until)
    pause_ms(1);
  REQUIRE(test_purger_running());

  /* 1: held inside the mark, the owner must be found busy. The purger
   * registers for the fence once it runs, and owners take the lock until
   * then: the hook comes into play at the first take after that. */
  void *first = NULL;
  until = now_ms() + WAIT_MS;
  while (atomic_load(&owner_heap) == NULL && now_ms() < until) {
    if (first != NULL) A_FREE(first);
    fill_and_hand_over();
    atomic_store(&brisk_test_hooks.owner_marked, owner_waits_for_purger);
    first = A_MALLOC(BLOCK);
    atomic_store(&brisk_test_hooks.owner_marked, NULL);
    REQUIRE(first != NULL);
  }
  REQUIRE(atomic_load(&owner_heap) != NULL); /* the purger never took up the fence */
  memset(first, 0x11, BLOCK);
  CHECK_MSG(atomic_load(&found_busy),
            "the purger visited the heap of an owner held inside its mark %d ms without "
            "finding it busy",
            WAIT_MS);

  /* 2: with the purger held inside the heap, the owner must find it. */
  fill_and_hand_over();
  atomic_store(&brisk_test_hooks.purger_in, purger_waits_for_owner);
  until = now_ms() + WAIT_MS;
  while (!atomic_load(&purger_holding) && now_ms() < until)
    pause_ms(1);
  CHECK_MSG(atomic_load(&purger_holding), "the purger never came into the idle owner's heap");
  void *second = A_MALLOC(BLOCK);
  REQUIRE(second != NULL);
  memset(second, 0x22, BLOCK);
  atomic_store(&brisk_test_hooks.purger_in, NULL);
  CHECK_MSG(atomic_load(&found_purger),
            "an owner took a block while the purger was inside its heap without finding it");

  for (size_t k = 0; k < BLOCK; k++) {
    REQUIRE(((unsigned char *)first)[k] == 0x11);
    REQUIRE(((unsigned char *)second)[k] == 0x22);
  }
  A_FREE(first);
  A_FREE(second);
  CHECK(A_HEAP_CHECK() == 0);
  return NULL;
}

int main(void) {
  api_init();
#if defined(__SANITIZE_THREAD__)
  printf("skipped: a ThreadSanitizer build keeps the lock, since it cannot see the fence\n");
  return 77;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  printf("skipped: a ThreadSanitizer build keeps the lock, since it cannot see the fence\n");
  return 77;
#endif
#endif
  long fences = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (fences < 0 || !(fences & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
    printf("skipped: this kernel has no private expedited membarrier (Linux 4.14 and later do)\n");
    return 77;
  }
  /* The purger starts once a second thread allocates: this is the first. */
  void *mine = A_MALLOC(64);
  REQUIRE(mine != NULL);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, owner, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  A_FREE(mine);
  return test_finish();
}
