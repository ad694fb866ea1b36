/* The operating-system layer: every mmap, munmap, madvise and mremap of brisk
 * is here, with the process-wide counters they move.
 *
 * Memory states: "mapped" address space is reserved and readable; "committed"
 * is mapped and possibly resident (touched and not purged since); "purged"
 * pages were handed back with MADV_DONTNEED and read as zero. */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static _Atomic(size_t) xmapped, xmapped_peak, xcommitted, xcommitted_peak, xlarge_in_use;
static _Atomic(uint64_t) xmaps, xunmaps, xpurges, xremaps;

void os_counters(uint64_t *maps, uint64_t *unmaps, uint64_t *purges, uint64_t *remaps) {
  *maps = atomic_load_relaxed(&xmaps);
  *unmaps = atomic_load_relaxed(&xunmaps);
  *purges = atomic_load_relaxed(&xpurges);
  *remaps = atomic_load_relaxed(&xremaps);
}

static void note_call(_Atomic(uint64_t) *counter) {
  atomic_add_relaxed(counter, 1);
  profile_event_note(EVENT_OS_CALL);
}

static int unmap_raw(void *p, size_t size) {
  note_call(&xunmaps);
  return munmap(p, size);
}

static void raise_peak(_Atomic(size_t) *peak, size_t value) {
  size_t seen = atomic_load_relaxed(peak);
  while (value > seen && !atomic_compare_exchange_weak_explicit(
                             peak, &seen, value, memory_order_relaxed, memory_order_relaxed)) {
  }
}

static void note_mapped(ptrdiff_t delta) {
  size_t now = atomic_add_relaxed(&xmapped, (size_t)delta) + (size_t)delta;
  if (delta > 0) raise_peak(&xmapped_peak, now);
}

void os_note_committed(ptrdiff_t delta) {
  size_t now = atomic_add_relaxed(&xcommitted, (size_t)delta) + (size_t)delta;
  if (delta > 0) raise_peak(&xcommitted_peak, now);
}

void os_note_large_in_use(ptrdiff_t delta) {
  atomic_add_relaxed(&xlarge_in_use, (size_t)delta);
}

static void *map_raw(void *hint, size_t size, int extra_flags) {
  note_call(&xmaps);
  void *p = mmap(hint, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1, 0);
  if (p == MAP_FAILED) {
    errno = ENOMEM;
    return NULL;
  }
  return p;
}

void *os_reserve(size_t size) {
  return map_raw(NULL, size, 0);
}
void os_release(void *p, size_t size) {
  unmap_raw(p, size);
}

void os_unmap(void *p, size_t size) {
  if (unmap_raw(p, size) == 0) note_mapped(-(ptrdiff_t)size);
}

/* The kernel hands out addresses top-down; asking just below the last
 * segment usually yields an aligned range in one call. */
static _Atomic(uintptr_t) xnext_hint;

void *os_map_segment(size_t size, size_t alignment, size_t offset) {
  if (alignment < SEGMENT_SIZE) alignment = SEGMENT_SIZE;
  if (offset % alignment == 0) {
    uintptr_t hint = atomic_load_relaxed(&xnext_hint);
    if (hint > size + SEGMENT_SIZE) {
      uintptr_t want = (hint - size) & ~(uintptr_t)(alignment - 1);
      void *p = map_raw((void *)want, size, 0);
      if (p != NULL && ((uintptr_t)p & (alignment - 1)) == 0) {
        atomic_store_relaxed(&xnext_hint, (uintptr_t)p);
        note_mapped((ptrdiff_t)size);
        return p;
      }
      if (p != NULL) unmap_raw(p, size);
    }
  }
  /* Over-map and trim both ends. */
  size_t over = size + alignment;
  if (over < size) return NULL;
  uint8_t *raw = map_raw(NULL, over, 0);
  if (raw == NULL) return NULL;
  uintptr_t base = align_up((uintptr_t)raw + offset, alignment) - offset;
  if (base < (uintptr_t)raw) base += alignment;
  size_t head = base - (uintptr_t)raw;
  size_t tail = over - head - size;
  if (head != 0) unmap_raw(raw, head);
  if (tail != 0) unmap_raw((uint8_t *)base + size, tail);
  atomic_store_relaxed(&xnext_hint, base);
  note_mapped((ptrdiff_t)size);
  return (void *)base;
}

void os_purge(void *p, size_t size) {
  note_call(&xpurges);
  madvise(p, size, MADV_DONTNEED);
}

bool os_extend_in_place(void *p, size_t old_size, size_t new_size) {
  uint8_t *want = (uint8_t *)p + old_size;
  size_t extra = new_size - old_size;
  void *got = map_raw(want, extra, MAP_FIXED_NOREPLACE);
  if (got == NULL) return false;
  if (got != want) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
    unmap_raw(got, extra);
    return false;
  }
  note_mapped((ptrdiff_t)extra);
  return true;
}

void *os_move_grow(void *p, size_t old_size, size_t new_size) {
  void *target = os_map_segment(new_size, SEGMENT_SIZE, 0);
  if (target == NULL) return NULL;
  note_call(&xremaps);
  void *moved = mremap(p, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (moved == MAP_FAILED) {
    os_unmap(target, new_size);
    return NULL;
  }
  note_mapped(-(ptrdiff_t)old_size); /* the old range is gone; target was counted */
  return moved;
}

uint64_t os_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void os_memory_info(brisk_memory_info *info) {
  info->mapped = atomic_load_relaxed(&xmapped);
  info->mapped_peak = atomic_load_relaxed(&xmapped_peak);
  info->committed = atomic_load_relaxed(&xcommitted);
  info->committed_peak = atomic_load_relaxed(&xcommitted_peak);
  info->large_in_use = atomic_load_relaxed(&xlarge_in_use);
}
