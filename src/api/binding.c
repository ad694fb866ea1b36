/* SPDX-License-Identifier: MIT */
/* Entry points for language bindings that keep heap figures (BriskMM): each
 * does in one call what the binding would otherwise do in three, and keeps
 * the count of bytes in live blocks in the calling thread's heap. The common
 * case is the fast path itself plus one counter update. */
#include "fast_path.h"

#include <errno.h>
#include <string.h>

/* The binding's explicit start: where the program runs no C constructors
 * (Free Pascal and Delphi on Windows), before its first allocation. Calls
 * that come first would set brisk up too, but only this one can report that
 * brisk cannot work before the binding installs itself. */
int brisk_binding_init(void) {
  return process_start() ? 1 : 0;
}

/* The binding's explicit end, where no C destructor runs at exit: the
 * reports of the diagnostic modes, after the program's last unit. */
void brisk_binding_done(void) {
  process_stop();
}

void brisk_binding_message(const char *text) {
  if (text != NULL) platform_write(2, text, strlen(text));
}

int brisk_binding_traces(void) {
  return process_init() && diag_track_sites ? 1 : 0;
}

void brisk_binding_trace_block(void *block, void *frame) {
  diag_retrace(block, frame);
}

static void count_in(heap_t *heap, ptrdiff_t change) {
  counter_add(heap->counters.binding_bytes, (int64_t)change);
}

/* Counts a block that went through a slow path. */
static NOINLINE void count_slow(ptrdiff_t change) {
  heap_t *heap = heap_for_this_thread();
  if (heap != NULL) count_in(heap, change);
}

/* Errors of the Free Pascal entries below: Pascal's to report, through the
 * handler BriskMM sets (see brisk.h). brisk calls it last, holding no lock
 * and in the middle of nothing, so a handler that raises an exception past
 * brisk's frames, or ends the program, leaves brisk as it was. */
static _Atomic(brisk_binding_error_handler) binding_error_handler;

void brisk_binding_set_error_handler(brisk_binding_error_handler handler) {
  atomic_store_relaxed(&binding_error_handler, handler);
}

static NOINLINE void *binding_error(int error, void *block, size_t size) {
  brisk_binding_error_handler handler = atomic_load_relaxed(&binding_error_handler);
  if (error == BRISK_BINDING_OUT_OF_MEMORY) errno = ENOMEM;
  return handler != NULL ? handler(error, block, size) : NULL;
}

static NOINLINE size_t binding_foreign(int error, void *block, size_t size) {
  binding_error(error, block, size);
  return 0;
}

/* error: what to report when p is not brisk's; 0 for nothing. */
static NOINLINE size_t binding_free_slow(heap_t *heap, segment_t *segment, page_t *page, void *p,
                                         int error) {
  if (segment->kind == SEGMENT_HUGE &&
      (const uint8_t *)p >= (const uint8_t *)segment + segment->size) /* past its span */
    return error != 0 ? binding_foreign(error, p, 0) : 0;
  size_t bytes = brisk_usable_size(p);
  free_slow(heap, segment, page, p);
  count_slow(-(ptrdiff_t)bytes);
  return bytes;
}

static NOINLINE size_t binding_retire(heap_t *heap, page_t *page, size_t bytes) {
  page_retire(heap, page);
  return bytes;
}

/* Only a huge block's span is smaller than its 4 MiB unit (every other
 * segment fills it), so only there can a pointer past the span, in memory
 * that is not brisk's, still find a segment header. */
static inline size_t binding_free(void *p, int error) {
  segment_t *segment = segment_of(p);
  if (unlikely(p == NULL || !segment_map_contains(segment)))
    return p != NULL && error != 0 ? binding_foreign(error, p, 0) : 0;
  page_t *page = page_of(segment, p);
  heap_t *heap = heap_current();
  if (unlikely(!page_is_plain(page, heap))) return binding_free_slow(heap, segment, page, p, error);
  size_t bytes = page->block_size;
  count_in(heap, -(ptrdiff_t)bytes);
  if (unlikely(free_local_push(page, (block_t *)p))) return binding_retire(heap, page, bytes);
  return bytes;
}

size_t brisk_binding_free(void *p) {
  return binding_free(p, 0);
}

/* Blocks up to this size stay where they are when they shrink. Strings are
 * why: SetLength on a string it owns alone calls ReAllocMem only to shrink
 * it to half or less (ReadLn does so for every line shorter than about 120
 * characters), and brisk_realloc would move such a block, a malloc, copy
 * and free per line. The RTL's default heap never moves a block of up to
 * 544 bytes that shrinks, and glibc shrinks in place as well; what a block
 * keeps this way is at most this many bytes. Larger blocks stay when at
 * least half is still used, as brisk_realloc would keep them too. */
#define BINDING_SHRINK_IN_PLACE_MAX 512

/* Blocks up to this size that grow move to twice their size. Pascal builds
 * strings by appending (`s := s + piece`), one ReAllocMem per piece; with
 * brisk_realloc's 25% a 40-character line grown to 100 moves at nearly every
 * piece, with doubling twice. The RTL's default heap and FastMM grow small
 * blocks the same way; what a block gains is at most its own size again. */
#define BINDING_GROW_DOUBLE_MAX 1024

