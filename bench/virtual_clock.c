/* SPDX-License-Identifier: MIT */
/* A clock for instruction counting, preloaded ahead of the allocator by
 * `brisk bench --callgrind`. Allocators do time-driven work (purging free
 * memory after a delay, decaying caches); under callgrind, which runs a
 * program about 50 times slower, how often that work runs would depend on
 * the machine's speed and load, and so would the instruction counts. Here
 * every reading of the clock advances it by a fixed step instead, so the
 * same program makes the same time-driven decisions in every run.
 *
 * Only for measurement: sleeping, timeouts and anything else that waits on
 * the kernel's clock are left alone. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* 1 microsecond per reading: of the order of the time between an
 * allocator's clock readings when it runs at full speed. */
enum { STEP_NS = 1000 };
static const uint64_t START_NS = 1000000000ull * 1000000; /* an arbitrary fixed epoch */

static _Atomic uint64_t readings;

static uint64_t next_ns(void) {
  return START_NS + atomic_fetch_add(&readings, 1) * STEP_NS;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
  (void)clock; /* every clock is the same virtual one */
  uint64_t ns = next_ns();
  ts->tv_sec = (time_t)(ns / 1000000000u);
  ts->tv_nsec = (long)(ns % 1000000000u);
  return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void)tz;
  uint64_t ns = next_ns();
  tv->tv_sec = (time_t)(ns / 1000000000u);
  tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
  return 0;
}

time_t time(time_t *out) {
  time_t now = (time_t)(next_ns() / 1000000000u);
  if (out) *out = now;
  return now;
}
