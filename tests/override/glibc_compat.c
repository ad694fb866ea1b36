/* SPDX-License-Identifier: MIT */
/* What glibc 2.36 accepts, and the errno it leaves, for every allocation
 * function, checked against the allocator in use.
 *
 * The real-world complaint: programs written against glibc call
 * memalign(48, n), memalign(0, n) or aligned_alloc(24, n) and get memory;
 * on an allocator that calls those alignments invalid they fail with EINVAL
 * and the program stops. glibc 2.36 rounds an alignment that is not a power
 * of two up to the next one, treats alignments up to 16 as malloc, and
 * aligned_alloc behaves exactly as memalign. posix_memalign keeps POSIX's
 * rule (a power of two, a multiple of sizeof(void *)): EINVAL otherwise.
 *
 * The table below is glibc 2.36's behaviour as measured on Debian 12. The
 * program checks it against the allocator it runs on: with "--allocator=glibc"
 * (no brisk in the process) it checks the table against glibc itself, so a
 * wrong row fails there first; otherwise against brisk (the brisk_* API, or
 * malloc & co with BRISK_TEST_LIBC, linked or preloaded).
 *
 * One glibc behaviour is reported, not checked: after a failing
 * posix_memalign glibc also leaves errno == ENOMEM (a side effect of its
 * failed size check or mmap). POSIX says posix_memalign returns the error
 * and leaves errno alone; which to follow is brisk's documented choice.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_api.h"

#define KiB ((size_t)1024)
#define MiB (KiB * KiB)
#define HALF (SIZE_MAX / 2 + 1)
/* A size no allocator can give: PTRDIFF_MAX, which glibc accepts and fails to
 * map on a 64-bit machine; one more on a 32-bit one, where 2 GiB of its 4 may
 * well be free, so glibc refuses it by its size check alone. */
#define TOO_BIG (SIZE_MAX > 0xFFFFFFFFu ? (size_t)PTRDIFF_MAX : (size_t)PTRDIFF_MAX + 1)
#define ERRNO_SENTINEL EDOM /* set before each call: "unchanged" means still this */

typedef enum function {
  F_MALLOC,
  F_CALLOC,
  F_REALLOC_NULL,  /* realloc(NULL, size) */
  F_REALLOC_BLOCK, /* realloc(a live 100-byte block, size) */
  F_REALLOCARRAY,  /* reallocarray(a live block, alignment, size): alignment is the count */
  F_MEMALIGN,
  F_ALIGNED_ALLOC,
  F_POSIX_MEMALIGN,
  F_VALLOC,
  F_PVALLOC,
} function;

static const char *const function_names[] = {
    "malloc",   "calloc",        "realloc(NULL, n)", "realloc(p, n)", "reallocarray(p, a, n)",
    "memalign", "aligned_alloc", "posix_memalign",   "valloc",        "pvalloc",
};

/* What a call must do. For posix_memalign, err is its return value and errno
 * must stay unchanged when it is EINVAL; for the others, err is errno after
 * a NULL result (0: the call must succeed, the block aligned to align). */
typedef struct row {
  function f;
  size_t alignment; /* calloc: the count; reallocarray: the count */
  size_t size;
  int err;
  size_t align; /* success: the alignment the block must have */
} row;

#define OK(f, a, n, want_align)                                                                    \
  { f, a, n, 0, want_align }
#define FAILS(f, a, n, e)                                                                          \
  { f, a, n, e, 0 }

