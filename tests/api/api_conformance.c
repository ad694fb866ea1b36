/* SPDX-License-Identifier: MIT */
/* API conformance: every allocation function, its POSIX/glibc semantics and
 * errno cases, dirty-memory calloc, realloc content, brisk_owns, brisk_collect
 * and brisk_memory_info.
 *
 * Built twice: against the brisk_* API (brisk_api_conformance, also in the
 * sanitizer builds) and, with BRISK_TEST_LIBC, against malloc & co
 * (override_api_conformance_{linked,preload}), where it also asserts that
 * brisk really serves malloc.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "alloc_api.h"
#include "pattern.h"

#define KiB ((size_t)1024)
#define MiB (KiB * 1024)
/* size_t's width, so that the overflowing sizes below overflow on 32-bit
 * machines too (the values are the same as before on 64-bit ones) */
#define SIZE_BITS (8 * sizeof(size_t))

/* Through volatiles so the compiler neither folds nor warns about them. */
static volatile size_t v_size_max = SIZE_MAX;
static volatile size_t v_ptrdiff_max = PTRDIFF_MAX;
static size_t page;
static int a_global;

static const size_t sizes[] = {0,        1,
                               2,        3,
                               4,        5,
                               7,        8,
                               9,        12,
                               15,       16,
                               17,       24,
                               31,       32,
                               33,       40,
                               48,       63,
                               64,       65,
                               80,       96,
                               100,      112,
                               127,      128,
                               129,      192,
                               255,      256,
                               257,      384,
                               500,      512,
                               513,      768,
                               1000,     1024,
                               1025,     1500,
                               2048,     3000,
                               4000,     4095,
                               4096,     4097,
                               5000,     8191,
                               8192,     8193,
                               10000,    16383,
                               16384,    16385,
                               30000,    32768,
                               50000,    65535,
                               65536,    65537,
                               100000,   131072,
                               200000,   262144,
                               262145,   500000,
                               1u << 20, (1u << 20) + 1,
                               3u << 20, (4u << 20) - 1,
                               4u << 20, 5u << 20,
                               8u << 20, (16u << 20) + 5,
                               33u << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Checks a fresh block of n bytes: non-NULL, aligned, usable >= n, owned by
 * brisk, and writable over its whole usable size. Returns p. */
static void *check_block(void *p, size_t n, size_t align, const char *what) {
  if (!CHECK_MSG(p != NULL, "%s(%zu) returned NULL", what, n)) return p;
  CHECK_MSG(is_aligned(p, align), "%s(%zu) = %p not aligned to %zu", what, n, p, align);
  size_t u = A_USABLE_SIZE(p);
  CHECK_MSG(u >= n, "%s(%zu): usable size %zu", what, n, u);
  CHECK_MSG(A_OWNS(p), "%s(%zu) = %p not owned by brisk", what, n, p);
  memset(p, 0x5A, u); /* the whole usable size is writable */
  return p;
}

static void test_version(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", BRISK_VERSION_MAJOR, BRISK_VERSION_MINOR,
           BRISK_VERSION_PATCH);
  const char *v = A_VERSION();
  REQUIRE(v != NULL);
  CHECK_MSG(strcmp(v, want) == 0, "brisk_version() = \"%s\", header says %s", v, want);
}

#ifdef BRISK_TEST_LIBC
/* brisk really is the process's malloc, for every entry point. */
static void test_served_by_brisk(void) {
  void *a = malloc(24), *b = calloc(3, 8), *c = realloc(NULL, 40), *d = NULL, *e, *f, *g, *h, *i;
  CHECK(posix_memalign(&d, 64, 100) == 0);
  e = aligned_alloc(128, 256);
  f = memalign(256, 10);
  g = valloc(10);
  h = pvalloc(10);
  i = reallocarray(NULL, 5, 9);
  void *all[] = {a, b, c, d, e, f, g, h, i};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    CHECK_MSG(all[k] != NULL && A_OWNS(all[k]), "allocation #%zu not served by brisk", k);
    free(all[k]);
  }
  /* the big one too */
  void *big = malloc(40 * MiB);
  CHECK(big != NULL && A_OWNS(big));
  free(big);
}
#endif

