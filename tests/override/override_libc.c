/* SPDX-License-Identifier: MIT */
/* brisk as the process's malloc (BRISK_OVERRIDE builds), linked or preloaded:
 * - every malloc-family symbol resolves into libbrisk;
 * - memory allocated inside libc (strdup, getline, asprintf, open_memstream,
 *   stdio buffers, realpath, scandir, glob, regcomp, iconv, NSS, ...) comes
 *   from brisk and can be freed / realloc'd by the program;
 * - allocations made before main (constructors) and after it (destructors),
 *   inside dlopen/dlsym/dlerror and by a dlopen'ed module's constructor;
 * - allocations from threads started by libc (SIGEV_THREAD timers), threads
 *   with small stacks, and thread-specific-data destructors at thread exit.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#ifdef __GLIBC__
#include <execinfo.h>
#endif
#include <glob.h>
#include <iconv.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <regex.h>
#include <search.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc_api.h"
#include "pattern.h"

#ifndef BRISK_TEST_DL_HELPER
#error "BRISK_TEST_DL_HELPER must name the dlopen test module"
#endif

/* ---- before and after main ---------------------------------------------- */

#define EARLY 64
static void *early_blocks[EARLY];
static size_t early_sizes[EARLY];
static char *early_str;

__attribute__((constructor(101))) static void early_allocations(void) {
  for (int k = 0; k < EARLY; k++) {
    early_sizes[k] = k == 0 ? (size_t)(2u << 20) : (size_t)k * 37 + 1;
    early_blocks[k] = k % 3 == 0 ? calloc(1, early_sizes[k]) : malloc(early_sizes[k]);
    if (early_blocks[k]) pattern_fill(early_blocks[k], early_sizes[k], (uint32_t)k);
  }
  early_str = strdup("allocated by a constructor");
  early_blocks[1] = realloc(early_blocks[1], 5000);
  if (early_blocks[1]) pattern_fill(early_blocks[1], early_sizes[1] = 5000, 1);
}

__attribute__((destructor)) static void late_allocations(void) {
  /* after main returned and stdout was flushed: failures go to stderr and
   * the exit status */
  for (int k = 0; k < 100; k++) {
    char *p = malloc((size_t)k * 100 + 1);
    if (!p) {
      fputs("destructor: malloc failed\n", stderr);
      _exit(1);
    }
    memset(p, k, (size_t)k * 100 + 1);
    free(p);
  }
}

static void test_constructor_blocks(void) {
  for (int k = 0; k < EARLY; k++) {
    if (!CHECK_MSG(early_blocks[k] != NULL, "constructor allocation %d failed", k)) continue;
    CHECK_MSG(A_OWNS(early_blocks[k]), "constructor block %d not from brisk", k);
    CHECK(pattern_ok(early_blocks[k], early_sizes[k], (uint32_t)k));
    CHECK(A_USABLE_SIZE(early_blocks[k]) >= early_sizes[k]);
    free(early_blocks[k]);
  }
  REQUIRE(early_str != NULL);
  CHECK(strcmp(early_str, "allocated by a constructor") == 0);
  CHECK(A_OWNS(early_str));
  free(early_str);
}

/* ---- every entry point is brisk's ----------------------------------------- */

static int from_libbrisk(const void *addr) {
  Dl_info di;
  return addr && dladdr(addr, &di) && di.dli_fname && strstr(di.dli_fname, "libbrisk") != NULL;
}

static void test_symbols(void) {
  static const char *const names[] = {
      "malloc",        "free",     "calloc", "realloc", "reallocarray",      "posix_memalign",
      "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    void *s = dlsym(RTLD_DEFAULT, names[k]);
    Dl_info di = {0};
    if (s) dladdr(s, &di);
    CHECK_MSG(from_libbrisk(s), "%s resolves to %s, not libbrisk", names[k],
              di.dli_fname ? di.dli_fname : "(nothing)");
  }
  /* what this program's own calls bind to */
  void *(*volatile m)(size_t) = malloc;
  void (*volatile f)(void *) = free;
  CHECK_MSG(from_libbrisk((void *)m), "the program's malloc is not libbrisk's");
  CHECK_MSG(from_libbrisk((void *)f), "the program's free is not libbrisk's");
}

#ifdef __GLIBC__
/* glibc's own public names for its allocator (no header declares them).
 * A tracing library that calls __libc_malloc as "the real malloc", and a
 * program that frees the block with free, must get one allocator: if these
 * were glibc's, brisk would report the free as invalid and abort, and
 * glibc's __libc_free would abort on a block of brisk's. */
extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static void test_glibc_names(void) {
  static const char *const names[] = {"__libc_malloc",  "__libc_free",     "__libc_calloc",
                                      "__libc_realloc", "__libc_memalign", "__libc_valloc",
                                      "__libc_pvalloc"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    CHECK_MSG(from_libbrisk(dlsym(RTLD_DEFAULT, names[k])), "%s does not resolve to libbrisk",
              names[k]);
  void *blocks[] = {__libc_malloc(100),        __libc_calloc(10, 30), __libc_realloc(NULL, 5000),
                    __libc_memalign(256, 700), __libc_valloc(3000),   __libc_pvalloc(10)};
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
    if (!CHECK_MSG(blocks[k] != NULL, "glibc-named allocation %zu failed", k)) continue;
    CHECK_MSG(A_OWNS(blocks[k]), "glibc-named allocation %zu is not brisk's block", k);
    free(blocks[k]); /* brisk's free: aborts on a block of glibc's */
  }
  char *grown = __libc_realloc(strdup("kept"), 100000);
  if (CHECK(grown != NULL)) {
    CHECK(strcmp(grown, "kept") == 0 && A_OWNS(grown));
    __libc_free(grown);
  }
  __libc_free(malloc(40)); /* glibc's own free aborts on a block of brisk's */
  __libc_free(NULL);
}
#else
/* musl has no such names (brisk defines them only for glibc). */
static void test_glibc_names(void) {}
#endif

/* ---- libc-internal allocations ------------------------------------------ */

static int my_asprintf(char **out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vasprintf(out, fmt, ap);
  va_end(ap);
  return r;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(a, b);
}

static void keep_node(void *p) {
  (void)p;
}

