/* SPDX-License-Identifier: MIT */
/* brisk: a thread-scalable general-purpose memory allocator.
 *
 * Every function here has the contract of its C / POSIX / glibc namesake
 * (brisk_malloc ~ malloc, ...). They work whether or not brisk also replaces
 * the process's malloc (LD_PRELOAD=libbrisk.so, or libbrisk linked first).
 * Memory from brisk_* may be passed to free() only when brisk is the
 * process's malloc; otherwise free it with brisk_free().
 */
#ifndef BRISK_H
#define BRISK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The release: the one place the version is written (CMakeLists.txt reads it). */
#define BRISK_VERSION_MAJOR 0
#define BRISK_VERSION_MINOR 2
#define BRISK_VERSION_PATCH 0

/* Windows: brisk.dll exports the API; a program that links the static
 * library instead defines BRISK_STATIC before including this header. */
#if defined(_WIN32)
#if defined(BRISK_BUILDING_DLL)
#define BRISK_API __declspec(dllexport)
#elif defined(BRISK_STATIC)
#define BRISK_API
#else
#define BRISK_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define BRISK_API __attribute__((visibility("default")))
#else
#define BRISK_API
#endif
#if defined(__GNUC__)
#define BRISK_MALLOC_ATTR __attribute__((malloc, warn_unused_result))
#else
#define BRISK_MALLOC_ATTR
#endif
/* The calling convention of Free Pascal's memory manager entries
 * (brisk_binding_getmem and the rest): C's, but on 32-bit x86, where Free
 * Pascal's and Delphi's default ("register": the first three arguments in
 * EAX, EDX and ECX) is GCC's regparm(3). */
#if defined(__i386__) && defined(__GNUC__)
#define BRISK_BINDING_CALL __attribute__((regparm(3)))
#else
#define BRISK_BINDING_CALL
#endif

/* "major.minor.patch" of the library actually loaded. */
BRISK_API const char *brisk_version(void);

BRISK_API BRISK_MALLOC_ATTR void *brisk_malloc(size_t size);
BRISK_API BRISK_MALLOC_ATTR void *brisk_calloc(size_t count, size_t size);
BRISK_API void *brisk_realloc(void *block, size_t size);
BRISK_API void *brisk_reallocarray(void *block, size_t count, size_t size);
BRISK_API void brisk_free(void *block);
/* free with the size the block was requested with (C23 free_sized); the size
 * is a hint that brisk may check in checked mode. */
BRISK_API void brisk_free_sized(void *block, size_t size);

BRISK_API BRISK_MALLOC_ATTR void *brisk_aligned_alloc(size_t alignment, size_t size);
BRISK_API int brisk_posix_memalign(void **result, size_t alignment, size_t size);
BRISK_API BRISK_MALLOC_ATTR void *brisk_memalign(size_t alignment, size_t size);
BRISK_API BRISK_MALLOC_ATTR void *brisk_valloc(size_t size);
BRISK_API BRISK_MALLOC_ATTR void *brisk_pvalloc(size_t size);

/* Bytes usable in the block (>= the size asked for); 0 for NULL. */
BRISK_API size_t brisk_usable_size(const void *block);

/* Non-zero when block lies in memory brisk manages (any thread's). */
BRISK_API int brisk_owns(const void *block);

/* Return unused memory to the OS now: this thread's free pages, the empty
 * pages of exited threads, cached segments and large spans. */
BRISK_API void brisk_collect(void);

/* Walks the calling thread's heap and checks its invariants: every free block
 * lies inside its page on a block boundary and appears once, each page's
 * counts add up (used + free blocks = carved blocks, once no remote free is
 * pending), and the heap's counts of bytes in use (which mallinfo2 reports)
 * match its pages and the chunks of its arena. Returns the number of
 * problems found, each described on stderr; 0 means consistent. For tests
 * and debugging: it walks every free list and every arena chunk. */
BRISK_API int brisk_heap_check(void);

/* Writes the heap profile now, when the program runs with BRISK_HEAP_PROFILE
 * set: to path, in pprof's format (gzipped profile.proto), with folded stacks
 * for flame graphs beside it (path less a ".pb.gz" ending, plus
 * ".inuse.folded" and ".alloc.folded"); with path NULL, to the setting's file
 * numbered .1, .2, ... Returns 0, or -1 with errno set: EINVAL when the heap
 * profile is off, else why the file could not be written. */
BRISK_API int brisk_heap_profile_dump(const char *path);