static void test_malloc_sizes(void) {
  void *p[NSIZES];
  for (size_t k = 0; k < NSIZES; k++) {
    p[k] = check_block(A_MALLOC(sizes[k]), sizes[k], required_alignment(sizes[k]), "malloc");
    if (p[k]) pattern_fill(p[k], sizes[k], (uint32_t)k);
  }
  /* all live at once: no block overlaps another */
  for (size_t k = 0; k < NSIZES; k++)
    if (p[k])
      CHECK_MSG(pattern_ok(p[k], sizes[k], (uint32_t)k), "malloc(%zu) content clobbered", sizes[k]);
  for (size_t k = 0; k < NSIZES; k++)
    A_FREE(p[k]);

  /* many small blocks of each small size, all distinct and aligned */
  enum { N = 1000 };
  static void *q[N];
  for (size_t n = 1; n <= 1100; n += (n < 64 ? 1 : 37)) {
    for (int k = 0; k < N; k++) {
      q[k] = A_MALLOC(n);
      if (!CHECK(q[k] != NULL)) break;
      if (!is_aligned(q[k], required_alignment(n)))
        CHECK_MSG(0, "malloc(%zu) = %p misaligned", n, q[k]);
      pattern_fill(q[k], n, (uint32_t)(k * 7 + n));
    }
    for (int k = 0; k < N; k++) {
      if (q[k] && !pattern_ok(q[k], n, (uint32_t)(k * 7 + n)))
        CHECK_MSG(0, "malloc(%zu) #%d content clobbered (overlapping blocks?)", n, k);
      A_FREE(q[k]);
      q[k] = NULL;
    }
  }
}

static void test_malloc_zero(void) {
  void *a = launder(A_MALLOC(0)), *b = launder(A_MALLOC(0));
  CHECK(a != NULL);
  CHECK(b != NULL);
  CHECK(a != b);
  CHECK(a == NULL || A_OWNS(a));
  CHECK(A_USABLE_SIZE(a) < 4096);
  A_FREE(a);
  A_FREE(b);
  /* many zero-size blocks are all distinct */
  enum { N = 256 };
  void *z[N];
  for (int k = 0; k < N; k++)
    z[k] = launder(A_MALLOC(0));
  int distinct = 1;
  for (int k = 0; k < N; k++)
    for (int j = k + 1; j < N; j++)
      if (z[k] == z[j] || !z[k]) distinct = 0;
  CHECK_MSG(distinct, "malloc(0) results not unique non-NULL pointers");
  for (int k = 0; k < N; k++)
    A_FREE(z[k]);
}

static void test_free(void) {
  errno = 1234;
  A_FREE(NULL);
  CHECK(errno == 1234);
  /* POSIX.1-2024 and glibc >= 2.33: free() does not change errno. */
  const size_t fs[] = {1, 100, 5000, 300000, 20 * MiB};
  for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
    void *p = A_MALLOC(fs[k]);
    REQUIRE(p != NULL);
    memset(p, 1, fs[k]);
    errno = 4321;
    A_FREE(p);
    CHECK_MSG(errno == 4321, "free of a %zu-byte block changed errno to %d", fs[k], errno);
  }
#ifndef BRISK_TEST_LIBC
  for (size_t k = 0; k < NSIZES; k++) {
    void *p = brisk_malloc(sizes[k]);
    CHECK(p != NULL);
    brisk_free_sized(p, sizes[k]);
  }
  void *p = brisk_calloc(10, 10);
  CHECK(p != NULL);
  brisk_free_sized(p, 100);
  p = brisk_aligned_alloc(4096, 5000);
  CHECK(p != NULL);
  brisk_free_sized(p, 5000);
  brisk_free_sized(NULL, 0);
#endif
}

/* malloc/realloc of sizes no system can satisfy: NULL with ENOMEM. */
static void test_impossible_sizes(void) {
  const size_t bad[] = {v_size_max,        v_size_max - 1, v_size_max - 4096,   v_size_max / 2,
                        v_ptrdiff_max + 1, v_ptrdiff_max,  v_ptrdiff_max - 4096};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    errno = 0;
    void *p = A_MALLOC(bad[k]);
    CHECK_MSG(p == NULL && errno == ENOMEM, "malloc(%zu) = %p, errno %d", bad[k], p, errno);
    if (p) A_FREE(p);
  }
}

