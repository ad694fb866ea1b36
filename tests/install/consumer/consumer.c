/* SPDX-License-Identifier: MIT */
/* A program using an installed brisk, for install_test.sh. */
#include <brisk.h>
#include <stdio.h>

int main(void) {
  void *p = brisk_malloc(100);
  printf("brisk %s owns=%d\n", brisk_version(), brisk_owns(p));
  brisk_free(p);
  return 0;
}