static const row table[] = {
    /* memalign and aligned_alloc: alignments up to 16 are malloc's */
    OK(F_MEMALIGN, 0, 100, 16),
    OK(F_MEMALIGN, 0, 0, 16),
    OK(F_MEMALIGN, 1, 100, 16),
    OK(F_MEMALIGN, 2, 1, 16),
    OK(F_MEMALIGN, 3, 100, 16),
    OK(F_MEMALIGN, 4, 100, 16),
    OK(F_MEMALIGN, 7, 100, 16),
    OK(F_MEMALIGN, 8, 100, 16),
    OK(F_MEMALIGN, 12, 100, 16),
    OK(F_MEMALIGN, 16, 100, 16),
    OK(F_ALIGNED_ALLOC, 0, 100, 16),
    OK(F_ALIGNED_ALLOC, 0, 0, 16),
    OK(F_ALIGNED_ALLOC, 1, 100, 16),
    OK(F_ALIGNED_ALLOC, 3, 100, 16),
    OK(F_ALIGNED_ALLOC, 8, 1, 16),
    OK(F_ALIGNED_ALLOC, 12, 100, 16),
    /* ... above, a non-power of two rounds up to the next power of two */
    OK(F_MEMALIGN, 24, 100, 32),
    OK(F_MEMALIGN, 48, 100, 64),
    OK(F_MEMALIGN, 48, 0, 64),
    OK(F_MEMALIGN, 96, 1, 128),
    OK(F_MEMALIGN, 100, 100, 128),
    OK(F_MEMALIGN, 4095, 100, 4096),
    OK(F_MEMALIGN, 4097, 100, 8192),
    OK(F_MEMALIGN, 65537, 100, 131072),
    OK(F_MEMALIGN, MiB + 1, 100, 2 * MiB),
    OK(F_MEMALIGN, 48, 3 * MiB, 64),
    OK(F_ALIGNED_ALLOC, 24, 100, 32),
    OK(F_ALIGNED_ALLOC, 48, 100, 64),
    OK(F_ALIGNED_ALLOC, 96, 1, 128),
    OK(F_ALIGNED_ALLOC, 100, 0, 128),
    OK(F_ALIGNED_ALLOC, 4097, 100, 8192),
    OK(F_ALIGNED_ALLOC, MiB + 1, 100, 2 * MiB),
    OK(F_ALIGNED_ALLOC, 48, 3 * MiB, 64),
    OK(F_MEMALIGN, 32, 100, 32),
    OK(F_MEMALIGN, 4096, 1, 4096),
    OK(F_MEMALIGN, MiB, 100, MiB),
    OK(F_ALIGNED_ALLOC, 64, 100, 64),
    OK(F_ALIGNED_ALLOC, 4096, 0, 4096),
    /* ... an alignment of 2^63 or a huge size: ENOMEM; above 2^63: EINVAL */
    FAILS(F_MEMALIGN, HALF - 1, 1, ENOMEM),
    FAILS(F_MEMALIGN, HALF, 1, ENOMEM),
    FAILS(F_MEMALIGN, HALF + 1, 1, EINVAL),
    FAILS(F_MEMALIGN, SIZE_MAX, 1, EINVAL),
    FAILS(F_MEMALIGN, 64, TOO_BIG, ENOMEM),
    FAILS(F_MEMALIGN, 48, SIZE_MAX, ENOMEM),
    FAILS(F_ALIGNED_ALLOC, HALF - 1, 0, ENOMEM),
    FAILS(F_ALIGNED_ALLOC, HALF, 100, ENOMEM),
    FAILS(F_ALIGNED_ALLOC, HALF + 1, 1, EINVAL),
    FAILS(F_ALIGNED_ALLOC, SIZE_MAX, 1, EINVAL),
    FAILS(F_ALIGNED_ALLOC, 64, SIZE_MAX, ENOMEM),
    FAILS(F_ALIGNED_ALLOC, 48, TOO_BIG, ENOMEM),
    /* posix_memalign: a power of two and a multiple of sizeof(void *), else EINVAL */
    OK(F_POSIX_MEMALIGN, 8, 100, 16),
    OK(F_POSIX_MEMALIGN, 16, 0, 16),
    OK(F_POSIX_MEMALIGN, 64, 100, 64),
    OK(F_POSIX_MEMALIGN, 4096, 1, 4096),
    OK(F_POSIX_MEMALIGN, MiB, 100, MiB),
    FAILS(F_POSIX_MEMALIGN, 0, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 1, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 2, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, sizeof(void *) / 2, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 12, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 24, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 48, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 100, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, 4097, 100, EINVAL),
    FAILS(F_POSIX_MEMALIGN, HALF - 1, 1, EINVAL),
    FAILS(F_POSIX_MEMALIGN, HALF + 1, 1, EINVAL),
    FAILS(F_POSIX_MEMALIGN, SIZE_MAX, 1, EINVAL),
    FAILS(F_POSIX_MEMALIGN, HALF, 1, ENOMEM),
    FAILS(F_POSIX_MEMALIGN, 64, TOO_BIG, ENOMEM),
    FAILS(F_POSIX_MEMALIGN, 64, SIZE_MAX, ENOMEM),
    /* sizes no allocator can serve: NULL, ENOMEM */
    FAILS(F_MALLOC, 0, TOO_BIG, ENOMEM),
    FAILS(F_MALLOC, 0, HALF, ENOMEM),
    FAILS(F_MALLOC, 0, SIZE_MAX - 4096, ENOMEM),
    FAILS(F_MALLOC, 0, SIZE_MAX, ENOMEM),
    FAILS(F_CALLOC, 1, TOO_BIG, ENOMEM),
    FAILS(F_CALLOC, 1, SIZE_MAX, ENOMEM),
    FAILS(F_CALLOC, SIZE_MAX, 2, ENOMEM),
    FAILS(F_CALLOC, (size_t)1 << (4 * sizeof(size_t)), (size_t)1 << (4 * sizeof(size_t)), ENOMEM),
    FAILS(F_REALLOC_NULL, 0, TOO_BIG, ENOMEM),
    FAILS(F_REALLOC_NULL, 0, SIZE_MAX, ENOMEM),
    FAILS(F_REALLOC_BLOCK, 0, TOO_BIG, ENOMEM),
    FAILS(F_REALLOC_BLOCK, 0, SIZE_MAX, ENOMEM),
    FAILS(F_REALLOCARRAY, SIZE_MAX, 2, ENOMEM),
    FAILS(F_REALLOCARRAY, 1, SIZE_MAX, ENOMEM),
    FAILS(F_VALLOC, 0, TOO_BIG, ENOMEM),
    FAILS(F_VALLOC, 0, SIZE_MAX, ENOMEM),
    FAILS(F_PVALLOC, 0, TOO_BIG, ENOMEM),
    FAILS(F_PVALLOC, 0, SIZE_MAX - 4096, ENOMEM),
    FAILS(F_PVALLOC, 0, SIZE_MAX, ENOMEM),
    /* size 0 */
    OK(F_MALLOC, 0, 0, 16),
    OK(F_CALLOC, 0, 0, 16),
    OK(F_CALLOC, 5, 0, 16),
    OK(F_REALLOC_NULL, 0, 0, 16),
    OK(F_VALLOC, 0, 0, 4096),
    OK(F_PVALLOC, 0, 0, 4096),
};
#define ROW_COUNT (sizeof table / sizeof table[0])

