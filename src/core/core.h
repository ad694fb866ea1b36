/* SPDX-License-Identifier: MIT */
/* The core layer's interface: shared helpers, then every function the core's
 * files export, grouped under the file that defines each (the order is the
 * layer order, bottom first: a file calls only files listed above it).
 * tools/check_layers.py verifies both. */
#ifndef BRISK_CORE_H
#define BRISK_CORE_H

#include "brisk.h"
#include "../platform/platform.h"
#include "types.h"

#include <errno.h>
#include <stdarg.h>

/* ---- assertions (BRISK_DEBUG builds) ------------------------------------- */
#ifdef BRISK_DEBUG
#define brisk_assert(condition)                                                                    \
  ((condition) ? (void)0 : assert_failed(#condition, __FILE__, __LINE__))
#else
#define brisk_assert(condition) ((void)0)
#endif

/* ---- atomics: the memory order is part of the name ------------------------ */
#define atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define atomic_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define atomic_store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define atomic_store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define atomic_exchange_acquire(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
#define atomic_exchange_relaxed(p, v) atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define atomic_and_relaxed(p, v) atomic_fetch_and_explicit((p), (v), memory_order_relaxed)
#define atomic_or_relaxed(p, v) atomic_fetch_or_explicit((p), (v), memory_order_relaxed)
#define atomic_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define atomic_add_release(p, v) atomic_fetch_add_explicit((p), (v), memory_order_release)
#define atomic_cas_weak_release(p, expected, desired)                                              \
  atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_release,          \
                                        memory_order_relaxed)
#define atomic_cas_weak_relaxed(p, expected, desired)                                              \
  atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_relaxed,          \
                                        memory_order_relaxed)
#define atomic_cas_strong_acq_rel(p, expected, desired)                                            \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel,        \
                                          memory_order_acquire)
#define atomic_cas_strong_acquire(p, expected, desired)                                            \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acquire,        \
                                          memory_order_relaxed)
/* The same for a plain field (not _Atomic) that other threads read: never
 * torn, ordered as the name says, and plain loads and stores where the
 * owner alone writes it. */
#define shared_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define shared_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define shared_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define shared_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* A link store that makes a node reachable, ordered after the stores that
 * made the node ready, so a list is walkable between any two stores (what a
 * forked child inherits from a thread frozen mid-change). */
#define store_publish(p, v) shared_store_release((p), (v))

/* A count written by one thread only and read by any: no atomic read-modify-
 * write, but no torn values either. */
#define counter_add(c, n) shared_store_relaxed(&(c), shared_load_relaxed(&(c)) + (n))
#define counter_get(c) shared_load_relaxed(&(c))

/* ---- failing --------------------------------------------------------------- */
/* How every allocation fails: errno is ENOMEM, the result NULL. */
static inline void *out_of_memory(void) {
  errno = ENOMEM;
  return NULL;
}

