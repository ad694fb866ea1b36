/* SPDX-License-Identifier: MIT */
/* Memory from the platform, and the process-wide figures brisk reports:
 * address space mapped, memory committed (mapped and possibly resident),
 * bytes in live huge blocks and their mappings, and how often the OS was
 * called. */
#include "core.h"

static _Atomic(size_t) xmapped, xmapped_peak, xcommitted, xcommitted_peak, xlarge_in_use;
static _Atomic(uint64_t) xmaps, xunmaps, xpurges, xremaps;
/* Bytes handed back: purged, and released (unmapped). */
static _Atomic(uint64_t) xpurged_bytes, xreleased_bytes;
/* Live huge blocks and the bytes of their mappings, with their peaks. */
static _Atomic(size_t) xhuge_blocks, xhuge_blocks_peak, xhuge_bytes, xhuge_bytes_peak;
_Atomic(bool) xmemory_purge_eagerly = true;
static _Atomic(size_t) xos_page_size;

size_t os_page_size(void) {
  size_t size = atomic_load_relaxed(&xos_page_size);
  if (likely(size != 0)) return size;
  size = platform_page_size();
  atomic_store_relaxed(&xos_page_size, size);
  return size;
}

static void note_call(_Atomic(uint64_t) *counter) {
  atomic_add_relaxed(counter, 1);
  event_note(EVENT_OS_CALL);
}

/* Adds delta to a figure, raising its peak when it grows. */
static void note_with_peak(_Atomic(size_t) *figure, _Atomic(size_t) *peak, ptrdiff_t delta) {
  size_t now = atomic_add_relaxed(figure, (size_t)delta) + (size_t)delta;
  if (delta <= 0) return;
  size_t seen = atomic_load_relaxed(peak);
  while (now > seen && !atomic_cas_weak_relaxed(peak, &seen, now)) {
  }
}

static void note_mapped(ptrdiff_t delta) {
  note_with_peak(&xmapped, &xmapped_peak, delta);
}

void memory_note_committed(ptrdiff_t delta) {
  note_with_peak(&xcommitted, &xcommitted_peak, delta);
}

void memory_note_large_in_use(ptrdiff_t delta) {
  atomic_add_relaxed(&xlarge_in_use, (size_t)delta);
}

void memory_note_huge(ptrdiff_t blocks, ptrdiff_t bytes) {
  if (blocks != 0) note_with_peak(&xhuge_blocks, &xhuge_blocks_peak, blocks);
  note_with_peak(&xhuge_bytes, &xhuge_bytes_peak, bytes);
}

void memory_huge_figures(huge_figures *figures) {
  figures->blocks = atomic_load_relaxed(&xhuge_blocks);
  figures->blocks_peak = atomic_load_relaxed(&xhuge_blocks_peak);
  figures->bytes = atomic_load_relaxed(&xhuge_bytes);
  figures->bytes_peak = atomic_load_relaxed(&xhuge_bytes_peak);
}

/* BRISK_HUGE_PAGES: every reservation (segments and huge blocks, all 4 MiB
 * or more) is advised for huge pages, so a program that touches hundreds of
 * megabytes takes a fault per 2 MiB instead of per 4 KiB. Off by default:
 * a huge page is resident whole once any byte of it is touched, so a heap
 * that uses part of a segment keeps up to 2 MiB more. */
static void advise_huge_pages(void *p, size_t size) {
  if (option_get(OPTION_HUGE_PAGES)) platform_advise_huge_pages(p, size);
}

void *memory_reserve(size_t size, size_t alignment, size_t offset) {
  note_call(&xmaps);
  void *p = platform_reserve_aligned(size, alignment, offset);
  if (p != NULL) {
    note_mapped((ptrdiff_t)size);
    advise_huge_pages(p, size);
  }
  return p;
}

bool memory_commit(void *p, size_t size) {
  return platform_commit(p, size);
}

void memory_purge(void *p, size_t size) {
  note_call(&xpurges);
  atomic_add_relaxed(&xpurged_bytes, size);
  platform_purge(p, size);
}

void memory_populate(void *p, size_t size) {
  platform_populate(p, size);
}

