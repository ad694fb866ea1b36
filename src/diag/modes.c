/* SPDX-License-Identifier: MIT */
/* The diagnostic modes: read from the options once, at start-up, and plugged
 * into the core through its hooks; and their reports at exit. */
#include "diag.h"

void diag_init(void) {
#ifndef BRISK_NO_DIAGNOSTICS
  diag_check = option_get(OPTION_CHECK) != 0;
  diag_track_sites = diag_check || option_get(OPTION_LEAKS) != 0;
  diag_counting = diag_track_sites || option_get(OPTION_STATS) != STATS_OFF;
  profile_on = option_get(OPTION_PROFILE) != 0;
  atomic_store_relaxed(&xfrees_take_long_way, diag_counting || profile_on);
  hooks.before_free = diag_before_free;
  hooks.event = profile_note_event;
  /* A counting mode sees every block with a trailer of its own: the heap
   * profile's blocks would need another. */
  heap_sampling = option_text(OPTION_HEAP_PROFILE) != NULL && !diag_counting;
  if (option_text(OPTION_HEAP_PROFILE) != NULL && diag_counting)
    msg_printf(2, "brisk: warning: BRISK_HEAP_PROFILE is off while BRISK_STATS, BRISK_LEAKS or "
                  "BRISK_CHECK is on (run them apart)\n");
  allocs_take_long_way = diag_counting || (heap_sampling && !SAMPLING_ON_FAST_PATH);
  if (!option_get(OPTION_LEAKS) &&
      (option_text(OPTION_LEAKS_FILE) || option_text(OPTION_LEAKS_SUPPRESS) ||
       option_get(OPTION_LEAKS_EXITCODE)))
    msg_printf(2, "brisk: warning: BRISK_LEAKS_FILE, BRISK_LEAKS_SUPPRESS and "
                  "BRISK_LEAKS_EXITCODE do nothing without BRISK_LEAKS=1\n");
  if (heap_sampling) heap_profile_init();
#endif
  if (diag_check) checked_init();
}

/* After the program's own destructors. */
void diag_reports_at_exit(void) {
  if (option_get(OPTION_PROFILE)) profile_report();
  if (heap_sampling) heap_profile_report();
  if (option_get(OPTION_STATS) != STATS_OFF) stats_report_at_exit();
  bool leaked = option_get(OPTION_LEAKS) && leaks_report();
  if (diag_check) { /* an error would have stopped the program already */
    brisk_stats stats;
    stats.struct_size = sizeof stats;
    brisk_stats_get(&stats);
    msg_printf(2, "brisk: checked mode found no errors (%llu frees checked)\n", stats.frees);
  }
  long exit_code = option_get(OPTION_LEAKS_EXITCODE);
  if (leaked && exit_code != 0) {
    msg_printf(2, "brisk: the program leaked: exit status %ld (BRISK_LEAKS_EXITCODE)\n", exit_code);
    platform_exit_now((int)exit_code);
  }
}
