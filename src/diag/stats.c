/* SPDX-License-Identifier: MIT */
/* Statistics: one field list (BRISK_STATS_FIELDS in brisk.h) makes the
 * struct, the text report and the JSON report. Per-call counts live in each
 * heap and are summed here; OS figures come from memory.c and the platform. */
#include "diag.h"

#include <errno.h>
#include <string.h>

_Static_assert(STATS_CLASS_COUNT == BRISK_STATS_CLASSES, "one count per class of brisk_stats");

static void add_heap(heap_t *heap, void *arg) {
  brisk_stats *stats = arg;
  heap_counters_t *c = &heap->counters;
  for (unsigned i = 0; i < STATS_CLASS_COUNT; i++) {
    stats->class_mallocs[i] += counter_get(c->mallocs[i]);
    stats->class_frees[i] += counter_get(c->frees[i]);
  }
  stats->remote_frees += counter_get(c->remote_frees);
  stats->requested_bytes += (unsigned long long)counter_get(c->requested_bytes);
  stats->page_refills += counter_get(c->page_refills);
}

/* The largest block of statistics class i: the size classes, continued by
 * their rule (eight steps per doubling) up to ARENA_MAX. */
static unsigned long long stats_class_size(unsigned i) {
  if (i < CLASS_COUNT) return class_size[i];
  unsigned long long base = 128ull << ((i - 8) / 8);
  return base + base * ((i - 8) % 8 + 1) / 8;
}

int brisk_stats_get(brisk_stats *out) {
  if (out == NULL) return -1;
  brisk_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.counting = diag_counting;
  heaps_visit(add_heap, &stats);
  for (unsigned i = 0; i < STATS_CLASS_COUNT; i++) {
    stats.mallocs += stats.class_mallocs[i];
    stats.frees += stats.class_frees[i];
    stats.class_size[i] = i < STATS_CLASS_COUNT - 1 ? stats_class_size(i) : 0;
  }
  brisk_memory_info info;
  memory_info(&info);
  stats.mapped = info.mapped;
  stats.mapped_peak = info.mapped_peak;
  stats.committed = info.committed;
  stats.committed_peak = info.committed_peak;
  stats.large_in_use = info.large_in_use;
  uint64_t resident, resident_peak;
  platform_resident(&resident, &resident_peak);
  stats.resident = resident;
  stats.resident_peak = resident_peak;
  uint64_t maps, unmaps, purges, remaps, created, abandoned;
  memory_os_calls(&maps, &unmaps, &purges, &remaps);
  stats.os_maps = maps;
  stats.os_unmaps = unmaps;
  stats.os_purges = purges;
  stats.os_remaps = remaps;
  heaps_count(&created, &abandoned);
  stats.heaps_created = created;
  stats.heaps_abandoned = abandoned;
  size_t size = out->struct_size;
  if (size == 0 || size > sizeof stats) size = sizeof stats;
  stats.struct_size = size;
  memcpy(out, &stats, size);
  return 0;
}