static void test_calloc(void) {
  /* basic */
  for (size_t k = 0; k < NSIZES; k++) {
    size_t n = sizes[k];
    unsigned char *p = A_CALLOC(1, n);
    if (!CHECK_MSG(p != NULL, "calloc(1, %zu)", n)) continue;
    CHECK_MSG(is_aligned(p, required_alignment(n)), "calloc(1, %zu) misaligned", n);
    CHECK_MSG(all_zero(p, n), "calloc(1, %zu) not zeroed", n);
    CHECK(A_USABLE_SIZE(p) >= n);
    A_FREE(p);
    if (n >= 8) {
      p = A_CALLOC(n / 8, 8);
      CHECK_MSG(p && all_zero(p, n / 8 * 8), "calloc(%zu, 8) not zeroed", n / 8);
      A_FREE(p);
    }
  }
  void *z1 = A_CALLOC(0, 10), *z2 = A_CALLOC(10, 0), *z3 = A_CALLOC(0, 0);
  CHECK(z1 != NULL && z2 != NULL && z3 != NULL);
  A_FREE(z1);
  A_FREE(z2);
  A_FREE(z3);

  /* overflow and impossible totals */
  struct {
    size_t a, b;
  } bad[] = {{v_size_max, v_size_max},
             {v_size_max / 2 + 1, 2},
             {2, v_size_max / 2 + 1},
             {v_size_max, 2},
             {(size_t)1 << (SIZE_BITS / 2), (size_t)1 << (SIZE_BITS / 2)},
             {1, v_size_max},
             {v_size_max, 1},
             {v_ptrdiff_max / 2 + 1, 2},
             {1, v_ptrdiff_max + 1},
             {v_size_max / 3 + 1, 3}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    errno = 0;
    void *p = A_CALLOC(bad[k].a, bad[k].b);
    CHECK_MSG(p == NULL && errno == ENOMEM, "calloc(%zu, %zu) = %p errno %d", bad[k].a, bad[k].b, p,
              errno);
    if (p) A_FREE(p);
  }

  /* dirty memory: fill blocks with garbage, free them, calloc the same sizes:
   * recycled memory must come back zeroed */
  enum { BATCH = 64 };
  void *blk[BATCH];
  for (size_t k = 0; k < NSIZES; k++) {
    size_t n = sizes[k];
    int batch = n >= MiB ? 4 : n >= 64 * KiB ? 16 : BATCH;
    for (int round = 0; round < 3; round++) {
      for (int j = 0; j < batch; j++) {
        blk[j] = A_MALLOC(n);
        REQUIRE(blk[j] != NULL);
        memset(blk[j], 0xA5, A_USABLE_SIZE(blk[j]));
      }
      for (int j = 0; j < batch; j++)
        A_FREE(blk[j]);
      int bad_blocks = 0;
      for (int j = 0; j < batch; j++) {
        blk[j] = round == 1 && n >= 4 ? A_CALLOC(n / 4, 4) : A_CALLOC(n, 1);
        size_t m = round == 1 && n >= 4 ? n / 4 * 4 : n;
        REQUIRE(blk[j] != NULL);
        if (!all_zero(blk[j], m)) bad_blocks++;
      }
      CHECK_MSG(bad_blocks == 0, "calloc of recycled %zu-byte blocks: %d of %d not zeroed", n,
                bad_blocks, batch);
      for (int j = 0; j < batch; j++)
        A_FREE(blk[j]);
    }
  }
  /* dirty tail of a shrunk block, then calloc of the freed-up size */
  for (int r = 0; r < 50; r++) {
    unsigned char *p = A_MALLOC(8192);
    REQUIRE(p != NULL);
    memset(p, 0xC3, 8192);
    p = A_REALLOC(p, 16);
    REQUIRE(p != NULL);
    unsigned char *q = A_CALLOC(1, 4000);
    REQUIRE(q != NULL);
    CHECK(all_zero(q, 4000));
    A_FREE(q);
    A_FREE(p);
  }
  /* large calloc with a dirty cached span in front of it */
  for (int r = 0; r < 4; r++) {
    unsigned char *p = A_MALLOC(24 * MiB);
    REQUIRE(p != NULL);
    memset(p, 0xEE, 24 * MiB);
    A_FREE(p);
    p = A_CALLOC(24 * MiB - 1000 * (size_t)r, 1);
    REQUIRE(p != NULL);
    CHECK_MSG(all_zero(p, 24 * MiB - 1000 * (size_t)r), "large calloc after dirty free");
    A_FREE(p);
  }
}