/* ---- address arithmetic -------------------------------------------------- */
static inline uintptr_t align_up(uintptr_t x, size_t alignment) {
  return (x + alignment - 1) & ~(uintptr_t)(alignment - 1);
}
static inline bool is_power_of_two(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

/* The segment is found from p - 1 so that a huge block aligned to a whole
 * segment can start exactly where its header's 4 MiB unit ends. */
static inline segment_t *segment_of(const void *p) {
  return (segment_t *)(((uintptr_t)p - 1) & ~(uintptr_t)SEGMENT_MASK);
}
/* The section of the API functions that read the bookkeeping of a pointer
 * before they know it is brisk's (see report_code_is_brisk): those functions,
 * and the inline ones they use, which land there when a build does not
 * inline them. */
#define REPORT_POINTER_SECTION "brisk_pointer_readers"
#ifdef __ELF__
#define READS_POINTER_HEADER __attribute__((section(REPORT_POINTER_SECTION)))
#else /* Free Pascal's linker places no code section of another name (Windows) */
#define READS_POINTER_HEADER
#endif

/* The page holding p. The offset is shifted straight to the descriptor's
 * byte offset (descriptors are 256 bytes) and masked to the most pages a
 * segment has, so that for a pointer into the tail of a huge block, whose
 * "segment" is then the block's own data, the read stays inside that
 * block's mapping: its owner tag is garbage that sends the free to the slow
 * path, which finds no segment there and reports the pointer. */
static inline READS_POINTER_HEADER page_t *page_of(segment_t *segment, const void *p) {
  size_t offset = ((uintptr_t)p - (uintptr_t)segment) >> segment->descriptor_shift;
  offset &= (size_t)(MAX_PAGES_PER_SEGMENT - 1) << PAGE_DESCRIPTOR_SHIFT;
  return (page_t *)((uint8_t *)segment->pages + offset);
}
/* Pages of 2^shift bytes (HUGE_PAGE_SHIFT: one page, whatever the address). */
static inline void segment_set_page_shift(segment_t *segment, uint8_t shift) {
  segment->page_shift = shift;
  segment->descriptor_shift = (uint8_t)(shift - PAGE_DESCRIPTOR_SHIFT);
}

/* ---- message.c: the only writer of brisk's messages ----------------------------- */
/* The format checks of brisk's own formatting: GCC's gnu_printf, which knows
 * %zu on MinGW too (GCC's printf means msvcrt's there); clang has only printf. */
#ifdef __clang__
#define MSG_FORMAT(format_index, first_arg) __attribute__((format(printf, format_index, first_arg)))
#else
#define MSG_FORMAT(format_index, first_arg)                                                        \
  __attribute__((format(gnu_printf, format_index, first_arg)))
#endif
/* printf-style formatting (the conversions brisk uses, as glibc prints them)
 * into buffer, always terminated; returns the length stored. */
INTERNAL size_t msg_vformat(char *buffer, size_t size, const char *format, va_list args)
    MSG_FORMAT(3, 0);
INTERNAL size_t msg_format(char *buffer, size_t size, const char *format, ...) MSG_FORMAT(3, 4);
/* msg_format into a stack buffer, then platform_write. */
INTERNAL void msg_printf(int fd, const char *format, ...) MSG_FORMAT(2, 3);
/* A broken internal invariant (BRISK_DEBUG): the message, then abort. */
INTERNAL void assert_failed(const char *condition, const char *file, int line)
    __attribute__((noreturn));

/* ---- hooks.c: the narrow interface through which diagnostics watch the core ---- */
/* DIAG_FLAG: a switch of the diagnostic modes; constant false when they are
 * compiled out (BRISK_NO_DIAGNOSTICS). */
#ifdef BRISK_NO_DIAGNOSTICS
#define DIAG_FLAG(name) static const bool name = false
#else
#define DIAG_FLAG(name) INTERNAL extern bool name
#endif
/* diag_counting: every call is counted, so heaps keep their fast paths empty
 * and every malloc and free reaches a slow path (and before_free). */
DIAG_FLAG(diag_counting);
/* profile_on: slow-path events are reported to hooks.event. */
DIAG_FLAG(profile_on);
/* heap_sampling: the heap profile samples allocations. Every malloc then
 * reaches malloc_slow (heaps keep their direct slots empty), frees stay on
 * their fast paths; a sampled block is served from the arena or huge range,
 * whose frees all reach free_unusual, which tells hooks.sampled_free. */
DIAG_FLAG(heap_sampling);
/* Allocations take the slow path: diag_counting, or heap_sampling where
 * the fast path does not count down to samples itself. */
DIAG_FLAG(allocs_take_long_way);
#ifdef BRISK_SAMPLING_FAST_PATH
#define SAMPLING_ON_FAST_PATH 1 /* libbrisk-heapprof.so (api/fast_path.h) */
#else
#define SAMPLING_ON_FAST_PATH 0
#endif
/* Whether every free that reaches free_slow must take its long way: a
 * diagnostic mode counts or profiles frees (set at start-up), or a report is
 * on its way (set for good by its thread, whose frees are then dropped).
 * One byte, so that the common remote free tests one thing, not three. */
INTERNAL extern _Atomic(bool) xfrees_take_long_way;
static inline bool frees_take_long_way(void) {
  return atomic_load_relaxed(&xfrees_take_long_way);
}

typedef enum profile_event {
  EVENT_REFILL,      /* a thread's page for a size class ran dry */
  EVENT_SEGMENT,     /* a heap needed a new segment from the process cache or the OS */
  EVENT_REMOTE_FREE, /* a block freed by a thread other than its owner */
  EVENT_LOCK_WAIT,   /* a thread waited on one of brisk's few locks */
  EVENT_OS_CALL,     /* the OS was asked to map, unmap, purge or move memory */
  EVENT_KIND_COUNT
} profile_event;

typedef struct core_hooks {
  /* diag_counting: runs first in every free, before the core frees p. */
  void (*before_free)(segment_t *segment, page_t *page, void *p);
  /* profile_on: a slow-path event happened on this thread. */
  void (*event)(profile_event kind);
  /* heap_sampling: an arena or huge block is being freed (or resized). */
  void (*sampled_free)(void *p);
} core_hooks;
INTERNAL extern core_hooks hooks;

static inline void event_note(profile_event kind) {
  if (unlikely(profile_on)) hooks.event(kind);
}
/* A lock whose waits show in the profile. */
static inline void lock_acquire(platform_lock_t *lock) {
  if (platform_lock_try(lock)) return;
  event_note(EVENT_LOCK_WAIT);
  platform_lock_acquire(lock);
}
static inline void lock_release(platform_lock_t *lock) {
  platform_lock_release(lock);
}

/* ---- the memory-return policy: one table ------------------------------------------
 * Every constant that decides when free memory goes back to the OS, with its
 * default and why. One is a setting (BRISK_PURGE_DELAY, options.c: the
 * user chooses between peak memory and page faults); the rest are fixed.
 * DESIGN.md, "Giving memory back", tells the whole story; BENCHMARKS.md has
 * the measurements behind the numbers. */
/* How long a free page stays resident before it is purged (ms). Long enough
 * that a loop freeing and taking back pages does not fault them in again,
 * short enough that a program that freed memory gives it back soon. */
#define PURGE_DELAY_MS 10
/* Housekeeping comes every HOUSEKEEPING_REFILLS'th refill, at most every
 * half purge delay (every HOUSEKEEPING_NEVER_MS with purging off): often
 * enough to take frees in and retire pages, rarely enough that refills do
 * not pay for its walks. */
#define HOUSEKEEPING_REFILLS 16
#define HOUSEKEEPING_NEVER_MS 1000
/* Without the background purger, which purges after the delay whether the
 * program calls the allocator or not, a heap purges all its free pages, and
 * an arena its free chunks, once about this much of them may be resident. */
#define HEAP_DIRTY_MAX (4 * MiB)
#define ARENA_DIRTY_MAX (4 * MiB)
/* A free arena chunk's inside goes back this long after the purger first
 * saw it free: long enough for a pool's next burst, whatever its sizes, to
 * find the last one's memory resident. */
#define ARENA_PURGE_MS 100
/* Empty segments of pages wait in the segment cache, for any heap, at most
 * SEGMENT_CACHE_MAX of them (256 MiB of address space): a pool whose
 * threads free a few hundred megabytes at the end of each burst reuses them
 * at the next. Each stays resident SEGMENT_CACHE_RESIDENT_MS, or the purge
 * delay if longer, as the arena's chunks do: a pool whose one thread frees
 * all it used between bursts sends most of its segments here, and the
 * 10 ms of a page would fault them all in again at every burst. */
#define SEGMENT_CACHE_MAX 64
#define SEGMENT_CACHE_RESIDENT_MS 100
/* Without the purger, and while threads come and go (exiting threads then
 * leave their pages to the next ones, so the segments they empty are mostly
 * surplus), the cache keeps only this many segments resident. */
#define SEGMENT_CACHE_RESIDENT_MAX 2
/* A resident medium page taken by another class as its warm page keeps
 * resident only its first block; what its earlier uses wrote past that is
 * purged from this size on: a warm page is kept while its thread runs, and
 * carved one block at a time it would keep the rest resident unused. */
#define WARM_TRIM_MIN (64 * KiB)
/* The huge cache holds at most HUGE_CACHE_MAX freed huge blocks' spans, and
 * a quarter of the bytes in live huge blocks, clamped to
 * HUGE_CACHE_BUDGET_MIN-MAX: a program replacing big buffers reuses
 * resident memory instead of faulting fresh pages in. Spans larger than
 * HUGE_CACHE_SPAN_MAX go straight back; a split leaves no span smaller than
 * HUGE_SPAN_MIN in the cache. */
#define HUGE_CACHE_MAX 64
#define HUGE_CACHE_BUDGET_MIN (4 * MiB)
#define HUGE_CACHE_BUDGET_MAX (64 * MiB)
#define HUGE_CACHE_SPAN_MAX (64 * MiB)
#define HUGE_SPAN_MIN (1 * MiB)
/* A huge block that realloc shrinks gives its tail back once the tail comes
 * to this and a quarter of the block: less, and a buffer that shrinks and
 * grows again would move its pages back and forth. */
#define HUGE_SHRINK_MIN (1 * MiB)
/* The background purger starts with the second thread that allocates, once
 * the process has committed PURGER_AFTER_COMMITTED (below that there is
 * little to give back, and the thread costs memory of its own), a thread
 * has taken up an exited thread's heap, or a thread has made
 * PURGER_AFTER_REMOTE_FREES remote frees (batching them needs the purger).
 * Its rounds come every PURGER_ROUND_MIN_MS (or the purge delay, if longer)
 * while there is something to purge, backing off to PURGER_ROUND_MAX_MS. It
 * retires the empty pages of a live heap idle for IDLE_HEAP_MS (or the
 * purge delay, if longer): sooner, a pool pausing between bursts would
 * fault those pages in again after every pause. The eager purger
 * (BRISK_EAGER_PURGER, types.h) acts at every chance. */
#ifdef BRISK_EAGER_PURGER
#define PURGER_AFTER_COMMITTED os_page_size()
#define PURGER_ROUND_MIN_MS 1
#define IDLE_HEAP_MS 0
#else
#define PURGER_AFTER_COMMITTED (16 * MiB)
#define PURGER_ROUND_MIN_MS 50
#define IDLE_HEAP_MS 500
#endif
#define PURGER_AFTER_REMOTE_FREES 2048
#define PURGER_ROUND_MAX_MS 1000

/* ---- options.c: runtime settings, one table ------------------------------------ */
typedef enum option_id {
  OPTION_PURGE_DELAY, /* ms before free memory goes back to the OS; <0: never */
  OPTION_STATS,       /* STATS_OFF, STATS_TEXT or STATS_JSON */
  OPTION_STATS_FILE,  /* text */
  OPTION_LEAKS,
  OPTION_PROFILE,
  OPTION_PROFILE_FILE, /* text */
  OPTION_PROFILE_RATE,
  OPTION_HEAP_PROFILE,        /* text: the file, or NULL when off */
  OPTION_HEAP_PROFILE_RATE,   /* bytes between samples, on average */
  OPTION_HEAP_PROFILE_SIGNAL, /* 0 or a signal number */
  OPTION_LEAKS_FILE,          /* text */
  OPTION_LEAKS_EXITCODE,      /* 0: the exit status stays */
  OPTION_LEAKS_SUPPRESS,      /* text */
  OPTION_CHECK,
  OPTION_BACKGROUND,
  OPTION_HUGE_PAGES,
  OPTION_VERBOSE,
  OPTION_GUARD,         /* one block in this many behind a guard page; 0: off */
  OPTION_SYMBOLS_LATER, /* reports name frames by module, offset and build id */
  OPTION_COUNT
} option_id;
enum { STATS_OFF = 0, STATS_TEXT = 1, STATS_JSON = 2 };
/* Reads every setting (once; warns about bad ones). */
INTERNAL void options_init(void);
INTERNAL long option_get(option_id id);
/* A file-name setting's text, or NULL when it is not set. */
INTERNAL const char *option_text(option_id id);

/* ---- thread-local words of the slow paths ---------------------------------------- */
/* What brisk keeps per thread besides its heap: whether a report (or
 * diagnostic bookkeeping) runs on the thread, so that the allocations it
 * makes are not themselves diagnosed; and the profile's count of events not
 * yet traced (diag/profile.c); and the heap profile's bytes left before its
 * next sample (diag/heap_profile.c). In the platform's thread-local words where it
 * has them (platform.h), else in a _Thread_local array (report.c). */
enum thread_word { THREAD_HEAP, THREAD_IN_DIAG, THREAD_PROFILE, THREAD_SAMPLE, THREAD_WORD_COUNT };
_Static_assert(THREAD_WORD_COUNT <= PLATFORM_TLS_COUNT, "the platform keeps too few words");
#ifdef PLATFORM_TLS_WORDS
static inline uintptr_t thread_word(enum thread_word word) {
  return platform_tls_word(word);
}
static inline void thread_word_set(enum thread_word word, uintptr_t value) {
  platform_tls_word_set(word, value);
}
#else
/* One thread-local (initial-exec, heap.c) for the heap and the words, so
 * that a fast path reaches both from one address (the heap profile's
 * countdown on libbrisk-heapprof.so's malloc). */
typedef struct thread_locals {
  heap_t *heap; /* starts as &heap_empty; the THREAD_HEAP word is not used */
  uintptr_t words[THREAD_WORD_COUNT];
} thread_locals;
INTERNAL extern _Thread_local thread_locals tl_thread;
static inline uintptr_t thread_word(enum thread_word word) {
  return tl_thread.words[word];
}
static inline void thread_word_set(enum thread_word word, uintptr_t value) {
  tl_thread.words[word] = value;
}
#endif
static inline bool in_diag(void) {
  return thread_word(THREAD_IN_DIAG) != 0;
}
static inline void in_diag_set(bool on) {
  thread_word_set(THREAD_IN_DIAG, on);
}

/* ---- size_class.c ----------------------------------------------------------------- */
INTERNAL extern const uint32_t class_size[CLASS_COUNT];
static inline unsigned size_class_of(size_t size) {
  if (size <= 16) return 0;
  if (size <= 128) return (unsigned)((size + 15) >> 4) - 1;
  size_t s = size - 1;
  unsigned top = 63u - (unsigned)__builtin_clzll(s); /* >= 7 */
  return 8 + (top - 7) * 8 + (unsigned)((s >> (top - 3)) & 7);
}
/* The ranges of sizes, each served one way in every build and mode: a page
 * of the size class (small, medium), a chunk of the heap's arena, or a
 * mapping of its own (huge). */
typedef enum size_range { RANGE_SMALL, RANGE_MEDIUM, RANGE_ARENA, RANGE_HUGE } size_range;
/* The router: the one place that says which range serves a size. */
static inline size_range size_range_of(size_t size) {
  if (size <= SMALL_MAX) return RANGE_SMALL;
  if (size <= MEDIUM_MAX) return RANGE_MEDIUM;
  if (size <= ARENA_MAX) return RANGE_ARENA;
  return RANGE_HUGE;
}
INTERNAL segment_kind size_class_kind(unsigned size_class);
/* direct[] slots [first, last] that map to this class (empty when first > last). */
INTERNAL void size_class_direct_slots(unsigned size_class, unsigned *first, unsigned *last);

/* ---- memory.c: memory from the platform, and the process-wide figures ---------- */
/* A reservation of size bytes whose address plus offset is a multiple of
 * alignment (>= SEGMENT_SIZE), nothing committed yet. */
INTERNAL void *memory_reserve(size_t size, size_t alignment, size_t offset);
/* The OS's page size (platform_page_size, asked once): 4 KiB on x86-64; 4,
 * 16 or 64 KiB on ARM64 Linux. Every range below starts and ends on one. */
INTERNAL size_t os_page_size(void);
INTERNAL bool memory_commit(void *p, size_t size);
INTERNAL void memory_purge(void *p, size_t size);
/* Faults committed memory in ahead of use: one call for many OS pages. */
INTERNAL void memory_populate(void *p, size_t size);
/* Returns a whole reservation (or its tail) to the OS; a tail the OS cannot
 * give back alone is purged (it must never be touched again). */
INTERNAL void memory_release(void *p, size_t size);
INTERNAL bool memory_extend(void *p, size_t size, size_t new_size);
INTERNAL void *memory_move_grow(void *p, size_t size, size_t new_size);
INTERNAL bool memory_move_pages(void *from, size_t size, void *to);
/* The committed figure moves with page state, not with each call above. */
INTERNAL void memory_note_committed(ptrdiff_t delta);
INTERNAL void memory_note_large_in_use(ptrdiff_t delta);
/* Huge blocks come and go (blocks: +1, -1 or 0) with the bytes of their
 * mappings (header and rounding included), or a live one's mapping grows or
 * shrinks (blocks 0). */
INTERNAL void memory_note_huge(ptrdiff_t blocks, ptrdiff_t bytes);
typedef struct huge_figures {
  size_t blocks, blocks_peak; /* live huge blocks, and the most at once */
  size_t bytes, bytes_peak;   /* their mappings' bytes, and the most at once */
} huge_figures;
INTERNAL void memory_huge_figures(huge_figures *figures);
INTERNAL void memory_info(brisk_memory_info *info);
/* Whether free memory is purged as soon as a small bound is passed (true
 * until the background purger runs, which purges after the delay). */
INTERNAL extern _Atomic(bool) xmemory_purge_eagerly;
static inline bool memory_purge_eagerly(void) {
  return atomic_load_relaxed(&xmemory_purge_eagerly);
}
/* BRISK_PURGE_DELAY=never: free memory stays resident, eagerly or not
 * (only brisk_collect() and the caches' capacities give it back). */
static inline bool memory_purge_never(void) {
  return option_get(OPTION_PURGE_DELAY) < 0;
}
INTERNAL void memory_os_calls(uint64_t *maps, uint64_t *unmaps, uint64_t *purges, uint64_t *remaps);
/* Bytes purged and released so far, together. */
INTERNAL uint64_t memory_returned_bytes(void);
/* The process-wide figures a reader outside the process finds through the
 * introspection descriptor (introspection.c), in its order: each a word
 * read with relaxed loads, of the width memory_figure_address gives (a
 * size_t, 4 bytes on a 32-bit build, or a 64-bit count). */
typedef enum memory_figure {
  FIGURE_MAPPED,
  FIGURE_COMMITTED,
  FIGURE_COMMITTED_PEAK,
  FIGURE_HUGE_BYTES,
  FIGURE_OS_MAPS,
  FIGURE_OS_UNMAPS,
  FIGURE_OS_PURGES,
  FIGURE_OS_REMAPS,
  FIGURE_PURGED_BYTES,
  FIGURE_RELEASED_BYTES,
  MEMORY_FIGURE_COUNT
} memory_figure;
INTERNAL const void *memory_figure_address(memory_figure id, uint8_t *width);

/* ---- segment_map.c: which 4 MiB units hold a segment header ---------------------- */
INTERNAL void segment_map_set(segment_t *segment, bool present);
#define SEGMENT_UNIT_COUNT ((size_t)1 << (PLATFORM_ADDRESS_BITS - SEGMENT_SHIFT))
INTERNAL extern _Atomic(uint8_t) *_Atomic xsegment_units;
static inline bool segment_map_contains(const segment_t *segment) {
  uintptr_t unit = (uintptr_t)segment >> SEGMENT_SHIFT;
  if (unit >= SEGMENT_UNIT_COUNT) return false;
  _Atomic(uint8_t) *units = atomic_load_acquire(&xsegment_units);
  return units != NULL && atomic_load_acquire(&units[unit]) != 0;
}
/* Calls visit for every mapped segment (a diagnostic walk; not synchronised). */
INTERNAL void segment_map_visit(void (*visit)(segment_t *segment, void *arg), void *arg);

/* ---- span_cache.c: whole free segments kept for reuse, newest first ------------- */
typedef struct span_cache {
  platform_lock_t lock;
  segment_t *first; /* newest first, linked by next */
  size_t count;
  size_t bytes;      /* the segments' sizes, summed */
  size_t capacity;   /* most segments kept */
  bool evict_oldest; /* when full: drop the oldest to make room (else refuse) */
} span_cache;
/* How many of its segments pass counted, under its lock. */
INTERNAL size_t span_cache_count(span_cache *cache, bool (*counted)(const segment_t *segment));
/* Adds segment (stamped now) and keeps at most byte_budget bytes; returns the
 * segments that did not fit, linked by next (the oldest ones, or segment
 * itself when the cache refuses), or NULL. */
INTERNAL segment_t *span_cache_push(span_cache *cache, segment_t *segment, uint64_t now,
                                    size_t byte_budget);
/* The best segment by fit(segment, arg): 0 takes it at once, a positive
 * number ranks it (lower is better), a negative one rules it out. */
INTERNAL segment_t *span_cache_take(span_cache *cache, int64_t (*fit)(segment_t *, size_t),
                                    size_t arg);
/* Visits the segments cached for delay ms by now (all, when force; nothing,
 * when delay < 0 and not force, or when another thread holds the cache and
 * not force); those visit returns true for leave the cache and are given to
 * release once the cache's lock is dropped. */
INTERNAL void span_cache_collect(span_cache *cache, uint64_t now, long delay, bool force,
                                 bool (*visit)(segment_t *segment, bool force),
                                 void (*release)(segment_t *segment));
/* In a forked child: the lock is free again, whoever held it. */
INTERNAL void span_cache_after_fork(span_cache *cache);

/* ---- segment.c: segments and the pages inside them ----------------------------- */
/* A free page for size_class, from the heap's segments, the cache or (when
 * may_map) a new segment; NULL when none can be had. With to_keep, the page
 * is to be its class's warm page, kept while the thread runs (page.c). */
INTERNAL page_t *segment_page_alloc(heap_t *heap, segment_kind kind, unsigned size_class,
                                    bool may_map, bool to_keep);
INTERNAL void segment_page_free(heap_t *heap, page_t *page);
INTERNAL size_t segment_page_bytes(const segment_t *segment, const page_t *page, uint8_t **area);
INTERNAL void segment_purge_expired(heap_t *heap, uint64_t now, bool force);
/* The background purger's call for a heap in use by another thread: purges
 * what has waited long enough unless that thread holds the heap's segments;
 * returns whether the heap had any free page not yet purged. */
INTERNAL bool segment_purge_idle(heap_t *heap, uint64_t now);
INTERNAL void segment_cache_collect(uint64_t now, bool force);
INTERNAL void segment_cache_after_fork(void);
/* A thread took up an exited thread's heap at now: threads come and go. */
INTERNAL void segment_cache_note_adoption(uint64_t now);

/* ---- page.c: pages of one size class, their queues and free lists ----------------- */
INTERNAL extern page_t page_empty;
/* A lock that a heap's own thread takes on every refill and the background
 * purger, now and then, for one walk of the heap's queues (heap_t's
 * pages_lock): one exchange to take it and one store to give it back,
 * where a mutex costs calls on every refill. A wait spins a
 * little, then sleeps: the purger that holds it may be off the CPU. */
INTERNAL void brief_lock_wait(brief_lock_t *lock);
static inline bool brief_lock_try(brief_lock_t *lock) {
  return atomic_load_relaxed(lock) == 0 && atomic_exchange_acquire(lock, 1) == 0;
}
static inline void brief_lock_acquire(brief_lock_t *lock) {
  if (likely(atomic_exchange_acquire(lock, 1) == 0)) return;
  brief_lock_wait(lock);
}
static inline void brief_lock_release(brief_lock_t *lock) {
  atomic_store_release(lock, 0);
}
/* The cookie every free block carries (see block_t): a secret chosen at
 * start-up, the same for every block (as glibc's tcache key), so that free
 * compares and stores it with no arithmetic. */
INTERNAL extern uintptr_t free_secret;
static inline uintptr_t free_cookie(void) {
  return free_secret;
}
/* Takes the first free block of a page whose free list is not empty. */
static inline block_t *page_pop(page_t *page) {
  block_t *block = page->free;
  page->free = block->next;
  page->used++;
  block->cookie = 0; /* a live block never carries the free cookie */
  return block;
}
/* The owner's `--page->used` for a block it has just pushed onto one of the
 * page's lists; whether that was the last block in use. The background purger
 * reads `used` of pages the owner is not allocating from, without the
 * owner's help, to find those whose every block has come back
 * (page_release_idle): the count is stored after the push, with release
 * order, so a purger that reads it sees the push too and never retires a
 * page under a store still on its way. Where the CPU keeps a thread's
 * stores in order (PLATFORM_STORES_IN_ORDER: x86-64) only the compiler is
 * told (no instruction); elsewhere (ARM64), and in a ThreadSanitizer build,
 * which can follow it, the store is a release store. */
#if defined(__SANITIZE_THREAD__)
#define BRISK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRISK_TSAN 1
#endif
#endif
static inline bool page_used_drop(page_t *page) {
#if defined(PLATFORM_STORES_IN_ORDER) && !defined(BRISK_TSAN)
  atomic_signal_fence(memory_order_release);
  return --page->used == 0;
#else
  uint32_t used = page->used - 1;
  shared_store_release(&page->used, used);
  return used == 0;
#endif
}
/* Whether p is the start of a block carved in page. Write the offset from
 * the first block as q * block_size + r; times block_magic it is, mod 2^64,
 * q * block_excess + r * block_magic. That is q * block_excess (below
 * carved_limit exactly when q < capacity) when r = 0, and at least
 * block_magic (> 2^41, far above any carved_limit) otherwise, offsets below
 * the first block included, as long as |offset| < 2^23, which holds inside
 * a segment. So one multiply and one comparison reject interior,
 * misaligned, past-the-end, uncarved and header pointers alike. */
static inline READS_POINTER_HEADER bool page_is_block_start(const page_t *page, const void *p,
                                                            uint64_t carved_limit) {
  /* signed: a pointer below the first block is a negative offset, on a
   * 32-bit machine too */
  uint64_t offset = (uint64_t)(int64_t)(intptr_t)((uintptr_t)p - (uintptr_t)page->area);
  return offset * page->block_magic < carved_limit;
}
/* Whether heap's thread may free into page with plain stores (see xowner_tag). */
static inline READS_POINTER_HEADER bool page_is_plain(const page_t *page, const heap_t *heap) {
  return atomic_load_relaxed(&page->xowner_tag) == heap;
}
INTERNAL page_t *page_fresh(heap_t *heap, unsigned size_class, bool may_map);
/* Takes in the page's remote frees, and moves its owner's own frees onto an
 * empty `free`; whether `free` then has a block. */
INTERNAL bool page_collect(page_t *page);
/* The first page of the class's queue that has (or, collecting its frees and
 * carving more blocks when may_carve, can get) a free block, moved to the
 * front; pages with nothing to give and no room to carve are parked on the
 * full list on the way. NULL when none. */
INTERNAL page_t *page_queue_find_free(heap_t *heap, unsigned size_class, bool may_carve);
/* For a medium class: the first page of a class up to one doubling larger
 * that has a free block (see page.c), or NULL. */
INTERNAL page_t *page_borrow_larger(heap_t *heap, unsigned size_class);
/* The owner's free of a block whose page needs care (see page_is_plain),
 * under the heap's pages_lock or with the heap claimed: unparks the page,
 * puts the block on local_free, retires the page if that was its last block. */
INTERNAL void page_free_locked(heap_t *heap, page_t *page, block_t *block);
/* Whether the heap keeps a warm page for the class (see page.c). */
static inline bool heap_class_has_warm(const heap_t *heap, unsigned size_class) {
  return (heap->warm_classes[size_class / 64] >> (size_class % 64)) & 1;
}
/* Retires a page whose last block came back on the owner's fast path,
 * taking pages_lock (a warm page never gets here: its pin keeps `used` above
 * zero). */
INTERNAL void page_retire(heap_t *heap, page_t *page);
/* The background purger's part, under pages_lock, in a live heap whose
 * thread has not tidied it lately: retires the pages whose blocks have all
 * come back, remote frees included, warm pages too, except the first page
 * of a small class. Returns how many. */
INTERNAL size_t page_release_idle(heap_t *heap);
/* Collects every queued page; retires the empty ones, but keeps a warm page
 * that is its class's only page. force also unpins every warm page (see
 * page.c), retiring those that are empty. */
INTERNAL void page_collect_heap(heap_t *heap, bool force);
INTERNAL uint8_t *page_block_start(const page_t *page, const void *p);
INTERNAL void page_mark_aligned(heap_t *heap, page_t *page);

/* ---- heap.c: thread heaps ------------------------------------------------------------- */
INTERNAL extern heap_t heap_empty;
/* The calling thread's heap (heap_empty until its first allocation). The one
 * thread-local read on the fast paths; every use goes through these two. */
#ifdef PLATFORM_TLS_WORDS
/* The word holds the heap's distance from heap_empty: a thread that never
 * wrote it reads 0, which is heap_empty. */
static inline heap_t *heap_current(void) {
  return (heap_t *)((uintptr_t)&heap_empty + thread_word(THREAD_HEAP));
}
static inline void heap_set_current(heap_t *heap) {
  thread_word_set(THREAD_HEAP, (uintptr_t)heap - (uintptr_t)&heap_empty);
}
#else
static inline heap_t *heap_current(void) {
  return tl_thread.heap;
}
static inline void heap_set_current(heap_t *heap) {
  tl_thread.heap = heap;
}
#endif
/* A heap for the calling thread, which has none: an abandoned one or a new one. */
INTERNAL heap_t *heap_acquire(void);
/* The calling thread, which has no heap, adopts heap if it is abandoned and
 * nobody has claimed it; false otherwise. */
INTERNAL bool heap_adopt(heap_t *heap);
/* The thread is leaving: its heap waits for the next new thread. */
INTERNAL void heap_abandon(heap_t *heap);
/* Claims an abandoned heap for a moment (false: in use, or claimed already);
 * heap_unclaim gives it back. */
INTERNAL bool heap_claim(heap_t *heap);
/* Whether heap's thread has exited: one load, so that a remote free into a
 * live heap does not pay for a call to heap_claim. */
static inline bool heap_is_abandoned(heap_t *heap) {
  return atomic_load_relaxed(&heap->xstate) == HEAP_ABANDONED;
}
INTERNAL void heap_unclaim(heap_t *heap);
INTERNAL void heaps_lock(void);
INTERNAL void heaps_unlock(void);
INTERNAL bool heaps_try_lock(void);
/* In a forked child: the heaps' lock is free again, whoever held it. */
INTERNAL void heaps_after_fork(void);
/* How many threads have allocated (since start, or since a fork). */
INTERNAL unsigned heaps_threads_seen(void);
/* When a thread last took a heap (platform_clock_ms). */
INTERNAL uint64_t heaps_last_acquire_ms(void);
/* Whether a thread has taken up the heap of one that exited (since start or
 * fork): the program starts threads as it goes. */
INTERNAL bool heaps_thread_churn(void);
/* The abandoned heaps, under the lock. */
INTERNAL heap_t *heaps_abandoned_first(void);
/* Calls visit for every heap ever created (live or abandoned), under the lock. */
INTERNAL void heaps_visit(void (*visit)(heap_t *heap, void *arg), void *arg);
/* The same without the lock, for a visit that takes nothing but each heap's
 * own locks, and only tries those: threads that start or exit meanwhile
 * need the lock. A heap created meanwhile may be missed. */
INTERNAL void heaps_visit_unlocked(void (*visit)(heap_t *heap, void *arg), void *arg);
INTERNAL void heaps_count(uint64_t *created, uint64_t *abandoned);
/* Where the list of every heap starts (linked by next_created), for a
 * reader outside the process (introspection.c). */
INTERNAL heap_t *const *heaps_list_address(void);

/* ---- fence.c: the fence between a heap's owner and the background purger ---------- */
/* Whether the purger keeps owners out with the fence (set by fence_start). */
INTERNAL extern _Atomic(bool) xfence_ready;
/* The eager purger's test library (BRISK_EAGER_PURGER) lets a test stop
 * each side of the fence where the other must find it, and counts what each
 * found (tests/core/fence_protocol.c); other builds compile them away. */
#ifdef BRISK_EAGER_PURGER
typedef struct test_hooks_s {
  _Atomic(void (*)(const void *heap)) owner_marked; /* the owner, marked busy */
  _Atomic(void (*)(const void *heap)) purger_in;    /* the purger, owner kept out */
  _Atomic(unsigned) purger_found_busy;              /* visits left to a busy owner */
  _Atomic(unsigned) owner_found_purger;             /* takes that found the purger in */
} test_hooks_t;
extern test_hooks_t brisk_test_hooks; /* default visibility: a test sets it */
#define TEST_HOOK(name, heap)                                                                      \
  do {                                                                                             \
    void (*hook_)(const void *) = atomic_load_acquire(&brisk_test_hooks.name);                     \
    if (hook_ != NULL) hook_(heap);                                                                \
  } while (0)
#define TEST_COUNT(name) atomic_add_release(&brisk_test_hooks.name, 1)
#else
#define TEST_HOOK(name, heap) ((void)0)
#define TEST_COUNT(name) ((void)0)
#endif
/* At start-up: registers the process for the fence, where the OS has one. */
INTERNAL void fence_init(void);
/* The purger's thread starts: the fence is on if the process registered. */
INTERNAL bool fence_start(void);
/* The owner's side, for a caller that knows the fence is on: true when it
 * is marked busy, so that the purger leaves the heap alone until
 * fence_owner_leave; false when the purger is in. */
static inline bool fence_owner_mark(heap_t *heap) {
  atomic_store_relaxed(&heap->xowner_busy, 1);
  atomic_signal_fence(memory_order_seq_cst); /* the CPU is fenced by the purger */
  if (likely(!atomic_load_acquire(&heap->xpurger_in))) {
    TEST_HOOK(owner_marked, heap);
    return true;
  }
  atomic_store_release(&heap->xowner_busy, 0);
  TEST_COUNT(owner_found_purger);
  return false;
}
/* fence_owner_mark, false too when there is no fence. */
static inline bool fence_owner_enter(heap_t *heap) {
  if (unlikely(!atomic_load_relaxed(&xfence_ready))) return false;
  return fence_owner_mark(heap);
}
static inline void fence_owner_leave(heap_t *heap) {
  atomic_store_release(&heap->xowner_busy, 0);
}
/* The owner keeps the purger out for certain: marked busy, else under
 * pages_lock; returns which, for fence_owner_unlock. */
static inline bool fence_owner_lock(heap_t *heap) {
  if (likely(fence_owner_enter(heap))) return true;
  brief_lock_acquire(&heap->pages_lock);
  return false;
}
static inline void fence_owner_unlock(heap_t *heap, bool marked) {
  if (marked)
    fence_owner_leave(heap);
  else
    brief_lock_release(&heap->pages_lock);
}
/* The purger's side, holding pages_lock: true when the owner is kept out
 * until fence_purger_leave (or takes the lock); false when it is busy. */
INTERNAL bool fence_purger_enter(heap_t *heap);
INTERNAL void fence_purger_leave(heap_t *heap);

/* ---- report.c: misuse reports outside the diagnostic modes, and stack traces ---- */
#define SITE_FRAMES 16
/* Finds brisk's own code, so stack traces start at the caller. */
INTERNAL void report_init(void);
/* watcher sees every fault first (and reports and aborts, or returns);
 * installs the fault hook if report_init did not. */
INTERNAL void report_fault_watch(void (*watcher)(const platform_fault *fault));
/* Whether a fault at pc is one of those functions reading a pointer's
 * bookkeeping. */
INTERNAL bool report_code_is_brisk(uintptr_t pc);
/* The pointer whose header read caused a fault in brisk (NULL: none). */
INTERNAL const void *report_faulting_pointer(const platform_fault *fault);
/* The caller's stack without brisk's frames (skip: frames of the caller's
 * own that are known to be brisk's when it is linked into the program). */
INTERNAL int stack_capture(void **frames, unsigned skip);
INTERNAL void stack_print(int fd, void *const *frames, int count, const char *indent);
INTERNAL void stack_print_current(int fd, const char *indent);
/* The calling thread starts a report: from now on it allocates from
 * heap_reporting's region, not from a heap that may be damaged. */
INTERNAL extern heap_t heap_reporting;
INTERNAL void report_begin(void);
/* Memory for a reporting thread (NULL when the region is used up). */
INTERNAL void *report_alloc(size_t size);
INTERNAL size_t report_block_size(const void *p);
/* A misuse of the API: the pointer, what is wrong, a stack trace, abort. */
INTERNAL void misuse_detected(const char *what, const void *p, const char *detail)
    __attribute__((noreturn, cold));

/* ---- arena.c: blocks above MEDIUM_MAX in a coalescing arena per heap ------- */
/* The arena range's entry, under the arena's lock (zero: the block reads
 * zero, cleared only where it must be); NULL and ENOMEM when out of memory. */
INTERNAL void *arena_alloc(heap_t *heap, size_t size, bool zero);
/* A block aligned to alignment (> 16), of at most ARENA_MAX with its
 * alignment. */
INTERNAL void *arena_alloc_aligned(heap_t *heap, size_t size, size_t alignment);
INTERNAL void arena_free(segment_t *segment, void *p);
/* realloc of an arena block in place, by its owner: p, or NULL (move it). */
INTERNAL void *arena_realloc_in_place(segment_t *segment, void *p, size_t size);
INTERNAL size_t arena_usable_size(segment_t *segment, const void *p);
/* For the diagnostic modes, whose trailer lies at a block's end: the end of
 * the live block that starts at p, or NULL when none does; *freed then says
 * whether a block freed already starts there (a double free). */
INTERNAL uint8_t *arena_block_end(segment_t *segment, const void *p, bool *freed);
/* While a freed block lies free (not merged into the chunk before it), the
 * arena writes only its first ARENA_FREED_NOTE bytes and leaves the next
 * ARENA_FREED_NOTE_BYTES as they were, purged or not: checked mode keeps
 * there who allocated the block, for the report of a second free. */
#define ARENA_FREED_NOTE 24
#define ARENA_FREED_NOTE_BYTES 24
/* Calls visit for the block of every chunk in use in an arena segment (a
 * diagnostic walk: the caller holds the arena's lock, or the program is
 * ending). */
INTERNAL void arena_chunks_visit(segment_t *segment,
                                 void (*visit)(uint8_t *block, size_t size, void *arg), void *arg);
/* The bytes of the arena's chunks in use, walked chunk by chunk, and as
 * counted for mallinfo, both under the lock (brisk_heap_check compares them). */
INTERNAL void arena_in_use_walk(heap_t *heap, size_t *walked, size_t *counted);
/* The background purger's visit; returns whether something is left to purge. */
INTERNAL bool arena_purge_expired(heap_t *heap, bool force);
/* In a forked child: the forking thread's arena, set aside if the fork
 * caught the background purger (or a signal handler's fork caught the
 * thread itself) inside it. */
INTERNAL void arena_after_fork(void);

/* ---- guard.c: sampled guard pages (BRISK_GUARD) --------------------------------------- */
#define GUARD_MAX 4096 /* the largest block guarded */
/* The rate `BRISK_GUARD=on` means: chosen by measurement (BENCHMARKS.md). */
#define GUARD_DEFAULT_RATE 1000000
#define GUARD_DEFAULT_RATE_TEXT "1000000"
/* Set once at start-up: blocks are sampled (the slow paths test it). */
INTERNAL extern bool guard_on;
/* Maps the region and watches faults, when BRISK_GUARD asks (once, at
 * process set-up, after the diagnostic modes are known). */
INTERNAL void guard_init(void);
INTERNAL void guard_after_fork(void);
/* Whether the heap's next allocation is to be guarded. */
static inline bool guard_due(const heap_t *heap) {
  return unlikely(guard_on) && heap->guard_countdown < 0;
}
/* A refill handed page to the fast path: its free blocks count down. */
INTERNAL void guard_count(heap_t *heap, const page_t *page);
/* A guarded block of size bytes; NULL when none can be had (too large,
 * every slot in use): the caller allocates as usual. */
INTERNAL void *guard_alloc(heap_t *heap, size_t size);
/* A free of a pointer in the guard region (free_unusual): checked, then its
 * page made inaccessible; misuse is reported and aborts. */
INTERNAL void guard_free(const void *p);
/* A block guard_alloc just returned, given back unused. */
INTERNAL void guard_unsample(void *p);
INTERNAL size_t guard_usable_size(const void *p);
/* The fault watcher (report_fault_watch): a fault in the region is reported
 * with the block's stacks, and the program aborts. */
INTERNAL void guard_fault(const platform_fault *fault);

/* ---- huge.c: blocks above ARENA_MAX, straight from the OS -------------------------- */
/* The huge range's entry: a mapping of its own, or a cached one (zero: the
 * block reads zero); NULL and ENOMEM when out of memory. */
INTERNAL void *huge_alloc(size_t size, size_t alignment, bool zero);
/* Frees the huge block p, which must be its segment's live block. */
INTERNAL void huge_free(segment_t *segment, const void *p);
INTERNAL void *huge_realloc(segment_t *segment, void *p, size_t size);
INTERNAL size_t huge_usable_size(const segment_t *segment, const void *p);
INTERNAL void huge_cache_collect(uint64_t now, bool force);
INTERNAL void huge_cache_after_fork(void);

/* ---- remote.c: remote frees, posted by the freeing thread, collected by the owner ---- */
/* Whether remote frees are batched: only while the purger runs with the
 * fence (remote.c); until then they are counted (PURGER_AFTER_REMOTE_FREES). */
enum { REMOTE_FREES_UNSEEN, REMOTE_FREES_SEEN, REMOTE_FREES_BATCHED };
INTERNAL extern _Atomic(uint8_t) xremote_batching;
/* Blocks head..tail for a parked page of owner: onto its delayed list. */
static inline void remote_delayed_push(heap_t *owner, block_t *head, block_t *tail) {
  block_t *seen = atomic_load_relaxed(&owner->xdelayed);
  do {
    tail->next = seen;
  } while (!atomic_cas_weak_release(&owner->xdelayed, &seen, head));
}
/* Blocks head..tail, count of them, of another thread's heap: onto their
 * page's remote list, the list's count raised by count; to the owner's
 * delayed list instead when the page is parked (XFREE_NOTIFY). */
static inline void remote_push(heap_t *owner, page_t *page, block_t *head, block_t *tail,
                               uint32_t count) {
  xfree_word_t seen = atomic_load_relaxed(&page->xthread_free);
  for (;;) {
    if (unlikely(seen & XFREE_NOTIFY)) {
      if (atomic_cas_strong_acq_rel(&page->xthread_free, &seen, seen & ~XFREE_NOTIFY)) {
        remote_delayed_push(owner, head, tail);
        return;
      }
      continue;
    }
    tail->next = XFREE_BLOCK(seen);
    xfree_word_t pushed = (uintptr_t)head | ((seen & ~(XFREE_ONE - 1)) + count * XFREE_ONE);
    if (atomic_cas_weak_release(&page->xthread_free, &seen, pushed)) return;
  }
}
/* A free into an exited thread's heap: claimed, the blocks go home at once;
 * false when the heap is in use or claimed by another thread. */
INTERNAL bool remote_post_abandoned(heap_t *owner, page_t *page, block_t *head, block_t *tail);
/* Pushes a batch's chain onto its page's remote list; the slot stays with
 * its page, empty. */
INTERNAL void remote_batch_push(remote_batch_t *batch);
/* A batch's rare turns on the freeing path, out of line and called last,
 * so that the path saves no registers: each ends the thread's busy mark
 * (fence_owner_leave). The batch is full: it goes. Another page takes the
 * slot: its blocks go first. */
INTERNAL void remote_batch_full(heap_t *heap, remote_batch_t *batch);
INTERNAL void remote_batch_open(heap_t *heap, remote_batch_t *batch, page_t *page, block_t *block);
/* A remote free made before the purger runs: counted (see xremote_batching),
 * then pushed. */
INTERNAL void remote_post_counted(heap_t *heap, heap_t *owner, page_t *page, block_t *block);
/* The slot of page's batch: pages lie 256 bytes apart in a segment header,
 * segments 4 MiB apart. */
static inline remote_batch_t *remote_batch_of(heap_t *heap, const page_t *page) {
  uintptr_t key = (uintptr_t)page;
  key = (key >> PAGE_DESCRIPTOR_SHIFT) ^ (key >> SEGMENT_SHIFT);
  return &heap->remote_batches[key % REMOTE_BATCHES];
}
/* The freeing side: block (validated, cookie written) of a live thread's
 * heap owner, into a batch or onto its page's remote list. Inline, so that
 * free_slow needs no stack frame. */
static inline void remote_post(heap_t *heap, heap_t *owner, page_t *page, block_t *block) {
  uint8_t batching = atomic_load_relaxed(&xremote_batching);
  /* Batched only once the purger runs with the fence (background.c). */
  if (likely(batching == REMOTE_FREES_BATCHED) && page->block_size <= REMOTE_BATCH_BLOCK_MAX &&
      likely(fence_owner_mark(heap))) {
    remote_batch_t *batch = remote_batch_of(heap, page);
    if (unlikely(batch->page != page)) {
      remote_batch_open(heap, batch, page, block);
      return;
    }
    block->next = batch->head;
    batch->head = block;
    if (unlikely(++batch->count == REMOTE_BATCH_MAX)) {
      remote_batch_full(heap, batch);
      return;
    }
    fence_owner_leave(heap);
    return;
  }
  if (unlikely(batching == REMOTE_FREES_UNSEEN)) {
    remote_post_counted(heap, owner, page, block);
    return;
  }
  remote_push(owner, page, block, block, 1);
}
/* Sends every batch the heap's thread holds: by the thread before it takes
 * a fresh page, or under pages_lock (its housekeeping and exit, or the purger
 * and brisk_collect() with the thread kept out). */
INTERNAL void remote_post_flush(heap_t *heap);
/* The owner's side: takes in the blocks other threads freed into its parked
 * pages (its delayed list); true when some came home. */
INTERNAL bool remote_collect(heap_t *heap);
/* The same by the background purger for an idle owner, under pages_lock:
 * blocks of pages no longer parked move to those pages' remote lists. */
INTERNAL void remote_collect_idle(heap_t *heap);

/* ---- free.c: the free path ------------------------------------------------------------- */
/* The mark an aligned block carries in its first word when its pointer lies
 * inside it (alloc.c), so that a free can tell that pointer from others. */
static inline uintptr_t aligned_mark(const void *p) {
  return (uintptr_t)p ^ free_secret ^ 0xA11Au;
}
/* A free of p (in page) that is not the start of a block brisk handed out,
 * or whose block is free already: says which, and aborts. */
INTERNAL void free_invalid(page_t *page, const void *p) __attribute__((noreturn, cold));
/* Every free that the fast path (api/fast_path.h) does not settle; heap is
 * the calling thread's. */
INTERNAL void free_slow(heap_t *heap, segment_t *segment, page_t *page, void *p);

/* ---- collect.c: giving memory back ------------------------------------------------------ */
/* Collect the heap's frees, retire its empty pages, purge what has waited
 * the purge delay (force: everything), tidy the caches and abandoned heaps. */
INTERNAL void collect_heap(heap_t *heap, bool force);
/* The platform's thread-exit callback: tidy the heap, then abandon it. */
INTERNAL void collect_thread_exit(void *heap);
/* Tidy the heaps of exited threads (force: wait for the lock). */
INTERNAL void collect_abandoned(bool force);
/* The background purger's visit to a live heap: once its thread has not
 * tidied it for IDLE_HEAP_MS (it waits, or never takes a slow path), retires
 * the pages whose blocks have all come back, so that their memory is purged
 * like any other free page; whether it retired any. Skipped while the
 * thread holds the lock. */
INTERNAL bool collect_idle_pages(heap_t *heap, uint64_t now);
/* brisk_collect(): everything, now (after any purger round under way). */
INTERNAL void collect_all(heap_t *heap);
/* A background round: false when brisk_collect() is at work (skip it). */
INTERNAL bool collect_round_try_begin(void);
INTERNAL void collect_round_end(void);
/* In a forked child: the round lock is free whoever held it. */
INTERNAL void collect_after_fork(void);

/* ---- background.c: the background purger --------------------------------------------------- */
/* Starts the purger if the process has enough mapped to want one (and the
 * setting allows); cheap once it has run once. */
INTERNAL void background_wanted(void);
/* In a forked child: the purger did not come along; start it again when wanted. */
INTERNAL void background_after_fork(void);
/* Where its count of rounds (returned false) or of the bytes given back
 * during them (true) lies, and the word's width, for introspection.c. */
INTERNAL const void *background_figure_address(bool returned, uint8_t *width);

/* ---- alloc.c: allocation, one entry per size range ---------------------------------------- */
/* A block of size bytes from its range's entry (zero: it reads zero); NULL
 * and ENOMEM when out of memory. */
INTERNAL void *alloc_sized(heap_t *heap, size_t size, bool zero);
/* The small range once the class's first page has nothing on `free`: its
 * own frees, else a refill; NULL and ENOMEM when out of memory. */
INTERNAL void *small_refill(heap_t *heap, unsigned size_class);
/* The small range's entry: the class's first page, as the direct slots do
 * for sizes up to DIRECT_MAX. */
static inline void *small_alloc(heap_t *heap, unsigned size_class) {
  page_t *page = heap->queues[size_class].first;
  if (likely(page != NULL && page->free != NULL)) return page_pop(page);
  return small_refill(heap, size_class);
}
/* The medium range's entry: the class's first page too, but with the
 * background purger kept out (see alloc.c); NULL and ENOMEM when out of
 * memory. */
INTERNAL void *medium_alloc(heap_t *heap, unsigned size_class);
/* A block of size bytes at a multiple of alignment (> ALIGNMENT_MIN),
 * routed by its size with room for the alignment. */
INTERNAL void *alloc_aligned(heap_t *heap, size_t size, size_t alignment);

/* ---- introspection.c: the descriptor `brisk top` reads from outside ------------------------ */
/* Fills in the addresses the descriptor names and marks it ready; once, at
 * process set-up. */
INTERNAL void introspection_publish(void);

#endif /* BRISK_CORE_H */
