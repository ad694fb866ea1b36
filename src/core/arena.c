/* SPDX-License-Identifier: MIT */
/* The heap's arena: blocks above MEDIUM_MAX (64 KiB) up to ARENA_MAX in
 * boundary-tagged chunks, coalesced as they are freed, so that memory one
 * size freed serves any other. A page per size class for blocks this large
 * kept, from one round of work to the next, what each class had carved
 * (DESIGN.md, "The heap's arena"). Free chunks are purged by the background
 * purger after ARENA_PURGE_MS and counted out of the committed figure;
 * calloc knows their inside reads zero. The diagnostic modes use the arena
 * as it is: a block's trailer lies at its chunk's end (arena_block_end), and
 * leak reports walk the chunks in use (arena_chunks_visit).
 *
 * A chunk: a 16-byte header (a check word, then the size and three flags),
 * then the block. A free chunk holds its list links after the header and
 * its size in its last word, so the next chunk can find its start. */
#include "core.h"

#include <string.h>

#define CHUNK_HEADER 16
#define CHUNK_MIN 48 /* header, two links and the footer */
#define CHUNK_INUSE ((uint64_t)1)
#define CHUNK_PREV_INUSE ((uint64_t)2)
#define CHUNK_PURGED ((uint64_t)8) /* free, and its inside given back to the OS */
/* On this flag, in use: freed by another thread, on the owner's remote list.
 * Set with a compare-and-swap, so a second free from any thread sees it. It
 * shares bit 3 with PURGED, which only free chunks carry. */
#define CHUNK_REMOTE ((uint64_t)8)
#define CHUNK_SIZE(head) ((head) & ~(uint64_t)15)
/* calloc clears blocks up to this size whole, even where they lie in a
 * purged chunk: a program that reads a fresh block before it writes it maps
 * the kernel's shared zero page first and faults again to replace it, and
 * with threads on other cores each replacement interrupts them all to flush
 * their TLBs. Past it, a big table calloc'd and touched in part commits only
 * what is touched, as under glibc, which maps blocks that size fresh. */
#define CALLOC_CLEAR_WHOLE_MAX (128 * KiB)
/* False in a forked child: a purge marks chunks purged before it asks the OS
 * to, so a fork in between leaves the child chunks marked purged that still
 * hold data, and it cannot tell which: calloc clears all it hands out. */
static bool zero_trusted = true;

/* The header's two words are atomic: another thread's free reads them (to
 * validate its pointer) while the owner may be flipping a flag of the same
 * chunk, and the owner flips flags of a chunk in use (PREV_INUSE) with
 * read-modify-writes so that a remote free's flag is never lost. Relaxed
 * loads and stores compile to plain moves. */
typedef struct chunk_s {
  _Atomic(uint64_t) xcheck;
  _Atomic(uint64_t) xhead;
  /* free chunks only; each link takes 8 bytes on every pointer width, so
   * the freed note (ARENA_FREED_NOTE, core.h) follows them at one offset */
  union {
    struct chunk_s *next;
    uint64_t next_slot;
  };
  union {
    struct chunk_s *prev;
    uint64_t prev_slot;
  };
  uint64_t free_ms; /* free chunks: when the purger first saw it free (0: not yet) */
} chunk_t;

#define ARENA_AREA_START align_up(sizeof(segment_t) + sizeof(page_t), 64)
/* The last 16 bytes: a fence, an in-use chunk of size 0 that stops coalescing. */
#define ARENA_AREA_END (SEGMENT_SIZE - CHUNK_HEADER)

/* The check word covers the size and the in-use bit; the flags that change
 * while the chunk keeps its size (PREV_INUSE, PURGED) are left out,
 * so that flipping them is one store. */
#define CHECKED_BITS (~(uint64_t)15 | CHUNK_INUSE)
static uint64_t chunk_check(const chunk_t *chunk, uint64_t head) {
  return free_secret ^ (uintptr_t)chunk ^ (head & CHECKED_BITS);
}

static chunk_t *chunk_at(void *p, size_t offset) {
  return (chunk_t *)((uint8_t *)p + offset);
}

static uint64_t head_of(const chunk_t *chunk) {
  return atomic_load_relaxed(&((chunk_t *)chunk)->xhead);
}

