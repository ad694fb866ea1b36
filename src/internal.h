/* Internal interface of brisk, grouped by the file that defines each part. */
#ifndef BRISK_INTERNAL_H
#define BRISK_INTERNAL_H

#include "brisk.h"
#include "types.h"

#include <pthread.h>

/* ---- build variants ----------------------------------------------------------
 * BRISK_NO_DIAGNOSTICS: the diagnostic modes' switches become constant false,
 * so every diagnostic branch compiles away. Built only to show that with the
 * modes off at run time the normal build is as fast (docs/BENCHMARKS.md). */
#ifdef BRISK_NO_DIAGNOSTICS
#define DIAG_FLAG(name) static const bool name = false
#else
#define DIAG_FLAG(name) INTERNAL extern bool name
#endif

/* ---- atomics: the memory order is part of the name ------------------------ */
#define atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define atomic_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define atomic_store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define atomic_store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define atomic_exchange_acquire(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
#define atomic_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define atomic_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define atomic_cas_weak_release(p, expected, desired)                                              \
  atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_release,          \
                                        memory_order_relaxed)
#define atomic_cas_strong_acq_rel(p, expected, desired)                                            \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel,        \
                                          memory_order_acquire)

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
static inline page_t *page_of(segment_t *segment, const void *p) {
  return &segment->pages[((uintptr_t)p - (uintptr_t)segment) >> segment->page_shift];
}

/* ---- free-block cookie (see block_t) ------------------------------------- */
INTERNAL extern uintptr_t free_secret;
static inline uintptr_t free_cookie(const block_t *block) {
  return (uintptr_t)block ^ free_secret;
}
/* A second free of a block: report it with a stack trace, then abort. */
INTERNAL void double_free_detected(const void *p) __attribute__((noreturn));

/* ---- segment lists: a heap's segments with free pages, and the two caches --- */
static inline void segment_list_push(segment_list_t *list, segment_t *segment) {
  segment->prev = NULL;
  segment->next = list->first;
  if (list->first != NULL) list->first->prev = segment;
  list->first = segment;
  list->count++;
}
static inline void segment_list_remove(segment_list_t *list, segment_t *segment) {
  if (segment->prev != NULL)
    segment->prev->next = segment->next;
  else
    list->first = segment->next;
  if (segment->next != NULL) segment->next->prev = segment->prev;
  segment->next = segment->prev = NULL;
  list->count--;
}

/* ---- size_class.c --------------------------------------------------------- */
INTERNAL extern const uint32_t class_size[CLASS_COUNT];
static inline unsigned size_class_of(size_t size) {
  if (size <= 16) return 0;
  if (size <= 128) return (unsigned)((size + 15) >> 4) - 1;
  size_t s = size - 1;
  unsigned top = 63u - (unsigned)__builtin_clzll(s); /* >= 7 */
  return 8 + (top - 7) * 8 + (unsigned)((s >> (top - 3)) & 7);
}
INTERNAL segment_kind size_class_kind(unsigned size_class);
/* direct[] slots [first, last] that map to this class (empty when first > last). */
INTERNAL void size_class_direct_slots(unsigned size_class, unsigned *first, unsigned *last);

/* ---- os.c: the only file that talks to the kernel -------------------------- */
/* Address space for brisk's own tables: not counted as heap memory. */
INTERNAL void *os_reserve(size_t size);
INTERNAL void os_release(void *p, size_t size);
/* A mapping of size bytes at base with base % SEGMENT_SIZE == 0 and
 * (base + offset) % alignment == 0. */
INTERNAL void *os_map_segment(size_t size, size_t alignment, size_t offset);
INTERNAL void os_unmap(void *p, size_t size);
/* Give the pages back but keep the address range (they read as zero after). */
INTERNAL void os_purge(void *p, size_t size);
/* Grow [p, p+old) to [p, p+new) without moving; false when the range is taken. */
INTERNAL bool os_extend_in_place(void *p, size_t old_size, size_t new_size);
/* Move [p, p+old) to a fresh segment-aligned range of new_size without copying. */
INTERNAL void *os_move_grow(void *p, size_t old_size, size_t new_size);
INTERNAL void os_note_committed(ptrdiff_t delta);
INTERNAL uint64_t os_clock_ms(void);
INTERNAL void os_memory_info(struct brisk_memory_info *info);
INTERNAL void os_note_large_in_use(ptrdiff_t delta);

