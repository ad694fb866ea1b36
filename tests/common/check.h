/* SPDX-License-Identifier: MIT */
/* Tiny check harness shared by the brisk test programs.
 *
 * CHECK(expr) prints file:line and the failed expression and counts the
 * failure; the program keeps going.  REQUIRE(expr) does the same and then
 * stops the program (use it when continuing makes no sense, e.g. NULL from an
 * allocation that must succeed).  test_finish() prints "N passed, N failed"
 * and returns the exit status (non-zero on any failure).
 *
 * The counters are atomic so worker threads may CHECK too.
 */
#ifndef BRISK_TEST_CHECK_H
#define BRISK_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#include <psapi.h>
#else
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#ifdef __cplusplus
#include <atomic>
typedef std::atomic<unsigned long> check_counter;
#define check_counter_add(c) (c).fetch_add(1, std::memory_order_relaxed)
#define check_counter_get(c) (c).load()
#else
#include <stdatomic.h>
typedef atomic_ulong check_counter;
#define check_counter_add(c) atomic_fetch_add_explicit(&(c), 1, memory_order_relaxed)
#define check_counter_get(c) atomic_load(&(c))
#endif

static check_counter check_passed_count;
static check_counter check_failed_count;

static inline int check_record(int ok, const char *file, int line, const char *expr) {
  if (ok) {
    check_counter_add(check_passed_count);
  } else {
    check_counter_add(check_failed_count);
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    fflush(stderr);
  }
  return ok;
}

/* Evaluates to the truth of expr, so it can guard follow-up code. */
#define CHECK(expr) check_record(!!(expr), __FILE__, __LINE__, #expr)

/* Like CHECK, with a printf-style explanation on failure. */
#define CHECK_MSG(expr, ...)                                                                       \
  (check_record(!!(expr), __FILE__, __LINE__, #expr)                                               \
       ? 1                                                                                         \
       : (fprintf(stderr, "    "), fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), 0))

/* For a check made thousands of times (every size, every address): the
 * first 8 failures are told, the rest only counted in expect_failures,
 * which the test then turns into one CHECK. */
static unsigned long expect_failures __attribute__((unused));
#define EXPECT(ok, ...)                                                                            \
  do {                                                                                             \
    if (!(ok) && expect_failures++ < 8) {                                                          \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                                       \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

static inline unsigned long test_failures(void) {
  return check_counter_get(check_failed_count);
}

static inline int test_finish(void) {
  unsigned long p = check_counter_get(check_passed_count);
  unsigned long f = check_counter_get(check_failed_count);
  printf("%lu passed, %lu failed\n", p, f);
  fflush(stdout);
  return f ? 1 : 0;
}

/* Stops the program right away (after the summary) when expr is false. */
#define REQUIRE(expr)                                                                              \
  do {                                                                                             \
    if (!CHECK(expr)) {                                                                            \
      fprintf(stderr, "%s:%d: REQUIRE failed, stopping\n", __FILE__, __LINE__);                    \
      test_finish();                                                                               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* Iteration scale in percent: compile definition BRISK_TEST_SCALE (the
 * sanitizer builds lower it), overridden at run time by the environment
 * variable BRISK_TEST_SCALE.  test_scaled(n) is n * scale / 100, at least 1. */
#ifndef BRISK_TEST_SCALE
#define BRISK_TEST_SCALE 100
#endif

static inline unsigned long test_scale_percent(void) {
  const char *e = getenv("BRISK_TEST_SCALE");
  if (e && *e) {
    long v = strtol(e, NULL, 10);
    if (v > 0) return (unsigned long)v;
  }
  return BRISK_TEST_SCALE;
}

static inline unsigned long test_scaled(unsigned long n) {
  unsigned long v = n * test_scale_percent() / 100;
  return v ? v : 1;
}

/* Whether this binary runs under a sanitizer that replaces malloc and adds
 * shadow memory (RSS figures are then not the allocator's). */
#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#ifndef TEST_UNDER_TSAN
#define TEST_UNDER_TSAN 0
#endif

/* Hides a pointer's origin from the optimizer, so that comparisons between
 * results of malloc-attributed functions are really made at run time. */
static inline void *launder(void *p) {
  __asm__ volatile("" : "+r"(p));
  return p;
}

/* Small deterministic PRNG (xorshift64*), one state per thread. */
static inline unsigned long long test_rand(unsigned long long *s) {
  unsigned long long x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

#ifdef _WIN32
static inline size_t test_page_size(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
}

/* The working set (now, or its peak) stands for the resident set on Windows. */
static inline size_t test_working_set(int peak) {
  PROCESS_MEMORY_COUNTERS c;
  if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &c, sizeof c)) return 0;
  return peak ? c.PeakWorkingSetSize : c.WorkingSetSize;
}
static inline size_t test_rss_bytes(void) {
  return test_working_set(0);
}
/* Only the peak ("VmHWM:") is known on Windows. */
static inline size_t test_status_bytes(const char *key) {
  return strcmp(key, "VmHWM:") == 0 ? test_working_set(1) : 0;
}
#else
static inline size_t test_page_size(void) {
  return (size_t)sysconf(_SC_PAGESIZE);
}

/* A "Vm...:" line of /proc/self/status (e.g. "VmHWM:") in bytes; 0 if absent. */
static inline size_t test_status_bytes(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t v = 0, klen = strlen(key);
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) == 0) {
      v = (size_t)strtoull(line + klen, NULL, 10) * 1024u;
      break;
    }
  }
  fclose(f);
  return v;
}

