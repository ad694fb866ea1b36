/* SPDX-License-Identifier: MIT */
/* Size classes: multiples of 16 up to 128, then eight classes per doubling
 * (steps of 1/8 of the power of two below), so above 128 bytes a block
 * wastes at most 12.5% of its size. Every class from 16 up is a multiple of
 * 16, which gives 16-byte alignment to every block of 16 bytes or more. */
#include "core.h"

/* Eight classes past from, step bytes apart. */
#define EIGHT_STEPS(from, step)                                                                    \
  (from) + (step), (from) + 2 * (step), (from) + 3 * (step), (from) + 4 * (step),                  \
      (from) + 5 * (step), (from) + 6 * (step), (from) + 7 * (step), (from) + 8 * (step)
#define DOUBLING(p) EIGHT_STEPS(p, (p) / 8)

const uint32_t class_size[CLASS_COUNT] = {
    EIGHT_STEPS(0u, 16u), DOUBLING(128u),  DOUBLING(256u),  DOUBLING(512u),   DOUBLING(1024u),
    DOUBLING(2048u),      DOUBLING(4096u), DOUBLING(8192u), DOUBLING(16384u), DOUBLING(32768u)};

_Static_assert(CLASS_COUNT == 8 + 9 * 8, "class table covers 16 B .. 64 KiB");

segment_kind size_class_kind(unsigned size_class) {
  return class_size[size_class] <= SMALL_MAX ? SEGMENT_SMALL : SEGMENT_MEDIUM;
}

void size_class_direct_slots(unsigned size_class, unsigned *first, unsigned *last) {
  /* slot i serves sizes (8 * (i - 1), 8 * i]; slot 0 serves malloc(0). */
  uint32_t low = size_class == 0 ? 0 : class_size[size_class - 1] + 1;
  uint32_t high = class_size[size_class];
  *first = (low + 7) / 8;
  *last = high / 8;
  if (*last >= DIRECT_SLOTS) *last = DIRECT_SLOTS - 1;
}