static void head_put(chunk_t *chunk, uint64_t head) {
  atomic_store_relaxed(&chunk->xhead, head);
}

static void chunk_set(chunk_t *chunk, uint64_t head) {
  head_put(chunk, head);
  atomic_store_relaxed(&chunk->xcheck, chunk_check(chunk, head));
}

/* A header that lies inside a larger free chunk now: no longer valid. */
static void chunk_forget(chunk_t *chunk) {
  atomic_store_relaxed(&chunk->xcheck, 0);
}

/* Whether chunk is a block in use, not being freed: its check word holds and
 * its flags say in use, not on the remote list. */
static bool chunk_live(const chunk_t *chunk, uint64_t head) {
  return atomic_load_relaxed(&((chunk_t *)chunk)->xcheck) == chunk_check(chunk, head) &&
         (head & (CHUNK_INUSE | CHUNK_REMOTE)) == CHUNK_INUSE;
}

/* Reports a free of p that is no live chunk's block, and aborts. */
static __attribute__((noreturn, cold)) NOINLINE void chunk_free_invalid(const void *p) {
  const chunk_t *chunk = (const chunk_t *)((const uint8_t *)p - CHUNK_HEADER);
  uint64_t head = head_of(chunk);
  bool was_block =
      atomic_load_relaxed(&((chunk_t *)chunk)->xcheck) == chunk_check(chunk, head) ||
      atomic_load_relaxed(&((chunk_t *)chunk)->xcheck) == chunk_check(chunk, head | CHUNK_INUSE);
  if (was_block) misuse_detected("double free", p, "the block is already free (double free)");
  misuse_detected("invalid free", p,
                  "no block of brisk's starts there (a pointer into a block, or a block "
                  "freed and merged with its neighbours)");
}

/* Whether p - CHUNK_HEADER can be a chunk's start in segment's area. */
static bool chunk_offset_ok(const segment_t *segment, const void *p) {
  uintptr_t offset = (uintptr_t)p - CHUNK_HEADER - (uintptr_t)segment;
  return (offset & 15) == 0 && offset - ARENA_AREA_START < ARENA_AREA_END - ARENA_AREA_START;
}

/* Bins: sixteen per doubling from 32 bytes to 4 MiB (a chunk goes in the
 * bin of the largest bin size it covers). A request looks in the bin above
 * its own, whose every chunk fits: good fit, no list walk (as TLSF). */
#define BIN_SPLIT 4 /* log2 of the bins per doubling */
static unsigned bin_of(size_t size) {
  unsigned top = 63u - (unsigned)__builtin_clzll(size); /* >= 5 */
  return (top - 5) * (1u << BIN_SPLIT) +
         (unsigned)((size >> (top - BIN_SPLIT)) & ((1u << BIN_SPLIT) - 1));
}

static void bin_push(arena_t *arena, chunk_t *chunk) {
  unsigned bin = bin_of(CHUNK_SIZE(head_of(chunk)));
  chunk->prev = NULL;
  chunk->next = arena->bins[bin];
  if (chunk->next != NULL) chunk->next->prev = chunk;
  arena->bins[bin] = chunk;
  arena->bitmap[bin / 64] |= (uint64_t)1 << (bin % 64);
}

/* The OS pages inside a free chunk of size bytes that its purge gives back:
 * all but those of its header, links and freed note, and of its footer. */
static size_t purge_range(const chunk_t *chunk, size_t size, uintptr_t *from) {
  _Static_assert(sizeof(chunk_t) == CHUNK_HEADER + ARENA_FREED_NOTE, "the note follows the links");
  *from = align_up((uintptr_t)chunk + sizeof(chunk_t) + ARENA_FREED_NOTE_BYTES, os_page_size());
  uintptr_t to = ((uintptr_t)chunk + size - 8) & ~(uintptr_t)(os_page_size() - 1);
  return to > *from ? to - *from : 0;
}

/* A purged chunk leaving its bin (to be used, or merged with a neighbour)
 * is committed again, and counted so; false where the OS would not. */
