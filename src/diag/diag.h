/* SPDX-License-Identifier: MIT */
/* The diagnostics layer's interface (statistics, leak report, profile,
 * checked mode), grouped under the file that defines each function, in
 * layer order: a file calls only files listed above it and the core. */
#ifndef BRISK_DIAG_H
#define BRISK_DIAG_H

#include "../core/core.h"

/* ---- sites.c: stack traces grouped by call site ------------------------------ */
#define SITE_CAPACITY 16384 /* a power of two */
/* The site of blocks allocated for brisk's own diagnostics (while a report
 * or a stack capture runs): never a leak of the program's. */
#define SITE_BRISK UINT32_MAX
INTERNAL void sites_warm_up(void);
/* The caller's call site (a stack trace kept once), 0 when unknown. */
INTERNAL uint32_t site_capture(unsigned skip);
/* The site of a stack the caller captured itself (diag_retrace), 0 when unknown. */
INTERNAL uint32_t site_of_frames(void *const *frames, int count);
/* A profile event's site: kind >= 0 marks it as an event, not an allocation. */
INTERNAL uint32_t site_capture_kind(unsigned skip, int kind);
INTERNAL void site_note(uint32_t site, uint64_t count, uint64_t bytes);
INTERNAL uint64_t site_count(uint32_t site);
INTERNAL uint64_t site_bytes(uint32_t site);
INTERNAL int site_kind(uint32_t site);
INTERNAL void sites_reset_counts(void);
/* Sites with a count, largest first: profile events (events) or allocation
 * sites (!events), ranked by bytes or by count. */
INTERNAL size_t sites_sorted(uint32_t *ids, size_t max, bool by_bytes, bool events);
/* Names the frames of these sites at once, before they are printed. */
INTERNAL void sites_prepare_names(const uint32_t *ids, size_t count);
INTERNAL void site_print_trace(int fd, uint32_t site, const char *indent);
/* The site's stack, innermost frame first; returns how many frames. */
INTERNAL int site_frames(uint32_t site, void *const **frames);

/* ---- pprof.c: profiles in pprof's format (gzipped profile.proto) and folded stacks ---- */
#define PROFILE_VALUES_MAX 4
/* One stack (a call site) and its values, in the order of the shape's types. */
typedef struct profile_sample {
  uint32_t site;
  int64_t values[PROFILE_VALUES_MAX];
} profile_sample;
typedef struct profile_shape {
  int value_count;
  const char *types[PROFILE_VALUES_MAX]; /* "inuse_space", ... */
  const char *units[PROFILE_VALUES_MAX]; /* "bytes", "count" */
  int default_type;                      /* the value pprof shows unless told */
  int period_type;                       /* the value the period counts */
  int64_t period;                        /* bytes between samples; 0 when every one is kept */
  const char *comment;                   /* NULL: none */
} profile_shape;
/* Writes the samples as a gzipped profile.proto; false when it did not fit. */
INTERNAL bool profile_write_pprof(int fd, const profile_shape *shape, const profile_sample *samples,
                                  size_t count);
/* Writes "outer;...;inner value" lines of one of the values. */
INTERNAL void profile_write_folded(int fd, const profile_sample *samples, size_t count, int value);
/* The format a report file's name asks for: pprof (.pb.gz, .pprof), folded
 * stacks (.folded, .collapsed) or brisk's text (anything else). */
typedef enum report_format { FORMAT_TEXT, FORMAT_PPROF, FORMAT_FOLDED } report_format;
INTERNAL report_format report_format_of(const char *path);

/* ---- block trailers: the last bytes of every block while diag_counting is on ---- */
typedef struct diag_trailer_s {
  uint64_t requested; /* bytes asked for */
  uintptr_t user;     /* the pointer handed out (aligned blocks: inside the block) */
  uint32_t site;      /* allocation call site, 0 when unknown */
  uint32_t state;     /* DIAG_LIVE or DIAG_FREED */
} diag_trailer_t;
#define DIAG_LIVE 0x4556494cu  /* "LIVE" */
#define DIAG_FREED 0x45455246u /* "FREE" */

/* The end of the block that holds p: on a page, found from the page's
 * geometry so that an interior pointer finds its block too; a huge block
 * ends with its mapping, an arena block with its chunk (checked mode finds
 * out first whether p starts one: a pointer that does not is reported). */
