/* SPDX-License-Identifier: MIT */
/* Tracked blocks: while a diagnostic mode counts calls (statistics, leaks,
 * checked mode), every heap keeps its fast path empty, so each malloc and
 * free comes here, and each block carries a trailer at its very end: the
 * pointer handed out, the size asked for, the allocation site and a
 * live/freed state. Between the user's bytes and the trailer lie canary
 * bytes, so a write past the end is seen when the block is freed. */
#include "diag.h"

#include <string.h>

#define FREED_FILL 0xDF

#ifndef BRISK_NO_DIAGNOSTICS
bool diag_check, diag_track_sites;
#endif

/* The statistics' class of a block: its size class, the same ladder past
 * MEDIUM_MAX for arena blocks, the last slot for huge ones. */
static unsigned stats_class(size_t requested) {
  return size_range_of(requested) == RANGE_HUGE ? STATS_CLASS_COUNT - 1 : size_class_of(requested);
}

void *diag_malloc(heap_t *heap, size_t size, size_t alignment, bool zero) {
  if (size > SIZE_LIMIT - CANARY_BYTES - sizeof(diag_trailer_t)) return out_of_memory();
  size_t need = size + CANARY_BYTES + sizeof(diag_trailer_t);
  uint8_t *user;
  if (alignment > ALIGNMENT_MIN)
    user = alloc_aligned(heap, need, alignment);
  else
    user = alloc_sized(heap, need, false);
  if (user == NULL) return out_of_memory();
  if (zero) memset(user, 0, size);
  segment_t *segment = segment_of(user);
  diag_trailer_t *trailer = diag_trailer_of(segment, page_of(segment, user), user);
  memset(user + size, CANARY, canary_length(user, size, trailer));
  trailer->requested = size;
  trailer->user = (uintptr_t)user;
  trailer->state = DIAG_LIVE;
  trailer->site = !diag_track_sites ? 0 /* statistics need no call sites */
                  : in_diag()       ? SITE_BRISK
                                    : site_capture(0);
  counter_add(heap->counters.mallocs[stats_class(size)], 1);
  counter_add(heap->counters.requested_bytes, (int64_t)size);
  return user;
}

void diag_before_free(segment_t *segment, page_t *page, void *p) {
  if (!diag_check && !segment_map_contains(segment)) return; /* the core reports it */
  diag_trailer_t *trailer =
      diag_check ? checked_block(p, "invalid free") : diag_trailer_of(segment, page, p);
  heap_t *heap = heap_current() != &heap_empty ? heap_current() : heap_acquire();
  size_t requested = trailer->requested;
  if (heap != NULL) {
    counter_add(heap->counters.frees[stats_class(requested)], 1);
    counter_add(heap->counters.requested_bytes, -(int64_t)requested);
    if (segment->kind != SEGMENT_HUGE && segment->owner != heap)
      counter_add(heap->counters.remote_frees, 1);
  }
  trailer->state = DIAG_FREED;
  /* Poison what the program may still read through a dangling pointer. */
  if (diag_check && segment->kind != SEGMENT_HUGE) memset(p, FREED_FILL, requested);
  /* The arena's free chunks reuse the block's end for their own footer. */
  if (diag_check && segment->kind == SEGMENT_ARENA)
    memcpy((uint8_t *)p + ARENA_FREED_NOTE, trailer, sizeof *trailer);
}

/* The unwinder that diag_malloc's capture uses stops at the first frame of
 * code without unwind tables: for a block allocated by Free Pascal code the
 * site it recorded holds no frame of the program's. The binding calls this
 * right after the allocation, with the frame pointer of its own entry. */
void diag_retrace(void *p, void *frame) {
  if (!diag_track_sites || p == NULL || frame == NULL || in_diag()) return;
  segment_t *segment = segment_of(p);
  if (!segment_map_contains(segment)) return;
  in_diag_set(true);
  void *frames[SITE_FRAMES];
  int count = platform_frame_walk(frame, frames, SITE_FRAMES);
  uint32_t site = count > 0 ? site_of_frames(frames, count) : 0;
  in_diag_set(false);
  diag_trailer_t *trailer = diag_check ? checked_block(p, "trace of an invalid pointer")
                                       : diag_trailer_of(segment, page_of(segment, p), p);
  if (site != 0 && trailer->state == DIAG_LIVE) trailer->site = site;
}

size_t diag_usable_size(const void *p) {
  if (diag_check)
    return checked_block(p, "usable-size query (or realloc) of an invalid pointer")->requested;
  segment_t *segment = segment_of(p);
  return diag_trailer_of(segment, page_of(segment, p), p)->requested;
}