static bool chunk_unpurge(chunk_t *chunk, uint64_t head) {
  uintptr_t from;
  size_t bytes = purge_range(chunk, CHUNK_SIZE(head), &from);
  if (bytes == 0) return true;
  if (!memory_commit((void *)from, bytes)) return false;
  memory_note_committed((ptrdiff_t)bytes);
  return true;
}

/* Takes a free chunk out of its bin, committed; false, with the chunk left
 * in its bin, when it was purged and cannot be committed again (Windows,
 * out of commit charge): a malloc then fails, a free does not coalesce. */
static void bin_unlink(arena_t *arena, chunk_t *chunk, unsigned bin) {
  if (chunk->prev != NULL)
    chunk->prev->next = chunk->next;
  else
    arena->bins[bin] = chunk->next;
  if (chunk->next != NULL) chunk->next->prev = chunk->prev;
  if (arena->bins[bin] == NULL) arena->bitmap[bin / 64] &= ~((uint64_t)1 << (bin % 64));
}

static bool bin_take(arena_t *arena, chunk_t *chunk) {
  uint64_t head = head_of(chunk);
  if ((head & CHUNK_PURGED) && !chunk_unpurge(chunk, head)) return false;
  bin_unlink(arena, chunk, bin_of(CHUNK_SIZE(head)));
  return true;
}

/* Marks a chunk free: header, footer, and the next chunk's flag. */
static void chunk_make_free(chunk_t *chunk, size_t size, uint64_t prev_flag) {
  chunk_set(chunk, size | prev_flag);
  /* Timed from the purger's first sight of it: reading the clock costs
   * every free, and the time of the purger's last round (up to a second old
   * while it backs off) would take a chunk for expired as soon as it was
   * freed, and a pool pausing between bursts would fault it in again. */
  chunk->free_ms = 0;
  *(uint64_t *)((uint8_t *)chunk + size - 8) = size;
  chunk_t *next = chunk_at(chunk, size);
  atomic_and_relaxed(&next->xhead, ~CHUNK_PREV_INUSE);
}

static bool arena_grow(heap_t *heap, arena_t *arena) {
  segment_t *segment = memory_reserve(SEGMENT_SIZE, SEGMENT_SIZE, 0);
  if (segment == NULL) return false;
  /* What is written now: the header with the first chunk's, and the last
   * OS page (the free chunk's footer, the fence). The rest is committed
   * when a chunk is cut from it (chunk_unpurge). */
  size_t head_bytes = align_up(ARENA_AREA_START + sizeof(chunk_t), os_page_size());
  if (!memory_commit(segment, head_bytes) ||
      !memory_commit((uint8_t *)segment + SEGMENT_SIZE - os_page_size(), os_page_size())) {
    memory_release(segment, SEGMENT_SIZE);
    return false;
  }
  memset(segment, 0, sizeof(segment_t) + sizeof(page_t));
  segment->size = SEGMENT_SIZE;
  segment_set_page_shift(segment, HUGE_PAGE_SHIFT);
  segment->kind = SEGMENT_ARENA;
  segment->page_count = 1;
  segment->owner = heap;
  /* Owner tag NULL and PAGE_HUGE: frees take free_slow, and on to us. */
  atomic_store_relaxed(&segment->pages[0].xflags, PAGE_IN_USE | PAGE_HUGE);
  segment_map_set(segment, true);
  segment->next = arena->first_segment;
  store_publish(&arena->first_segment, segment); /* walkable by a forked child */
  chunk_t *fence = chunk_at(segment, ARENA_AREA_END);
  chunk_set(fence, CHUNK_INUSE);
  chunk_t *all = chunk_at(segment, ARENA_AREA_START);
  size_t size = ARENA_AREA_END - ARENA_AREA_START;
  chunk_make_free(all, size, CHUNK_PREV_INUSE);
  /* Fresh: its inside reads zero and holds no memory, as a purged chunk's. */
  uintptr_t from;
  memory_note_committed((ptrdiff_t)(SEGMENT_SIZE - purge_range(all, size, &from)));
  head_put(all, head_of(all) | CHUNK_PURGED);
  bin_push(arena, all);
  atomic_store_relaxed(&arena->xsegments, atomic_load_relaxed(&arena->xsegments) + 1);
  return true;
}