/* ---- options.c -------------------------------------------------------------- */
typedef enum option_id {
  OPTION_PURGE_DELAY, /* ms before free memory goes back to the OS; <0: never */
  OPTION_STATS,
  OPTION_LEAKS,
  OPTION_PROFILE,
  OPTION_PROFILE_RATE,
  OPTION_CHECK,
  OPTION_COUNT
} option_id;
INTERNAL long option_get(option_id id);
INTERNAL void options_init(void);

/* ---- segment_map.c: which 4 MiB units hold a segment header ---------------- */
INTERNAL void segment_map_set(segment_t *segment, bool present);
#define SEGMENT_UNIT_COUNT ((size_t)1 << (47 - SEGMENT_SHIFT)) /* 128 TiB of user space */
INTERNAL extern _Atomic(uint8_t) *_Atomic xsegment_units;
static inline bool segment_map_contains(const segment_t *segment) {
  uintptr_t unit = (uintptr_t)segment >> SEGMENT_SHIFT;
  if (unit >= SEGMENT_UNIT_COUNT) return false;
  _Atomic(uint8_t) *units = atomic_load_acquire(&xsegment_units);
  return units != NULL && atomic_load_acquire(&units[unit]) != 0;
}
/* Calls visit for every mapped segment (a diagnostic walk; not synchronised). */
INTERNAL void segment_map_visit(void (*visit)(segment_t *segment, void *arg), void *arg);

/* ---- segment.c: segments and the pages inside them ------------------------- */
INTERNAL page_t *segment_page_alloc(heap_t *heap, segment_kind kind);
INTERNAL void segment_page_free(heap_t *heap, page_t *page);
INTERNAL size_t segment_page_bytes(const segment_t *segment, const page_t *page, uint8_t **area);
INTERNAL void segment_purge_expired(heap_t *heap, uint64_t now, bool force);
INTERNAL void segment_cache_collect(uint64_t now, bool force);
INTERNAL void segment_cache_lock(void);
INTERNAL void segment_cache_unlock(void);

/* ---- page.c: the allocation slow path --------------------------------------- */
INTERNAL void *page_malloc_generic(heap_t *heap, size_t size);
INTERNAL void page_retire(heap_t *heap, page_t *page);
INTERNAL uint8_t *page_block_start(const page_t *page, const void *p);
INTERNAL void page_mark_aligned(page_t *page);
INTERNAL void page_collect_heap(heap_t *heap, uint64_t now, bool force);
INTERNAL extern page_t page_empty;

/* ---- heap.c: thread heaps ---------------------------------------------------- */
INTERNAL extern heap_t heap_empty;
INTERNAL extern __thread heap_t *tl_heap;
INTERNAL heap_t *heap_for_this_thread(void);
INTERNAL void heap_housekeeping(heap_t *heap, bool force);
INTERNAL void heap_push_delayed(heap_t *heap, block_t *block);
INTERNAL void heap_thread_exit(void *heap);
INTERNAL void heaps_collect_abandoned(bool force);
INTERNAL void heap_note_remote_free(heap_t *owner);
INTERNAL void heaps_lock(void);
INTERNAL void heaps_unlock(void);
/* Calls visit for every heap ever created (live or abandoned), under the lock. */
INTERNAL void heaps_visit(void (*visit)(heap_t *heap, void *arg), void *arg);
INTERNAL void heaps_count(uint64_t *created, uint64_t *abandoned);

/* ---- huge.c: blocks above LARGE_MAX, straight from the OS -------------------- */
INTERNAL void *huge_malloc(size_t size, size_t alignment, bool zero);
INTERNAL void huge_free(segment_t *segment);
INTERNAL void *huge_realloc(segment_t *segment, void *p, size_t size);
INTERNAL size_t huge_usable_size(const segment_t *segment, const void *p);
INTERNAL void huge_cache_collect(uint64_t now, bool force);
INTERNAL void huge_cache_lock(void);
INTERNAL void huge_cache_unlock(void);

/* ---- alloc.c / free.c: the API ------------------------------------------------ */
INTERNAL void *malloc_slow(size_t size, bool zero);
INTERNAL void *aligned_malloc(size_t alignment, size_t size);
INTERNAL void free_slow(segment_t *segment, page_t *page, void *p);

/* ---- diag.c: diagnostic modes, entered only from slow paths ------------------------ */
/* diag_counting: every call is counted, so heaps keep their fast paths empty
 * and every malloc and free comes through diag_malloc / diag_free. */