static void test_realloc(void) {
  /* realloc(NULL, n) == malloc(n) */
  for (size_t k = 0; k < NSIZES; k++) {
    void *p = check_block(A_REALLOC(NULL, sizes[k]), sizes[k], required_alignment(sizes[k]),
                          "realloc(NULL, n)");
    A_FREE(p);
  }
  void *p0 = A_REALLOC(NULL, 0);
  CHECK(p0 != NULL);
  A_FREE(p0);

  /* realloc(p, 0) frees p and returns NULL (glibc); it must really free it:
   * 2000 x 1 MiB would otherwise stay mapped */
  brisk_memory_info before = api_info();
  for (int r = 0; r < 2000; r++) {
    void *p = A_MALLOC(MiB);
    REQUIRE(p != NULL);
    memset(p, r, 4096);
    void *q = A_REALLOC(p, 0);
    CHECK_MSG(q == NULL, "realloc(p, 0) returned %p, glibc returns NULL", q);
    if (q) A_FREE(q);
  }
  brisk_memory_info after = api_info();
  CHECK_MSG(after.mapped < before.mapped + 256 * MiB,
            "realloc(p, 0) does not free: mapped %zu -> %zu", before.mapped, after.mapped);

  /* growth chain, content kept, alignment kept */
  uint32_t seed = 77;
  size_t n = 1;
  unsigned char *p = A_MALLOC(n);
  REQUIRE(p != NULL);
  pattern_fill(p, n, seed);
  while (n < 128 * MiB) {
    size_t m = n + n / 2 + 3;
    unsigned char *q = A_REALLOC(p, m);
    REQUIRE(q != NULL);
    CHECK_MSG(is_aligned(q, required_alignment(m)), "realloc to %zu misaligned", m);
    size_t bad = pattern_find_bad(q, n, seed);
    CHECK_MSG(bad == n, "realloc %zu -> %zu lost content at offset %zu", n, m, bad);
    CHECK(A_USABLE_SIZE(q) >= m);
    pattern_fill(q, m, ++seed);
    p = q;
    n = m;
  }
  /* shrink chain */
  while (n > 1) {
    size_t m = n / 3;
    unsigned char *q = A_REALLOC(p, m ? m : 1);
    m = m ? m : 1;
    REQUIRE(q != NULL);
    size_t bad = pattern_find_bad(q, m, seed);
    CHECK_MSG(bad == m, "realloc shrink %zu -> %zu lost content at offset %zu", n, m, bad);
    CHECK(A_USABLE_SIZE(q) >= m);
    pattern_fill(q, A_USABLE_SIZE(q), ++seed); /* all of it is usable (a huge block's
                                                  given-back tail is not) */
    p = q;
    n = m;
  }
  A_FREE(p);

  /* same-size and usable-size reallocs */
  for (size_t k = 1; k < NSIZES; k++) {
    size_t s = sizes[k];
    unsigned char *a = A_MALLOC(s);
    REQUIRE(a != NULL);
    pattern_fill(a, s, (uint32_t)k);
    a = A_REALLOC(a, s);
    REQUIRE(a != NULL);
    CHECK(pattern_ok(a, s, (uint32_t)k));
    size_t u = A_USABLE_SIZE(a);
    a = A_REALLOC(a, u);
    REQUIRE(a != NULL);
    CHECK(pattern_ok(a, s, (uint32_t)k));
    A_FREE(a);
  }

  /* failed realloc leaves the old block intact */
  const size_t bad[] = {v_size_max, v_size_max - 64, v_ptrdiff_max + 1, v_ptrdiff_max};
  const size_t olds[] = {10, 1000, 100000, 6 * MiB};
  for (size_t o = 0; o < sizeof olds / sizeof olds[0]; o++) {
    unsigned char *a = A_MALLOC(olds[o]);
    REQUIRE(a != NULL);
    pattern_fill(a, olds[o], 99);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      errno = 0;
      void *q = A_REALLOC(a, bad[k]);
      CHECK_MSG(q == NULL && errno == ENOMEM, "realloc(%zu-byte block, %zu) = %p errno %d", olds[o],
                bad[k], q, errno);
      if (q) {
        a = q;
        break;
      }
      CHECK_MSG(pattern_ok(a, olds[o], 99), "failed realloc damaged the old block");
    }
    /* still a valid, resizable block */
    a = A_REALLOC(a, olds[o] * 2);
    REQUIRE(a != NULL);
    CHECK(pattern_ok(a, olds[o], 99));
    A_FREE(a);
  }
}

static void test_reallocarray(void) {
  unsigned char *p = A_REALLOCARRAY(NULL, 10, 10);
  REQUIRE(p != NULL);
  CHECK(A_USABLE_SIZE(p) >= 100);
  CHECK(A_OWNS(p));
  pattern_fill(p, 100, 5);
  p = A_REALLOCARRAY(p, 1000, 40);
  REQUIRE(p != NULL);
  CHECK(A_USABLE_SIZE(p) >= 40000);
  CHECK(pattern_ok(p, 100, 5));
  pattern_fill(p, 40000, 6);

  struct {
    size_t a, b;
  } bad[] = {{v_size_max, v_size_max},
             {v_size_max / 2 + 1, 2},
             {(size_t)1 << (SIZE_BITS / 2 + 1), (size_t)1 << (SIZE_BITS / 2 - 1)},
             {v_size_max, 1},
             {v_ptrdiff_max / 2 + 1, 2},
             {3, v_size_max / 3 + 1}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    errno = 0;
    void *q = A_REALLOCARRAY(p, bad[k].a, bad[k].b);
    CHECK_MSG(q == NULL && errno == ENOMEM, "reallocarray(p, %zu, %zu) = %p errno %d", bad[k].a,
              bad[k].b, q, errno);
    if (q) {
      p = q;
      break;
    }
    CHECK_MSG(pattern_ok(p, 40000, 6), "failed reallocarray damaged the old block");
  }
  p = A_REALLOCARRAY(p, 4, 5);
  REQUIRE(p != NULL);
  CHECK(pattern_ok(p, 20, 6));
  A_FREE(p);
  /* overflow on a NULL block */
  errno = 0;
  void *q = A_REALLOCARRAY(NULL, v_size_max / 4 + 1, 8);
  CHECK(q == NULL && errno == ENOMEM);
}

