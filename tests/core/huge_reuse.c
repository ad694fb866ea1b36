/* SPDX-License-Identifier: MIT */
/* Freed huge blocks (above 512 KiB) are reused while they are resident: a
 * request that no single freed span can hold is assembled from several, and
 * the part of a freed span that a smaller request leaves over stays resident
 * for the next one. Both show as brisk's committed bytes staying flat, and,
 * outside sanitizer builds (whose shadow memory faults too), as page faults
 * far below the block's size. Runs in its own process with a purge delay
 * long enough that nothing leaves the cache while it runs. */
#include <string.h>
#include <sys/resource.h>

#include "alloc_api.h"

#define MIB ((size_t)1 << 20)

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define COUNTS_FAULTS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define COUNTS_FAULTS 0
#endif
#endif
#ifndef COUNTS_FAULTS
#define COUNTS_FAULTS 1
#endif

static long minor_faults(void) {
  struct rusage usage;
  REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
  return usage.ru_minflt;
}

static unsigned char *filled(size_t size, int byte) {
  unsigned char *p = A_MALLOC(size);
  REQUIRE(p != NULL);
  memset(p, byte, size);
  return p;
}

/* Allocates and fills size bytes, checking that it took no new memory. */
static unsigned char *reused(size_t size, int byte, const char *what) {
  size_t before = api_info().committed;
  long faults = minor_faults();
  unsigned char *p = filled(size, byte);
  faults = minor_faults() - faults;
  size_t after = api_info().committed;
  CHECK_MSG(after <= before, "%s: committed grew by %zu bytes", what, after - before);
  if (COUNTS_FAULTS)
    CHECK_MSG(faults < (long)(size / 4096 / 16), "%s: %ld page faults filling %zu MiB", what,
              faults, size / MIB);
  CHECK(p[0] == (unsigned char)byte && p[size - 1] == (unsigned char)byte);
  return p;
}

int main(void) {
  api_init();
  /* Live, never touched: it sets the cache's budget (a quarter of what is
   * live in huge blocks) above what the steps below free. */
  void *budget = A_MALLOC(256 * MIB);
  REQUIRE(budget != NULL);

  /* Two freed 12 MiB spans make one 22 MiB block. */
  unsigned char *a = filled(12 * MIB, 0x11);
  unsigned char *b = filled(12 * MIB, 0x22);
  A_FREE(a);
  A_FREE(b);
  unsigned char *c = reused(22 * MIB, 0x33, "22 MiB from two freed 12 MiB blocks");

  /* 5 MiB from the freed 22 MiB span leaves about 18 MiB resident (not
   * only what lies past the next 4 MiB boundary), and 16 MiB fits there. */
  A_FREE(c);
  unsigned char *d = reused(5 * MIB, 0x44, "5 MiB from a freed 22 MiB block");
  unsigned char *e = reused(16 * MIB, 0x55, "16 MiB from what the 5 MiB block left");
  CHECK(e + 16 * MIB <= d || d + 5 * MIB <= e);
  CHECK(d[0] == 0x44 && d[5 * MIB - 1] == 0x44);

  A_FREE(d);
  A_FREE(e);
  A_FREE(budget);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
