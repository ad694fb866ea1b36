/* SPDX-License-Identifier: MIT */
/* Core types of brisk. Read this first.
 *
 * Glossary: one meaning per word (DESIGN.md's glossary says more).
 *   block        what malloc returns: a block of a page, an arena chunk's
 *                block, or a huge block.
 *   size range   small (up to SMALL_MAX), medium (up to MEDIUM_MAX), arena
 *                (up to ARENA_MAX), huge: each served one way in every
 *                build and mode (size_range_of, core.h).
 *   size class   one of CLASS_COUNT block sizes of the page ranges.
 *   page         a run of a segment holding blocks of one class: small
 *                (64 KiB) or medium (512 KiB). Never an OS page (4 KiB).
 *   segment      a SEGMENT_SIZE-aligned mapping that starts with its header
 *                (segment_t, the page descriptors), so a block finds its
 *                page by masking its address. Owned by one heap (its owner),
 *                but huge ones. Kinds: segment_kind.
 *   span         a whole mapping that starts with a segment header, as a
 *                span_cache keeps it: a free segment, or a huge block's.
 *   heap         a thread's allocator state, used by one thread at a time;
 *                abandoned when its thread exits, adopted whole by the next
 *                new thread, claimed for a moment by a thread freeing into
 *                it.
 *   owner tag    the heap whose thread may free into a page on the fast
 *                path; a page is plain when its tag is its owner.
 *   carve        lay fresh blocks out past a page's used part.
 *   local free   a free by the heap's own thread; remote free: by any other.
 *   remote list  a page's lock-free list of remote frees (xthread_free).
 *   parked page  a page with nothing free and nothing left to carve, on its
 *                heap's full list with XFREE_NOTIFY set.
 *   delayed list a heap's lock-free list of remote frees into its parked
 *                pages (xdelayed), which unparks them (remote.c).
 *   batch        remote frees of one page chained by the freeing thread and
 *                pushed onto the remote list with one CAS (remote.c).
 *   refill       the slow path of a class whose first page has nothing free.
 *   housekeeping collect_heap on the owner's slow path, now and then.
 *   retire       a page whose blocks have all come back becomes free.
 *   warm page    a class's page that a live thread keeps even when empty,
 *                with one extra count in `used`, its pin.
 *   dirty        free and still resident (pages, arena chunks); purged:
 *                its physical pages handed back (platform.h's states).
 *   arena        a heap's coalescing allocator for the arena range, in
 *                segments of its own (arena.c).
 *   chunk        a piece of an arena: a 16-byte header, then its block.
 *   huge block   a block above ARENA_MAX, in a span of its own (huge.c).
 *   purger       the background purger, brisk's thread (background.c); a
 *                round is one pass of it; an idle heap, one whose thread has
 *                not done housekeeping for IDLE_HEAP_MS.
 *   fence        what keeps a heap's owner and the purger apart without a
 *                locked instruction on the owner's side (fence.c); the
 *                owner's busy mark is its half.
 *   brief lock   a one-byte lock taken with one exchange (pages_lock).
 *   cookie       the secret every free block carries in its second word.
 *   diagnostic mode  statistics, leaks or checked mode (diag_counting):
 *                every call reaches a slow path, and each block carries a
 *                trailer behind canary bytes.
 *
 * Naming: fields prefixed x are atomics shared between threads; everything
 * else in a heap, its segments and pages is touched only by the heap's
 * current thread (or under a global lock when the heap is abandoned), except
 * where a field says otherwise (pages_lock, segments_lock).
 */
#ifndef BRISK_CORE_TYPES_H
#define BRISK_CORE_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../platform/platform.h"