static void test_posix_memalign(void) {
  for (size_t al = sizeof(void *); al <= 8 * MiB; al *= 2) {
    const size_t ns[] = {1, 8, 16, 100, al - 1, al, al + 1, 3 * al, 100000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      void *p = NULL;
      int rc = A_POSIX_MEMALIGN(&p, al, ns[k]);
      CHECK_MSG(rc == 0, "posix_memalign(%zu, %zu) = %d", al, ns[k], rc);
      if (rc == 0) {
        check_block(p, ns[k], al, "posix_memalign");
        A_FREE(p);
      }
    }
  }
  void *z = NULL;
  CHECK(A_POSIX_MEMALIGN(&z, 64, 0) == 0);
  A_FREE(z);

  /* bad alignments (0, not a power of two, or below sizeof(void *)): EINVAL,
   * *result untouched */
  /* sizeof(void *) / 2: a power of two too small (posix_memalign wants
   * multiples of sizeof(void *)); the last, 2^40 + 8 on a 64-bit machine */
  const size_t bad_al[] = {0,
                           1,
                           2,
                           sizeof(void *) / 2,
                           3,
                           12,
                           24,
                           48,
                           96,
                           1000,
                           4097,
                           v_size_max,
                           v_size_max / 2,
                           (size_t)1 << (SIZE_BITS - 24) | 8};
  for (size_t k = 0; k < sizeof bad_al / sizeof bad_al[0]; k++) {
    void *sentinel = &a_global, *p = sentinel;
    errno = 0;
    int rc = A_POSIX_MEMALIGN(&p, bad_al[k], 64);
    CHECK_MSG(rc == EINVAL, "posix_memalign(align %zu) = %d, want EINVAL", bad_al[k], rc);
    CHECK_MSG(p == sentinel, "posix_memalign(align %zu) touched *result", bad_al[k]);
    CHECK_MSG(errno == 0, "posix_memalign set errno (%d); it returns the error instead", errno);
  }
  /* impossible sizes: ENOMEM, *result unchanged or NULL */
  const size_t bad_n[] = {v_size_max, v_size_max - 100, v_ptrdiff_max + 1};
  for (size_t k = 0; k < sizeof bad_n / sizeof bad_n[0]; k++) {
    void *sentinel = &a_global, *p = sentinel;
    int rc = A_POSIX_MEMALIGN(&p, 64, bad_n[k]);
    CHECK_MSG(rc == ENOMEM, "posix_memalign(64, %zu) = %d, want ENOMEM", bad_n[k], rc);
    CHECK(p == sentinel || p == NULL);
    rc = A_POSIX_MEMALIGN(&p, 1 * MiB, bad_n[k]);
    CHECK_MSG(rc == ENOMEM, "posix_memalign(1 MiB, %zu) = %d, want ENOMEM", bad_n[k], rc);
  }
}

