/* SPDX-License-Identifier: MIT */
/* A program that carries a descriptor with brisk's tag but a layout no
 * brisk top reads (brisk_top_test.py): as a brisk of another version
 * would, to a brisk top that reads only its own. Runs until killed. */
#include <stdint.h>
#include <unistd.h>

struct descriptor {
  char magic[16];
  uint32_t layout;
  uint32_t size;
  char version[16];
  uint64_t ready;
};

__attribute__((visibility("default"), used)) struct descriptor brisk_introspection = {
    .magic = "brisk-introspect",
    .layout = 99,
    .size = sizeof(struct descriptor),
    .version = "9.9.9",
    .ready = 1};

int main(void) {
  for (;;)
    pause();
}