static chunk_t *arena_find(arena_t *arena, size_t need) {
  unsigned bin = bin_of(need);
  /* The head of the need's own bin may fit; every chunk of a higher bin does. */
  chunk_t *head = arena->bins[bin];
  if (head != NULL && CHUNK_SIZE(head_of(head)) >= need) return head;
  for (unsigned word = (bin + 1) / 64; word < ARENA_BITMAP_WORDS; word++) {
    uint64_t bits = arena->bitmap[word];
    if (word == (bin + 1) / 64) bits &= ~(uint64_t)0 << ((bin + 1) % 64);
    if (bits != 0) return arena->bins[word * 64 + (unsigned)__builtin_ctzll(bits)];
  }
  return NULL;
}

/* The bytes of the chunks in use, for mallinfo: a chunk counts whole from
 * the moment it is cut for a block until it is freed in the arena (a remote
 * free once the owner takes it in); the parts an aligned block or a
 * shrinking realloc gives back are freed as chunks of their own. Changed
 * under the lock, so a plain read-modify-write is enough; stored with a
 * relaxed store for the relaxed loads of the threads that sum the heaps'
 * counts (stats_usage_get, diag/stats.c). */
static void in_use_note(arena_t *arena, ptrdiff_t bytes) {
  counter_add(arena->in_use_bytes, (size_t)bytes);
}

/* The chunk size for a block of size bytes. */
static size_t chunk_need(size_t size) {
  size_t need = align_up(size + CHUNK_HEADER, 16);
  return need < CHUNK_MIN ? CHUNK_MIN : need;
}

static void chunk_free_local(arena_t *arena, chunk_t *chunk) {
  size_t size = CHUNK_SIZE(head_of(chunk));
  in_use_note(arena, -(ptrdiff_t)size);
  arena->dirty_bytes += size;
  uint64_t prev_flag = head_of(chunk) & CHUNK_PREV_INUSE;
  chunk_t *next = chunk_at(chunk, size);
  if (!(head_of(next) & CHUNK_INUSE) && bin_take(arena, next)) {
    size += CHUNK_SIZE(head_of(next));
    chunk_forget(next);
  }
  if (!prev_flag) {
    size_t prev_size = *(uint64_t *)((uint8_t *)chunk - 8);
    chunk_t *prev = (chunk_t *)((uint8_t *)chunk - prev_size);
    if (bin_take(arena, prev)) {
      size += prev_size;
      prev_flag = head_of(prev) & CHUNK_PREV_INUSE;
      chunk_forget(chunk);
      chunk = prev;
    }
  }
  chunk_make_free(chunk, size, prev_flag);
  bin_push(arena, chunk);
}

/* The owner takes in what other threads freed (each validated and flagged
 * by its freer: arena_free_remote). */
static void arena_drain(arena_t *arena) {
  chunk_t *chunk = atomic_exchange_acquire(&arena->xremote, NULL);
  while (chunk != NULL) {
    chunk_t *next = chunk->next;
    uint64_t head = head_of(chunk);
    /* Freed again, by a thread racing the one that queued it, since. */
    if (!chunk_live(chunk, head & ~CHUNK_REMOTE) || !(head & CHUNK_REMOTE))
      chunk_free_invalid((uint8_t *)chunk + CHUNK_HEADER);
    head_put(chunk, head & ~CHUNK_REMOTE);
    chunk_free_local(arena, chunk);
    chunk = next;
  }
}

/* With zero_size, the block's first zero_size bytes are cleared, but for
 * what lies in the purged inside of the chunk it is cut from (reads zero). */
