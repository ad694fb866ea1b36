/* SPDX-License-Identifier: MIT */
/* BRISK_HUGE_PAGES: with the setting on, the memory behind small, medium and
 * huge blocks, and behind a huge block grown by realloc, is advised for
 * transparent huge pages; with it off (the default) none is. The kernel
 * shows the advice as the "hg" flag of the mapping in /proc/self/smaps,
 * whether or not it then finds a huge page to back it, so the check does
 * not depend on free huge pages. A kernel built without transparent huge
 * pages refuses the advice: there the flag must be absent either way.
 *
 *   huge_pages on|off   what the environment set BRISK_HUGE_PAGES to */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc_api.h"

#define MIB ((size_t)1 << 20)

/* Whether the mapping holding p carries the huge-page advice; -1 when no
 * mapping holds it. */
static int advised_huge(const void *p) {
  FILE *smaps = fopen("/proc/self/smaps", "r");
  REQUIRE(smaps != NULL);
  char line[512];
  int inside = 0, advised = -1;
  uintptr_t at = (uintptr_t)p;
  while (fgets(line, sizeof line, smaps) != NULL) {
    unsigned long start, end;
    if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = at >= start && at < end;
      continue;
    }
    if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      advised = strstr(line, " hg") != NULL;
      break;
    }
  }
  fclose(smaps);
  return advised;
}

static void expect(const void *p, int want, const char *what) {
  int got = advised_huge(p);
  CHECK_MSG(got == want, "%s at %p: huge-page advice %s, expected %s", what, p,
            got < 0 ? "(no mapping)"
            : got   ? "present"
                    : "absent",
            want ? "present" : "absent");
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2 && (strcmp(argv[1], "on") == 0 || strcmp(argv[1], "off") == 0));
  api_init();
  struct stat st;
  int kernel_has_them = stat("/sys/kernel/mm/transparent_hugepage", &st) == 0;
  int want = strcmp(argv[1], "on") == 0 && kernel_has_them;
  printf("BRISK_HUGE_PAGES=%s, kernel transparent huge pages: %s\n", argv[1],
         kernel_has_them ? "yes" : "no");

  char *small = A_MALLOC(64), *medium = A_MALLOC(40 * 1024), *huge = A_MALLOC(8 * MIB);
  REQUIRE(small != NULL && medium != NULL && huge != NULL);
  memset(small, 1, 64);
  memset(medium, 2, 40 * 1024);
  memset(huge, 3, 8 * MIB);
  expect(small, want, "a small block");
  expect(medium, want, "a medium block");
  expect(huge, want, "a huge block");

  /* Grown in place, or moved to a larger reservation: all of it is advised. */
  char *grown = A_REALLOC(huge, 40 * MIB);
  REQUIRE(grown != NULL);
  CHECK(grown[0] == 3 && grown[8 * MIB - 1] == 3);
  memset(grown + 8 * MIB, 4, 32 * MIB);
  expect(grown, want, "a grown huge block's start");
  expect(grown + 40 * MIB - 1, want, "a grown huge block's end");

  A_FREE(small);
  A_FREE(medium);
  A_FREE(grown);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