/* A tail that the OS cannot release on its own (Windows releases only whole
 * reservations) is purged instead: its address space stays reserved until
 * the whole reservation goes, holding no memory, and it no longer counts as
 * mapped (the whole reservation's release counts only what is left). */
void memory_release(void *p, size_t size) {
  note_call(&xunmaps);
  atomic_add_relaxed(&xreleased_bytes, size);
  if (!platform_release(p, size)) platform_purge(p, size);
  note_mapped(-(ptrdiff_t)size);
}

bool memory_extend(void *p, size_t size, size_t new_size) {
  note_call(&xmaps);
  if (!platform_extend(p, size, new_size)) return false;
  note_mapped((ptrdiff_t)(new_size - size));
  advise_huge_pages((uint8_t *)p + size, new_size - size);
  return true;
}

void *memory_move_grow(void *p, size_t size, size_t new_size) {
  note_call(&xremaps);
  /* The mapping moved and grown keeps the advice it had (mremap carries it
   * over the whole new size). */
  void *moved = platform_move_grow(p, size, new_size, SEGMENT_SIZE);
  if (moved != NULL) note_mapped((ptrdiff_t)(new_size - size));
  return moved;
}

bool memory_move_pages(void *from, size_t size, void *to) {
  note_call(&xremaps);
  if (!platform_move_pages(from, size, to)) return false;
  note_mapped(-(ptrdiff_t)size); /* the range they left; `to` was counted already */
  return true;
}

void memory_info(brisk_memory_info *info) {
  info->mapped = atomic_load_relaxed(&xmapped);
  info->mapped_peak = atomic_load_relaxed(&xmapped_peak);
  info->committed = atomic_load_relaxed(&xcommitted);
  info->committed_peak = atomic_load_relaxed(&xcommitted_peak);
  info->large_in_use = atomic_load_relaxed(&xlarge_in_use);
}

void memory_os_calls(uint64_t *maps, uint64_t *unmaps, uint64_t *purges, uint64_t *remaps) {
  *maps = atomic_load_relaxed(&xmaps);
  *unmaps = atomic_load_relaxed(&xunmaps);
  *purges = atomic_load_relaxed(&xpurges);
  *remaps = atomic_load_relaxed(&xremaps);
}

uint64_t memory_returned_bytes(void) {
  return atomic_load_relaxed(&xpurged_bytes) + atomic_load_relaxed(&xreleased_bytes);
}

/* Each with its width: the byte counts are size_t, the process's own width,
 * the counts of OS calls 64-bit on every build. */
static const void *const figure_address[MEMORY_FIGURE_COUNT] = {
    [FIGURE_MAPPED] = &xmapped,
    [FIGURE_COMMITTED] = &xcommitted,
    [FIGURE_COMMITTED_PEAK] = &xcommitted_peak,
    [FIGURE_HUGE_BYTES] = &xhuge_bytes,
    [FIGURE_OS_MAPS] = &xmaps,
    [FIGURE_OS_UNMAPS] = &xunmaps,
    [FIGURE_OS_PURGES] = &xpurges,
    [FIGURE_OS_REMAPS] = &xremaps,
    [FIGURE_PURGED_BYTES] = &xpurged_bytes,
    [FIGURE_RELEASED_BYTES] = &xreleased_bytes,
};

static const uint8_t figure_width[MEMORY_FIGURE_COUNT] = {
    [FIGURE_MAPPED] = sizeof xmapped,
    [FIGURE_COMMITTED] = sizeof xcommitted,
    [FIGURE_COMMITTED_PEAK] = sizeof xcommitted_peak,
    [FIGURE_HUGE_BYTES] = sizeof xhuge_bytes,
    [FIGURE_OS_MAPS] = sizeof xmaps,
    [FIGURE_OS_UNMAPS] = sizeof xunmaps,
    [FIGURE_OS_PURGES] = sizeof xpurges,
    [FIGURE_OS_REMAPS] = sizeof xremaps,
    [FIGURE_PURGED_BYTES] = sizeof xpurged_bytes,
    [FIGURE_RELEASED_BYTES] = sizeof xreleased_bytes,
};

const void *memory_figure_address(memory_figure id, uint8_t *width) {
  if ((unsigned)id >= MEMORY_FIGURE_COUNT) return NULL;
  *width = figure_width[id];
  return figure_address[id];
}