/* Process-wide memory figures, all in bytes. Cheap: read from counters the
 * OS layer keeps, never by walking the heap. */
typedef struct brisk_memory_info {
  size_t struct_size; /* set by the caller to sizeof(brisk_memory_info) */
  size_t mapped;      /* address space currently mapped from the OS */
  size_t mapped_peak; /* high-water mark of mapped */
  size_t committed;   /* mapped minus purged: an upper bound on resident */
  size_t committed_peak;
  size_t large_in_use; /* bytes in live blocks served directly by the OS */
} brisk_memory_info;

/* Fills *info (up to info->struct_size bytes); returns 0, or -1 on NULL. */
BRISK_API int brisk_memory_info_get(brisk_memory_info *info);

/* ---- for language bindings (the Free Pascal unit) --------------------------
 * A memory manager that must report the bytes in live blocks and refuse
 * foreign pointers would otherwise call brisk_owns, brisk_usable_size and
 * brisk_free for each free. These do it in one call and keep the count
 * themselves, per thread, summed by brisk_binding_bytes_in_use(). Blocks
 * are allocated with brisk_binding_getmem (below). */

/* Frees block if brisk owns it and returns its usable size; returns 0 and
 * frees nothing when brisk does not own it (or block is NULL). */
BRISK_API size_t brisk_binding_free(void *block);
/* brisk_realloc for the same accounting; *usable gets the new block's size.
 * A block that still holds size bytes stays where it is when it is at most
 * 512 bytes, or when size is at least half of it (see binding.c). */
BRISK_API void *brisk_binding_realloc(void *block, size_t size, size_t *usable);
/* Usable bytes in blocks allocated and not yet freed through brisk_binding_*
 * (all threads; exact once the threads are quiet). */
BRISK_API size_t brisk_binding_bytes_in_use(void);

/* Free Pascal's memory manager (TMemoryManager), entry by entry, for the
 * record itself: GetMem is brisk_binding_getmem, and so on, each one call
 * into brisk with the accounting above. Their errors go to the handler set
 * with brisk_binding_set_error_handler, as the last thing the entry does,
 * and the entry returns what the handler returns (block entries; the size
 * entries return 0). The handler may instead raise or end the program
 * (runtime errors 203 and 204); brisk then holds nothing. Without a handler
 * an entry returns NULL or 0 and frees nothing. */
enum brisk_binding_error {
  BRISK_BINDING_OUT_OF_MEMORY = 1,    /* no memory for size bytes; the block is kept */
  BRISK_BINDING_FOREIGN_FREEMEM,      /* FreeMem: block is not brisk's */
  BRISK_BINDING_FOREIGN_FREEMEM_SIZE, /* FreeMem(P, Size): block is not brisk's */
  BRISK_BINDING_FOREIGN_REALLOCMEM,   /* ReAllocMem: block is not brisk's */
  BRISK_BINDING_FOREIGN_MEMSIZE,      /* MemSize: block is not brisk's */
  BRISK_BINDING_SIZE_PAST_BLOCK,      /* FreeMem(P, Size): Size exceeds the block */
};
typedef void *(*brisk_binding_error_handler)(int error, void *block, size_t size);
BRISK_API void brisk_binding_set_error_handler(brisk_binding_error_handler handler);
/* GetMem: size 0 gets a block too. NULL when out of memory and no handler
 * is set (Delphi's manager). */
BRISK_API BRISK_MALLOC_ATTR void *BRISK_BINDING_CALL brisk_binding_getmem(size_t size);
/* FreeMem: the block's usable size; NULL frees nothing and returns 0. */
BRISK_API size_t BRISK_BINDING_CALL brisk_binding_freemem(void *block);
/* FreeMem(P, Size), the TP7 form: Size 0 or a NULL block frees nothing. */
BRISK_API size_t BRISK_BINDING_CALL brisk_binding_freemem_size(void *block, size_t size);
/* AllocMem: GetMem with the size bytes zeroed. */
BRISK_API BRISK_MALLOC_ATTR void *BRISK_BINDING_CALL brisk_binding_allocmem(size_t size);
/* ReAllocMem(var P, Size): size 0 frees *block and sets it NULL, a NULL
 * *block allocates; *block is the result, or unchanged on an error. */
BRISK_API void *BRISK_BINDING_CALL brisk_binding_reallocmem(void **block, size_t size);
/* MemSize: the block's usable size; 0 for NULL. */
BRISK_API size_t BRISK_BINDING_CALL brisk_binding_memsize(void *block);

