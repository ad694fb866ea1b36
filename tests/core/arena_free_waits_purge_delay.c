/* SPDX-License-Identifier: MIT */
/* Blocks above 64 KiB come from the heap's arena; freed, their memory
 * waits 100 ms resident before the background purger gives it back, so
 * that a pool pausing briefly between bursts of work finds it again.
 *
 * The wait counts from the free itself, not from the purger's last round,
 * which may be up to a second old while the purger backs off: counted from
 * there, a chunk freed some time after a round would be purged at the next
 * one, well before its 100 ms, and a pool pausing 50 ms between bursts
 * would fault its large blocks in again after every pause.
 *
 * With the purger running (a second thread, and 20 MiB of live blocks),
 * the main thread allocates and frees 4 MiB of such blocks four times and
 * watches brisk's committed memory: the purge may not come sooner than
 * 90 ms after the free (10 ms of slack for the coarse clock brisk
 * reads), and must come within 5 s. The first burst comes after an idle
 * second and a half; each of the others frees 70 ms after the last purge
 * was seen, between the purger's rounds 50 and 150 ms after that purge, so
 * that a wait counted from the last round would have the second of those
 * rounds purge the chunks some 70 ms after their free. */
#include "alloc_api.h"
#include "test_time.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

enum { BALLAST_COUNT = 640, BALLAST_SIZE = 32 * 1024 }; /* 20 MiB on pages, kept live */
enum { CHUNK_COUNT = 32, CHUNK_SIZE = 128 * 1024 };     /* 4 MiB of arena chunks */
enum { WAIT_MS = 5000, ARENA_EARLIEST_MS = 90 };

static void *ballast[BALLAST_COUNT];
static void *chunks[CHUNK_COUNT];

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int done;

/* A second thread that has allocated: the purger is for multithreaded
 * programs. It waits, alive, until the end. */
static void *second_thread(void *arg) {
  (void)arg;
  void *own = A_MALLOC(64);
  REQUIRE(own != NULL);
  pthread_mutex_lock(&mutex);
  while (!done)
    pthread_cond_wait(&changed, &mutex);
  pthread_mutex_unlock(&mutex);
  A_FREE(own);
  return NULL;
}

/* Waits, reading every 5 ms, until committed memory drops below bound;
 * returns the ms since from_ms at which it did, or -1. */
static double wait_below(size_t bound, double from_ms) {
  while (now_ms() - from_ms < WAIT_MS) {
    if (api_info().committed < bound) return now_ms() - from_ms;
    sleep_ms(5);
  }
  return -1;
}

static void bursts(void) {
  for (int burst = 0; burst < 4; burst++) {
    sleep_ms(burst == 0 ? 1500 : 70);
    size_t before = api_info().committed;
    for (int i = 0; i < CHUNK_COUNT; i++) {
      REQUIRE((chunks[i] = A_MALLOC(CHUNK_SIZE)) != NULL);
      memset(chunks[i], 0x5a, CHUNK_SIZE);
    }
    size_t full = api_info().committed;
    CHECK_MSG(full >= before + (size_t)CHUNK_COUNT * CHUNK_SIZE / 2,
              "burst %d: %d blocks of %d KiB committed only %zu KiB", burst, CHUNK_COUNT,
              CHUNK_SIZE / 1024, (full - before) >> 10);
    double freed_at = now_ms();
    for (int i = 0; i < CHUNK_COUNT; i++)
      A_FREE(chunks[i]);
    double purged_after = wait_below(before + (full - before) / 2, freed_at);
    printf("arena free: burst %d, %zu KiB purged %.0f ms after the free\n", burst,
           (full - before) >> 10, purged_after);
    CHECK_MSG(purged_after >= 0, "burst %d: the freed chunks were not purged in %d ms", burst,
              WAIT_MS);
    CHECK_MSG(purged_after < 0 || purged_after >= ARENA_EARLIEST_MS,
              "burst %d: the freed chunks were purged %.0f ms after the free, before "
              "their %d ms",
              burst, purged_after, ARENA_EARLIEST_MS);
  }
}

int main(void) {
  api_init();
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, second_thread, NULL) == 0);
  for (int i = 0; i < BALLAST_COUNT; i++) {
    REQUIRE((ballast[i] = A_MALLOC(BALLAST_SIZE)) != NULL);
    memset(ballast[i], 0x11, BALLAST_SIZE);
  }
  /* The purger starts on a slow path once the process commits 16 MiB. */
  long waited = 0;
  for (; !test_purger_running() && waited < WAIT_MS; waited += 10) {
    void *p = A_MALLOC(40000);
    REQUIRE(p != NULL);
    A_FREE(p);
    sleep_ms(10);
  }
  CHECK_MSG(test_purger_running(), "20 MiB committed on two threads did not start the purger");
  if (test_purger_running()) bursts();

  pthread_mutex_lock(&mutex);
  done = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&mutex);
  REQUIRE(pthread_join(thread, NULL) == 0);
  for (int i = 0; i < BALLAST_COUNT; i++)
    A_FREE(ballast[i]);
  return test_finish();
}