static void test_libc_internal(void) {
  /* strdup / strndup, then grown by the program */
  char *s = strdup("hello, brisk");
  REQUIRE(s != NULL);
  CHECK(A_OWNS(s));
  CHECK(A_USABLE_SIZE(s) >= 13);
  s = realloc(s, 100000);
  REQUIRE(s != NULL);
  CHECK(strcmp(s, "hello, brisk") == 0);
  free(s);
  s = strndup("abcdefghijklmnop", 5);
  CHECK(s && strcmp(s, "abcde") == 0 && A_OWNS(s));
  free(s);

  /* asprintf / vasprintf, small and large */
  char *a = NULL;
  CHECK(asprintf(&a, "%d-%s-%0*d", 42, "x", 50000, 7) == 50000 + 5);
  CHECK(a && A_OWNS(a) && strncmp(a, "42-x-000", 8) == 0 && a[50004] == '7');
  free(a);
  CHECK(my_asprintf(&a, "%s/%s", "a", "b") == 3);
  CHECK(a && A_OWNS(a) && strcmp(a, "a/b") == 0);
  free(a);

  /* open_memstream: libc grows the buffer with realloc; we free it */
  char *buf = NULL;
  size_t len = 0;
  FILE *ms = open_memstream(&buf, &len);
  REQUIRE(ms != NULL);
  for (int k = 0; k < 100000; k++)
    fprintf(ms, "%d\n", k);
  CHECK(fclose(ms) == 0);
  CHECK(buf && A_OWNS(buf));
  CHECK(len == 588890);
  CHECK(buf && strncmp(buf, "0\n1\n2\n", 6) == 0 && strcmp(buf + len - 6, "99999\n") == 0);
  free(buf);

  /* getline / getdelim through a stdio stream (stdio buffer from malloc) */
  FILE *tf = tmpfile();
  REQUIRE(tf != NULL);
  for (int k = 0; k < 2000; k++)
    fprintf(tf, "line %d %0*d\n", k, k % 300, 0);
  rewind(tf);
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  int lines = 0, good = 1;
  while ((got = getline(&line, &cap, tf)) > 0) {
    char want[32];
    int wl = snprintf(want, sizeof want, "line %d ", lines);
    if (strncmp(line, want, (size_t)wl) != 0 ||
        (size_t)got != (size_t)wl + (size_t)(lines % 300) + 1 + (lines % 300 == 0 ? 1 : 0))
      good = 0;
    lines++;
  }
  CHECK(lines == 2000);
  CHECK(good);
  CHECK(line && A_OWNS(line) && A_USABLE_SIZE(line) >= cap);
  free(line);
  rewind(tf);
  line = NULL;
  cap = 0;
  CHECK(getdelim(&line, &cap, ' ', tf) == 5 && strcmp(line, "line ") == 0);
  CHECK(A_OWNS(line));
  free(line);
  fclose(tf);

  /* stdio buffers of many streams opened and closed */
  for (int k = 0; k < 200; k++) {
    FILE *f = fopen("/proc/self/stat", "r");
    REQUIRE(f != NULL);
    char tmp[64];
    CHECK(fgets(tmp, sizeof tmp, f) != NULL);
    fclose(f);
  }

  /* realpath, getcwd */
  char *rp = realpath("/usr/../usr/./bin", NULL);
  CHECK(rp && strcmp(rp, "/usr/bin") == 0 && A_OWNS(rp));
  free(rp);
  char *cwd = getcwd(NULL, 0);
  CHECK(cwd && cwd[0] == '/' && A_OWNS(cwd));
  free(cwd);

  /* scandir: array and entries from malloc */
  struct dirent **names = NULL;
  int n = scandir("/dev", &names, NULL, alphasort);
  CHECK(n > 3);
  CHECK(names && A_OWNS(names));
  int found_null = 0;
  for (int k = 0; k < n; k++) {
    if (strcmp(names[k]->d_name, "null") == 0) found_null = 1;
    if (k == 0) CHECK(A_OWNS(names[k]));
    free(names[k]);
  }
  free(names);
  CHECK(found_null);

  /* glob */
  glob_t g;
  CHECK(glob("/usr/*", 0, NULL, &g) == 0);
  CHECK(g.gl_pathc > 2 && A_OWNS(g.gl_pathv));
  globfree(&g);

  /* regex */
  regex_t re;
  CHECK(regcomp(&re, "^([a-z]+)-([0-9]{2,})$", REG_EXTENDED) == 0);
  regmatch_t m[3];
  CHECK(regexec(&re, "brisk-2024", 3, m, 0) == 0 && m[2].rm_so == 6);
  CHECK(regexec(&re, "brisk-2", 3, m, 0) == REG_NOMATCH);
  regfree(&re);

  /* qsort of a big array (glibc's merge sort takes a malloc'd buffer) */
  enum { QN = 300000 };
  int *arr = malloc(QN * sizeof(int));
  REQUIRE(arr != NULL);
  unsigned long long rng = 99;
  for (int k = 0; k < QN; k++)
    arr[k] = (int)(test_rand(&rng) % 1000000);
  qsort(arr, QN, sizeof(int), cmp_int);
  int sorted = 1;
  for (int k = 1; k < QN; k++)
    if (arr[k - 1] > arr[k]) sorted = 0;
  CHECK(sorted);
  free(arr);

  /* environment */
  for (int k = 0; k < 1000; k++) {
    char name[32], val[64];
    snprintf(name, sizeof name, "BRISK_TEST_VAR_%d", k);
    snprintf(val, sizeof val, "value-%d", k * k);
    CHECK(setenv(name, val, 1) == 0);
  }
  const char *v = getenv("BRISK_TEST_VAR_999");
  CHECK(v && strcmp(v, "value-998001") == 0);
  for (int k = 0; k < 1000; k++) {
    char name[32];
    snprintf(name, sizeof name, "BRISK_TEST_VAR_%d", k);
    unsetenv(name);
  }
  CHECK(getenv("BRISK_TEST_VAR_5") == NULL);

  /* tsearch / tdestroy */
  void *root = NULL;
  static char keys[500][8];
  for (int k = 0; k < 500; k++) {
    snprintf(keys[k], sizeof keys[k], "k%d", k);
    CHECK(tsearch(keys[k], &root, cmp_str) != NULL);
  }
  CHECK(tfind("k250", &root, cmp_str) != NULL);
  tdestroy(root, keep_node); /* frees the tree's nodes, which libc malloc'ed */

  /* iconv (gconv modules are dlopen'ed by libc). A C library installed
   * without its modules (Debian's ARM64 cross libc, which the ARM64 tests
   * run on under qemu) has only the built-in conversions: UCS-2LE gives the
   * same bytes here. */
  iconv_t cd = iconv_open("UTF-16LE", "UTF-8");
  if (cd == (iconv_t)-1 && errno == EINVAL) {
    printf("note: no gconv module for UTF-16LE here; UCS-2LE, built into the C library\n");
    cd = iconv_open("UCS-2LE", "UTF-8");
  }
  if (CHECK(cd != (iconv_t)-1)) {
    char in[] = "h\xc3\xa9llo", out[32];
    char *ip = in, *op = out;
    size_t il = strlen(in), ol = sizeof out;
    CHECK(iconv(cd, &ip, &il, &op, &ol) != (size_t)-1);
    CHECK(sizeof out - ol == 10 && out[2] == (char)0xe9);
    iconv_close(cd);
  }

  /* NSS (may dlopen libnss_*), time zones, backtrace (dlopens libgcc_s) */
  struct passwd *pw = getpwuid(0);
  CHECK(pw && strcmp(pw->pw_name, "root") == 0);
  setenv("TZ", "XYZ-1", 1); /* UTC+1, no zoneinfo file needed */
  tzset();
  time_t t0 = 1700000000;
  struct tm tmv;
  CHECK(localtime_r(&t0, &tmv) && tmv.tm_hour == 23);
#ifdef __GLIBC__ /* musl has no backtrace */
  void *frames[16];
  int nf = backtrace(frames, 16);
  CHECK(nf > 1);
  char **sym = backtrace_symbols(frames, nf);
  CHECK(sym && A_OWNS(sym));
  free(sym);
#endif

  /* printf with a huge width allocates a work buffer inside vfprintf */
  FILE *dn = fopen("/dev/null", "w");
  REQUIRE(dn != NULL);
  CHECK(fprintf(dn, "%*d|%.*f", 200000, 5, 5000, 1.0) == 200000 + 1 + 5002);
  fclose(dn);
}