static volatile size_t opaque_zero; /* keeps the compiler from judging the sizes itself */

/* Makes the call of row r; returns the block (NULL on failure) and sets
 * *result to posix_memalign's return value or to errno after the call. */
static void *call(const row *r, int *result, int *errno_after) {
  size_t a = r->alignment + opaque_zero, n = r->size + opaque_zero;
  void *p = NULL;
  int ret = 0;
  void *block = NULL;
  if (r->f == F_REALLOC_BLOCK || r->f == F_REALLOCARRAY) {
    block = A_MALLOC(100);
    REQUIRE(block != NULL);
    memset(block, 0x5C, 100);
  }
  errno = ERRNO_SENTINEL;
  switch (r->f) {
  case F_MALLOC:
    p = A_MALLOC(n);
    break;
  case F_CALLOC:
    p = A_CALLOC(a, n);
    break;
  case F_REALLOC_NULL:
    p = A_REALLOC(NULL, n);
    break;
  case F_REALLOC_BLOCK:
    p = A_REALLOC(block, n);
    break;
  case F_REALLOCARRAY:
    p = A_REALLOCARRAY(block, a, n);
    break;
  case F_MEMALIGN:
    p = A_MEMALIGN(a, n);
    break;
  case F_ALIGNED_ALLOC:
    p = A_ALIGNED_ALLOC(a, n);
    break;
  case F_POSIX_MEMALIGN:
    p = (void *)&opaque_zero; /* must stay untouched on failure */
    ret = A_POSIX_MEMALIGN(&p, a, n);
    break;
  case F_VALLOC:
    p = A_VALLOC(n);
    break;
  case F_PVALLOC:
    p = A_PVALLOC(n);
    break;
  }
  *errno_after = errno;
  if (r->f == F_POSIX_MEMALIGN) {
    *result = ret;
    if (ret != 0) {
      CHECK_MSG(p == (void *)&opaque_zero, "posix_memalign(%zu, %zu) failed but wrote *result", a,
                n);
      p = NULL;
    }
  } else {
    *result = p == NULL ? errno : 0;
  }
  if (block != NULL) {
    if (p == NULL) {
      /* a failed realloc leaves the block as it was */
      unsigned char *b = block;
      CHECK_MSG(b[0] == 0x5C && b[99] == 0x5C, "%s failed and damaged the block",
                function_names[r->f]);
      A_FREE(block);
    }
  }
  return p;
}

static const char *errno_name(int e) {
  return e == 0                ? "0"
         : e == ENOMEM         ? "ENOMEM"
         : e == EINVAL         ? "EINVAL"
         : e == ERRNO_SENTINEL ? "unchanged"
                               : strerror(e);
}

static unsigned errno_notes;

