/* SPDX-License-Identifier: MIT */
/* BRISK_PROFILE: where do threads leave their fast paths? One event in
 * BRISK_PROFILE_RATE of each kind (per thread) is traced to its call site;
 * at exit the sites that cost most are written with their stack traces,
 * the answer FastMM's LogLockContention gave, without a rebuild. */
#include "diag.h"

#include <errno.h>
#include <string.h>

static const char *const event_name[EVENT_KIND_COUNT] = {
    [EVENT_REFILL] = "refill (thread's page for a size class ran dry)",
    [EVENT_SEGMENT] = "segment (heap went to the process-wide level for memory)",
    [EVENT_REMOTE_FREE] = "remote free (block freed by another thread than its owner)",
    [EVENT_LOCK_WAIT] = "lock wait (thread waited on a brisk lock)",
    [EVENT_OS_CALL] = "os call (mmap, munmap, madvise or mremap)",
};

/* Refills and remote frees can come millions a second: one in
 * BRISK_PROFILE_RATE is traced, standing for the events since the last.
 * The other kinds already cost a system call or a wait, so each is traced.
 * The events not yet traced are counted per thread, in one thread-local
 * word (refills in its low half, remote frees in its high half), so only
 * samples reach shared memory and profiling adds no contended cache line to
 * the paths it watches. */
void profile_note_event(profile_event kind) {
  if (in_diag()) return;
  uint32_t weight = 1;
  if (kind == EVENT_REFILL || kind == EVENT_REMOTE_FREE) {
    unsigned shift = kind == EVENT_REFILL ? 0 : 32;
    uintptr_t counts = thread_word(THREAD_PROFILE);
    weight = (uint32_t)(counts >> shift) + 1;
    long rate = option_get(OPTION_PROFILE_RATE);
    bool traced = rate <= 1 || weight >= (uint32_t)rate;
    counts &= ~((uintptr_t)UINT32_MAX << shift);
    if (!traced) counts |= (uintptr_t)weight << shift;
    thread_word_set(THREAD_PROFILE, counts);
    if (!traced) return;
  }
  site_note(site_capture_kind(1, (int)kind), weight, 0);
}

static int open_report(char *path, size_t size) {
  const char *chosen = option_text(OPTION_PROFILE_FILE);
  if (chosen != NULL) {
    msg_format(path, size, "%s", chosen);
  } else {
    msg_format(path, size, "%s.brisk-profile.txt", platform_program_short_name());
  }
  return platform_open_output(path);
}

#define TOP_SITES 10
#define SITES_LISTED 4096

void profile_report(void) {
  in_diag_set(true);
  char path[512];
  int fd = open_report(path, sizeof path);
  if (fd < 0) {
    msg_printf(2, "brisk: cannot write the profile to %s: %s\n", path, strerror(errno));
    return;
  }
  msg_printf(fd, "brisk profile of %s (pid %d): one event in %ld traced\n\n",
             platform_program_name(), platform_pid(), option_get(OPTION_PROFILE_RATE));
  static uint32_t all[SITES_LISTED]; /* not on the stack: 16 KiB (the report runs once) */
  size_t listed = sites_sorted(all, SITES_LISTED, false, true);
  uint64_t by_kind[EVENT_KIND_COUNT] = {0}, traced = 0;
  for (size_t i = 0; i < listed; i++) {
    by_kind[site_kind(all[i])] += site_count(all[i]);
    traced += site_count(all[i]);
  }
  msg_printf(fd, "events by kind (estimated from the samples):\n");
  for (int kind = 0; kind < EVENT_KIND_COUNT; kind++)
    msg_printf(fd, "  %12llu  %s\n", (unsigned long long)by_kind[kind], event_name[kind]);
  if (listed == 0) {
    msg_printf(fd,
               "\nno events were traced: the program made fewer than %ld refills or remote frees "
               "of any kind; run with BRISK_PROFILE_RATE=1 to trace every event\n",
               option_get(OPTION_PROFILE_RATE));
    platform_close(fd);
    msg_printf(2, "brisk: profile written to %s (no events traced; try BRISK_PROFILE_RATE=1)\n",
               path);
    return;
  }
  uint32_t *top = all;
  size_t count = listed < TOP_SITES ? listed : TOP_SITES;
  sites_prepare_names(top, count);
  msg_printf(fd, "\ntop %zu call site%s by estimated events:\n", count, count == 1 ? "" : "s");
  for (size_t i = 0; i < count; i++) {
    uint64_t events = site_count(top[i]);
    msg_printf(fd, "\n#%zu  %llu events (%.1f%%)  %s\n", i + 1, (unsigned long long)events,
               traced ? 100.0 * (double)events / (double)traced : 0.0,
               event_name[site_kind(top[i])]);
    site_print_trace(fd, top[i], "    ");
  }
  platform_close(fd);
  msg_printf(2, "brisk: profile written to %s\n", path);
}