DIAG_FLAG(diag_counting);
/* The last bytes of every block while diag_counting is on. */
typedef struct diag_trailer_s {
  uint64_t requested; /* bytes asked for */
  uintptr_t user;     /* the pointer handed out (aligned blocks: inside the block) */
  uint32_t site;      /* allocation call site, 0 when unknown */
  uint32_t state;     /* DIAG_LIVE or DIAG_FREED */
} diag_trailer_t;
#define DIAG_LIVE 0x4556494cu  /* "LIVE" */
#define DIAG_FREED 0x45455246u /* "FREE" */

DIAG_FLAG(diag_check);
INTERNAL void diag_init(void);
INTERNAL void *diag_malloc(heap_t *heap, size_t size, size_t alignment, bool zero);
INTERNAL void diag_free(segment_t *segment, page_t *page, void *p);
INTERNAL size_t diag_usable_size(const void *p);
INTERNAL void free_block(segment_t *segment, page_t *page, void *p);
#define counter_add(c, n)                                                                          \
  __atomic_store_n(&(c), __atomic_load_n(&(c), __ATOMIC_RELAXED) + (n), __ATOMIC_RELAXED)
#define counter_get(c) __atomic_load_n(&(c), __ATOMIC_RELAXED)

/* ---- sites.c: stack traces grouped by call site ---------------------------------- */
#define SITE_FRAMES 16
INTERNAL uint32_t site_capture(unsigned skip);
INTERNAL void site_note(uint32_t site, uint64_t count, uint64_t bytes);
INTERNAL void site_print_trace(int fd, uint32_t site, const char *indent);
INTERNAL void site_print_current(int fd, const char *indent);
INTERNAL void sites_warm_up(void);
/* Whether a code address lies in brisk (the library, or its entry points when
 * brisk is linked into the program). */
INTERNAL bool sites_code_is_brisk(uintptr_t pc);
INTERNAL void sites_find_own_code(void);
INTERNAL extern _Thread_local bool tl_in_diag;
INTERNAL uint32_t site_capture_kind(unsigned skip, int kind);
/* Sites with a count, largest first: profile events (events) or allocation
 * sites (!events), ranked by bytes or by count. */
INTERNAL size_t sites_sorted(uint32_t *ids, size_t max, bool by_bytes, bool events);
INTERNAL void sites_reset_counts(void);
INTERNAL uint64_t site_count(uint32_t site);
INTERNAL uint64_t site_bytes(uint32_t site);
INTERNAL int site_kind(uint32_t site);

INTERNAL void fd_printf(int fd, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* ---- symbols.c: names for code addresses in reports ----------------------------- */
/* Names every frame at once (one addr2line run per module). */
INTERNAL void symbols_prepare(void *const *frames, size_t count);
/* "function (file:line)" of a return address, as well as it can be named. */
INTERNAL void symbols_describe(void *address, char *out, size_t size);
INTERNAL void sites_prepare_names(const uint32_t *ids, size_t count);

/* ---- profile.c: sampled slow-path events ------------------------------------------- */
typedef enum profile_event {
  EVENT_REFILL,      /* a thread's page for a size class ran dry */
  EVENT_SEGMENT,     /* a heap needed a new segment from the process cache or the OS */
  EVENT_REMOTE_FREE, /* a block freed by a thread other than its owner */
  EVENT_LOCK_WAIT,   /* a thread waited on one of brisk's few locks */
  EVENT_OS_CALL,     /* mmap, munmap, madvise or mremap */
  EVENT_KIND_COUNT
} profile_event;
DIAG_FLAG(profile_on);
INTERNAL void profile_event_slow(profile_event kind);
static inline void profile_event_note(profile_event kind) {
  if (unlikely(profile_on)) profile_event_slow(kind);
}
INTERNAL void profile_report(void);

/* ---- leaks.c ------------------------------------------------------------------------ */
INTERNAL void leaks_report(void);

/* ---- stats.c ------------------------------------------------------------------------ */
INTERNAL void stats_report_at_exit(void);
INTERNAL void os_counters(uint64_t *maps, uint64_t *unmaps, uint64_t *purges, uint64_t *remaps);

/* A mutex whose waits show in the profile. */
static inline void mutex_lock_profiled(pthread_mutex_t *mutex) {
  if (pthread_mutex_trylock(mutex) == 0) return;
  profile_event_note(EVENT_LOCK_WAIT);
  pthread_mutex_lock(mutex);
}

/* ---- init.c --------------------------------------------------------------------- */
INTERNAL void process_init(void);
INTERNAL extern pthread_key_t thread_exit_key;

#endif /* BRISK_INTERNAL_H */
