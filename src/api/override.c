/* SPDX-License-Identifier: MIT */
/* The C allocation functions of the process, served by brisk when this
 * library is preloaded or linked first. malloc and free inline the fast
 * paths; the rest forward to their brisk_* namesakes. */
#include "fast_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The symbols this file exports (libc's headers lack some of them). */
EXPORT void *malloc(size_t size);
EXPORT void free(void *p);
EXPORT void cfree(void *p);
EXPORT void free_sized(void *p, size_t size);
EXPORT void free_aligned_sized(void *p, size_t alignment, size_t size);
EXPORT void *calloc(size_t count, size_t size);
EXPORT void *realloc(void *p, size_t size);
EXPORT void *reallocarray(void *p, size_t count, size_t size);
EXPORT int posix_memalign(void **result, size_t alignment, size_t size);
EXPORT void *aligned_alloc(size_t alignment, size_t size);
EXPORT void *memalign(size_t alignment, size_t size);
EXPORT void *valloc(size_t size);
EXPORT void *pvalloc(size_t size);
EXPORT size_t malloc_usable_size(void *p);
EXPORT int malloc_trim(size_t pad);
#ifdef __GLIBC__
/* glibc's layouts, from its malloc.h, which is not included: the attributes
 * it gives malloc & co would change how this file's definitions compile. */
