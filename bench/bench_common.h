/* SPDX-License-Identifier: MIT */
/* Shared plumbing for the benchmark workloads: argument parsing, timing,
 * threads, deterministic random numbers, checksums and the RESULT line.
 *
 * Every workload follows docs/CONTRACTS.md: `PROG --threads T [--quick]
 * [options]`, last stdout line `RESULT ok=0|1 ops=N ...`, exit status 0 iff
 * ok=1 and 2 on a verification failure (reason on stderr).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

typedef enum bench_opt_kind { BENCH_OPT_LONG, BENCH_OPT_STRING, BENCH_OPT_FLAG } bench_opt_kind;

typedef struct bench_opt {
  const char *name; /* without the leading "--" */
  bench_opt_kind kind;
  void *target; /* long *, const char ** or int * by kind */
  const char *help;
} bench_opt;

/* Options every workload takes. */
typedef struct bench_args {
  long threads;
  int quick;
} bench_args;

/* Parses --threads, --quick and the workload's own options into their targets
 * (which hold the defaults on entry). Exits with status 64 and a usage message
 * on anything it does not understand, so the harness reports a clear error. */
void bench_parse_args(int argc, char **argv, const char *summary, bench_args *common,
                      const bench_opt *opts, size_t n_opts);

/* Seconds on a monotonic clock. */
double bench_now(void);

/* Per-thread state is declared with BENCH_CACHE_ALIGNED on its first member
 * and allocated here, so threads updating their own counters never share a
 * cache line: false sharing inside the harness would be blamed on the
 * allocator. Returns zeroed memory for n objects of `size` bytes. */
#define BENCH_CACHE_LINE 64
#define BENCH_CACHE_ALIGNED _Alignas(BENCH_CACHE_LINE)
void *bench_calloc_workers(long n, size_t size);

/* Starts n threads running fn(base + i * stride) and waits for all of them. */
void bench_run_threads(long n, void *(*fn)(void *), void *base, size_t stride);

/* splitmix64: tiny, fast and deterministic, so every allocator sees exactly
 * the same sequence of requests. */
static inline uint64_t bench_rand_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline size_t bench_rand_range(uint64_t *state, size_t lo, size_t hi) {
  return lo + (size_t)(bench_rand_next(state) % (uint64_t)(hi - lo + 1));
}

/* FNV-1a, chained through `hash` so callers can checksum piecewise. */
static inline uint64_t bench_hash(uint64_t hash, const void *data, size_t len) {
  const unsigned char *bytes = data;
  for (size_t i = 0; i < len; i++) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}
#define BENCH_HASH_SEED 0xcbf29ce484222325ull

/* A block that knows its size and carries a tag derived from its address
 * in its first bytes and in its last byte, so a block overwritten by another,
 * or overlapping another, is caught when it is checked before free. Blocks
 * must be at least 8 bytes; an 8-byte block is all header. */
typedef struct bench_block {
  uint32_t size, tag;
} bench_block;

static inline uint32_t bench_block_tag_of(const bench_block *b) {
  return (uint32_t)((uintptr_t)b * 2654435761u) ^ b->size;
}

/* Writes the tags into a freshly allocated block of `size` bytes. */
static inline bench_block *bench_block_tag(void *memory, uint32_t size) {
  bench_block *b = memory;
  b->size = size;
  b->tag = bench_block_tag_of(b);
  if (size > sizeof *b) ((unsigned char *)b)[size - 1] = (unsigned char)b->tag;
  return b;
}

static inline int bench_block_intact(const bench_block *b) {
  return b->tag == bench_block_tag_of(b) &&
         (b->size == sizeof *b || ((const unsigned char *)b)[b->size - 1] == (unsigned char)b->tag);
}

/* malloc/realloc that end the run as a failed verification on NULL: running
 * out of memory under one allocator is a result worth reporting, not a crash. */
void *bench_malloc(size_t size);
void *bench_realloc(void *block, size_t size);

/* Reports a failed check on stderr, prints `RESULT ok=0 ...` and exits 2.
 * Safe to call from any thread. */
_Noreturn void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints the RESULT line: ok, ops, secs (the workload's own timed section),
 * ops_s, then `extra` (already formatted "key=value ..." or NULL), then
 * end_rss_mb, the resident set at this point: memory an allocator still holds
 * after the work is done is part of what it costs. Returns the exit status
 * for main. */
int bench_finish(int ok, uint64_t ops, double secs, const char *extra);

/* Current resident set size of this process in bytes: VmRSS from
 * /proc/self/status, the figure `ps` and `top` show. 0 if unreadable. */
size_t bench_rss_bytes(void);

/* Bytes as MiB, the unit every RSS figure is reported in. */
static inline double bench_mib(size_t bytes) {
  return (double)bytes / (1024.0 * 1024.0);
}

/* Writes one byte in every 4 KiB of the block, as a program that fills its
 * blocks would touch every page, so resident memory counts every page the
 * allocator handed out; far cheaper than filling the block. */
static inline void bench_touch_pages(void *block, size_t size, unsigned char value) {
  for (size_t off = 0; off < size; off += 4096)
    ((volatile unsigned char *)block)[off] = value;
}

/* Sleeps for `ms` milliseconds (resumes after signals). */
void bench_sleep_ms(long ms);

#endif