/* ---- build variants: each defined once, with its meaning -----------------
 * BRISK_DEBUG            internal assertions (brisk_assert) and the page and
 *                        queue invariants re-verified after every queue move;
 *                        the platform keeps uncommitted memory inaccessible.
 *                        For tests: several times slower.
 * BRISK_NO_DIAGNOSTICS   the diagnostic modes' switches become constant
 *                        false, so every diagnostic branch compiles away.
 *                        Built only to show that with the modes off at run
 *                        time the normal build is as fast.
 * BRISK_EAGER_PURGER     the background purger at its most eager: it starts
 *                        with the second thread that allocates, runs its
 *                        rounds as often as the purge delay allows (not 50 ms
 *                        apart at least) and visits a live heap once its
 *                        thread has not tidied it for the purge delay (not
 *                        half a second), so that its work meets the owners'
 *                        at every step. Built only for tests, with the
 *                        hooks of test_hooks (core.h) that hold the owner
 *                        or the purger inside the asymmetric fence.
 * Release builds define none of them. */
#if defined(BRISK_DEBUG) && defined(BRISK_NO_DIAGNOSTICS)
#error "BRISK_DEBUG checks the diagnostic paths too: build it with diagnostics"
#endif

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* A function or variable for the library's own files only. ELF exports
 * every global symbol unless told otherwise; a PE image (Windows) exports
 * only what is marked for it (BRISK_API), so there is nothing to say. */
#ifdef __ELF__
#define INTERNAL __attribute__((visibility("hidden")))
#else
#define INTERNAL
#endif
#define NOINLINE __attribute__((noinline))

#define KiB ((size_t)1024)
#define MiB (KiB * KiB)

/* ---- geometry ------------------------------------------------------------ */
#define SEGMENT_SHIFT 22 /* 4 MiB */
#define SEGMENT_SIZE ((size_t)1 << SEGMENT_SHIFT)
#define SEGMENT_MASK (SEGMENT_SIZE - 1)

#define SMALL_PAGE_SHIFT 16  /* 64 KiB pages for blocks up to SMALL_MAX */
#define MEDIUM_PAGE_SHIFT 19 /* 512 KiB pages for blocks up to MEDIUM_MAX */
/* A huge segment holds one page; this shift makes every address in it map to
 * page 0 (a shift below the pointer's width: a mapping is smaller than half
 * the address space). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define HUGE_PAGE_SHIFT 63
#else
#define HUGE_PAGE_SHIFT 31
#endif

#define SMALL_MAX (8 * KiB)   /* >= 8 blocks per small page */
#define MEDIUM_MAX (64 * KiB) /* >= 8 blocks per medium page; larger blocks: the arena */
#define ARENA_MAX (512 * KiB) /* the arena's largest block; larger ones are huge */
#define MAX_PAGES_PER_SEGMENT (SEGMENT_SIZE >> SMALL_PAGE_SHIFT)
_Static_assert(MAX_PAGES_PER_SEGMENT <= 64, "a segment's page masks are one word");

/* malloc sizes up to DIRECT_MAX find their page with one load. */
#define DIRECT_MAX 1024
#define DIRECT_SLOTS (DIRECT_MAX / 8 + 1)

/* Size classes: multiples of 16 up to 128, then 8 classes per doubling up to
 * MEDIUM_MAX, so above 128 bytes no class wastes more than 12.5% of the
 * block. The smallest block has room for a free-list link and a cookie. */
#define CLASS_COUNT 80
/* The statistics count blocks by the same ladder continued up to ARENA_MAX,
 * arena blocks too, and huge blocks in one more slot (brisk.h's
 * BRISK_STATS_CLASSES). */
#define STATS_CLASS_COUNT 105
#define ALIGNMENT_MIN 16

/* Requests above this fail with ENOMEM before any arithmetic can overflow. */
#define SIZE_LIMIT ((size_t)PTRDIFF_MAX - 2 * SEGMENT_SIZE)

