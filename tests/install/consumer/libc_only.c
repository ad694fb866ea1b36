/* SPDX-License-Identifier: MIT */
/* A program that never calls an allocation function itself: libc allocates
 * for it (the stdio buffer of fopen, the line of getline, the copy of strdup).
 * Exit status 0 when brisk served those blocks. Under --as-needed, a program
 * like this is where a link form that does not keep brisk in falls back to
 * glibc's malloc without a word.
 *
 * brisk_owns is a weak reference: it neither keeps libbrisk.so linked nor
 * pulls anything out of libbrisk.a, so it cannot hide that fallback; it is
 * NULL when brisk is not in the program at all. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

extern int brisk_owns(const void *p) __attribute__((weak));

int main(int argc, char **argv) {
  (void)argc;
  FILE *file = fopen(argv[0], "r");
  char *line = NULL;
  size_t capacity = 0;
  if (file == NULL || getline(&line, &capacity, file) < 0) {
    perror(argv[0]);
    return 2;
  }
  char *copy = strdup(argv[0]);
  if (brisk_owns == NULL) {
    printf("brisk is not in this program: glibc serves every allocation\n");
    return 1;
  }
  int served = brisk_owns(line) && brisk_owns(copy);
  printf("getline's line %s brisk's, strdup's copy %s brisk's\n",
         brisk_owns(line) ? "is" : "is NOT", brisk_owns(copy) ? "is" : "is NOT");
  return served ? 0 : 1;
}
