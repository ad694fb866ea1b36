/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
__attribute__((noinline)) void *make_leak(size_t n) {
  char *p = malloc(n);
  memset(p, 1, n);
  return p;
}
__attribute__((noinline)) void leak_many(void) {
  for (int i = 0; i < 10; i++)
    make_leak(1000);
}
int main(int argc, char **argv) {
  leak_many();
  make_leak(50);
  if (argc > 1 && !strcmp(argv[1], "double")) {
    char *p = malloc(40);
    free(p);
    free(p);
  }
  if (argc > 1 && !strcmp(argv[1], "overrun")) {
    char *p = malloc(40);
    p[40] = 1;
    free(p);
  }
  if (argc > 1 && !strcmp(argv[1], "interior")) {
    char *p = malloc(40);
    free(p + 8);
  }
  if (argc > 1 && !strcmp(argv[1], "invalid")) {
    static char x[64];
    free(x + 16);
  }
  char *s = strdup("hello");
  free(s);
  printf("done\n");
  return 0;
}
