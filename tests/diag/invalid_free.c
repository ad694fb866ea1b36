/* SPDX-License-Identifier: MIT */
/* Invalid frees in the default mode: each is reported and stops the program,
 * and memory is never handed out twice.
 *
 * The real-world complaint: a program frees a pointer into the middle of a
 * block (a parser frees the cursor instead of the buffer), one past its end,
 * a misaligned pointer, or the same block twice. glibc stops it with
 * "free(): invalid pointer"; an allocator that takes such a pointer as a free
 * later hands the same memory to two owners, and the program corrupts its
 * own data far from the bug.
 *
 * For block sizes from 16 B to 4 MB and each kind of bad pointer, a fresh
 * copy of this program (child_process.h) allocates a few blocks of the size,
 * prints the bad pointer, and frees it (or reallocs it). The test wants the
 * copy killed by SIGABRT with the bad pointer (as printf's %p writes it)
 * named on stderr. A copy that survives the bad free says so and then
 * allocates many blocks of the same size: one that overlaps a live block, or
 * another new one, means the bad free corrupted the heap, and the test says
 * which blocks overlap.
 *
 * Built against the brisk_* API (brisk_static) and against malloc & co
 * (BRISK_TEST_LIBC, run with libbrisk preloaded). Not in the sanitizer
 * builds: these frees are exactly what a sanitizer stops first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_api.h"
#include "child_process.h"

#define KiB ((size_t)1024)
#define MiB (KiB * KiB)
#define CHILD_DEADLINE_S 10

/* Exit statuses of a copy that survived its bad free. */
#define EXIT_ACCEPTED_OVERLAP 10 /* and memory was then handed out twice */
#define EXIT_ACCEPTED_CLEAN 11   /* and the probe found no overlap */
#define EXIT_SETUP 12            /* the set-up failed (an allocation) */

static const size_t sizes[] = {16,   24,    48,     100,    1000,    4096,
                               8193, 20000, 100000, 600000, 2 * MiB, 4 * MiB};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

/* The kinds of bad pointer; each names where it points relative to a live
 * block p of the size under test, with u = its usable size. */
typedef enum bad_kind {
  BAD_INTERIOR_16,   /* p + 16 */
  BAD_MIDDLE,        /* p + size / 2 */
  BAD_ONE_PAST_END,  /* p + u */
  BAD_MISALIGNED_1,  /* p + 1 */
  BAD_MISALIGNED_8,  /* p + 8 */
  BAD_UNCARVED,      /* p + k * u, far past the blocks handed out so far */
  BAD_HUGE_TAIL,     /* p + 1 MiB inside a block of 2 MB or more */
  BAD_DOUBLE_FREE,   /* free(p) twice */
  BAD_REALLOC_FREED, /* realloc(p) after free(p) */
  BAD_FOREIGN,       /* a pointer into the program's static data */
  BAD_KIND_COUNT
} bad_kind;

static const char *const kind_names[BAD_KIND_COUNT] = {
    "interior pointer p+16",
    "interior pointer p+size/2",
    "one past the end, p+usable",
    "misaligned p+1",
    "misaligned p+8",
    "a part of the page not yet carved into blocks",
    "the tail of a huge block, p+1MiB",
    "double free",
    "realloc of a freed block",
    "a pointer brisk never handed out (static data)",
};

/* ---- the child: one bad free --------------------------------------------------- */

/* How far "uncarved" points past p: at least 4 blocks and 16 KiB, which is
 * past what a fresh page carves at a time (about 4 KiB, at least 4 blocks),
 * and for most sizes still inside the page (64 KiB pages hold blocks up to
 * 8 KiB, 512 KiB pages up to 64 KiB); p is the last block handed out. */
static size_t uncarved_offset(size_t usable) {
  size_t k = (16 * KiB + usable - 1) / usable;
  if (k < 4) k = 4;
  return k * usable;
}

