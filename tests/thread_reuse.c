/* Threads started one after another, as a program that runs each task on a
 * thread of its own does: each new thread takes up the heap the last one
 * left, and must find its pages still resident, not fault them all in
 * again. brisk used to keep an exiting thread's pages for the next one only
 * once its background purger was running, which waited for 16 MiB to be
 * committed; a small program whose threads came and went one or two at a
 * time had every exiting thread purge what it left, and ran ten times
 * slower than with the purger.
 *
 * Every thread allocates the same blocks (8 B to 64 KiB, the same sizes in
 * the same order), writes every OS page of them and frees them. The first
 * thread faults its pages in; the test asserts that the later ones, on
 * average, take fewer than an eighth of its page faults. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "alloc_api.h"

#define BLOCKS 96
#define WARM_UP 20 /* threads before counting: the heap settles */
#define COUNTED 100
#define MIN_SIZE 8
#define MAX_SIZE (64 * 1024)

static long minor_faults(void) {
  struct rusage usage;
  REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
  return usage.ru_minflt;
}

static void *task(void *arg) {
  (void)arg;
  uint64_t seed = 12345;
  void *blocks[BLOCKS];
  for (int i = 0; i < BLOCKS; i++) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    size_t size = MIN_SIZE + (size_t)(seed >> 33) % (MAX_SIZE - MIN_SIZE + 1);
    unsigned char *p = A_MALLOC(size);
    REQUIRE(p != NULL);
    for (size_t at = 0; at < size; at += 4096)
      p[at] = (unsigned char)i;
    p[size - 1] = (unsigned char)i;
    blocks[i] = p;
  }
  for (int i = 0; i < BLOCKS; i++)
    A_FREE(blocks[i]);
  return NULL;
}

static long run_thread(void) {
  long before = minor_faults();
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, task, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  return minor_faults() - before;
}

int main(void) {
  api_init();
  void *mine = A_MALLOC(16); /* the main thread allocates too, as a program's does */
  REQUIRE(mine != NULL);
  long first = run_thread();
  for (int t = 0; t < WARM_UP; t++)
    run_thread();
  long counted = 0;
  for (int t = 0; t < COUNTED; t++)
    counted += run_thread();
  long average = counted / COUNTED;
  printf("page faults: %ld for the first thread, %ld on average for the next %d\n", first, average,
         COUNTED);
  CHECK_MSG(average * 8 < first,
            "a thread taking up the last one's heap took %ld page faults on average, against "
            "%ld for the first thread: its pages were not kept for it",
            average, first);
  A_FREE(mine);
  return test_finish();
}
