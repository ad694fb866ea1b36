/* SPDX-License-Identifier: MIT */
/* Reports survive a corrupted heap.
 *
 * The real-world complaint: a program with a buffer overflow also frees a
 * block twice. The allocator notices the double free, but its report needs
 * memory (formatting, stack trace, symbol names, a helper process), takes it
 * from the heap the overflow has wrecked, and dies with SIGSEGV somewhere in
 * its own report: no message naming the pointer, and a crash that points
 * away from the bug.
 *
 * A fresh copy of this program (child_process.h) allocates the block it will
 * later free wrongly (the victim, in a size class of its own), then wrecks
 * the free list of every other size class up to 4 KiB the way an overflow
 * does: it frees a block, writes 8 bytes past the end of the block just
 * below it (over the freed block's link), and allocates until that block is
 * handed out again, so the class's next allocation follows the overwritten
 * link. Then it frees the victim wrongly. The test wants the copy killed by
 * SIGABRT, with the victim pointer named on stderr: the report must not
 * allocate from the damaged heap.
 *
 * Built against malloc & co (BRISK_TEST_LIBC: linked, and preloaded), where
 * the report's own allocations would come from the damaged heap, and against
 * the brisk_* API (brisk_static).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_api.h"
#include "child_process.h"

#define CHILD_DEADLINE_S 20
#define VICTIM_SIZE 6000       /* its class is left intact */
#define WRECKED_MAX 4096       /* wreck every class up to this block size */
#define OVERFLOW_BYTE 0x41     /* an overflow of text: 'AAAAAAAA' */
#define ALLOCATIONS_MAX 100000 /* per class, until the wrecked block returns */

typedef enum wrong_free { WRONG_DOUBLE_FREE, WRONG_INTERIOR, WRONG_COUNT } wrong_free;
static const char *const wrong_names[WRONG_COUNT] = {"double free of",
                                                     "free of the interior pointer"};

/* Overflows into the freed block above a live one, in the class of size, and
 * allocates until the freed block comes back: the class's free list then
 * continues at the overflow's bytes. Returns 0 when no adjacent pair of
 * blocks turned up. */
static int wreck_class(size_t size) {
  enum { BATCH = 32 };
  uint8_t *blocks[BATCH];
  size_t usable = 0;
  for (int i = 0; i < BATCH; i++) {
    blocks[i] = A_MALLOC(size);
    if (blocks[i] == NULL) return 0;
    usable = A_USABLE_SIZE(blocks[i]);
  }
  for (int i = 0; i < BATCH; i++) {
    for (int j = 0; j < BATCH; j++) {
      if (blocks[j] != blocks[i] + usable) continue;
      uint8_t *below = blocks[i], *above = blocks[j];
      A_FREE(above);
      memset(below, OVERFLOW_BYTE, usable + 8); /* 8 bytes too many */
      for (long n = 0; n < ALLOCATIONS_MAX; n++)
        if (launder(A_MALLOC(size)) == above) return 1;
      return 0;
    }
  }
  return 0;
}

static int run_case(wrong_free wrong) {
  uint8_t *victim = A_MALLOC(VICTIM_SIZE);
  if (victim == NULL) return 12;
  uint8_t *bad = wrong == WRONG_INTERIOR ? victim + 16 : victim;
  size_t victim_usable = A_USABLE_SIZE(victim);
  child_say("victim %p bad %p\n", (void *)victim, (void *)bad);
  if (wrong == WRONG_DOUBLE_FREE) A_FREE(victim);
  unsigned wrecked = 0;
  for (size_t size = 1; size <= WRECKED_MAX;) {
    uint8_t *probe = A_MALLOC(size);
    size_t usable = probe == NULL ? 0 : A_USABLE_SIZE(probe);
    A_FREE(probe);
    if (usable == 0) return 12;
    if (usable != victim_usable) {
      if (!wreck_class(size)) {
        child_say("could not wreck the class of %zu-byte blocks\n", size);
        return 12;
      }
      wrecked++;
    }
    size = usable + 1;
  }
  child_say("wrecked the free lists of %u size classes; now the wrong free\n", wrecked);
  A_FREE(launder(bad));
  child_say("accepted\n");
  return 11;
}

static int check_case(char *self, wrong_free wrong) {
  static child_result r;
  char wrong_arg[16];
  snprintf(wrong_arg, sizeof wrong_arg, "%d", (int)wrong);
  char *argv[] = {self, "--case", wrong_arg, NULL};
  if (child_run_self(argv, CHILD_DEADLINE_S, &r) != 0) {
    printf("FAIL %s a block: could not start a child: %s\n", wrong_names[wrong], strerror(errno));
    return 0;
  }
  char bad[32] = "", outcome[80];
  const char *line = strstr(r.out, " bad ");
  if (line != NULL) sscanf(line, " bad %31s", bad);
  child_outcome(&r, CHILD_DEADLINE_S, outcome, sizeof outcome);
  int reached = strstr(r.out, "wrecked the free lists") != NULL;
  int aborted = !r.exited && !r.timed_out && r.signal == SIGABRT;
  int named = bad[0] != 0 && child_output_names(r.err, bad);
  if (reached && aborted && named) {
    printf("ok   %s %s on a wrecked heap: SIGABRT, the report names it\n", wrong_names[wrong], bad);
    return 1;
  }
  if (!reached)
    printf("FAIL %s a block: the set-up did not reach the wrong free (%s)\n", wrong_names[wrong],
           outcome);
  else if (strstr(r.out, "accepted") != NULL)
    printf("FAIL %s %s on a wrecked heap: accepted (want SIGABRT and a report naming it)\n",
           wrong_names[wrong], bad);
  else
    printf("FAIL %s %s on a wrecked heap: %s, %s (want SIGABRT and a report naming it)\n",
           wrong_names[wrong], bad, outcome,
           named ? "after a report naming the pointer" : "with no report naming the pointer");
  printf("    its stdout:\n%s    its stderr:\n%s", r.out, r.err);
  return 0;
}

int main(int argc, char **argv) {
  api_init();
  if (argc == 3 && strcmp(argv[1], "--case") == 0) return run_case((wrong_free)atoi(argv[2]));
  printf("reports on a heap an overflow has wrecked, through the %s API\n", API_NAME);
  int passed = 0;
  for (int wrong = 0; wrong < WRONG_COUNT; wrong++)
    passed += check_case(argv[0], (wrong_free)wrong);
  return passed == WRONG_COUNT ? 0 : 1;
}
