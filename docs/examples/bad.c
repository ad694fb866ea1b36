/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

static char *copy_name(const char *name) {
  char *copy = malloc(strlen(name)); /* forgot the terminating zero */
  strcpy(copy, name);
  return copy;
}

int main(void) {
  char *name = copy_name("brisk");
  free(name);
  return 0;
}
