/* SPDX-License-Identifier: MIT */
/* BRISK_HEAP_PROFILE: which stacks hold the memory, and which allocated it.
 *
 * Allocations are sampled as a Poisson process over the bytes a thread
 * allocates: each thread keeps the bytes left before its next sample in a
 * thread-local word, drawn from an exponential distribution of mean
 * BRISK_HEAP_PROFILE_RATE, so an allocation of s bytes is sampled with
 * probability 1 - exp(-s/rate) and stands for 1/that many such blocks when
 * the profile is written (the estimate pprof's users know from tcmalloc).
 *
 * The countdown runs on malloc_slow: while this mode is on, heaps keep their
 * direct slots empty so every malloc reaches it (frees keep their fast
 * path). With the mode off nothing of this is on any path.
 *
 * A sampled block must be seen when it is freed, for the in-use figures: it
 * is served from the arena range (a block of MEDIUM_MAX + 1 bytes for a
 * smaller one), whose frees all reach free_unusual, which calls
 * hooks.sampled_free. The live samples are kept in one table under a lock;
 * at the default rate that is one lock per half mebibyte allocated.
 *
 * The profile is written at exit, on BRISK_HEAP_PROFILE_SIGNAL (at the next
 * sampled allocation after it: a signal handler may not write files while
 * another thread holds the table) and by brisk_heap_profile_dump(). */
#include "diag.h"

#include <errno.h>
#include <string.h>

#define LIVE_CAPACITY 65536 /* a power of two */
#define TOMBSTONE ((uintptr_t)1)
/* The tables' entries in one stretch (a page or so) that writing the profile
 * skips when no sample ever landed there: a program with a few hundred
 * samples then reads a few hundred of their pages at exit, not all of them
 * (the zero pages a read maps cost as much as the profile's writing). */
#define STRETCH 128
#define STRETCH_USED(used, i) ((used)[(i) / STRETCH / 64] >> ((i) / STRETCH % 64) & 1)
#define STRETCH_MARK(used, i) ((used)[(i) / STRETCH / 64] |= 1ull << ((i) / STRETCH % 64))

typedef struct live_sample {
  uintptr_t block; /* 0: free slot; TOMBSTONE: freed */
  uint64_t size;
  uint32_t site;
} live_sample;

/* Per call site, the estimated allocations since the start, and those
 * still live (summed when the profile is written). */
typedef struct site_total {
  double objects, bytes;
  double inuse_objects, inuse_bytes;
} site_total;

static live_sample *live;
static uint64_t live_used[LIVE_CAPACITY / STRETCH / 64];
static site_total *totals; /* SITE_CAPACITY entries, by site id - 1 */
static uint64_t totals_used[SITE_CAPACITY / STRETCH / 64];
static _Atomic(uint64_t) xlive_count;
static uint64_t dropped; /* samples the full table could not keep */
static platform_lock_t lock = PLATFORM_LOCK_INIT;
static double rate;
static _Atomic(uint64_t) xseed;
static _Atomic(bool) xdump_requested;
static _Atomic(unsigned) xdumps;

/* ---- the sampling distribution ------------------------------------------------- */
/* ln x for x in (0, 1]: brisk links no maths library. x = m * 2^e with m in
 * [1, 2), and ln m = 2 atanh((m - 1)/(m + 1)), a fast series there. */
static double log_of(double x) {
  int exponent = 0;
  while (x < 1.0) {
    x *= 2.0;
    exponent--;
  }
  double t = (x - 1.0) / (x + 1.0), t2 = t * t, term = t, sum = 0.0;
  for (int k = 1; k < 40; k += 2) {
    sum += term / k;
    term *= t2;
  }
  return 2.0 * sum + exponent * 0.6931471805599453;
}

/* 1 - exp(-x) for x >= 0, without losing the small values to rounding. */
static double one_minus_exp_neg(double x) {
  if (x > 40.0) return 1.0;
  if (x < 1e-3) return x - x * x / 2.0 + x * x * x / 6.0 - x * x * x * x / 24.0;
  double y = x / 1024.0; /* exp(-x) = exp(-x/1024)^1024 */
  double e = 1.0 - y + y * y / 2.0 - y * y * y / 6.0 + y * y * y * y / 24.0;
  for (int i = 0; i < 10; i++)
    e *= e;
  return 1.0 - e;
}

/* Bytes to the next sample: exponential, mean `rate`, at least 1 (and
 * below 2^62, so a countdown never wraps). */
