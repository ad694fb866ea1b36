/* SPDX-License-Identifier: MIT */
/* The allocation that starts the background purger hands out a block that
 * is its alone. The purger starts inside an allocation, and the C library
 * allocates for the new thread (its thread-local storage) through malloc,
 * which is brisk: a nested call from the middle of brisk's slow path. Were
 * the purger started between setting up a fresh page and taking the block
 * from it, a nested call that ran the periodic collection would find the
 * page empty, retire it and give its segment back, and the block the outer
 * call then returned would lie in a free segment, later laid out anew under
 * it (the block handed out twice, its first bytes overwritten).
 *
 * Whether the nested call collects depends on how many slow calls came
 * before it (housekeeping rides on every 16th), so each case runs in a fresh
 * process (the purger starts once per process, and never in a forked child)
 * with a different number of earlier slow calls: one block in each of that
 * many small size classes. The case, on a thread of its own, then allocates
 * calloc'd 300 KiB blocks until the purger has started (brisk starts it once
 * 16 MiB are committed) and a little beyond, checking that every calloc'd block is
 * zero, that no two live blocks overlap, and that every block keeps its
 * contents. Linked against libbrisk or preloaded: the C library must
 * allocate through brisk. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc_api.h"
#include "child_process.h"
#include "pattern.h"

#define CASES 48
#define BIG (300 * 1024)
#define BIG_MAX 160 /* 48 MiB: well past the purger's 16 MiB threshold */
#define CLASS_SIZES 32

/* 32 small size classes, none of them the one of the C library's nested
 * allocation (288 bytes), which must find no page and take the slow path. */
static size_t class_size(int k) {
  return k < 8 ? (size_t)(k + 1) * 16 : 1024 + (size_t)(k - 8) * 256 + 8;
}

static int case_number;

/* The case runs on a thread of its own: its heap is fresh, so the nested
 * allocation for the purger's thread-local storage (288 bytes here) finds
 * no page of its class and takes the slow path, as in a worker thread of a
 * real program. The main thread has allocated too (for this thread), which
 * the purger waits for. */
static void *case_body(void *arg) {
  (void)arg;
  int earlier_slow_calls = case_number;
  void *small[CLASS_SIZES];
  for (int k = 0; k < earlier_slow_calls; k++)
    REQUIRE((small[k] = A_MALLOC(class_size(k))) != NULL);
  static unsigned char *big[BIG_MAX];
  for (int n = 0; n < BIG_MAX; n++) {
    unsigned char *p = A_CALLOC(1, BIG);
    REQUIRE(p != NULL);
    CHECK_MSG(all_zero(p, BIG), "case %d: calloc'd block %d at %p is not zero", earlier_slow_calls,
              n, (void *)p);
    for (int m = 0; m < n; m++)
      if (!CHECK_MSG(p + BIG <= big[m] || big[m] + BIG <= p,
                     "case %d: block %d at %p overlaps live block %d at %p", earlier_slow_calls, n,
                     (void *)p, m, (void *)big[m]))
        break;
    pattern_fill(p, BIG, (uint32_t)n + 1);
    big[n] = p;
  }
  for (int n = 0; n < BIG_MAX; n++) {
    size_t bad = pattern_find_bad(big[n], BIG, (uint32_t)n + 1);
    CHECK_MSG(bad == BIG, "case %d: block %d at %p changed at offset %zu", earlier_slow_calls, n,
              (void *)big[n], bad);
    A_FREE(big[n]);
  }
  for (int k = 0; k < earlier_slow_calls; k++)
    A_FREE(small[k]);
  return NULL;
}

static int run_case(int earlier_slow_calls) {
  case_number = earlier_slow_calls;
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, case_body, NULL) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  return test_finish();
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "case") == 0) return run_case(atoi(argv[2]));
  api_init();
  /* Three times as long under an emulator (qemu-user, whose command
   * tests/CMakeLists.txt gives the tests), as CTest's limit there. */
  const double timeout_s = getenv("CROSSCOMPILING_EMULATOR") != NULL ? 90 : 30;
  /* Every number of earlier slow calls once; the repeats scale down (with
   * the iterations, under emulation). */
  int cases = (int)test_scaled(CASES);
  if (cases < CLASS_SIZES) cases = CLASS_SIZES;
  for (int c = 0; c < cases; c++) {
    char number[16];
    snprintf(number, sizeof number, "%d", c % CLASS_SIZES);
    char *child_argv[] = {argv[0], "case", number, NULL};
    child_result r;
    REQUIRE(child_run_self(child_argv, timeout_s, &r) == 0);
    char outcome[80];
    if (!CHECK_MSG(r.exited && r.exit_status == 0, "%d earlier slow calls: %s\n%s%s",
                   c % CLASS_SIZES, child_outcome(&r, timeout_s, outcome, sizeof outcome), r.out,
                   r.err))
      break;
  }
  return test_finish();
}