typedef enum segment_kind {
  SEGMENT_SMALL,
  SEGMENT_MEDIUM,
  SEGMENT_HUGE,
  SEGMENT_REPORT, /* memory for a thread writing a fatal report (core/report.c) */
  SEGMENT_ARENA,  /* a heap's arena: chunks of blocks above MEDIUM_MAX (arena.c) */
  SEGMENT_KIND_COUNT,
  /* Past the count: no heap lists segments of this kind (nor sizes arrays
   * by it). The region of sampled guard pages (guard.c). */
  SEGMENT_GUARD = SEGMENT_KIND_COUNT
} segment_kind;

/* A free block: the free-list link, then a cookie (a per-process secret)
 * that says "already free" to a second free. malloc clears the cookie, so a
 * live block never carries it. */
typedef struct block_s {
  struct block_s *next;
  uintptr_t cookie;
} block_t;

/* Page flags. */
enum {
  PAGE_IN_USE = 1,      /* carved for a size class (else free in its segment) */
  PAGE_IN_FULL = 2,     /* on the heap's full list, waiting for a remote free */
  PAGE_HAS_ALIGNED = 4, /* some block was handed out at an interior offset */
  PAGE_DIRTY = 8,       /* free but still resident: purge after the delay */
  PAGE_WARM = 16,       /* its class's warm page: `used` holds one pin (page.c) */
  PAGE_HUGE = 32,       /* a huge block's page: free_slow's flag test sends it on */
};

/* xthread_free is one 64-bit word: the list's first block, how many blocks
 * it holds, and a bit. The count lets the owner take the list in without
 * walking it (each block on it was last written by another core: a walk
 * would wait on one cache miss after another); so the owner reads each block
 * when it hands it out, as it would have anyway. Blocks lie below 2^48 on a
 * 64-bit machine (segments are mapped there, segment.c), which leaves the top
 * 16 bits for the count; a 32-bit machine's addresses leave it 32, and the
 * word is two of its words, changed with one double-word compare-and-swap.
 *
 * The low bit, XFREE_NOTIFY: the owner parked this page on its full list and
 * asks the next remote freer to route its block through the heap's delayed
 * list, which is how the owner learns the page has room again. */
typedef uint64_t xfree_word_t;
#define XFREE_NOTIFY ((xfree_word_t)1)
#define XFREE_COUNT_SHIFT 48
#define XFREE_ADDRESS_LIMIT ((xfree_word_t)1 << XFREE_COUNT_SHIFT)
#define XFREE_ONE ((xfree_word_t)1 << XFREE_COUNT_SHIFT)
#define XFREE_BLOCK(word)                                                                          \
  ((block_t *)(uintptr_t)((word) & (XFREE_ADDRESS_LIMIT - 1) & ~XFREE_NOTIFY))
#define XFREE_COUNT(word) ((uint32_t)((word) >> XFREE_COUNT_SHIFT))
/* Whether a segment at address lies where the word can hold its blocks. */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define XFREE_HOLDS(address) ((xfree_word_t)(address) < XFREE_ADDRESS_LIMIT - SEGMENT_SIZE)
#else
#define XFREE_HOLDS(address) ((void)(address), true)
#endif
_Static_assert(sizeof(uintptr_t) == 8 || 8 * sizeof(uintptr_t) <= XFREE_COUNT_SHIFT,
               "the remote list's word holds any address below the count");
_Static_assert(64 - XFREE_COUNT_SHIFT >= 16, "the count holds any page's blocks (page.reserved)");

struct heap_s;
struct segment_s;

/* A lock held for moments, taken with one exchange (core.h). */
typedef _Atomic(uint8_t) brief_lock_t;

/* Counting identity for an in-use page (owner's view):
 *   capacity = used - pin + |free| + |local_free|
 *   used     = blocks handed out - blocks known freed + pin
 * where pin is 1 on a warm page (PAGE_WARM), else 0. Blocks on xthread_free
 * or in the heap's delayed list are still counted in used until the owner
 * collects them.
 *
 * Three cache lines, by who writes them: the owner on every call; nobody
 * but the owner, and rarely (set-up, carving), read by every freeing
 * thread; other threads (remote frees). So a remote free never contends
 * with the owner's own stores: it validates its pointer against the second
 * line, which the owner's allocations and frees only read, and pushes onto
 * the third. (With the carved-block bound on the first line, each remote
 * free pulled the owner's hot line away from it: on a producer/consumer
 * ring the owner's next allocation stalled on its own page descriptor.) */