static NOINLINE size_t binding_size_slow(const void *p) {
  return brisk_owns(p) ? brisk_usable_size(p) : 0;
}

/* The usable size of p, 0 when brisk did not allocate it (or p is NULL).
 * The RTL asks for it before it grows a string in place (MemSize) and on
 * every ReAllocMem; for a block of the calling thread's own plain page it
 * is the page's block size, found the way the free path finds the page. */
static inline size_t binding_size_of(const void *p) {
  segment_t *segment = segment_of(p);
  if (unlikely(p == NULL || !segment_map_contains(segment))) return 0;
  page_t *page = page_of(segment, p);
  if (likely(page_is_plain(page, heap_current()))) return page->block_size;
  return binding_size_slow(p);
}

/* brisk_binding_realloc of a block brisk owns, of usable size before, or of
 * NULL (before 0). */
static void *binding_resize(void *p, size_t before, size_t size, size_t *usable) {
  if (p != NULL && size != 0 && size <= before &&
      (before <= BINDING_SHRINK_IN_PLACE_MAX || size >= before / 2)) {
    *usable = before;
    return p;
  }
  size_t target = size;
  if (size > before && before <= BINDING_GROW_DOUBLE_MAX && size < 2 * before) target = 2 * before;
  void *q = brisk_realloc(p, target);
  if (q == NULL && target != size) q = brisk_realloc(p, size); /* no room for the headroom */
  size_t after = q == NULL ? (size == 0 ? 0 : before) : binding_size_of(q);
  count_slow((ptrdiff_t)after - (ptrdiff_t)before);
  *usable = after;
  return q;
}

void *brisk_binding_realloc(void *p, size_t size, size_t *usable) {
  size_t before = binding_size_of(p);
  if (p != NULL && before == 0) {
    *usable = 0;
    errno = EINVAL;
    return NULL; /* not brisk's: nothing freed, nothing allocated */
  }
  return binding_resize(p, before, size, usable);
}

static void add_binding_bytes(heap_t *heap, void *arg) {
  *(int64_t *)arg += counter_get(heap->counters.binding_bytes);
}

size_t brisk_binding_bytes_in_use(void) {
  int64_t total = 0;
  heaps_visit(add_binding_bytes, &total);
  return total > 0 ? (size_t)total : 0;
}

/* ---- Free Pascal's memory manager ------------------------------------------
 * The entries of BriskMM's TMemoryManager record (see brisk.h): no Pascal
 * function stands between the RTL and brisk on GetMem and FreeMem. Delphi's
 * manager calls GetMem and AllocMem too, with no handler set. */
/* The slow halves are functions of their own, reached by tail calls, so the
 * fast halves need no stack frame. */
static NOINLINE void *binding_getmem_slow(size_t size) {
  void *p = malloc_past_direct(size, false);
  if (p == NULL) return binding_error(BRISK_BINDING_OUT_OF_MEMORY, NULL, size);
  count_slow((ptrdiff_t)brisk_usable_size(p));
  return p;
}

void *BRISK_BINDING_CALL brisk_binding_getmem(size_t size) {
  heap_t *heap = heap_current();
  page_t *page = fast_page(heap, size);
  if (unlikely(page == NULL)) return binding_getmem_slow(size);
  count_in(heap, (ptrdiff_t)page->block_size);
  return page_pop(page);
}

size_t BRISK_BINDING_CALL brisk_binding_freemem(void *block) {
  return binding_free(block, BRISK_BINDING_FOREIGN_FREEMEM);
}

size_t BRISK_BINDING_CALL brisk_binding_freemem_size(void *block, size_t size) {
  if (size == 0 || block == NULL) return 0;
  if (!brisk_owns(block)) return binding_foreign(BRISK_BINDING_FOREIGN_FREEMEM_SIZE, block, size);
  /* A size larger than the block catches a pointer freed with another
   * block's size, before anything is freed (cmem checks it the same way). */
  if (size > brisk_usable_size(block))
    return binding_foreign(BRISK_BINDING_SIZE_PAST_BLOCK, block, size);
  return binding_free(block, 0);
}

void *BRISK_BINDING_CALL brisk_binding_allocmem(size_t size) {
  void *p = brisk_binding_getmem(size);
  if (p != NULL) memset(p, 0, size);
  return p;
}

void *BRISK_BINDING_CALL brisk_binding_reallocmem(void **block, size_t size) {
  void *p = *block;
  if (size == 0) {
    if (p != NULL) {
      brisk_binding_freemem(p);
      *block = NULL;
    }
    return NULL;
  }
  if (p == NULL) return *block = brisk_binding_getmem(size);
  size_t before = binding_size_of(p);
  if (before == 0) return binding_error(BRISK_BINDING_FOREIGN_REALLOCMEM, p, size);
  size_t usable;
  void *q = binding_resize(p, before, size, &usable);
  if (q == NULL) return binding_error(BRISK_BINDING_OUT_OF_MEMORY, p, size);
  return *block = q;
}

size_t BRISK_BINDING_CALL brisk_binding_memsize(void *block) {
  size_t size = binding_size_of(block);
  if (unlikely(size == 0) && block != NULL)
    return binding_foreign(BRISK_BINDING_FOREIGN_MEMSIZE, block, 0);
  return size;
}