/* ---- dlopen / dlsym / dlerror ----------------------------------------- */

static void test_dl(void) {
  for (int round = 0; round < 20; round++) {
    void *h = dlopen(BRISK_TEST_DL_HELPER, RTLD_NOW | RTLD_LOCAL);
    if (!CHECK_MSG(h != NULL, "dlopen(%s): %s", BRISK_TEST_DL_HELPER, dlerror())) return;
    char **ctor_block = dlsym(h, "dl_helper_ctor_block");
    void *(*alloc)(size_t, int) = NULL;
    int (*free_checked)(void *, size_t, int) = NULL;
    *(void **)&alloc = dlsym(h, "dl_helper_alloc");
    *(void **)&free_checked = dlsym(h, "dl_helper_free_checked");
    REQUIRE(ctor_block && alloc && free_checked);
    /* a block the module's constructor allocated (in every round: dlclose
     * unloads it; musl never unloads a library, so there only in the first) */
    char *cb = *ctor_block;
    int constructor_ran = 1;
#ifndef __GLIBC__
    constructor_ran = round == 0;
#endif
    if (constructor_ran && CHECK(cb != NULL)) {
      CHECK(A_OWNS(cb));
      int ok = 1;
      for (int k = 0; k < 1000; k++)
        ok &= cb[k] == 'D';
      CHECK(ok);
      free(cb);
      *ctor_block = NULL;
    }
    /* module allocates, program frees; program allocates, module frees */
    unsigned char *p = alloc(50000 + (size_t)round, 7);
    CHECK(p && A_OWNS(p) && p[0] == 7 && p[49999] == 7);
    free(p);
    unsigned char *q = malloc(3000);
    REQUIRE(q != NULL);
    memset(q, 9, 3000);
    CHECK(free_checked(q, 3000, 9) == 1);
    CHECK(dlclose(h) == 0);
  }
  /* dlerror strings are malloc'ed by libc */
  CHECK(dlopen("libbrisk-no-such-library.so.7", RTLD_NOW) == NULL);
  const char *e = dlerror();
  CHECK(e && strstr(e, "libbrisk-no-such-library") != NULL);
  CHECK(dlsym(RTLD_DEFAULT, "brisk_no_such_symbol") == NULL);
  e = dlerror();
  CHECK(e && strstr(e, "brisk_no_such_symbol") != NULL);
  CHECK(dlerror() == NULL);
}

/* ---- threads started by others -------------------------------------------- */

static sem_t timer_sem;
static void *timer_blocks[32];
static int timer_owned;

static void timer_notify(union sigval sv) {
  (void)sv;
  /* runs in a thread libc created */
  int owned = 1;
  for (int k = 0; k < 32; k++) {
    timer_blocks[k] = malloc((size_t)k * 1000 + 1);
    if (!timer_blocks[k] || !A_OWNS(timer_blocks[k]))
      owned = 0;
    else
      pattern_fill(timer_blocks[k], (size_t)k * 1000 + 1, (uint32_t)k);
  }
  void *tmp = calloc(100, 100);
  if (!tmp || !all_zero(tmp, 10000)) owned = 0;
  free(tmp);
  timer_owned = owned;
  sem_post(&timer_sem);
}

