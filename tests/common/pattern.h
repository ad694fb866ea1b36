/* SPDX-License-Identifier: MIT */
/* Content patterns for verifying blocks: each byte depends on a per-block seed
 * and its offset, so overlapping blocks and lost content are detected. */
#ifndef BRISK_TEST_PATTERN_H
#define BRISK_TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned char pattern_byte(uint32_t seed, size_t i) {
  return (unsigned char)((seed * 0x9E3779B1u) >> 24) ^ (unsigned char)(i * 131u + (i >> 9));
}

static inline void pattern_fill(void *p, size_t n, uint32_t seed) {
  unsigned char *b = (unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    b[i] = pattern_byte(seed, i);
}

/* Returns the offset of the first wrong byte, or n if all are right. */
static inline size_t pattern_find_bad(const void *p, size_t n, uint32_t seed) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != pattern_byte(seed, i)) return i;
  return n;
}

static inline int pattern_ok(const void *p, size_t n, uint32_t seed) {
  return pattern_find_bad(p, n, seed) == n;
}

/* Whether all n bytes are zero. */
static inline int all_zero(const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

/* The alignment C requires of malloc(n): alignof(max_align_t) (16) for n >= 16,
 * otherwise the largest power of two not above n (an object of n bytes). */
static inline size_t required_alignment(size_t n) {
  size_t a = 16;
  while (a > 1 && a > n)
    a >>= 1;
  return a;
}

static inline int is_aligned(const void *p, size_t a) {
  return ((uintptr_t)p & (a - 1)) == 0;
}

#endif /* BRISK_TEST_PATTERN_H */