static void note_posix_memalign_errno(const row *r, int errno_after) {
  printf("note: posix_memalign(%zu, %zu) returned ENOMEM and left errno %s; glibc 2.36 leaves "
         "ENOMEM (not checked: POSIX leaves errno alone here)\n",
         r->alignment, r->size, errno_name(errno_after));
  errno_notes++;
}

static void check_row(const row *r) {
  int result = 0, errno_after = 0;
  void *p = call(r, &result, &errno_after);
  const char *name = function_names[r->f];
  if (r->err == 0) {
    if (CHECK_MSG(p != NULL, "%s(%zu, %zu) failed (%s); glibc 2.36 returns a block aligned to %zu",
                  name, r->alignment, r->size, errno_name(result), r->align)) {
      CHECK_MSG(((uintptr_t)p & (r->align - 1)) == 0,
                "%s(%zu, %zu) = %p: not aligned to %zu as glibc 2.36's is", name, r->alignment,
                r->size, p, r->align);
      A_FREE(p);
    }
    return;
  }
  if (!CHECK_MSG(p == NULL, "%s(%zu, %zu) = %p; glibc 2.36 fails with %s", name, r->alignment,
                 r->size, p, errno_name(r->err))) {
    A_FREE(p);
    return;
  }
  if (r->f == F_POSIX_MEMALIGN) {
    CHECK_MSG(result == r->err, "posix_memalign(%zu, %zu) returned %s; glibc 2.36 returns %s",
              r->alignment, r->size, errno_name(result), errno_name(r->err));
    if (r->err == EINVAL)
      CHECK_MSG(errno_after == ERRNO_SENTINEL,
                "posix_memalign(%zu, %zu) set errno to %s; glibc 2.36 leaves it unchanged",
                r->alignment, r->size, errno_name(errno_after));
    else if (errno_after != ENOMEM)
      note_posix_memalign_errno(r, errno_after);
    return;
  }
  CHECK_MSG(result == r->err, "%s(%zu, %zu) failed with errno %s; glibc 2.36 sets %s", name,
            r->alignment, r->size, errno_name(result), errno_name(r->err));
}

/* Under an address-space limit every function fails with ENOMEM, as glibc
 * does when its mmap fails. Run in a child: the limit stays there. */
static void check_address_space_limit(void) {
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    struct rlimit limit;
    getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = (rlim_t)(test_status_bytes("VmSize:") + 256 * MiB);
    REQUIRE(setrlimit(RLIMIT_AS, &limit) == 0);
    static const row limited[] = {
        FAILS(F_MALLOC, 0, 1024 * MiB, ENOMEM),
        FAILS(F_CALLOC, 1, 1024 * MiB, ENOMEM),
        FAILS(F_REALLOC_NULL, 0, 1024 * MiB, ENOMEM),
        FAILS(F_REALLOC_BLOCK, 0, 1024 * MiB, ENOMEM),
        FAILS(F_MEMALIGN, 4096, 1024 * MiB, ENOMEM),
        FAILS(F_ALIGNED_ALLOC, 48, 1024 * MiB, ENOMEM),
        FAILS(F_VALLOC, 0, 1024 * MiB, ENOMEM),
        FAILS(F_PVALLOC, 0, 1024 * MiB, ENOMEM),
        FAILS(F_POSIX_MEMALIGN, 64, 1024 * MiB, ENOMEM),
    };
    for (size_t i = 0; i < sizeof limited / sizeof limited[0]; i++)
      check_row(&limited[i]);
    fflush(stdout);
    _exit(test_failures() == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "under an address-space limit: failures above (wait status %#x)", (unsigned)status);
}

int main(int argc, char **argv) {
  int on_glibc = argc > 1 && strcmp(argv[1], "--allocator=glibc") == 0;
#ifdef BRISK_TEST_LIBC
  if (on_glibc)
    REQUIRE(dlsym(RTLD_DEFAULT, "brisk_version") == NULL); /* really glibc's malloc */
  else
    api_init();
#else
  REQUIRE(!on_glibc); /* the brisk_* API is always brisk */
#endif
  printf("glibc 2.36's alignment and errno behaviour, %zu calls through the %s API on %s\n",
         ROW_COUNT, API_NAME, on_glibc ? "glibc's malloc" : "brisk");
  for (size_t i = 0; i < ROW_COUNT; i++)
    check_row(&table[i]);
  check_address_space_limit();
  if (errno_notes) printf("%u notes on errno after posix_memalign (see above)\n", errno_notes);
  return test_finish();
}
