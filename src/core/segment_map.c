/* SPDX-License-Identifier: MIT */
/* A byte per 4 MiB unit of the user address space (128 TiB on a 64-bit
 * machine, 4 GiB on a 32-bit one: see PLATFORM_ADDRESS_BITS) telling whether
 * a segment header starts there. brisk_owns() and the checked free path use
 * it to tell brisk's pointers from foreign ones without touching the pointer.
 * Of the 32 MiB table (1 KiB on a 32-bit machine) only the OS pages near
 * brisk's segments ever become resident (on Windows the whole table counts
 * against the commit limit: any unit may be read). */
#include "core.h"

_Atomic(uint8_t) *_Atomic xsegment_units;
#define xunits xsegment_units
#define UNIT_COUNT SEGMENT_UNIT_COUNT

static _Atomic(uint8_t) *units_get(bool create) {
  _Atomic(uint8_t) *units = atomic_load_acquire(&xunits);
  if (units != NULL || !create) return units;
  _Atomic(uint8_t) *fresh = platform_table_alloc(UNIT_COUNT);
  if (fresh == NULL) return NULL;
  if (!atomic_cas_strong_acq_rel(&xunits, &units, fresh)) {
    platform_table_free(fresh, UNIT_COUNT); /* another thread won; use its table */
    return units;
  }
  return fresh;
}

void segment_map_set(segment_t *segment, bool present) {
  uintptr_t unit = (uintptr_t)segment >> SEGMENT_SHIFT;
  if (unit >= UNIT_COUNT) return;
  _Atomic(uint8_t) *units = units_get(present);
  if (units != NULL) atomic_store_release(&units[unit], present ? 1 : 0);
}

void segment_map_visit(void (*visit)(segment_t *segment, void *arg), void *arg) {
  _Atomic(uint8_t) *units = units_get(false);
  if (units == NULL) return;
  const uint64_t *words = (const uint64_t *)units; /* skip empty stretches 8 units at a time */
  for (size_t w = 0; w < UNIT_COUNT / 8; w++) {
    if (words[w] == 0) continue;
    for (size_t unit = w * 8; unit < w * 8 + 8; unit++)
      if (atomic_load_acquire(&units[unit]) != 0) visit((segment_t *)(unit << SEGMENT_SHIFT), arg);
  }
}
