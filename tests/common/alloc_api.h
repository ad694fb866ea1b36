/* SPDX-License-Identifier: MIT */
/* Which allocation API a test program exercises.
 *
 * Default: the brisk_* API (works in every build, sanitizers included).
 * With BRISK_TEST_LIBC defined: the standard names (malloc, free, ...), for
 * the override builds where libbrisk serves them; the brisk_* extras
 * (brisk_owns, brisk_collect, brisk_memory_info_get, brisk_version) are then
 * looked up at run time with dlsym(RTLD_DEFAULT, ...) so that the same program
 * works linked against libbrisk or preloaded with LD_PRELOAD.
 */
#ifndef BRISK_TEST_ALLOC_API_H
#define BRISK_TEST_ALLOC_API_H

#include <stddef.h>
#include "brisk.h"
#include "check.h"

#ifdef BRISK_TEST_LIBC
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#ifndef __GLIBC__
/* glibc's pvalloc, which musl lacks: brisk, linked or preloaded, gives it
 * (weak, so that the program to be preloaded links without it). */
extern void *pvalloc(size_t size) __attribute__((weak));
#endif

#define API_NAME "libc"
#define A_MALLOC malloc
#define A_CALLOC calloc
#define A_REALLOC realloc
#define A_REALLOCARRAY reallocarray
#define A_FREE free
#define A_FREE_SIZED(p, n) free(p)
#define A_ALIGNED_ALLOC aligned_alloc
#define A_POSIX_MEMALIGN posix_memalign
#define A_MEMALIGN memalign
#define A_VALLOC valloc
#define A_PVALLOC pvalloc
#define A_USABLE_SIZE(p) malloc_usable_size((void *)(p))

static const char *(*x_version)(void);
static int (*x_owns)(const void *);
static void (*x_collect)(void);
static int (*x_info_get)(brisk_memory_info *);
static int (*x_heap_check)(void);
static int (*x_stats_get)(brisk_stats *);
static int (*x_heap_profile_dump)(const char *);

/* Resolves the brisk extras; a missing one is a failure (brisk is not
 * loaded), and the program stops. */
static inline void api_init(void) {
  *(void **)&x_version = dlsym(RTLD_DEFAULT, "brisk_version");
  *(void **)&x_owns = dlsym(RTLD_DEFAULT, "brisk_owns");
  *(void **)&x_collect = dlsym(RTLD_DEFAULT, "brisk_collect");
  *(void **)&x_info_get = dlsym(RTLD_DEFAULT, "brisk_memory_info_get");
  *(void **)&x_heap_check = dlsym(RTLD_DEFAULT, "brisk_heap_check");
  *(void **)&x_stats_get = dlsym(RTLD_DEFAULT, "brisk_stats_get");
  *(void **)&x_heap_profile_dump = dlsym(RTLD_DEFAULT, "brisk_heap_profile_dump");
  if (!x_version || !x_owns || !x_collect || !x_info_get || !x_heap_check || !x_stats_get ||
      !x_heap_profile_dump)
    fprintf(stderr, "brisk symbols not found: libbrisk is not loaded into this process\n");
  REQUIRE(x_version && x_owns && x_collect && x_info_get && x_heap_check && x_stats_get &&
          x_heap_profile_dump);
#ifdef BRISK_TEST_LINKED
  /* linked against libbrisk: its symbols are the ones found */
  REQUIRE(x_version == brisk_version && x_owns == brisk_owns);
#endif
}
#define A_VERSION() x_version()
#define A_OWNS(p) x_owns(p)
#define A_COLLECT() x_collect()
#define A_INFO_GET(i) x_info_get(i)
#define A_HEAP_CHECK() x_heap_check()
#define A_STATS_GET(s) x_stats_get(s)
#define A_HEAP_PROFILE_DUMP(path) x_heap_profile_dump(path)

#else /* brisk_* API */

#define API_NAME "brisk"
#define A_MALLOC brisk_malloc
#define A_CALLOC brisk_calloc
#define A_REALLOC brisk_realloc
#define A_REALLOCARRAY brisk_reallocarray
#define A_FREE brisk_free
#define A_FREE_SIZED brisk_free_sized
#define A_ALIGNED_ALLOC brisk_aligned_alloc
#define A_POSIX_MEMALIGN brisk_posix_memalign
#define A_MEMALIGN brisk_memalign
#define A_VALLOC brisk_valloc
#define A_PVALLOC brisk_pvalloc
#define A_USABLE_SIZE brisk_usable_size
static inline void api_init(void) {}
#define A_VERSION() brisk_version()
#define A_OWNS(p) brisk_owns(p)
#define A_COLLECT() brisk_collect()
#define A_INFO_GET(i) brisk_memory_info_get(i)
#define A_HEAP_CHECK() brisk_heap_check()
#define A_STATS_GET(s) brisk_stats_get(s)
#define A_HEAP_PROFILE_DUMP(path) brisk_heap_profile_dump(path)
#endif

static inline brisk_memory_info api_info(void) {
  brisk_memory_info i;
  memset(&i, 0, sizeof i);
  i.struct_size = sizeof i;
  CHECK(A_INFO_GET(&i) == 0);
  return i;
}

static inline brisk_stats api_stats(void) {
  brisk_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  CHECK(A_STATS_GET(&s) == 0);
  return s;
}

#endif /* BRISK_TEST_ALLOC_API_H */