/* Sets brisk up now (idempotent); returns 1, or 0 when brisk cannot work
 * (said on stderr). Needed where a program runs no C constructors and may
 * call brisk before anything else does: a Windows program linked by Free
 * Pascal or Delphi with the static library. brisk.dll, and MinGW-linked
 * programs, set brisk up before their own code runs. */
BRISK_API int brisk_binding_init(void);
/* The program is ending: writes the reports of the diagnostic modes
 * (BRISK_STATS, BRISK_LEAKS, BRISK_PROFILE) now, once; later calls and the
 * reports at exit do nothing. Needed where no C destructor runs at exit:
 * the same programs as brisk_binding_init (BriskMM calls it last). */
BRISK_API void brisk_binding_done(void);
/* Call sites for code that keeps frame pointers but no unwind tables (Free
 * Pascal's), which the C library's unwinder cannot walk: when
 * brisk_binding_traces() is non-zero (BRISK_LEAKS or BRISK_CHECK), the
 * binding calls brisk_binding_trace_block right after each allocation, with
 * the frame pointer of its own entry, and the block's allocation site
 * becomes the stack from there. */
BRISK_API int brisk_binding_traces(void);
/* Writes text where brisk's own messages go: standard error, or, for a
 * program without one (a Windows GUI program), PROGRAM.brisk.log beside the
 * executable. BriskMM's messages go through it. */
BRISK_API void brisk_binding_message(const char *text);
BRISK_API void brisk_binding_trace_block(void *block, void *frame);

/* ---- statistics ---------------------------------------------------------
 * Per-call counts (mallocs, frees, per size class) are kept only while a
 * diagnostic mode is on (BRISK_STATS, BRISK_LEAKS or BRISK_CHECK in the
 * environment); `counting` says so. The OS-level figures are always kept.
 * BRISK_STATS_FIELDS lists every scalar field once: name, meaning. */
#define BRISK_STATS_FIELDS(X)                                                                      \
  X(counting, "1 when every call is counted (a diagnostic mode is on)")                            \
  X(mallocs, "blocks allocated")                                                                   \
  X(frees, "blocks freed")                                                                         \
  X(remote_frees, "blocks freed by a thread other than the one that allocated them")               \
  X(requested_bytes, "bytes asked for in blocks still live")                                       \
  X(mapped, "bytes of address space mapped from the OS")                                           \
  X(mapped_peak, "peak of mapped")                                                                 \
  X(committed, "mapped bytes not purged: an upper bound on resident")                              \
  X(committed_peak, "peak of committed")                                                           \
  X(resident, "resident set size of the process (from the OS)")                                    \
  X(resident_peak, "peak resident set size of the process (from the OS)")                          \
  X(large_in_use, "bytes in live blocks mapped directly from the OS")                              \
  X(os_maps, "mmap calls")                                                                         \
  X(os_unmaps, "munmap calls")                                                                     \
  X(os_purges, "madvise calls returning memory")                                                   \
  X(os_remaps, "mremap calls (huge blocks grown or assembled without copying)")                    \
  X(page_refills, "slow-path refills of a thread's page for a size class")                         \
  X(heaps_created, "thread heaps ever created")                                                    \
  X(heaps_abandoned, "heaps of exited threads waiting for a new thread")

#define BRISK_STATS_CLASSES 105 /* size classes, the last one for blocks above 512 KiB */

typedef struct brisk_stats {
  size_t struct_size; /* set by the caller to sizeof(brisk_stats) */
#define BRISK_STATS_DECLARE_(name, meaning) unsigned long long name;
  BRISK_STATS_FIELDS(BRISK_STATS_DECLARE_)
#undef BRISK_STATS_DECLARE_
  unsigned long long class_size[BRISK_STATS_CLASSES]; /* largest block of each class */
  unsigned long long class_mallocs[BRISK_STATS_CLASSES];
  unsigned long long class_frees[BRISK_STATS_CLASSES];
} brisk_stats;

/* Fills *stats (up to stats->struct_size bytes); returns 0, or -1 on NULL. */
BRISK_API int brisk_stats_get(brisk_stats *stats);
/* Writes the statistics to the file descriptor, as text or (json != 0) JSON. */
BRISK_API void brisk_stats_print(int fd, int json);

#ifdef __cplusplus
}
#endif

#endif /* BRISK_H */