typedef struct page_s {
  /* written by the owner on every call */
  /* The blocks malloc hands out, last freed first: carved ones, and the
   * owner's own frees on the fast path (page_push_local). */
  _Alignas(64) block_t *free;
  /* Blocks that come back on the slow paths: other threads' frees taken in
   * from xthread_free, and the owner's frees into a page that needs care.
   * They join `free` when it runs dry (page_collect). */
  block_t *local_free;
  uint32_t used;
  struct page_s *next;
  struct page_s *prev;
  uint64_t retired_ms; /* when it became free, for the purge delay */
  /* read by any freeing thread; written when the page changes state or
   * carves more blocks */
  /* The heap whose thread may free into this page with plain stores, or
   * NULL when frees need the slow path. Invariant: xowner_tag == owner heap
   * iff the page is in use, plain (no block handed out at an interior
   * offset, not parked on the full list) and no diagnostic mode counts
   * calls. Written only by flags_set (page.c; a huge block's page
   * keeps the NULL of its zeroed header), read by page_is_plain(). */
  _Alignas(64) _Atomic(struct heap_s *) xowner_tag;
  uint8_t *area; /* first block */
  /* block_magic = floor(2^64 / block_size) + 1, so block_size * block_magic
   * = 2^64 + block_excess with 1 <= block_excess <= block_size: together they
   * tell a block's start from any other address with one multiply
   * (page_is_block_start). */
  uint64_t block_magic;
  /* capacity * block_excess: the bound page_is_block_start compares with,
   * kept beside capacity. */
  uint64_t carved_limit;
  uint32_t capacity; /* blocks carved so far; extended lazily */
  uint32_t block_size;
  uint32_t block_excess;
  uint16_t reserved; /* blocks that fit in the page */
  uint8_t size_class;
  _Atomic(uint8_t) xflags;
  uint8_t index; /* position in the segment */
  /* A small page, free (not in use) and still resident with every block it
   * carved for size_class on free or local_free, as retiring left it: taken
   * again for that class, it hands them out without carving. Cleared when
   * it is taken purged or fresh (segment.c). Medium pages are carved again:
   * see DESIGN.md, "Pages and size classes". */
  bool blocks_kept;
  /* written by other threads */
  _Alignas(64) _Atomic(xfree_word_t) xthread_free;
  /* A fourth line, touched only as a page comes and goes, makes a descriptor
   * 256 bytes, so the fast path finds it with one shift (page index << 8). */
  /* Bytes past `area` written since the page's memory was last purged or
   * fresh: how far it may be resident. Carving raises it; a medium page
   * taken by another class as its warm page purges what lies past its
   * first block (segment.c). */
  _Alignas(64) uint32_t written_end;
  /* Taken purged or never used (segment.c): a medium block carved on it is
   * faulted in whole at once (populate_block, page.c). */
  bool taken_fresh;
  uint8_t padding[59];
} page_t;
#define PAGE_DESCRIPTOR_SHIFT 8
_Static_assert(sizeof(page_t) == (1 << PAGE_DESCRIPTOR_SHIFT), "page descriptors are 256 bytes");

typedef struct page_queue_s {
  page_t *first;
  page_t *last;
} page_queue_t;

/* Counting identity: page_count = pages in use + free pages. A segment with
 * no page in use leaves its heap. */