/* aligned_alloc and memalign share their contract here. */
static void test_aligned(int use_memalign) {
  const char *name = use_memalign ? "memalign" : "aligned_alloc";
  for (size_t al = 1; al <= 8 * MiB; al *= 2) {
    const size_t ns[] = {1, 7, 16, 100, al, al + 1, 2 * al, 3 * al + 5, 70000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      void *p = use_memalign ? A_MEMALIGN(al, ns[k]) : A_ALIGNED_ALLOC(al, ns[k]);
      size_t want = al > required_alignment(ns[k]) ? al : required_alignment(ns[k]);
      if (CHECK_MSG(p != NULL, "%s(%zu, %zu) = NULL", name, al, ns[k])) {
        check_block(p, ns[k], want, name);
        A_FREE(p);
      }
    }
  }
  /* many live aligned blocks at once: distinct, content kept */
  enum { N = 200 };
  void *blk[N];
  for (int k = 0; k < N; k++) {
    size_t al = (size_t)16 << (k % 10), n = 24 + (size_t)k * 13;
    blk[k] = use_memalign ? A_MEMALIGN(al, n) : A_ALIGNED_ALLOC(al, n);
    REQUIRE(blk[k] != NULL);
    CHECK(is_aligned(blk[k], al));
    pattern_fill(blk[k], n, (uint32_t)k);
  }
  for (int k = 0; k < N; k++) {
    CHECK(pattern_ok(blk[k], 24 + (size_t)k * 13, (uint32_t)k));
    A_FREE(blk[k]);
  }

  /* glibc 2.36's rules, which programs written against it rely on: up to 16
   * any alignment (0 too) is malloc's; above, a non-power of two rounds up
   * to the next power of two; past 2^63 nothing fits (EINVAL). */
  const size_t round_al[][2] = {{0, 16},      {1, 16},           {3, 16},    {12, 16},
                                {24, 32},     {48, 64},          {100, 128}, {1000, 1024},
                                {4097, 8192}, {3 * MiB, 4 * MiB}};
  for (size_t k = 0; k < sizeof round_al / sizeof round_al[0]; k++) {
    errno = 0;
    void *p = use_memalign ? A_MEMALIGN(round_al[k][0], 64) : A_ALIGNED_ALLOC(round_al[k][0], 64);
    CHECK_MSG(p != NULL && is_aligned(p, round_al[k][1]) && errno == 0,
              "%s(%zu, 64) = %p errno %d, want a block aligned to %zu", name, round_al[k][0], p,
              errno, round_al[k][1]);
    if (p) A_FREE(p);
  }
  const size_t invalid_al[] = {v_size_max, v_size_max - 1, ((size_t)1 << (SIZE_BITS - 1)) + 1};
  for (size_t k = 0; k < sizeof invalid_al / sizeof invalid_al[0]; k++) {
    errno = 0;
    void *p = use_memalign ? A_MEMALIGN(invalid_al[k], 64) : A_ALIGNED_ALLOC(invalid_al[k], 64);
    CHECK_MSG(p == NULL && errno == EINVAL, "%s(%zu, 64) = %p errno %d, want NULL/EINVAL", name,
              invalid_al[k], p, errno);
    if (p) A_FREE(p);
  }
  /* impossible sizes: NULL, ENOMEM */
  const size_t bad_n[] = {v_size_max, v_size_max - 4096, v_ptrdiff_max + 1, v_ptrdiff_max};
  const size_t als[] = {16, 64, 4096, 2 * MiB};
  for (size_t k = 0; k < sizeof bad_n / sizeof bad_n[0]; k++)
    for (size_t j = 0; j < sizeof als / sizeof als[0]; j++) {
      errno = 0;
      void *p = use_memalign ? A_MEMALIGN(als[j], bad_n[k]) : A_ALIGNED_ALLOC(als[j], bad_n[k]);
      CHECK_MSG(p == NULL && errno == ENOMEM, "%s(%zu, %zu) = %p errno %d, want NULL/ENOMEM", name,
                als[j], bad_n[k], p, errno);
      if (p) A_FREE(p);
    }
  /* a power-of-two alignment no address space can honour */
  errno = 0;
  void *p =
      use_memalign ? A_MEMALIGN(v_size_max / 2 + 1, 1) : A_ALIGNED_ALLOC(v_size_max / 2 + 1, 1);
  CHECK_MSG(p == NULL && (errno == ENOMEM || errno == EINVAL), "%s(2^63, 1) = %p errno %d", name, p,
            errno);
}

static void test_valloc_pvalloc(void) {
  const size_t ns[] = {1, 100, page - 1, page, page + 1, 3 * page + 7, 100000, 3 * MiB + 5};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    void *p = check_block(A_VALLOC(ns[k]), ns[k], page, "valloc");
    A_FREE(p);
    size_t rounded = (ns[k] + page - 1) / page * page;
    p = A_PVALLOC(ns[k]);
    if (CHECK_MSG(p != NULL, "pvalloc(%zu)", ns[k])) {
      CHECK_MSG(is_aligned(p, page), "pvalloc(%zu) = %p not page-aligned", ns[k], p);
      CHECK_MSG(A_USABLE_SIZE(p) >= rounded, "pvalloc(%zu): usable %zu < %zu", ns[k],
                A_USABLE_SIZE(p), rounded);
      memset(p, 0x11, rounded); /* the whole rounded-up size is usable */
      A_FREE(p);
    }
  }
  void *z = A_VALLOC(0);
  CHECK(z != NULL && is_aligned(z, page));
  A_FREE(z);
  z = A_PVALLOC(0);
  CHECK(z != NULL && is_aligned(z, page));
  A_FREE(z);
  const size_t bad_n[] = {v_size_max, v_size_max - page + 2, v_ptrdiff_max + 1};
  for (size_t k = 0; k < sizeof bad_n / sizeof bad_n[0]; k++) {
    errno = 0;
    void *p = A_VALLOC(bad_n[k]);
    CHECK_MSG(p == NULL && errno == ENOMEM, "valloc(%zu) = %p errno %d", bad_n[k], p, errno);
    errno = 0;
    void *q = A_PVALLOC(bad_n[k]);
    CHECK_MSG(q == NULL && errno == ENOMEM, "pvalloc(%zu) = %p errno %d", bad_n[k], q, errno);
  }
}