static inline uint8_t *diag_block_end(segment_t *segment, page_t *page, const void *p) {
  if (segment->kind == SEGMENT_HUGE) return (uint8_t *)segment + segment->size;
  if (segment->kind == SEGMENT_ARENA) return (uint8_t *)p + arena_usable_size(segment, p);
  return page_block_start(page, p) + page->block_size;
}
static inline diag_trailer_t *diag_trailer_of(segment_t *segment, page_t *page, const void *p) {
  return (diag_trailer_t *)(diag_block_end(segment, page, p) - sizeof(diag_trailer_t));
}

/* ---- checked.c: checked mode (BRISK_CHECK) ---------------------------------------- */
#define CANARY_BYTES 8        /* always at least this many between data and trailer */
#define CANARY_CHECKED_MAX 64 /* bytes of canary written and checked */
#define CANARY 0xBD
/* The canary bytes between a block's data and its trailer. */
static inline size_t canary_length(const uint8_t *user, size_t requested,
                                   const diag_trailer_t *trailer) {
  size_t room = (size_t)((const uint8_t *)trailer - (user + requested));
  return room < CANARY_CHECKED_MAX ? room : CANARY_CHECKED_MAX;
}
/* The trailer of the live block that p was handed out as, or a report that
 * stops the program. */
INTERNAL diag_trailer_t *checked_block(const void *p, const char *action);
INTERNAL void checked_init(void);

/* ---- trailer.c: every block tracked (statistics, leaks, checked mode) ---------------- */
DIAG_FLAG(diag_check);
/* Blocks record their allocation site (leaks, checked mode). */
DIAG_FLAG(diag_track_sites);
INTERNAL void *diag_malloc(heap_t *heap, size_t size, size_t alignment, bool zero);
INTERNAL size_t diag_usable_size(const void *p);
/* hooks.before_free while diag_counting is on. */
INTERNAL void diag_before_free(segment_t *segment, page_t *page, void *p);
/* Sets the allocation site of the live block p from the stack that starts at
 * frame, a frame pointer of code with no unwind tables (Free Pascal's). */
INTERNAL void diag_retrace(void *p, void *frame);

/* ---- stats.c ------------------------------------------------------------------------------ */
INTERNAL void stats_report_at_exit(void);
/* What mallinfo, malloc_stats and malloc_info report, in glibc's terms
 * (stats.c says how exact it is). */
typedef struct stats_usage {
  size_t arena;  /* committed for blocks up to ARENA_MAX: the huge mappings left out */
  size_t in_use; /* of that, blocks in use, thread caches included */
  size_t free;   /* arena - in_use (0 when a moving count makes in_use the larger) */
  huge_figures huge;
  size_t committed, committed_peak, mapped;
} stats_usage;
INTERNAL void stats_usage_get(stats_usage *usage);
/* A heap's share of in_use: blocks carved on its pages, chunks of its arena. */
INTERNAL void stats_heap_usage(const heap_t *heap, size_t *pages, size_t *arena);

/* ---- leaks.c ------------------------------------------------------------------------------ */
/* The leak report (BRISK_LEAKS_FILE, BRISK_LEAKS_SUPPRESS); whether the
 * program leaked (blocks left that are neither the C library's nor
 * suppressed). */
INTERNAL bool leaks_report(void);

/* ---- heap_profile.c: sampled allocations (BRISK_HEAP_PROFILE) ------------------------------ */
/* An allocation whose size took the thread's countdown (THREAD_SAMPLE, its
 * bytes left before the next sample) below zero; the word holds the result. */
INTERNAL void *heap_profile_due(heap_t *heap, size_t size, bool zero);
/* malloc_slow's allocation while heap_sampling is on (libbrisk.so, whose
 * fast path does not count): counts down, then heap_profile_due. */
INTERNAL void *heap_profile_malloc(heap_t *heap, size_t size, bool zero);
INTERNAL void heap_profile_init(void);
/* Writes the heap profile to path, or (NULL) to the setting's file numbered
 * .1, .2, ... before its extension; false (errno set) on failure. */
INTERNAL bool heap_profile_dump(const char *path);
/* At exit: the heap profile to the setting's file. */
INTERNAL void heap_profile_report(void);
/* In a forked child: the table's lock, whoever held it, is free. */
INTERNAL void heap_profile_after_fork(void);

/* ---- profile.c: sampled slow-path events --------------------------------------------------- */
/* hooks.event while profile_on is set. */
INTERNAL void profile_note_event(profile_event kind);
INTERNAL void profile_report(void);

/* ---- modes.c: switching the modes on, and their reports at exit ----------------------------- */
INTERNAL void diag_init(void);
INTERNAL void diag_reports_at_exit(void);

#endif /* BRISK_DIAG_H */
