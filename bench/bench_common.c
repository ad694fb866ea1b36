/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "bench_common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(const char *prog, const char *summary, const bench_opt *opts, size_t n_opts) {
  fprintf(stderr, "%s: %s\nusage: %s --threads T [--quick]", prog, summary, prog);
  for (size_t i = 0; i < n_opts; i++)
    fprintf(stderr, " [--%s%s]", opts[i].name, opts[i].kind == BENCH_OPT_FLAG ? "" : " V");
  fprintf(stderr, "\n  --threads T  worker threads (>= 1)\n  --quick      small sizes\n");
  for (size_t i = 0; i < n_opts; i++)
    fprintf(stderr, "  --%-10s %s\n", opts[i].name, opts[i].help);
}

static _Noreturn void bad_usage(const char *prog, const char *summary, const bench_opt *opts,
                                size_t n_opts, const char *fmt, const char *arg) {
  fprintf(stderr, "%s: ", prog);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  usage(prog, summary, opts, n_opts);
  exit(64);
}

static int parse_long(const char *text, long *out) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || end == text || *end) return 0;
  *out = value;
  return 1;
}

void bench_parse_args(int argc, char **argv, const char *summary, bench_args *common,
                      const bench_opt *opts, size_t n_opts) {
  const char *prog = argc > 0 ? argv[0] : "bench";
  const char *slash = strrchr(prog, '/');
  if (slash) prog = slash + 1;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(prog, summary, opts, n_opts);
      exit(0);
    }
    if (strcmp(arg, "--quick") == 0) {
      common->quick = 1;
      continue;
    }
    if (strcmp(arg, "--threads") == 0) {
      if (i + 1 >= argc || !parse_long(argv[i + 1], &common->threads) || common->threads < 1 ||
          common->threads > 1024)
        bad_usage(prog, summary, opts, n_opts, "--threads needs a number from 1 to 1024%s", "");
      i++;
      continue;
    }
    const bench_opt *opt = NULL;
    if (strncmp(arg, "--", 2) == 0)
      for (size_t k = 0; k < n_opts; k++)
        if (strcmp(arg + 2, opts[k].name) == 0) opt = &opts[k];
    if (!opt) bad_usage(prog, summary, opts, n_opts, "unknown option '%s'", arg);
    if (opt->kind == BENCH_OPT_FLAG) {
      *(int *)opt->target = 1;
      continue;
    }
    if (i + 1 >= argc) bad_usage(prog, summary, opts, n_opts, "%s needs a value", arg);
    const char *value = argv[++i];
    if (opt->kind == BENCH_OPT_STRING) {
      *(const char **)opt->target = value;
    } else if (!parse_long(value, (long *)opt->target) || *(long *)opt->target < 0) {
      bad_usage(prog, summary, opts, n_opts, "%s needs a non-negative number", arg);
    }
  }
}

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_run_threads(long n, void *(*fn)(void *), void *base, size_t stride) {
  pthread_t *ids = bench_malloc(sizeof(pthread_t) * (size_t)n);
  for (long i = 0; i < n; i++) {
    int err = pthread_create(&ids[i], NULL, fn, (char *)base + (size_t)i * stride);
    if (err) bench_fail("pthread_create: %s", strerror(err));
  }
  for (long i = 0; i < n; i++)
    pthread_join(ids[i], NULL);
  free(ids);
}

void *bench_calloc_workers(long n, size_t size) {
  size_t bytes = (size_t)n * size;
  bytes = (bytes + BENCH_CACHE_LINE - 1) / BENCH_CACHE_LINE * BENCH_CACHE_LINE;
  void *workers = aligned_alloc(BENCH_CACHE_LINE, bytes);
  if (!workers) bench_fail("aligned_alloc(%zu) returned NULL", bytes);
  memset(workers, 0, bytes);
  return workers;
}

void *bench_malloc(size_t size) {
  void *block = malloc(size);
  if (!block) bench_fail("malloc(%zu) returned NULL", size);
  return block;
}

void *bench_realloc(void *block, size_t size) {
  void *grown = realloc(block, size);
  if (!grown) bench_fail("realloc(%zu) returned NULL", size);
  return grown;
}

void bench_fail(const char *fmt, ...) {
  /* Serialise failing threads so only one RESULT line is printed. */
  static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&once);
  va_list ap;
  va_start(ap, fmt);
  fputs("verification failed: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  printf("RESULT ok=0 ops=0\n");
  fflush(stdout);
  fflush(stderr);
  _exit(2);
}

int bench_finish(int ok, uint64_t ops, double secs, const char *extra) {
  double rate = secs > 0 ? (double)ops / secs : 0.0;
  /* Read before printf: stdout's buffer is allocated by the first printf. */
  double end_rss_mb = bench_mib(bench_rss_bytes());
  printf("RESULT ok=%d ops=%llu secs=%.6f ops_s=%.0f%s%s end_rss_mb=%.1f\n", ok ? 1 : 0,
         (unsigned long long)ops, secs, rate, extra && *extra ? " " : "", extra ? extra : "",
         end_rss_mb);
  fflush(stdout);
  return ok ? 0 : 2;
}

size_t bench_rss_bytes(void) {
  /* Read with open/read, not stdio: a FILE would allocate through the very
   * allocator being measured, in the middle of a measurement. */
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return 0;
  char text[4096];
  ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return 0;
  text[got] = '\0';
  const char *line = strstr(text, "\nVmRSS:");
  if (!line) return 0;
  unsigned long kib = strtoul(line + strlen("\nVmRSS:"), NULL, 10);
  return (size_t)kib * 1024;
}

void bench_sleep_ms(long ms) {
  struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}
