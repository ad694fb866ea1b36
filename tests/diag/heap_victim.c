/* SPDX-License-Identifier: MIT */
/* A program with a known allocation mix, for the heap profile's tests
 * (run_diag_tests.py reads its profile with pprof): keep_three keeps three
 * times the bytes keep_one keeps, and churn allocates and frees as many
 * bytes as both together, keeping none. Prints the true figures. */
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

int main(int argc, char **argv) {
  for (int i = 0; i < ONE_BLOCKS; i++) {
    keep_three();
    keep_one();
    churn();
  }
  printf("keep_three %d\nkeep_one %d\nchurn %d\n", 3 * ONE_BLOCKS * BLOCK, ONE_BLOCKS * BLOCK,
         4 * ONE_BLOCKS * BLOCK);
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "dump") == 0) return 0;
  for (size_t i = 0; i < kept_count; i++)
    if (((char *)kept[i])[0] == 0) return 1;
  return 0;
}