static void *arena_take_chunk(heap_t *heap, arena_t *arena, size_t need, size_t zero_size) {
  if (atomic_load_relaxed(&arena->xremote) != NULL) arena_drain(arena);
  chunk_t *chunk = arena_find(arena, need);
  if (chunk == NULL && arena_grow(heap, arena)) chunk = arena_find(arena, need);
  if (chunk == NULL || !bin_take(arena, chunk)) return out_of_memory();
  arena->dirty_bytes = arena->dirty_bytes > need ? arena->dirty_bytes - need : 0;
  uint64_t found = head_of(chunk);
  /* A purged inside reads zero, but in a forked child, where a purge in
   * flight at the fork may have set the flag only (see arena_after_fork). */
  uintptr_t zero_from = 0;
  size_t zero_bytes = (found & CHUNK_PURGED) && zero_trusted
                          ? purge_range(chunk, CHUNK_SIZE(found), &zero_from)
                          : 0;
  size_t have = CHUNK_SIZE(found);
  uint64_t prev_flag = found & CHUNK_PREV_INUSE;
  if (have - need >= CHUNK_MIN) {
    chunk_t *rest = chunk_at(chunk, need);
    chunk_make_free(rest, have - need, CHUNK_PREV_INUSE);
    if (found & CHUNK_PURGED) { /* the rest's inside is still purged, or fresh */
      uintptr_t rest_from;
      memory_note_committed(-(ptrdiff_t)purge_range(rest, have - need, &rest_from));
      head_put(rest, head_of(rest) | CHUNK_PURGED);
    }
    bin_push(arena, rest);
    have = need;
  } else {
    chunk_t *next = chunk_at(chunk, have);
    atomic_or_relaxed(&next->xhead, CHUNK_PREV_INUSE);
  }
  chunk_set(chunk, have | CHUNK_INUSE | prev_flag);
  in_use_note(arena, (ptrdiff_t)have);
  uint8_t *block = (uint8_t *)chunk + CHUNK_HEADER;
  if (zero_size != 0) {
    uintptr_t start = (uintptr_t)block, end = start + zero_size, z_to = zero_from + zero_bytes;
    if (zero_bytes == 0 || zero_size <= CALLOC_CLEAR_WHOLE_MAX || end <= zero_from ||
        start >= z_to) {
      memset(block, 0, zero_size);
    } else {
      if (start < zero_from) memset(block, 0, zero_from - start);
      if (end > z_to) memset((void *)z_to, 0, end - z_to);
    }
  }
  return block;
}

void *arena_alloc(heap_t *heap, size_t size, bool zero) {
  arena_t *arena = &heap->arena;
  brief_lock_acquire(&arena->lock);
  void *p = arena_take_chunk(heap, arena, chunk_need(size), zero ? size : 0);
  brief_lock_release(&arena->lock);
  return p;
}

/* The chunk of a block pointer, or NULL when p is no live block here. */
static chunk_t *chunk_of(const segment_t *segment, const void *p) {
  chunk_t *chunk = (chunk_t *)((uint8_t *)p - CHUNK_HEADER);
  return chunk_offset_ok(segment, p) && chunk_live(chunk, head_of(chunk)) ? chunk : NULL;
}

/* The chunk of the live block p; anything else is reported as a bad free. */
static chunk_t *chunk_checked(const segment_t *segment, const void *p) {
  chunk_t *chunk = chunk_of(segment, p);
  if (unlikely(chunk == NULL)) chunk_free_invalid(p);
  return chunk;
}

/* Another thread's free: validated here, before anything is written, and
 * flagged CHUNK_REMOTE with a compare-and-swap, so that no second free (of
 * any thread) can put the chunk on the list again before the owner takes it
 * in; a chunk taken in is free, or in use again, and fails or passes the
 * check as any other. */
static NOINLINE void arena_free_remote(segment_t *segment, arena_t *arena, void *p) {
  chunk_t *chunk = (chunk_t *)((uint8_t *)p - CHUNK_HEADER);
  if (!chunk_offset_ok(segment, p)) chunk_free_invalid(p);
  uint64_t head = head_of(chunk);
  do {
    if (!chunk_live(chunk, head)) chunk_free_invalid(p);
  } while (!atomic_cas_weak_relaxed(&chunk->xhead, &head, head | CHUNK_REMOTE));
  chunk_t *seen = atomic_load_relaxed(&arena->xremote);
  do {
    chunk->next = seen;
  } while (!atomic_cas_weak_release(&arena->xremote, &seen, chunk));
}

/* A block aligned to alignment (> 16): a chunk with room for the block and
 * alignment more is cut in three, the free chunks before and after the
 * aligned one going back to the arena. The front is at least CHUNK_MIN, so
 * the aligned chunk has a header of its own: free and realloc need no mark
 * to find it. */
