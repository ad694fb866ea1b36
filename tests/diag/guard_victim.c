/* SPDX-License-Identifier: MIT */
/* A program with one heap bug per case, for BRISK_GUARD (guard_pages_test.py):
 * run with BRISK_GUARD=1, so that about every other block from a refill is
 * guarded, it allocates until it holds a guarded block (one whose usable
 * size is exactly what it asked for: others are rounded up to their class)
 * placed as the case needs, then misuses it. Each case must end in SIGABRT
 * with the report naming the access and the block's stacks; "sound" must
 * run to its end with every block intact. Functions keep their names in
 * the stacks (-g, no inlining), and global, so that a linker map lists
 * them too (symbolize_test.py). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASKED 20 /* rounded to 32 by its class, to 32 on a guard page */

char *allocate_watched(int at_end);
void release_watched(char *p);
int touch(volatile char *p, long offset);
void write_at(volatile char *p, long offset);

/* A guarded block at its page's end (at_end) or start; NULL if none came. */
void *kept[100000]; /* blocks kept, so the next ones come from the class's pages */

char *allocate_watched(int at_end) {
  for (int i = 0; i < 100000; i++) {
    char *p = malloc(ASKED);
    if (malloc_usable_size(p) == ASKED) {
      int is_at_end = ((uintptr_t)p + 32) % 4096 == 0;
      if (is_at_end == at_end) return p;
    }
    kept[i] = p;
  }
  return NULL;
}

void release_watched(char *p) {
  free(p);
}

int touch(volatile char *p, long offset) {
  return p[offset];
}

void write_at(volatile char *p, long offset) {
  p[offset] = 1;
}

static int sound(void) {
  /* Guarded blocks in every use: contents, realloc, calloc, alignment. */
  enum { N = 20000 };
  static char *blocks[N];
  int guarded = 0;
  for (int i = 0; i < N; i++) {
    size_t size = 1 + (size_t)(i * 37) % 4000;
    blocks[i] = (i % 3 == 0) ? calloc(1, size) : malloc(size);
    if (blocks[i] == NULL) return 1;
    if (i % 3 == 0)
      for (size_t b = 0; b < size; b++)
        if (blocks[i][b] != 0) return printf("calloc block %d not zero\n", i), 1;
    memset(blocks[i], (char)i, size);
    guarded += malloc_usable_size(blocks[i]) == size && size % 16 != 0;
  }
  for (int i = 0; i < N; i += 2) {
    size_t size = 1 + (size_t)(i * 37) % 4000;
    blocks[i] = realloc(blocks[i], size + 100);
    if (blocks[i] == NULL || (unsigned char)blocks[i][size - 1] != (unsigned char)(char)i)
      return printf("realloc lost block %d\n", i), 1;
    memset(blocks[i] + size, (char)i, 100);
  }
  for (int i = 0; i < 2000; i++) {
    void *p = NULL;
    if (posix_memalign(&p, 64, 48) != 0 || (uintptr_t)p % 64 != 0) return 1;
    free(p);
  }
  for (int i = 0; i < N; i++)
    free(blocks[i]);
  printf("sound: %d of %d blocks guarded\n", guarded, N);
  return guarded > 0 ? 0 : 2;
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "";
  if (strcmp(which, "sound") == 0) return sound();
  char *p = allocate_watched(strcmp(which, "underflow") != 0);
  if (p == NULL) {
    printf("no guarded block came: is BRISK_GUARD on?\n");
    return 3;
  }
  printf("pointer=%p\n", (void *)p);
  fflush(stdout);
  if (strcmp(which, "overflow") == 0) write_at(p, 32); /* past the 32 bytes: the guard page */
  if (strcmp(which, "underflow") == 0) return touch(p, -1);
  if (strcmp(which, "use-after-free") == 0) {
    release_watched(p);
    return touch(p, 8);
  }
  if (strcmp(which, "overflow-at-free") == 0) {
    write_at(p, ASKED + 2); /* within the class's rounding: no fault, found at free */
    release_watched(p);
  }
  if (strcmp(which, "double-free") == 0) {
    release_watched(p);
    release_watched(p);
  }
  printf("not caught\n");
  return 0;
}