typedef struct segment_s {
  struct heap_s *owner;
  size_t size; /* bytes mapped, header included */
  uint8_t page_shift;
  uint8_t descriptor_shift; /* page_shift - PAGE_DESCRIPTOR_SHIFT (see page_of) */
  uint8_t kind;
  uint16_t page_count;
  uint16_t used_pages;
  /* Bit i for page i: free (not in use), and free but not purged. They
   * mirror the pages' flags so that choosing a page and finding what to
   * purge read one word, not every descriptor. Owner's, under its heap's
   * segments_lock. */
  uint64_t free_mask;
  uint64_t dirty_mask;
  bool listed;            /* on its heap's list of segments with a free page */
  struct segment_s *next; /* in that list, or in a cache */
  struct segment_s *prev;
  uint64_t freed_ms; /* in the segment cache: when it entered */
  size_t huge_block; /* huge: bytes asked for by the user */
  page_t pages[];    /* page_count entries */
} segment_t;

typedef struct segment_list_s {
  segment_t *first;
} segment_list_t;

/* Per-heap counts: written only by the heap's thread, read by anyone with
 * relaxed loads. The per-call ones move only in a diagnostic mode. */
typedef struct heap_counters_s {
  uint64_t mallocs[STATS_CLASS_COUNT]; /* the last slot: huge blocks */
  uint64_t frees[STATS_CLASS_COUNT];
  uint64_t remote_frees;
  int64_t requested_bytes; /* malloc'd minus freed through this heap */
  uint64_t page_refills;
  int64_t binding_bytes; /* brisk_binding_*: allocated minus freed through this heap */
} heap_counters_t;

/* What `brisk top` shows of a heap (introspection.c), kept in every mode on
 * slow paths only, written like carved_bytes: other threads' frees the heap
 * took in (page_collect, remote_collect), and per class the refills and the
 * bytes carved on pages in use (the classes' share of carved_bytes). At the
 * heap's end, so that the fields the fast paths and remote frees use keep
 * their offsets (and their instructions). */
typedef struct heap_activity_s {
  uint64_t remote_frees_in;
  uint64_t class_refills[CLASS_COUNT];
  uint64_t class_carved[CLASS_COUNT];
} heap_activity_t;

/* A heap's arena for blocks above MEDIUM_MAX (arena.c): free chunks in
 * bins, sixteen per doubling, with a bit per non-empty bin. The owner and
 * the background purger change it under the lock; other threads only push
 * onto xremote. */
typedef struct arena_s {
  brief_lock_t lock;
  _Atomic(struct chunk_s *) xremote; /* chunks freed by other threads, for the owner */
#define ARENA_BITMAP_WORDS 5
  uint64_t bitmap[ARENA_BITMAP_WORDS];
  struct chunk_s *bins[ARENA_BITMAP_WORDS * 64];
  size_t dirty_bytes;              /* about how much of the free chunks is not purged */
  size_t in_use_bytes;             /* chunks in use, headers included (arena.c) */
  _Atomic(size_t) xsegments;       /* read by the purger without the lock */
  struct segment_s *first_segment; /* linked through segment->next */
} arena_t;

/* Blocks a thread freed into one page of another thread's heap, chained
 * but not yet pushed onto the page's remote list (remote.c, "batches"):
 * one compare-and-swap for up to REMOTE_BATCH_MAX frees. A slot stays with
 * its page when its chain goes, so that the page's next remote free costs
 * no call; only count says whether it holds blocks. */
typedef struct remote_batch_s {
  struct page_s *page; /* the page the slot serves; NULL: none yet */
  block_t *head;       /* the last block freed; count blocks chained from here */
  uint32_t count;
} remote_batch_t;
/* Slots, one batch each, chosen by page: enough that a thread freeing
 * blocks of a hundred classes in turn (a consumer of mixed-size messages)
 * finds its batch open again before another page takes the slot. */
#define REMOTE_BATCHES 128
#define REMOTE_BATCH_MAX 4
/* Four a batch, not more: threads passing messages ran slower whenever a
 * thread was descheduled holding its batches. Only blocks this small are
 * batched: a block in a batch is still in use for its owner, and held
 * medium blocks raised a pool's peak. */