void brisk_stats_print(int fd, int json) {
  bool was_in_diag = in_diag();
  in_diag_set(true);
  brisk_stats s;
  s.struct_size = sizeof s;
  brisk_stats_get(&s);
  if (json) {
    msg_printf(fd, "{\"brisk_version\": \"%s\"", BRISK_VERSION_STRING);
#define PRINT_JSON_(name, meaning) msg_printf(fd, ", \"" #name "\": %llu", s.name);
    BRISK_STATS_FIELDS(PRINT_JSON_)
#undef PRINT_JSON_
    msg_printf(fd, ", \"classes\": [");
    bool first = true;
    for (unsigned i = 0; i < STATS_CLASS_COUNT; i++) {
      if (s.class_mallocs[i] == 0 && s.class_frees[i] == 0) continue;
      msg_printf(fd, "%s{\"size\": %llu, \"mallocs\": %llu, \"frees\": %llu}", first ? "" : ", ",
                 s.class_size[i], s.class_mallocs[i], s.class_frees[i]);
      first = false;
    }
    msg_printf(fd, "]}\n");
  } else {
    msg_printf(fd, "brisk %s statistics (pid %d)\n", BRISK_VERSION_STRING, platform_pid());
#define PRINT_TEXT_(name, meaning) msg_printf(fd, "  %-16s %16llu  %s\n", #name, s.name, meaning);
    BRISK_STATS_FIELDS(PRINT_TEXT_)
#undef PRINT_TEXT_
    msg_printf(fd, "  per size class (block size, mallocs, frees, live):\n");
    for (unsigned i = 0; i < STATS_CLASS_COUNT; i++) {
      if (s.class_mallocs[i] == 0 && s.class_frees[i] == 0) continue;
      char label[32];
      if (i < STATS_CLASS_COUNT - 1)
        msg_format(label, sizeof label, "%llu", s.class_size[i]);
      else
        msg_format(label, sizeof label, "> %zu", (size_t)ARENA_MAX);
      msg_printf(fd, "    %10s %14llu %14llu %12lld\n", label, s.class_mallocs[i], s.class_frees[i],
                 (long long)(s.class_mallocs[i] - s.class_frees[i]));
    }
  }
  in_diag_set(was_in_diag);
}

/* ---- mallinfo's figures --------------------------------------------------------
 * In use is the sum of two counts each heap keeps on its slow paths: the
 * bytes of the blocks carved on its pages in use (core/page.c, "counting
 * carved bytes") and of the chunks in use in its arena (core/arena.c).
 * The fast paths count nothing, so
 * - a block free on a page still in use counts as in use: those are the
 *   thread's cache, which glibc counts as in use too (tcache), and for a
 *   thread that has freed all it allocated they are its warm pages, at
 *   most one page per size class (64 KiB for blocks up to 8 KiB, 512 KiB
 *   up to 64 KiB); blocks that other threads freed count until their
 *   owner takes them in and retires the page;
 * - blocks count at their class's size, arena chunks with their 16-byte
 *   header: at least the bytes asked for.
 * The counts are read with relaxed loads while their threads change them,
 * one heap after another and without the heaps' lock: each is exact at
 * some moment of the walk, not all at the same one, so the sum differs
 * from the total at any one instant by at most what the other threads
 * carved, retired or took from their arenas while it ran, and a heap
 * created meanwhile may be missed (its thread's first blocks). */
void stats_heap_usage(const heap_t *heap, size_t *pages, size_t *arena) {
  *pages = counter_get(heap->carved_bytes);
  *arena = counter_get(heap->arena.in_use_bytes);
}

static void add_usage(heap_t *heap, void *arg) {
  size_t pages, arena;
  stats_heap_usage(heap, &pages, &arena);
  *(size_t *)arg += pages + arena;
}

void stats_usage_get(stats_usage *usage) {
  memset(usage, 0, sizeof *usage);
  heaps_visit_unlocked(add_usage, &usage->in_use);
  memory_huge_figures(&usage->huge);
  brisk_memory_info info;
  memory_info(&info);
  usage->committed = info.committed;
  usage->committed_peak = info.committed_peak;
  usage->mapped = info.mapped;
  /* Free pages, cached segments and cached huge spans are committed too:
   * memory brisk holds and can hand out again, as glibc's arena holds its
   * free chunks. */
  usage->arena = info.committed > usage->huge.bytes ? info.committed - usage->huge.bytes : 0;
  usage->free = usage->arena > usage->in_use ? usage->arena - usage->in_use : 0;
}

void stats_report_at_exit(void) {
  const char *path = option_text(OPTION_STATS_FILE);
  int fd = 2;
  if (path != NULL) fd = platform_open_output(path);
  if (fd < 0) {
    msg_printf(
        2,
        "brisk: cannot write the statistics to %s (%s); writing them to standard error instead\n",
        path, strerror(errno));
    fd = 2;
  }
  brisk_stats_print(fd, option_get(OPTION_STATS) == STATS_JSON);
  if (fd != 2) platform_close(fd);
}