void *arena_alloc_aligned(heap_t *heap, size_t size, size_t alignment) {
  arena_t *arena = &heap->arena;
  size_t need = chunk_need(size); /* at least CHUNK_MIN: room for a free chunk's links */
  size_t whole = chunk_need(need + alignment + CHUNK_MIN);
  brief_lock_acquire(&arena->lock);
  uint8_t *p = arena_take_chunk(heap, arena, whole, 0);
  if (p == NULL) {
    brief_lock_release(&arena->lock);
    return NULL;
  }
  chunk_t *chunk = (chunk_t *)(p - CHUNK_HEADER);
  uint64_t head = head_of(chunk);
  uintptr_t block = align_up((uintptr_t)p, alignment);
  if (block - (uintptr_t)p != 0 && block - (uintptr_t)p < CHUNK_MIN) block += alignment;
  chunk_t *aligned = (chunk_t *)(block - CHUNK_HEADER);
  size_t front = (size_t)((uint8_t *)aligned - (uint8_t *)chunk);
  size_t size_left = CHUNK_SIZE(head) - front;
  if (front != 0) {
    chunk_set(aligned, size_left | CHUNK_INUSE | CHUNK_PREV_INUSE);
    chunk_set(chunk, front | CHUNK_INUSE | (head & CHUNK_PREV_INUSE));
    chunk_free_local(arena, chunk); /* clears aligned's PREV_INUSE */
  }
  if (size_left - need >= CHUNK_MIN) {
    chunk_t *rest = chunk_at(aligned, need);
    uint64_t prev_flag = head_of(aligned) & CHUNK_PREV_INUSE;
    chunk_set(aligned, need | CHUNK_INUSE | prev_flag);
    chunk_set(rest, (size_left - need) | CHUNK_INUSE | CHUNK_PREV_INUSE);
    chunk_free_local(arena, rest);
  }
  brief_lock_release(&arena->lock);
  return (void *)block;
}

static bool arena_purge_locked(arena_t *arena, uint64_t now, uint64_t min_age_ms, bool force);

void arena_free(segment_t *segment, void *p) {
  heap_t *owner = segment->owner;
  if (unlikely(owner != heap_current())) {
    arena_free_remote(segment, &owner->arena, p);
    return;
  }
  chunk_t *chunk = chunk_checked(segment, p);
  arena_t *arena = &owner->arena;
  brief_lock_acquire(&arena->lock);
  chunk_free_local(arena, chunk);
  if (unlikely(arena->dirty_bytes > ARENA_DIRTY_MAX) && memory_purge_eagerly() &&
      !memory_purge_never())
    arena_purge_locked(arena, platform_clock_ms(), 0, false);
  brief_lock_release(&arena->lock);
}

/* realloc of an arena block by its owner, in place where it can be: a block
 * that shrinks past half gives its tail back as a free chunk, one that grows
 * takes in the free chunk after it when that holds enough. Returns p, or
 * NULL when the block must move (the caller copies; nothing changed). */