static uintptr_t next_interval(void) {
  uint64_t z = atomic_add_relaxed(&xseed, 0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  double u = (double)((z >> 11) + 1) / 9007199254740992.0; /* (0, 1] */
  double bytes = -log_of(u) * rate;
  if (bytes < 1.0) return 1;
  if (bytes > 1e15) return (uintptr_t)1e15;
  return (uintptr_t)bytes;
}

/* ---- the live samples ------------------------------------------------------------ */
static uint64_t hash_block(uintptr_t block) {
  return (block >> 4) * 0x9e3779b97f4a7c15ull >> 16;
}

static void live_insert(uintptr_t block, uint64_t size, uint32_t site) {
  for (uint64_t probe = 0; probe < LIVE_CAPACITY; probe++) {
    uint64_t index = (hash_block(block) + probe) & (LIVE_CAPACITY - 1);
    live_sample *slot = &live[index];
    if (slot->block == 0 || slot->block == TOMBSTONE) {
      *slot = (live_sample){.block = block, .size = size, .site = site};
      STRETCH_MARK(live_used, index);
      atomic_add_relaxed(&xlive_count, 1);
      return;
    }
  }
  dropped++;
}

static void note_free(void *p) {
  if (atomic_load_relaxed(&xlive_count) == 0) return;
  platform_lock_acquire(&lock);
  for (uint64_t probe = 0; probe < LIVE_CAPACITY; probe++) {
    live_sample *slot = &live[(hash_block((uintptr_t)p) + probe) & (LIVE_CAPACITY - 1)];
    if (slot->block == 0) break;
    if (slot->block == (uintptr_t)p) {
      slot->block = TOMBSTONE;
      atomic_fetch_sub_explicit(&xlive_count, 1, memory_order_relaxed);
      break;
    }
  }
  platform_lock_release(&lock);
}

static void request_dump(void) {
  atomic_store_relaxed(&xdump_requested, true);
}

void heap_profile_init(void) {
  rate = (double)option_get(OPTION_HEAP_PROFILE_RATE);
  atomic_store_relaxed(&xseed, (uint64_t)free_cookie() ^ (uint64_t)platform_clock_ms());
  live = platform_table_alloc(LIVE_CAPACITY * sizeof *live);
  totals = platform_table_alloc(SITE_CAPACITY * sizeof *totals);
  hooks.sampled_free = note_free;
  long signal = option_get(OPTION_HEAP_PROFILE_SIGNAL);
  if (signal != 0 && !platform_on_signal((int)signal, request_dump))
    msg_printf(2,
               "brisk: warning: BRISK_HEAP_PROFILE_SIGNAL=%ld cannot be caught here; "
               "the profile is written at exit and by brisk_heap_profile_dump()\n",
               signal);
}

/* ---- sampling ---------------------------------------------------------------------- */
static NOINLINE void *sample(heap_t *heap, size_t size, bool zero, uint32_t site) {
  void *p;
  if (size_range_of(size) >= RANGE_ARENA) {
    p = alloc_sized(heap, size, zero);
  } else {
    p = arena_alloc(heap, MEDIUM_MAX + 1, false); /* its own block: its free is seen */
    if (p != NULL && zero) memset(p, 0, size);
  }
  if (p == NULL) return NULL;
  double probability = one_minus_exp_neg((double)size / rate);
  platform_lock_acquire(&lock);
  live_insert((uintptr_t)p, size, site);
  if (site != 0) {
    totals[site - 1].objects += 1.0 / probability;
    totals[site - 1].bytes += (double)size / probability;
    STRETCH_MARK(totals_used, site - 1);
  }
  platform_lock_release(&lock);
  if (atomic_load_relaxed(&xdump_requested) && !in_diag()) {
    atomic_store_relaxed(&xdump_requested, false);
    heap_profile_dump(NULL);
  }
  return p;
}

/* The thread's countdown went below zero with this allocation: the word
 * holds (bytes left before it) - size. Bytes left are never 0 once drawn, so
 * -size means none was drawn yet (the thread's first allocation). */
void *heap_profile_due(heap_t *heap, size_t size, bool zero) {
  if (unlikely(in_diag() || live == NULL || totals == NULL)) return alloc_sized(heap, size, zero);
  intptr_t word = (intptr_t)thread_word(THREAD_SAMPLE);
  if (word + (intptr_t)size == 0) {
    intptr_t left = (intptr_t)next_interval();
    if ((intptr_t)size < left) {
      thread_word_set(THREAD_SAMPLE, (uintptr_t)(left - (intptr_t)size));
      return alloc_sized(heap, size, zero);
    }
  }
  thread_word_set(THREAD_SAMPLE, next_interval());
  return sample(heap, size, zero, site_capture(0));
}

void *heap_profile_malloc(heap_t *heap, size_t size, bool zero) {
  intptr_t left = (intptr_t)thread_word(THREAD_SAMPLE) - (intptr_t)size;
  thread_word_set(THREAD_SAMPLE, (uintptr_t)left);
  if (likely(left >= 0)) return alloc_sized(heap, size, zero);
  return heap_profile_due(heap, size, zero);
}

/* ---- writing ------------------------------------------------------------------------ */
static const profile_shape heap_shape = {
    .value_count = 4,
    .types = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"},
    .units = {"count", "bytes", "count", "bytes"},
    .default_type = 3,
    .period_type = 1,
};
enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE };

static bool ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* FILE's name without ".pb.gz", and that extension (or ""). */
static void split_name(const char *path, char *base, size_t size, const char **extension) {
  *extension = ends_with(path, ".pb.gz") ? ".pb.gz" : "";
  size_t keep = strlen(path) - strlen(*extension);
  if (keep >= size) keep = size - 1;
  memcpy(base, path, keep);
  base[keep] = 0;
}

