/* SPDX-License-Identifier: MIT */
/* Threads started one after another, as a program that runs each task on a
 * thread of its own does: each new thread takes up the heap the last one
 * left, and must find its pages still there, not fault them all in again
 * (a program whose threads come and go one or two at a time, each exiting
 * thread purging what it left, runs fifteen times slower). This holds
 * without the background purger too, which starts only once 16 MiB are
 * committed and never runs on Windows or with BRISK_BACKGROUND=0 (CTest
 * runs the test with and without it).
 *
 * Every thread allocates the same blocks (8 B to 64 KiB, the same sizes in
 * the same order), writes every OS page of them and frees them. The test
 * asserts that after the warm-up the memory a thread had committed is, on
 * average, still committed once it has exited (brisk_memory_info_get), and
 * on Linux that the later threads take, on average, fewer than an eighth of
 * the first thread's page faults (getrusage; Wine reports no page faults, so
 * the Windows build checks the committed memory only). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif

#include "alloc_api.h"

#define BLOCKS 96
#define WARM_UP 20 /* threads before counting: the heap settles */
#define COUNTED 100
#define MIN_SIZE 8
#define MAX_SIZE (64 * 1024)

static long minor_faults(void) {
#ifdef _WIN32
  return 0;
#else
  struct rusage usage;
  REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
  return usage.ru_minflt;
#endif
}

static size_t committed_while_live; /* written by the task, read after the join */

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
  committed_while_live = api_info().committed;
  for (int i = 0; i < BLOCKS; i++)
    A_FREE(blocks[i]);
  return NULL;
}

typedef struct {
  long faults;
  size_t live, after;
} thread_figures;

static thread_figures run_thread(void) {
  long before = minor_faults();
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, task, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  thread_figures figures = {minor_faults() - before, committed_while_live, api_info().committed};
  return figures;
}

int main(void) {
  api_init();
  void *mine = A_MALLOC(16); /* the main thread allocates too, as a program's does */
  REQUIRE(mine != NULL);
  long first = run_thread().faults;
  for (int t = 0; t < WARM_UP; t++)
    run_thread();
  long faults = 0;
  size_t live = 0, after = 0;
  for (int t = 0; t < COUNTED; t++) {
    thread_figures figures = run_thread();
    faults += figures.faults;
    live += figures.live / COUNTED;
    after += figures.after / COUNTED;
  }
  printf("committed: %zu KiB while a thread's blocks were live, %zu KiB after it exited "
         "(averages over %d threads)\n",
         live / 1024, after / 1024, COUNTED);
  CHECK_MSG(after * 2 >= live,
            "an exited thread's memory was not kept for the next one: %zu KiB committed "
            "after it exited, %zu KiB while its blocks were live",
            after / 1024, live / 1024);
#ifndef _WIN32
  long average = faults / COUNTED;
  printf("page faults: %ld for the first thread, %ld on average for the next %d\n", first, average,
         COUNTED);
  CHECK_MSG(average * 8 < first,
            "a thread taking up the last one's heap took %ld page faults on average, against "
            "%ld for the first thread: its pages were not kept for it",
            average, first);
#else
  (void)first;
  (void)faults;
#endif
  A_FREE(mine);
  return test_finish();
}