static void test_usable_size(void) {
  CHECK(A_USABLE_SIZE(NULL) == 0);
  /* after shrinking and growing */
  unsigned char *p = A_MALLOC(100000);
  REQUIRE(p != NULL);
  p = A_REALLOC(p, 50);
  REQUIRE(p != NULL);
  CHECK(A_USABLE_SIZE(p) >= 50);
  memset(p, 3, A_USABLE_SIZE(p));
  p = A_REALLOC(p, 3 * MiB);
  REQUIRE(p != NULL);
  CHECK(A_USABLE_SIZE(p) >= 3 * MiB);
  A_FREE(p);
  /* writing the whole usable size of neighbours does not clobber each other */
  enum { N = 300 };
  void *b[N];
  size_t len[N];
  for (int k = 0; k < N; k++) {
    b[k] = A_MALLOC((size_t)(k % 60) * 9 + 1);
    REQUIRE(b[k] != NULL);
    len[k] = A_USABLE_SIZE(b[k]);
    pattern_fill(b[k], len[k], (uint32_t)k + 1000);
  }
  for (int k = 0; k < N; k++) {
    CHECK_MSG(pattern_ok(b[k], len[k], (uint32_t)k + 1000), "usable bytes of block %d clobbered",
              k);
    A_FREE(b[k]);
  }
}