static void test_timer_thread(void) {
  REQUIRE(sem_init(&timer_sem, 0, 0) == 0);
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD;
  sev.sigev_notify_function = timer_notify;
  timer_t tid;
  REQUIRE(timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0);
  struct itimerspec its = {{0, 0}, {0, 1000000}};
  REQUIRE(timer_settime(tid, 0, &its, NULL) == 0);
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 10;
  int r;
  while ((r = sem_timedwait(&timer_sem, &dl)) == -1 && errno == EINTR)
    ;
  if (CHECK_MSG(r == 0, "SIGEV_THREAD timer did not fire")) {
    CHECK(timer_owned);
    for (int k = 0; k < 32; k++) {
      CHECK(timer_blocks[k] && pattern_ok(timer_blocks[k], (size_t)k * 1000 + 1, (uint32_t)k));
      free(timer_blocks[k]); /* freed by another thread than its allocator */
    }
  }
  timer_delete(tid);
}

static pthread_key_t key;
static void *tsd_late_block;
static int tsd_destructor_ok;

static void tsd_destructor(void *v) {
  /* at thread exit, possibly after the allocator's own thread teardown */
  int ok = pattern_ok(v, 777, 77);
  free(v);
  for (int k = 0; k < 50; k++) {
    void *p = malloc((size_t)k * 64 + 8);
    if (!p) ok = 0;
    free(p);
  }
  tsd_late_block = malloc(4096);
  if (tsd_late_block)
    pattern_fill(tsd_late_block, 4096, 78);
  else
    ok = 0;
  tsd_destructor_ok = ok;
}

static void *tsd_thread(void *arg) {
  (void)arg;
  void *p = malloc(777);
  if (p) {
    pattern_fill(p, 777, 77);
    pthread_setspecific(key, p);
  }
  return p;
}

static void *small_stack_thread(void *arg) {
  (void)arg;
  unsigned char *blocks[64];
  for (int k = 0; k < 64; k++) {
    blocks[k] = malloc((size_t)k * 500 + 1);
    if (!blocks[k]) return NULL;
    memset(blocks[k], k, (size_t)k * 500 + 1);
  }
  for (int k = 0; k < 64; k += 2)
    free(blocks[k]);
  /* the odd ones are left for the creator to free after we exit */
  unsigned char **out = malloc(sizeof blocks);
  if (out) memcpy(out, blocks, sizeof blocks);
  return out;
}

static void test_other_threads(void) {
  test_timer_thread();

  REQUIRE(pthread_key_create(&key, tsd_destructor) == 0);
  for (int r = 0; r < 20; r++) {
    pthread_t t;
    void *ret = NULL;
    tsd_destructor_ok = 0;
    tsd_late_block = NULL;
    REQUIRE(pthread_create(&t, NULL, tsd_thread, NULL) == 0);
    REQUIRE(pthread_join(t, &ret) == 0);
    CHECK(ret != NULL);
    CHECK_MSG(tsd_destructor_ok, "malloc/free in a thread-specific-data destructor failed");
    CHECK(tsd_late_block && A_OWNS(tsd_late_block) && pattern_ok(tsd_late_block, 4096, 78));
    free(tsd_late_block);
  }
  pthread_key_delete(key);

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  /* 64 KiB, or the least the C library takes (128 KiB on ARM64) */
  REQUIRE(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536) ==
          0);
  for (int r = 0; r < 20; r++) {
    pthread_t t;
    unsigned char **out = NULL;
    REQUIRE(pthread_create(&t, &attr, small_stack_thread, NULL) == 0);
    REQUIRE(pthread_join(t, (void **)&out) == 0);
    if (!CHECK_MSG(out != NULL, "allocation in a 64 KiB-stack thread failed")) continue;
    for (int k = 1; k < 64; k += 2) {
      size_t n = (size_t)k * 500 + 1;
      CHECK(out[k][0] == k && out[k][n - 1] == k && A_OWNS(out[k]));
      free(out[k]);
    }
    free(out);
  }
  pthread_attr_destroy(&attr);
}

int main(void) {
  api_init();
#ifdef BRISK_TEST_LINKED
  printf("override (linked) with brisk %s\n", brisk_version());
#else
  printf("override (preloaded) with brisk %s\n", A_VERSION());
#endif
  test_symbols();
  test_glibc_names();
  test_constructor_blocks();
  test_libc_internal();
  test_dl();
  test_other_threads();
  return test_finish();
}
