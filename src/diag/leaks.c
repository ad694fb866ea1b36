/* BRISK_LEAKS: at exit, every block still allocated, grouped by the call site
 * that allocated it, largest total first. Blocks are found by walking every
 * segment brisk has mapped; a block is live when its trailer says so. */
#include "diag.h"

#define TOP_SITES 20

typedef struct leak_totals {
  uint64_t blocks;
  uint64_t bytes;
} leak_totals;

static void note_block(uint8_t *end, leak_totals *totals) {
  const diag_trailer_t *trailer = (const diag_trailer_t *)(end - sizeof(diag_trailer_t));
  if (trailer->state != DIAG_LIVE) return;
  totals->blocks++;
  totals->bytes += trailer->requested;
  site_note(trailer->site, 1, trailer->requested);
}

static void visit_segment(segment_t *segment, void *arg) {
  leak_totals *totals = arg;
  if (segment->kind == SEGMENT_HUGE) {
    if (atomic_load_relaxed(&segment->pages[0].xflags) & PAGE_IN_USE)
      note_block((uint8_t *)segment + segment->size, totals);
    return;
  }
  if (segment->owner == NULL) return; /* cached: nothing allocated */
  for (uint16_t i = 0; i < segment->page_count; i++) {
    page_t *page = &segment->pages[i];
    if (!(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE)) continue;
    for (uint32_t b = 0; b < page->capacity; b++)
      note_block(page->area + (size_t)(b + 1) * page->block_size, totals);
  }
}

void leaks_report(void) {
  in_diag_set(true);
  sites_reset_counts();
  leak_totals totals = {0, 0};
  segment_map_visit(visit_segment, &totals);
  if (totals.blocks == 0) {
    msg_printf(2, "brisk: leak report: no blocks left allocated at exit\n");
    return;
  }
  uint32_t top[TOP_SITES];
  size_t count = sites_sorted(top, TOP_SITES, true, false);
  sites_prepare_names(top, count);
  msg_printf(2, "brisk: leak report: %llu bytes in %llu blocks still allocated at exit\n",
             (unsigned long long)totals.bytes, (unsigned long long)totals.blocks);
  for (size_t i = 0; i < count; i++) {
    msg_printf(2, "brisk: #%zu %llu bytes in %llu blocks allocated at:\n", i + 1,
               (unsigned long long)site_bytes(top[i]), (unsigned long long)site_count(top[i]));
    site_print_trace(2, top[i], "brisk:     ");
  }
}