void *arena_realloc_in_place(segment_t *segment, void *p, size_t size) {
  heap_t *owner = segment->owner;
  if (owner != heap_current() || size_range_of(size) != RANGE_ARENA) return NULL;
  chunk_t *chunk = chunk_checked(segment, p);
  uint64_t head = head_of(chunk);
  size_t need = chunk_need(size), have = CHUNK_SIZE(head);
  arena_t *arena = &owner->arena;
  brief_lock_acquire(&arena->lock);
  void *result = NULL;
  if (need <= have) { /* shrinking: the tail goes back once it is worth a chunk */
    if (have - need >= CHUNK_MIN && need < have / 2) {
      chunk_t *rest = chunk_at(chunk, need);
      chunk_set(chunk, need | (head & 15));
      chunk_set(rest, (have - need) | CHUNK_INUSE | CHUNK_PREV_INUSE);
      chunk_free_local(arena, rest);
    }
    result = p;
  } else {
    chunk_t *next = chunk_at(chunk, have);
    uint64_t next_head = head_of(next);
    size_t total = have + CHUNK_SIZE(next_head);
    /* As a moved block does (api/realloc.c), grow by a quarter at least
     * where there is room: a string built by appending then comes back a
     * logarithmic number of times. */
    size_t usable = have - CHUNK_HEADER, roomy = usable + usable / 4;
    if (roomy > size && roomy <= ARENA_MAX) {
      size_t more = chunk_need(roomy);
      if (total >= more) need = more;
    }
    if (!(next_head & CHUNK_INUSE) && total >= need && bin_take(arena, next)) {
      chunk_forget(next);
      in_use_note(arena, (ptrdiff_t)((total - need >= CHUNK_MIN ? need : total) - have));
      if (total - need >= CHUNK_MIN) {
        chunk_set(chunk, need | (head & 15));
        chunk_t *rest = chunk_at(chunk, need);
        chunk_make_free(rest, total - need, CHUNK_PREV_INUSE);
        bin_push(arena, rest);
      } else {
        chunk_set(chunk, total | (head & 15));
        atomic_or_relaxed(&chunk_at(chunk, total)->xhead, CHUNK_PREV_INUSE);
      }
      result = p;
    }
  }
  brief_lock_release(&arena->lock);
  return result;
}

/* Where a forked child's arena goes when the fork caught someone inside it:
 * a heap no thread uses, so its segments' blocks can still be freed (onto
 * its remote list, which nobody takes in) and nothing reads what the
 * interrupted change left. */
static heap_t arena_set_aside;

/* The child's only thread is the forking one, not inside brisk (fork is not
 * called from malloc), so a lock held on its arena was held by the purger,
 * or by this thread interrupted by a signal handler that forked, either of
 * them maybe halfway through relinking chunks. Unlike a page's lists, the
 * arena's bins are not walkable after every store, so rather than trust
 * them the child starts an empty arena and leaves the old one's memory
 * where it is: its blocks stay valid, and freeing one leaks it. */
void arena_after_fork(void) {
  zero_trusted = false;
  heap_t *heap = heap_current();
  if (heap == &heap_empty || atomic_load_relaxed(&heap->arena.lock) == 0) return;
  for (segment_t *segment = heap->arena.first_segment; segment != NULL; segment = segment->next)
    segment->owner = &arena_set_aside;
  memset(&heap->arena, 0, sizeof heap->arena);
}

void arena_chunks_visit(segment_t *segment, void (*visit)(uint8_t *block, size_t size, void *arg),
                        void *arg) {
  chunk_t *end = chunk_at(segment, ARENA_AREA_END);
  for (chunk_t *chunk = chunk_at(segment, ARENA_AREA_START); chunk < end;) {
    uint64_t head = head_of(chunk);
    if (CHUNK_SIZE(head) == 0) break; /* a wrecked header */
    if (head & CHUNK_INUSE)
      visit((uint8_t *)chunk + CHUNK_HEADER, CHUNK_SIZE(head) - CHUNK_HEADER, arg);
    chunk = chunk_at(chunk, CHUNK_SIZE(head));
  }
}

static void count_in_use(uint8_t *block, size_t size, void *total) {
  (void)block;
  *(size_t *)total += size + CHUNK_HEADER;
}

void arena_in_use_walk(heap_t *heap, size_t *walked, size_t *counted) {
  arena_t *arena = &heap->arena;
  brief_lock_acquire(&arena->lock);
  *walked = 0;
  for (segment_t *segment = arena->first_segment; segment != NULL; segment = segment->next)
    arena_chunks_visit(segment, count_in_use, walked);
  *counted = counter_get(arena->in_use_bytes);
  brief_lock_release(&arena->lock);
}

size_t arena_usable_size(segment_t *segment, const void *p) {
  return CHUNK_SIZE(head_of(chunk_checked(segment, p))) - CHUNK_HEADER;
}

uint8_t *arena_block_end(segment_t *segment, const void *p, bool *freed) {
  chunk_t *chunk = chunk_of(segment, p);
  *freed = false;
  if (chunk != NULL) return (uint8_t *)chunk + CHUNK_SIZE(head_of(chunk));
  if (chunk_offset_ok(segment, p)) {
    chunk = (chunk_t *)((uint8_t *)p - CHUNK_HEADER);
    *freed = atomic_load_relaxed(&chunk->xcheck) == chunk_check(chunk, head_of(chunk));
  }
  return NULL;
}

