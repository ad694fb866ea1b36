/* SPDX-License-Identifier: MIT */
/* A module loaded with dlopen() by override_libc: it allocates in its
 * constructor and exchanges blocks with the program. */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT char *dl_helper_ctor_block;
EXPORT void *dl_helper_alloc(size_t n, int fill);
EXPORT int dl_helper_free_checked(void *p, size_t n, int fill);

__attribute__((constructor)) static void dl_helper_init(void) {
  dl_helper_ctor_block = malloc(1000);
  if (dl_helper_ctor_block) memset(dl_helper_ctor_block, 'D', 1000);
}

__attribute__((destructor)) static void dl_helper_fini(void) {
  /* allocation while the module is being unloaded */
  char *p = malloc(5000);
  if (p) {
    memset(p, 1, 5000);
    free(p);
  }
}

EXPORT void *dl_helper_alloc(size_t n, int fill) {
  void *p = malloc(n);
  if (p) memset(p, fill, n);
  return p;
}

/* Frees a block the program allocated; 1 if its content was as expected. */
EXPORT int dl_helper_free_checked(void *p, size_t n, int fill) {
  const unsigned char *b = p;
  int ok = p != NULL;
  for (size_t i = 0; ok && i < n; i++)
    ok = b[i] == (unsigned char)fill;
  free(p);
  return ok;
}