/* Resident set size of this process in bytes ("VmRSS:", in KiB: not
 * /proc/self/statm's pages, which qemu-user passes on from the host, counted
 * in the host's 4 KiB pages whatever page size it reports); 0 if unreadable. */
static inline size_t test_rss_bytes(void) {
  return test_status_bytes("VmRSS:");
}

/* How many OS pages of [p, p + size) are resident (mincore); pages no
 * longer mapped (a segment released meanwhile) are not. qemu-user
 * reporting pages larger than its host's (64 KiB on 4 KiB) passes mincore
 * on, and the host writes a byte per 4 KiB: the vector has room for that,
 * starts filled with a value mincore never writes, and the bytes written
 * tell which it was; a page is resident if any of its parts is. */
static inline size_t test_resident_pages(const void *p, size_t size) {
  enum { PAGES = 256, SMALLEST_PAGE = 4096, UNWRITTEN = 0xFE };
  size_t os_page = test_page_size(), resident = 0;
  size_t parts = os_page > SMALLEST_PAGE ? os_page / SMALLEST_PAGE : 1;
  uintptr_t at = (uintptr_t)p & ~(uintptr_t)(os_page - 1);
  uintptr_t end = ((uintptr_t)p + size + os_page - 1) & ~(uintptr_t)(os_page - 1);
  unsigned char vec[PAGES * 16];
  REQUIRE(parts <= 16);
  while (at < end) {
    size_t pages = (end - at) / os_page < (size_t)PAGES ? (end - at) / os_page : (size_t)PAGES;
    memset(vec, UNWRITTEN, pages * parts);
    if (mincore((void *)at, pages * os_page, vec) != 0) {
      REQUIRE(errno == ENOMEM);
      if (pages > 1) { /* some page is not mapped: page by page */
        for (size_t i = 0; i < pages; i++)
          resident += test_resident_pages((const void *)(at + i * os_page), os_page);
      }
      at += pages * os_page;
      continue;
    }
    size_t per_page = parts > 1 && vec[pages] != UNWRITTEN ? parts : 1; /* bytes per OS page */
    for (size_t i = 0; i < pages; i++) {
      unsigned char any = 0;
      for (size_t j = 0; j < per_page; j++)
        any |= vec[i * per_page + j];
      resident += any & 1;
    }
    at += pages * os_page;
  }
  return resident;
}

/* Whether brisk's background purger runs: its thread is named brisk-purge. */
static inline int test_purger_running(void) {
  DIR *tasks = opendir("/proc/self/task");
  REQUIRE(tasks != NULL);
  int found = 0;
  for (struct dirent *task; !found && (task = readdir(tasks)) != NULL;) {
    char path[300], name[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", task->d_name);
    FILE *comm = fopen(path, "r");
    if (comm == NULL) continue; /* "." and ".." */
    found = fgets(name, sizeof name, comm) != NULL && strncmp(name, "brisk-purge", 11) == 0;
    fclose(comm);
  }
  closedir(tasks);
  return found;
}
#endif

#endif /* BRISK_TEST_CHECK_H */