/* Gives back to the OS the segments that are one free chunk free for
 * min_age_ms (all of them when force), but one: a heap that empties its
 * arena and fills it again (a thread per task, a pool between bursts) would
 * otherwise map and unmap a segment each time. */
static void arena_release_empty(arena_t *arena, uint64_t now, uint64_t min_age_ms, bool force) {
  const size_t whole = ARENA_AREA_END - ARENA_AREA_START;
  unsigned bin = bin_of(whole);
  chunk_t *chunk = arena->bins[bin];
  while (chunk != NULL) {
    chunk_t *next = chunk->next;
    uint64_t head = head_of(chunk);
    size_t kept = force ? 0 : 1;
    if (CHUNK_SIZE(head) == whole && (force || now >= chunk->free_ms + min_age_ms) &&
        atomic_load_relaxed(&arena->xsegments) > kept) {
      bin_unlink(arena, chunk, bin);
      segment_t *segment = segment_of(chunk);
      segment_t **link = &arena->first_segment;
      while (*link != segment)
        link = &(*link)->next;
      store_publish(link, segment->next);
      uintptr_t from;
      size_t purged = (head & CHUNK_PURGED) ? purge_range(chunk, whole, &from) : 0;
      memory_note_committed(-(ptrdiff_t)(SEGMENT_SIZE - purged));
      segment_map_set(segment, false);
      memory_release(segment, SEGMENT_SIZE);
      atomic_store_relaxed(&arena->xsegments, atomic_load_relaxed(&arena->xsegments) - 1);
    }
    chunk = next;
  }
}

/* Under the lock: purges the inside of every chunk free for min_age_ms
 * (all of them when 0), and gives back empty segments but one (all of them
 * when force). Returns whether a free chunk was left resident. */
static bool arena_purge_locked(arena_t *arena, uint64_t now, uint64_t min_age_ms, bool force) {
  if (atomic_load_relaxed(&arena->xremote) != NULL) arena_drain(arena);
  bool pending = false;
  size_t dirty = 0;
  for (unsigned bin = 0; bin < ARENA_BITMAP_WORDS * 64; bin++) {
    for (chunk_t *chunk = arena->bins[bin]; chunk != NULL; chunk = chunk->next) {
      if (chunk->free_ms == 0) { /* first seen free: its wait starts now */
        chunk->free_ms = now;
        pending = true;
      }
      if (head_of(chunk) & CHUNK_PURGED) continue;
      if (now < chunk->free_ms + min_age_ms) {
        pending = true;
        dirty += CHUNK_SIZE(head_of(chunk));
        continue;
      }
      uintptr_t from;
      size_t bytes = purge_range(chunk, CHUNK_SIZE(head_of(chunk)), &from);
      head_put(chunk, head_of(chunk) | CHUNK_PURGED); /* first: as segment.c's purges */
      if (bytes == 0) continue;
      memory_note_committed(-(ptrdiff_t)bytes);
      memory_purge((void *)from, bytes);
    }
  }
  arena->dirty_bytes = dirty;
  arena_release_empty(arena, now, min_age_ms, force);
  return pending;
}

/* The background purger's visit: the inside of every chunk free for
 * ARENA_PURGE_MS goes back to the OS (every free chunk's when force).
 * Returns whether something is left to purge later. Skipped while the
 * owner is at it. */
bool arena_purge_expired(heap_t *heap, bool force) {
  arena_t *arena = &heap->arena;
  if (atomic_load_relaxed(&arena->xsegments) == 0 || (!force && memory_purge_never())) return false;
  if (force)
    brief_lock_acquire(&arena->lock);
  else if (!brief_lock_try(&arena->lock))
    return true;
  /* The clock is read under the lock, so that no chunk freed before the
   * lock was taken is timed from before its free: the purger may be
   * preempted anywhere before it. */
  uint64_t now = platform_clock_ms();
  bool pending = arena_purge_locked(arena, now, force ? 0 : ARENA_PURGE_MS, force);
  brief_lock_release(&arena->lock);
  return pending;
}
