/* SPDX-License-Identifier: MIT */
/* Sleeping and reading the time, for tests that wait on brisk's timers
 * (the purge delay, the background purger's rounds). */
#ifndef BRISK_TEST_TIME_H
#define BRISK_TEST_TIME_H

#include <time.h>

static inline void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Monotonic milliseconds, with a fraction. */
static inline double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif /* BRISK_TEST_TIME_H */
