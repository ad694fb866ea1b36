/* SPDX-License-Identifier: MIT */
/* A program with a known allocation mix, for the heap profile's and the
 * leak report's tests (run_heap_profile_tests.py):
 *   mix     keep_three keeps three times the bytes keep_one keeps, and
 *           churn allocates and frees as many bytes as both together,
 *           keeping none; prints the true figures
 *   dump    the mix, then brisk_heap_profile_dump(argv[2]), then frees
 *           what keep_three kept and dumps again to argv[3]
 *   signal  the mix, then raises SIGUSR2 and allocates on (the profile is
 *           written at the next sample after the signal)
 *   leak    leaves 10 blocks of 1000 bytes from leak_big and one of 77 from
 *           leak_small allocated at exit
 *   clean   frees everything it allocates */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 200
#define ONE_BLOCKS 40000 /* 8 MB kept by keep_one */

static void *kept[4 * ONE_BLOCKS];
static size_t kept_count;

__attribute__((noinline)) static void keep_three(void) {
  for (int i = 0; i < 3; i++) {
    void *p = malloc(BLOCK);
    memset(p, 1, BLOCK);
    kept[kept_count++] = p;
  }
}

__attribute__((noinline)) static void keep_one(void) {
  void *p = malloc(BLOCK);
  memset(p, 2, BLOCK);
  kept[kept_count++] = p;
}

__attribute__((noinline)) static void churn(void) {
  for (int i = 0; i < 4; i++) {
    volatile char *p = malloc(BLOCK);
    p[0] = 3;
    free((void *)p);
  }
}

__attribute__((noinline)) static void *leak_big(void) {
  void *p = malloc(1000);
  memset(p, 4, 1000);
  return p;
}

__attribute__((noinline)) static void *leak_small(void) {
  void *p = malloc(77);
  memset(p, 5, 77);
  return p;
}

/* The API is looked up, so the program runs under any malloc. */
static int dump(const char *path) {
  int (*dump_now)(const char *) =
      (int (*)(const char *))dlsym(RTLD_DEFAULT, "brisk_heap_profile_dump");
  if (dump_now == NULL) {
    fprintf(stderr, "brisk_heap_profile_dump not found\n");
    return 2;
  }
  return dump_now(path) == 0 ? 0 : 3;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "mix";
  if (strcmp(mode, "leak") == 0 || strcmp(mode, "clean") == 0) {
    void *big[10];
    for (int i = 0; i < 10; i++)
      big[i] = leak_big();
    void *small = leak_small();
    if (strcmp(mode, "clean") == 0) {
      for (int i = 0; i < 10; i++)
        free(big[i]);
      free(small);
    }
    return 0;
  }
  for (int i = 0; i < ONE_BLOCKS; i++) {
    keep_three();
    keep_one();
    churn();
  }
  printf("keep_three %d\nkeep_one %d\nchurn %d\n", 3 * ONE_BLOCKS * BLOCK, ONE_BLOCKS * BLOCK,
         4 * ONE_BLOCKS * BLOCK);
  fflush(stdout);
  if (strcmp(mode, "dump") == 0 && argc > 3) {
    int status = dump(argv[2]);
    for (size_t i = 0; i < kept_count; i++)
      if (i % 4 != 3) free(kept[i]); /* keep_three's blocks */
    return status != 0 ? status : dump(argv[3]);
  }
  if (strcmp(mode, "signal") == 0) {
    raise(SIGUSR2);
    for (int i = 0; i < ONE_BLOCKS; i++)
      churn();
  }
  for (size_t i = 0; i < kept_count; i++)
    if (((char *)kept[i])[0] == 0) return 1;
  return 0;
}