static void test_owns(void) {
  int local = 0;
  CHECK(!A_OWNS(NULL));
  CHECK(!A_OWNS(&local));
  CHECK(!A_OWNS(&a_global));
  CHECK(!A_OWNS((const void *)test_owns));
#ifdef _WIN32
  void *m = VirtualAlloc(NULL, 1 << 20, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  REQUIRE(m != NULL);
#else
  void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
#endif
  CHECK(!A_OWNS(m));
  CHECK(!A_OWNS((char *)m + 4096));
#ifdef _WIN32
  VirtualFree(m, 0, MEM_RELEASE);
#else
  munmap(m, 1 << 20);
#endif
  for (size_t k = 0; k < NSIZES; k++) {
    void *p = A_MALLOC(sizes[k]);
    CHECK_MSG(A_OWNS(p), "brisk_owns(malloc(%zu)) false", sizes[k]);
    A_FREE(p);
  }
}

static void test_memory_info(void) {
  CHECK(A_INFO_GET(NULL) == -1);
  brisk_memory_info i = api_info();
  CHECK(i.struct_size == sizeof i);
  CHECK(i.mapped > 0);
  CHECK(i.mapped_peak >= i.mapped);
  CHECK(i.committed <= i.mapped);
  CHECK(i.committed_peak >= i.committed);
  CHECK(i.committed_peak <= i.mapped_peak);

  /* a short struct_size: only that many bytes are written */
  union {
    brisk_memory_info info;
    unsigned char raw[sizeof(brisk_memory_info) + 32];
  } u;
  memset(&u, 0xEE, sizeof u);
  u.info.struct_size = offsetof(brisk_memory_info, mapped_peak);
  CHECK(A_INFO_GET(&u.info) == 0);
  CHECK(u.info.struct_size == offsetof(brisk_memory_info, mapped_peak));
  CHECK(u.info.mapped > 0 && u.info.mapped != (size_t)0xEEEEEEEEEEEEEEEEull);
  int untouched = 1;
  for (size_t k = offsetof(brisk_memory_info, mapped_peak); k < sizeof u.raw; k++)
    if (u.raw[k] != 0xEE) untouched = 0;
  CHECK_MSG(untouched, "brisk_memory_info_get wrote past struct_size");
  /* a longer one (newer caller): fields it knows are filled, the rest untouched */
  memset(&u, 0xEE, sizeof u);
  u.info.struct_size = sizeof u.raw;
  CHECK(A_INFO_GET(&u.info) == 0);
  CHECK(u.info.large_in_use != (size_t)0xEEEEEEEEEEEEEEEEull);
  untouched = 1;
  for (size_t k = sizeof(brisk_memory_info); k < sizeof u.raw; k++)
    if (u.raw[k] != 0xEE) untouched = 0;
  CHECK_MSG(untouched, "brisk_memory_info_get wrote past its own struct");

  /* a large block is accounted while it lives */
  const size_t big = 64 * MiB;
  brisk_memory_info a = api_info();
  unsigned char *p = A_MALLOC(big);
  REQUIRE(p != NULL);
  memset(p, 1, big);
  brisk_memory_info b = api_info();
  CHECK_MSG(b.large_in_use >= a.large_in_use + big, "large_in_use %zu -> %zu after malloc(64 MiB)",
            a.large_in_use, b.large_in_use);
  CHECK_MSG(b.mapped >= b.large_in_use && b.mapped >= big, "mapped %zu -> %zu", a.mapped, b.mapped);
  CHECK(b.committed >= big);
  CHECK(b.mapped_peak >= b.mapped);
  CHECK(b.committed_peak >= b.committed);
  A_FREE(p);
  brisk_memory_info c = api_info();
  CHECK_MSG(c.large_in_use + big <= b.large_in_use, "large_in_use %zu -> %zu after free",
            b.large_in_use, c.large_in_use);
  CHECK(c.mapped_peak >= b.mapped);
}

static void test_collect(void) {
  /* many small and medium blocks, touched, then freed: collect gives the
   * pages back, so committed drops by at least half of what was freed */
  const size_t bsz[] = {256, 32 * KiB};
  for (size_t s = 0; s < 2; s++) {
    const size_t total = 64 * MiB, n = total / bsz[s];
    void **v = A_MALLOC(n * sizeof(void *));
    REQUIRE(v != NULL);
    for (size_t k = 0; k < n; k++) {
      v[k] = A_MALLOC(bsz[s]);
      REQUIRE(v[k] != NULL);
      memset(v[k], (int)k, bsz[s]);
    }
    brisk_memory_info full = api_info();
    for (size_t k = 0; k < n; k++)
      A_FREE(v[k]);
    A_FREE(v);
    A_COLLECT();
    brisk_memory_info empty = api_info();
    CHECK_MSG(empty.committed + total / 2 <= full.committed,
              "%zu-byte blocks: committed %zu -> %zu after freeing %zu and brisk_collect", bsz[s],
              full.committed, empty.committed, total);
  }
  /* a large block */
  brisk_memory_info a = api_info();
  void *p = A_MALLOC(48 * MiB);
  REQUIRE(p != NULL);
  memset(p, 7, 48 * MiB);
  brisk_memory_info b = api_info();
  A_FREE(p);
  A_COLLECT();
  brisk_memory_info c = api_info();
  CHECK(b.committed >= 48 * MiB);
  CHECK_MSG(c.committed <= a.committed + 8 * MiB,
            "large: committed %zu (before) %zu (live) %zu (freed+collected)", a.committed,
            b.committed, c.committed);
  /* collect while blocks are live: their content and the free lists survive */
  enum { LIVE = 4000 };
  static unsigned char *live[LIVE];
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < LIVE; k++) {
      size_t n = (size_t)(k % 97) * 41 + 1;
      live[k] = A_MALLOC(n);
      REQUIRE(live[k] != NULL);
      pattern_fill(live[k], n, (uint32_t)k);
    }
    for (int k = 0; k < LIVE; k += 2) {
      A_FREE(live[k]);
      live[k] = NULL;
    }
    A_COLLECT();
    struct timespec ts = {0, 30 * 1000000L}; /* past any purge delay */
    nanosleep(&ts, NULL);
    A_COLLECT();
    int bad = 0;
    for (int k = 1; k < LIVE; k += 2)
      if (!pattern_ok(live[k], (size_t)(k % 97) * 41 + 1, (uint32_t)k)) bad++;
    CHECK_MSG(bad == 0, "%d live blocks damaged by brisk_collect/purge", bad);
    for (int k = 0; k < LIVE; k += 2) { /* reuse the purged memory */
      size_t n = (size_t)(k % 97) * 41 + 1;
      live[k] = A_MALLOC(n);
      REQUIRE(live[k] != NULL);
      pattern_fill(live[k], n, (uint32_t)k);
    }
    bad = 0;
    for (int k = 0; k < LIVE; k++) {
      if (!pattern_ok(live[k], (size_t)(k % 97) * 41 + 1, (uint32_t)k)) bad++;
      A_FREE(live[k]);
    }
    CHECK_MSG(bad == 0, "%d blocks damaged after reuse of purged memory", bad);
  }
  /* memory still works after collect */
  for (size_t k = 0; k < NSIZES; k++) {
    void *q = A_MALLOC(sizes[k]);
    CHECK(q != NULL);
    memset(q, 1, sizes[k]);
    A_FREE(q);
  }
}

/* Without BRISK_HEAP_PROFILE there is no heap profile to write: a clear
 * error, not a file. (With it, tests/diag/run_diag_tests.py checks the files.) */
static void test_heap_profile_dump_off(void) {
  if (getenv("BRISK_HEAP_PROFILE") != NULL) return;
  errno = 0;
  CHECK(A_HEAP_PROFILE_DUMP("api-conformance-heap.pb.gz") == -1);
  CHECK_MSG(errno == EINVAL, "errno %d, expected EINVAL", errno);
  CHECK(access("api-conformance-heap.pb.gz", F_OK) != 0);
}

int main(void) {
  page = test_page_size();
  api_init();
  printf("API conformance through the %s API\n", API_NAME);
  test_version();
#ifdef BRISK_TEST_LIBC
  test_served_by_brisk();
#endif
  test_malloc_sizes();
  test_malloc_zero();
  test_free();
  test_impossible_sizes();
  test_calloc();
  test_realloc();
  test_reallocarray();
  test_posix_memalign();
  test_aligned(0);
  test_aligned(1);
  test_valloc_pvalloc();
  test_usable_size();
  test_owns();
  test_memory_info();
  test_collect();
  test_heap_profile_dump_off();
  return test_finish();
}