static int kind_applies(bad_kind kind, size_t size, size_t usable) {
  switch (kind) {
  case BAD_INTERIOR_16:
    return 16 < usable; /* else it is one past the end */
  case BAD_MIDDLE:
    return size / 2 != 16 && size / 2 != 8 && size / 2 != 1; /* else another kind */
  case BAD_UNCARVED:
    return usable <= 128 * KiB;
  case BAD_HUGE_TAIL:
    return size >= 2 * MiB;
  case BAD_FOREIGN:
    return size == sizes[0]; /* it has nothing to do with the size */
  default:
    return 1;
  }
}

static uint8_t foreign[256];

static uint8_t *bad_pointer(bad_kind kind, uint8_t *p, size_t size, size_t usable) {
  switch (kind) {
  case BAD_FOREIGN:
    return foreign + 64;
  case BAD_INTERIOR_16:
    return p + 16;
  case BAD_MIDDLE:
    return p + size / 2;
  case BAD_ONE_PAST_END:
    return p + usable;
  case BAD_MISALIGNED_1:
    return p + 1;
  case BAD_MISALIGNED_8:
    return p + 8;
  case BAD_UNCARVED:
    return p + uncarved_offset(usable);
  case BAD_HUGE_TAIL:
    return p + MiB;
  default:
    return p;
  }
}

#define LIVE_MAX 4
#define PROBE_MAX 10000

typedef struct range {
  uint8_t *start;
  size_t size;
} range;

static int overlaps(range a, range b) {
  return a.start < b.start + b.size && b.start < a.start + a.size;
}

/* After a bad free was accepted: allocate enough blocks of the size to use up
 * what the bad free may have put on a free list, and look for one that
 * overlaps a live block or an earlier probe. */
static int probe_for_overlap(const range *live, size_t live_count, size_t size, size_t usable) {
  static range probes[PROBE_MAX];
  size_t count = usable <= 8 * KiB     ? 2 * (64 * KiB / usable) + 16
                 : usable <= 128 * KiB ? 2 * (512 * KiB / usable) + 8
                                       : 8;
  if (count > PROBE_MAX) count = PROBE_MAX;
  for (size_t i = 0; i < count; i++) {
    uint8_t *q = launder(A_MALLOC(size));
    if (q == NULL) {
      child_say("probe: malloc(%zu) returned NULL after %zu blocks\n", size, i);
      return 0;
    }
    probes[i] = (range){q, size};
    for (size_t j = 0; j < live_count; j++) {
      if (overlaps(probes[i], live[j])) {
        child_say(
            "overlap: malloc(%zu) returned %p, which overlaps the live block %p (%zu bytes)\n",
            size, (void *)q, (void *)live[j].start, live[j].size);
        return 1;
      }
    }
    for (size_t j = 0; j < i; j++) {
      if (overlaps(probes[i], probes[j])) {
        child_say(
            "overlap: malloc(%zu) returned %p, which overlaps the block %p it returned before "
            "(still live)\n",
            size, (void *)q, (void *)probes[j].start);
        return 1;
      }
    }
  }
  return 0;
}

static int run_case(bad_kind kind, size_t size) {
  size_t live_count = size > 512 * KiB ? 2 : LIVE_MAX;
  range live[LIVE_MAX];
  uint8_t *p = NULL;
  for (size_t i = 0; i < live_count; i++) {
    uint8_t *q = launder(A_MALLOC(size));
    if (q == NULL) return EXIT_SETUP;
    memset(q, 0x11, size);
    live[i] = (range){q, size};
    if (p == NULL || q > p) p = q; /* the last carved: past it, nothing was handed out */
  }
  size_t usable = A_USABLE_SIZE(p);
  uint8_t *bad = bad_pointer(kind, p, size, usable);
  child_say("block %p usable %zu bad %p\n", (void *)p, usable, (void *)bad);

  if (kind == BAD_DOUBLE_FREE || kind == BAD_REALLOC_FREED) {
    A_FREE(p);
    /* p is no longer live: drop it from the live set */
    for (size_t i = 0; i < live_count; i++)
      if (live[i].start == p) live[i] = live[--live_count];
    if (kind == BAD_DOUBLE_FREE) {
      A_FREE(launder(p));
    } else {
      uint8_t *q = A_REALLOC(launder(p), size);
      child_say("accepted: realloc returned %p\n", (void *)q);
      if (q != NULL) live[live_count++] = (range){q, size};
      return probe_for_overlap(live, live_count, size, usable) ? EXIT_ACCEPTED_OVERLAP
                                                               : EXIT_ACCEPTED_CLEAN;
    }
  } else {
    A_FREE(bad);
  }
  child_say("accepted\n");
  return probe_for_overlap(live, live_count, size, usable) ? EXIT_ACCEPTED_OVERLAP
                                                           : EXIT_ACCEPTED_CLEAN;
}

