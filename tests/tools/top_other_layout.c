/* SPDX-License-Identifier: MIT */
/* A program that carries a descriptor with brisk's tag that no brisk top
 * reads (brisk_top_test.py): as a brisk of another version would, to a
 * brisk top that reads only its own (no argument: layout 99), or a
 * descriptor of brisk top's layout that gives a word a width it cannot
 * read (argument "widths": a heap's carved bytes 3 bytes wide). Runs until
 * killed. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* introspection.c's layout 2, with 12 figures and 10 heap fields. */
struct descriptor {
  char magic[16];
  uint32_t layout;
  uint32_t size;
  char version[16];
  uint64_t ready, heaps, classes;
  uint32_t class_count, figure_count;
  uint64_t figures[12];
  uint32_t heap[10];
  uint8_t heap_widths[9];
  uint8_t figure_widths[12];
};

__attribute__((visibility("default"), used)) struct descriptor brisk_introspection = {
    .magic = "brisk-introspect",
    .layout = 99,
    .size = sizeof(struct descriptor),
    .version = "9.9.9",
    .ready = 1};

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "widths") == 0) {
    struct descriptor *d = &brisk_introspection;
    d->layout = 2;
    d->class_count = 1;
    d->figure_count = 12;
    d->heap[0] = 64; /* heap_t's size; every field at 0 */
    const uint8_t widths[9] = {8, 1, 4, 3, 8, 8, 8, 8, 8};
    memcpy(d->heap_widths, widths, sizeof widths);
    memset(d->figure_widths, 8, sizeof d->figure_widths);
  }
  for (;;)
    pause();
}
