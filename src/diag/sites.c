/* SPDX-License-Identifier: MIT */
/* Call sites: stack traces captured on diagnostic paths, kept once each in a
 * lock-free open-addressed table and named (function, file:line) only when a
 * report is written. Capturing never allocates through brisk: in_diag()
 * turns off capture for any allocation the unwinder itself makes. */
#include "diag.h"

#include <string.h>

typedef struct site_s {
  _Atomic(uint64_t) xhash; /* 0: free slot */
  _Atomic(uint32_t) xframe_count;
  int kind;
  void *frames[SITE_FRAMES];
  _Atomic(uint64_t) xcount;
  _Atomic(uint64_t) xbytes;
} site_t;

static site_t *sites; /* reserved by sites_warm_up, before any capture */

void sites_warm_up(void) {
  if (sites != NULL) return;
  in_diag_set(true);
  sites = platform_table_alloc(SITE_CAPACITY * sizeof(site_t));
  void *frames[4];
  platform_backtrace(frames, 4); /* loads the unwinder now, not inside some malloc */
  in_diag_set(false);
}

static uint64_t hash_frames(void *const *frames, int count, int kind) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)kind;
  for (int i = 0; i < count; i++) {
    h ^= (uint64_t)(uintptr_t)frames[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h == 0 ? 1 : h;
}

static uint32_t site_intern(void *const *frames, int count, int kind) {
  uint64_t h = hash_frames(frames, count, kind);
  for (uint32_t probe = 0; probe < SITE_CAPACITY; probe++) {
    uint32_t index = (uint32_t)(h + probe) & (SITE_CAPACITY - 1);
    site_t *site = &sites[index];
    uint64_t seen = atomic_load_acquire(&site->xhash);
    if (seen == h) return index + 1;
    if (seen == 0) {
      if (atomic_cas_strong_acq_rel(&site->xhash, &seen, h)) {
        memcpy(site->frames, frames, (size_t)count * sizeof(void *));
        site->kind = kind;
        atomic_store_release(&site->xframe_count, (uint32_t)count);
        return index + 1;
      }
      if (seen == h) return index + 1;
    }
  }
  return 0; /* table full: the site stays unnamed */
}

uint32_t site_capture_kind(unsigned skip, int kind) {
  if (in_diag() || sites == NULL) return 0;
  in_diag_set(true);
  void *frames[SITE_FRAMES];
  int count = stack_capture(frames, skip + 1);
  uint32_t id = site_intern(frames, count, kind);
  in_diag_set(false);
  return id;
}

uint32_t site_capture(unsigned skip) {
  return site_capture_kind(skip + 1, -1);
}

uint32_t site_of_frames(void *const *frames, int count) {
  return sites == NULL ? 0 : site_intern(frames, count, -1);
}

static site_t *site_get(uint32_t id) {
  return (id == 0 || id > SITE_CAPACITY || sites == NULL) ? NULL : &sites[id - 1];
}

void site_note(uint32_t id, uint64_t count, uint64_t bytes) {
  site_t *site = site_get(id);
  if (site == NULL) return;
  atomic_add_relaxed(&site->xcount, count);
  atomic_add_relaxed(&site->xbytes, bytes);
}

uint64_t site_count(uint32_t id) {
  site_t *site = site_get(id);
  return site ? atomic_load_relaxed(&site->xcount) : 0;
}

uint64_t site_bytes(uint32_t id) {
  site_t *site = site_get(id);
  return site ? atomic_load_relaxed(&site->xbytes) : 0;
}

int site_kind(uint32_t id) {
  site_t *site = site_get(id);
  return site ? site->kind : -1;
}

void sites_reset_counts(void) {
  if (sites == NULL) return;
  for (uint32_t i = 0; i < SITE_CAPACITY; i++) {
    atomic_store_relaxed(&sites[i].xcount, 0);
    atomic_store_relaxed(&sites[i].xbytes, 0);
  }
}

/* Sites with a non-zero count, most bytes (or most events) first. */
size_t sites_sorted(uint32_t *ids, size_t max, bool by_bytes, bool events) {
  size_t found = 0;
  if (sites == NULL) return 0;
  for (uint32_t i = 0; i < SITE_CAPACITY; i++) {
    if (atomic_load_relaxed(&sites[i].xcount) == 0) continue;
    if ((sites[i].kind >= 0) != events) continue;
    uint32_t id = i + 1;
    uint64_t key = by_bytes ? site_bytes(id) : site_count(id);
    size_t at = found < max ? found : max;
    while (at > 0 && (by_bytes ? site_bytes(ids[at - 1]) : site_count(ids[at - 1])) < key) {
      if (at < max) ids[at] = ids[at - 1];
      at--;
    }
    if (at < max) ids[at] = id;
    if (found < max) found++;
  }
  return found;
}

void sites_prepare_names(const uint32_t *ids, size_t count) {
  void *frames[256];
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    site_t *site = site_get(ids[i]);
    if (site == NULL) continue;
    uint32_t depth = atomic_load_acquire(&site->xframe_count);
    for (uint32_t f = 0; f < depth && n < sizeof frames / sizeof frames[0]; f++)
      frames[n++] = site->frames[f];
  }
  platform_symbols_prepare(frames, n);
}

int site_frames(uint32_t id, void *const **frames) {
  site_t *site = site_get(id);
  if (site == NULL) return 0;
  *frames = site->frames;
  return (int)atomic_load_acquire(&site->xframe_count);
}

void site_print_trace(int fd, uint32_t id, const char *indent) {
  site_t *site = site_get(id);
  if (site == NULL) return;
  stack_print(fd, site->frames, (int)atomic_load_acquire(&site->xframe_count), indent);
}