/* ---- the driver ------------------------------------------------------------------- */

static void show_child_output(const child_result *r) {
  if (r->out_length) printf("    its stdout:\n%s", r->out);
  if (r->err_length) printf("    its stderr:\n%s", r->err);
}

/* Runs one case in a fresh copy; prints "ok ..." or "FAIL ..." and returns
 * whether it passed. */
static int check_case(char *self, bad_kind kind, size_t size) {
  static child_result r;
  char kind_arg[16], size_arg[32];
  snprintf(kind_arg, sizeof kind_arg, "%d", (int)kind);
  snprintf(size_arg, sizeof size_arg, "%zu", size);
  char *argv[] = {self, "--case", kind_arg, size_arg, NULL};
  const char *what = kind_names[kind];
  if (child_run_self(argv, CHILD_DEADLINE_S, &r) != 0) {
    printf("FAIL %8zu B  %s: could not start a child: %s\n", size, what, strerror(errno));
    return 0;
  }
  char bad[32] = "";
  const char *line = strstr(r.out, " bad ");
  if (line != NULL) sscanf(line, " bad %31s", bad);
  char outcome[80];
  child_outcome(&r, CHILD_DEADLINE_S, outcome, sizeof outcome);
  const char *call = kind == BAD_REALLOC_FREED ? "realloc" : "free";
  if (bad[0] == 0) {
    printf("FAIL %8zu B  %s: the child failed before the bad %s (%s)\n", size, what, call, outcome);
    show_child_output(&r);
    return 0;
  }
  int aborted = !r.exited && !r.timed_out && r.signal == SIGABRT;
  if (aborted && child_output_names(r.err, bad)) {
    printf("ok   %8zu B  %s: SIGABRT, the report names %s\n", size, what, bad);
    return 1;
  }
  printf("FAIL %8zu B  %s: %s(%s) ", size, what, call, bad);
  if (strstr(r.out, "accepted") != NULL) {
    const char *overlap = strstr(r.out, "overlap: ");
    printf("was accepted (want SIGABRT and a report naming the pointer)");
    if (overlap != NULL)
      printf("; then memory was handed out twice: %.*s\n", (int)strcspn(overlap + 9, "\n"),
             overlap + 9);
    else if (r.exited && r.exit_status == EXIT_ACCEPTED_CLEAN)
      printf("; the blocks allocated after it did not overlap\n");
    else
      printf("; then allocating more blocks of the size ended in: %s\n", outcome);
  } else {
    printf("ended in: %s%s (want SIGABRT and a report naming the pointer)\n", outcome,
           aborted ? ", but stderr does not name the pointer" : "");
    show_child_output(&r);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--case") == 0) {
    api_init();
    return run_case((bad_kind)atoi(argv[2]), (size_t)strtoull(argv[3], NULL, 10));
  }
  api_init();
  printf("invalid frees through the %s API, default mode: each must abort with a report naming "
         "the pointer\n",
         API_NAME);
  unsigned cases = 0, passed = 0;
  for (size_t s = 0; s < SIZE_COUNT; s++) {
    /* the usable size decides which kinds apply; ask for it here */
    void *p = A_MALLOC(sizes[s]);
    REQUIRE(p != NULL);
    size_t usable = A_USABLE_SIZE(p);
    A_FREE(p);
    for (int kind = 0; kind < BAD_KIND_COUNT; kind++) {
      if (!kind_applies((bad_kind)kind, sizes[s], usable)) continue;
      cases++;
      passed += (unsigned)check_case(argv[0], (bad_kind)kind, sizes[s]);
    }
  }
  printf("%u of %u bad frees stopped with a report naming the pointer\n", passed, cases);
  return passed == cases ? 0 : 1;
}