#define REMOTE_BATCH_BLOCK_MAX 1024
_Static_assert(REMOTE_BATCH_MAX >= 2, "a batch is pushed when a free brings it to the maximum");

/* Who may touch a heap's own data (pages, queues, segments): its thread
 * while it is in use; once abandoned, whoever claims it for a moment (a
 * thread freeing into it, a sweep) or adopts it. */
typedef enum heap_state { HEAP_IN_USE, HEAP_ABANDONED, HEAP_CLAIMED } heap_state;

/* A thread's allocator. direct[] is the whole malloc fast path: for each
 * 8-byte size step up to DIRECT_MAX, the page to allocate from. */
typedef struct heap_s {
  page_t *direct[DIRECT_SLOTS];
  page_queue_t queues[CLASS_COUNT];               /* pages with (maybe) free blocks */
  page_queue_t full;                              /* pages with none, XFREE_NOTIFY set */
  uint64_t warm_classes[(CLASS_COUNT + 63) / 64]; /* classes that have a warm page */
  _Atomic(block_t *) xdelayed;                    /* remote frees into full pages */
  /* The queues and the pages on them: the owner changes them on its slow
   * paths and the background purger retires an idle heap's empty pages
   * (page_release_idle), both under pages_lock. The fast paths take no lock:
   * they pop only from the first page of a small class, which the purger
   * leaves alone (medium blocks are taken under the lock), and
   * push only onto a page with a block in use, which it does not take. */
  brief_lock_t pages_lock;
  /* Bytes of the blocks carved on the heap's pages in use, for mallinfo:
   * the blocks handed out, and those free on these pages' lists, which are
   * this thread's cache as glibc counts tcache (see page.c, "counting
   * carved bytes"). Changed with the queues (under pages_lock, the owner's
   * busy mark or a claim of the heap), read by anyone with relaxed loads. */
  size_t carved_bytes;
  /* The fence (fence.c): the owner's busy mark, the purger's "in". */
  _Atomic(uint8_t) xowner_busy;
  _Atomic(uint8_t) xpurger_in;
  /* The heap's segments and their free pages: the owner changes them on
   * its slow paths, the background purger purges their pages; both under
   * segments_lock (never taken on a fast path). */
  platform_lock_t segments_lock;
  segment_list_t segments[SEGMENT_KIND_COUNT]; /* segments with a free page */
  size_t dirty_bytes;                          /* free, unpurged, in this heap */
  /* When it last took a free resident page of each kind: that kind's free
   * pages are not purged until the purge delay has passed since. */
  uint64_t drawn_ms[SEGMENT_KIND_COUNT];
  uint64_t slow_calls;
  uint64_t next_housekeeping_ms;
  bool purger_check_due; /* a refill went as far as mapping: is the purger wanted? */
  struct heap_s *next_abandoned;
  uint64_t abandoned_ms;       /* when its thread exited: sweeps leave it alone a while */
  struct heap_s *next_created; /* every heap, for statistics and leak reports */
  _Atomic(uint8_t) xstate;     /* heap_state: who may touch the heap's own data */
  uint32_t os_thread;          /* the OS's id of the thread that took it last */
  heap_counters_t counters;
  arena_t arena;
  /* This heap's thread's frees into other heaps' pages, batched (remote.c). */
  bool remote_batched;             /* a batch was ever opened: flushes walk the slots */
  uint32_t remote_frees_unbatched; /* counted until PURGER_AFTER_REMOTE_FREES */
  remote_batch_t remote_batches[REMOTE_BATCHES];
  heap_activity_t activity;
  /* BRISK_GUARD: blocks refills may hand out before the next sampled one
   * (guard.c); 0 until the first refill sets it, below 0 when one is due. */
  int64_t guard_countdown;
  uint64_t guard_random;
} heap_t;

#endif /* BRISK_CORE_TYPES_H */