static int open_named(char *path, size_t size, const char *format, const char *base,
                      const char *middle, const char *tail) {
  msg_format(path, size, format, base, middle, tail);
  int fd = platform_open_output(path);
  if (fd < 0)
    msg_printf(2, "brisk: cannot write the heap profile to %s: %s\n", path, strerror(errno));
  return fd;
}

/* Sums the samples by call site, largest in-use first; returns how many. */
static size_t gather(profile_sample *out) {
  platform_lock_acquire(&lock);
  for (uint32_t i = 0; i < SITE_CAPACITY; i += STRETCH) {
    if (!STRETCH_USED(totals_used, i)) continue;
    for (uint32_t j = i; j < i + STRETCH; j++)
      totals[j].inuse_objects = totals[j].inuse_bytes = 0.0;
  }
  for (uint64_t i = 0; i < LIVE_CAPACITY; i++) {
    if (!STRETCH_USED(live_used, i)) {
      i += STRETCH - 1; /* to the next stretch */
      continue;
    }
    live_sample *slot = &live[i];
    if (slot->block <= TOMBSTONE || slot->site == 0) continue;
    double probability = one_minus_exp_neg((double)slot->size / rate);
    totals[slot->site - 1].inuse_objects += 1.0 / probability;
    totals[slot->site - 1].inuse_bytes += (double)slot->size / probability;
  }
  size_t count = 0;
  for (uint32_t i = 0; i < SITE_CAPACITY; i++) {
    if (!STRETCH_USED(totals_used, i)) {
      i += STRETCH - 1;
      continue;
    }
    if (totals[i].objects == 0.0) continue;
    profile_sample sample = {.site = i + 1};
    sample.values[ALLOC_OBJECTS] = (int64_t)(totals[i].objects + 0.5);
    sample.values[ALLOC_SPACE] = (int64_t)(totals[i].bytes + 0.5);
    sample.values[INUSE_OBJECTS] = (int64_t)(totals[i].inuse_objects + 0.5);
    sample.values[INUSE_SPACE] = (int64_t)(totals[i].inuse_bytes + 0.5);
    size_t at = count++;
    while (at > 0 && out[at - 1].values[INUSE_SPACE] < sample.values[INUSE_SPACE]) {
      out[at] = out[at - 1];
      at--;
    }
    out[at] = sample;
  }
  platform_lock_release(&lock);
  return count;
}

/* number 0: path as it is; else path with ".number" before its extension. */
static bool write_profile(const char *path, unsigned number) {
  if (!heap_sampling || live == NULL || totals == NULL) {
    errno = EINVAL;
    return false;
  }
  bool was_in_diag = in_diag();
  in_diag_set(true); /* what the symbol lookup allocates is not sampled */
  char base[512], name[560], comment[600];
  const char *extension;
  split_name(path, base, sizeof base, &extension);
  if (number != 0) {
    msg_format(name, sizeof name, "%s", base);
    msg_format(base, sizeof base, "%s.%u", name, number);
  }
  profile_sample *samples = platform_table_alloc(SITE_CAPACITY * sizeof *samples);
  bool written = samples != NULL;
  if (written) {
    size_t count = gather(samples);
    msg_format(comment, sizeof comment,
               "brisk heap profile of %s (pid %d): one sample per %.0f bytes allocated on "
               "average",
               platform_program_name(), platform_pid(), rate);
    profile_shape shape = heap_shape;
    shape.period = (int64_t)rate;
    shape.comment = comment;
    int fd = open_named(name, sizeof name, "%s%s%s", base, "", extension);
    written = fd >= 0 && profile_write_pprof(fd, &shape, samples, count);
    if (fd >= 0) platform_close(fd);
    char pprof_name[560];
    msg_format(pprof_name, sizeof pprof_name, "%s", name);
    static const char *const kinds[2] = {".inuse", ".alloc"};
    for (int k = 0; k < 2 && written; k++) {
      fd = open_named(name, sizeof name, "%s%s%s", base, kinds[k], ".folded");
      written = fd >= 0;
      if (written) profile_write_folded(fd, samples, count, k == 0 ? INUSE_SPACE : ALLOC_SPACE);
      if (fd >= 0) platform_close(fd);
    }
    platform_table_free(samples, SITE_CAPACITY * sizeof *samples);
    if (written)
      msg_printf(2,
                 "brisk: heap profile written to %s (pprof), %s.inuse.folded and "
                 "%s.alloc.folded (flame graphs)%s\n",
                 pprof_name, base, base,
                 dropped ? "; some samples were dropped: the table of live samples is full" : "");
  }
  in_diag_set(was_in_diag);
  return written;
}

bool heap_profile_dump(const char *path) {
  if (path != NULL) return write_profile(path, 0);
  const char *file = option_text(OPTION_HEAP_PROFILE);
  if (file == NULL) {
    errno = EINVAL;
    return false;
  }
  return write_profile(file, atomic_add_relaxed(&xdumps, 1) + 1);
}

void heap_profile_after_fork(void) {
  platform_lock_reset(&lock);
}

void heap_profile_report(void) {
  write_profile(option_text(OPTION_HEAP_PROFILE), 0);
}