struct mallinfo {
  int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
struct mallinfo2 {
  size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
EXPORT struct mallinfo mallinfo(void);
EXPORT struct mallinfo2 mallinfo2(void);
EXPORT void malloc_stats(void);
EXPORT int malloc_info(int options, FILE *fp);
#endif

EXPORT void *malloc(size_t size) {
  return fast_malloc(size);
}
READS_POINTER_HEADER EXPORT void free(void *p) {
  fast_free(p);
}
READS_POINTER_HEADER EXPORT void cfree(void *p) {
  fast_free(p);
}
EXPORT void free_sized(void *p, size_t size) {
  brisk_free_sized(p, size);
}
EXPORT void free_aligned_sized(void *p, size_t alignment, size_t size) {
  (void)alignment;
  brisk_free_sized(p, size);
}
EXPORT void *calloc(size_t count, size_t size) {
  return brisk_calloc(count, size);
}
EXPORT void *realloc(void *p, size_t size) {
  return brisk_realloc(p, size);
}
EXPORT void *reallocarray(void *p, size_t count, size_t size) {
  return brisk_reallocarray(p, count, size);
}
EXPORT int posix_memalign(void **result, size_t alignment, size_t size) {
  return brisk_posix_memalign(result, alignment, size);
}
EXPORT void *aligned_alloc(size_t alignment, size_t size) {
  return brisk_aligned_alloc(alignment, size);
}
EXPORT void *memalign(size_t alignment, size_t size) {
  return brisk_memalign(alignment, size);
}
EXPORT void *valloc(size_t size) {
  return brisk_valloc(size);
}
EXPORT void *pvalloc(size_t size) {
  return brisk_pvalloc(size);
}
EXPORT size_t malloc_usable_size(void *p) {
  return brisk_usable_size(p);
}

/* glibc's own names for the same functions, public in every glibc since
 * 2.2.5: a malloc hook or tracing library that calls "the real malloc" as
 * __libc_malloc, or a program that frees with __libc_free, would otherwise
 * mix glibc's blocks with brisk's, and either allocator aborts on the
 * other's pointer. Aliases: the same code, fast paths included. */
#ifdef __GLIBC__
#define GLIBC_NAME(name, target) __typeof__(target) name __attribute__((alias(#target), used))
EXPORT GLIBC_NAME(__libc_malloc, malloc);
EXPORT GLIBC_NAME(__libc_free, free);
EXPORT GLIBC_NAME(__libc_calloc, calloc);
EXPORT GLIBC_NAME(__libc_realloc, realloc);
EXPORT GLIBC_NAME(__libc_memalign, memalign);
EXPORT GLIBC_NAME(__libc_valloc, valloc);
EXPORT GLIBC_NAME(__libc_pvalloc, pvalloc);
#endif

/* glibc extras some programs call: trimming means collecting here. */
EXPORT int malloc_trim(size_t pad) {
  (void)pad;
  brisk_collect();
  return 1;
}

/* ---- glibc's statistics, with brisk's figures ---------------------------------
 * A program, or a monitoring library inside it, that watches its heap with
 * mallinfo2 would otherwise read glibc's arena, which brisk leaves unused:
 * nothing in use, ever. The figures are diag/stats.c's (stats_usage_get,
 * which says how exact they are), in glibc's terms: `arena` is what brisk
 * holds committed for blocks up to 512 KiB (pages, arenas, cached
 * segments), `uordblks` the blocks in use in it, thread caches included
 * as glibc counts tcache, `fordblks` the rest, and `hblks` and `hblkhd` the
 * huge blocks, each mapped for itself as glibc's mmapped chunks are (their
 * bytes, as glibc's, are the mappings': header and rounding included). */
#ifdef __GLIBC__
static struct mallinfo2 mallinfo_of(const stats_usage *usage) {
  struct mallinfo2 info;
  memset(&info, 0, sizeof info);
  info.arena = usage->arena;
  info.hblks = usage->huge.blocks;
  info.hblkhd = usage->huge.bytes;
  info.uordblks = usage->in_use;
  info.fordblks = usage->free;
  /* Left 0: ordblks, smblks and fsmblks count glibc's free chunks and
   * fastbins, which brisk has nothing like; usmblks is 0 in glibc too; and
   * keepcost, the top of glibc's heap that malloc_trim can give back, has
   * no counterpart: brisk's trim purges free pages wherever they lie. */
  return info;
}

/* mallinfo's int fields: a figure past INT_MAX reads INT_MAX, not wrapped
 * (glibc truncates, and a monitor then sees a 5 GiB heap as 1 GiB). */
static int saturated(size_t value) {
  return value > INT_MAX ? INT_MAX : (int)value;
}

EXPORT struct mallinfo mallinfo(void) {
  stats_usage usage;
  stats_usage_get(&usage);
  struct mallinfo2 wide = mallinfo_of(&usage);
  struct mallinfo info;
  info.arena = saturated(wide.arena);
  info.ordblks = saturated(wide.ordblks);
  info.smblks = saturated(wide.smblks);
  info.hblks = saturated(wide.hblks);
  info.hblkhd = saturated(wide.hblkhd);
  info.usmblks = saturated(wide.usmblks);
  info.fsmblks = saturated(wide.fsmblks);
  info.uordblks = saturated(wide.uordblks);
  info.fordblks = saturated(wide.fordblks);
  info.keepcost = saturated(wide.keepcost);
  return info;
}

EXPORT struct mallinfo2 mallinfo2(void) {
  stats_usage usage;
  stats_usage_get(&usage);
  return mallinfo_of(&usage);
}

/* Lines are formatted by brisk (core/message.c) and written through the
 * stream, as glibc writes them, so they keep their place among the
 * program's own output to it. */
static MSG_FORMAT(2, 3) void stream_printf(FILE *stream, const char *format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  msg_vformat(line, sizeof line, format, args);
  va_end(args);
  fputs(line, stream);
}

/* glibc's lines, one arena (all of brisk's memory for blocks up to
 * 512 KiB), then the totals with the huge blocks. */
EXPORT void malloc_stats(void) {
  stats_usage usage;
  stats_usage_get(&usage);
  stream_printf(stderr, "Arena 0:\n");
  stream_printf(stderr, "system bytes     = %10zu\n", usage.arena);
  stream_printf(stderr, "in use bytes     = %10zu\n", usage.in_use);
  stream_printf(stderr, "Total (incl. mmap):\n");
  stream_printf(stderr, "system bytes     = %10zu\n", usage.arena + usage.huge.bytes);
  stream_printf(stderr, "in use bytes     = %10zu\n", usage.in_use + usage.huge.bytes);
  stream_printf(stderr, "max mmap regions = %10zu\n", usage.huge.blocks_peak);
  stream_printf(stderr, "max mmap bytes   = %10zu\n", usage.huge.bytes_peak);
}

typedef struct info_walk {
  FILE *stream;
  unsigned heaps;
  size_t in_use;
} info_walk;

static void info_heap(heap_t *heap, void *arg) {
  info_walk *walk = arg;
  size_t pages, arena;
  stats_heap_usage(heap, &pages, &arena);
  bool live = atomic_load_relaxed(&heap->xstate) == HEAP_IN_USE;
  stream_printf(walk->stream, "<heap nr=\"%u\" thread=\"%s\">\n", walk->heaps++,
                live ? "live" : "exited");
  stream_printf(walk->stream, "<total type=\"pages\" size=\"%zu\"/>\n", pages);
  stream_printf(walk->stream, "<total type=\"arena\" size=\"%zu\"/>\n", arena);
  stream_printf(walk->stream, "</heap>\n");
  walk->in_use += pages + arena;
}

/* glibc's document, with a heap per thread (those of exited threads wait
 * for new ones) holding what its pages and its arena have in use, then
 * glibc's totals: "mmap" the huge blocks, "system" what brisk holds
 * committed and "aspace" what it has mapped. The in-use total is the sum of
 * the heaps listed, the free one what that leaves of the arena. */
EXPORT int malloc_info(int options, FILE *fp) {
  /* The manual's contract: -1 and EINVAL for options it does not know
   * (glibc itself returns EINVAL; a caller that tests for non-zero, as both
   * allow, sees the same). */
  if (options != 0) {
    errno = EINVAL;
    return -1;
  }
  stream_printf(fp, "<malloc version=\"brisk-%s\">\n", BRISK_VERSION_STRING);
  info_walk walk = {.stream = fp};
  heaps_visit_unlocked(info_heap, &walk);
  stats_usage usage;
  stats_usage_get(&usage);
  size_t free_bytes = usage.arena > walk.in_use ? usage.arena - walk.in_use : 0;
  stream_printf(fp, "<total type=\"in-use\" size=\"%zu\"/>\n", walk.in_use);
  stream_printf(fp, "<total type=\"free\" size=\"%zu\"/>\n", free_bytes);
  stream_printf(fp, "<total type=\"mmap\" count=\"%zu\" size=\"%zu\"/>\n", usage.huge.blocks,
                usage.huge.bytes);
  stream_printf(fp, "<system type=\"current\" size=\"%zu\"/>\n", usage.committed);
  stream_printf(fp, "<system type=\"max\" size=\"%zu\"/>\n", usage.committed_peak);
  stream_printf(fp, "<aspace type=\"total\" size=\"%zu\"/>\n", usage.mapped);
  stream_printf(fp, "</malloc>\n");
  return 0;
}
#endif
