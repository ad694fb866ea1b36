/* SPDX-License-Identifier: MIT */
/* glibc's heap statistics (mallinfo2, mallinfo, malloc_stats, malloc_info)
 * report brisk's figures when brisk is the process's malloc. Built three
 * ways: a plain program that knows nothing of brisk, run with
 * LD_PRELOAD=libbrisk.so (a monitor inside an unmodified service), and
 * linked against libbrisk.so and libbrisk.a. glibc's own answers there come
 * from its arena, which brisk leaves unused: nothing in use, ever.
 *
 * Threads allocate blocks of every kind (small and medium pages, the heap's
 * arena past 64 KiB, huge blocks past 512 KiB) and wait while the main
 * thread looks: uordblks must have risen by at least the bytes asked for
 * outside huge blocks, and by at most what the design lets it count besides
 * (SLACK below), hblks and hblkhd must count the huge ones. Then the
 * threads free their own blocks, and the figures must fall back; then each
 * frees another's blocks and trims, and they must fall back again; after
 * the threads exit and the program trims, nothing of theirs may be left. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4
#define KiB ((size_t)1024)
#define MiB (KiB * KiB)

/* The blocks each thread allocates: four small classes (pages of 64 KiB),
 * one medium class (pages of 512 KiB), blocks of the heap's arena and huge
 * blocks (mapped one by one). */
static const struct {
  size_t size, count;
  int huge;
} kinds[] = {
    {24, 400, 0},    {200, 400, 0},   {1000, 400, 0},      {5000, 400, 0},
    {20000, 100, 0}, {100000, 40, 0}, {3 * MiB / 2, 4, 1},
};
#define KINDS (sizeof kinds / sizeof kinds[0])
#define SMALL_CLASSES 4
#define MEDIUM_CLASSES 1
#define ARENA_BLOCKS 40
#define HUGE_BLOCKS 4
#define BLOCKS_PER_THREAD (4 * 400 + 100 + 40 + 4)

/* What uordblks may count besides the blocks in use, by brisk's design
 * (src/diag/stats.c): blocks free on a thread's pages still in use, its
 * cache. Allocating without freeing, a thread's pages hold few of them (the
 * blocks carved ahead on the page it takes from); after it frees all it
 * allocated, its warm pages: at most one page per size class it used. So
 * one page per class per thread bounds both. Each arena block counts its
 * 16-byte header and at most 48 bytes of a chunk too small to split off.
 * NOISE: the main thread's own blocks (the C library's for thread start-up,
 * the statistics' streams) and the background purger's. */
#define SLACK_PER_THREAD (SMALL_CLASSES * 64 * KiB + MEDIUM_CLASSES * 512 * KiB)
#define SLACK_PER_ARENA_BLOCK 64
#define NOISE (1 * MiB)

typedef struct worker {
  pthread_t thread;
  unsigned index;
  void *blocks[BLOCKS_PER_THREAD];
  size_t requested, usable, huge_requested; /* of the blocks out of huge ones, and of those */
} worker_t;

static worker_t workers[THREADS];
static pthread_barrier_t barrier;

/* The main thread looks while every worker waits between two barriers. */
static void checkpoint(void) {
  pthread_barrier_wait(&barrier);
}

static void allocate_all(worker_t *w) {
  size_t n = 0;
  w->requested = w->usable = w->huge_requested = 0;
  for (size_t k = 0; k < KINDS; k++)
    for (size_t i = 0; i < kinds[k].count; i++) {
      char *p = malloc(kinds[k].size);
      if (!CHECK(p != NULL)) continue;
      memset(p, (int)k + 1, kinds[k].size < 4096 ? kinds[k].size : 4096); /* used, for real */
      w->blocks[n++] = p;
      if (kinds[k].huge) {
        w->huge_requested += kinds[k].size;
      } else {
        w->requested += kinds[k].size;
        w->usable += malloc_usable_size(p);
      }
    }
}

static void free_all(worker_t *w) {
  for (size_t n = 0; n < BLOCKS_PER_THREAD; n++) {
    free(w->blocks[n]);
    w->blocks[n] = NULL;
  }
}

static void *work(void *arg) {
  worker_t *w = arg;
  allocate_all(w);
  checkpoint(); /* the main thread looks at the peak */
  checkpoint();
  free_all(w);  /* each its own: the frees of the fast path */
  checkpoint(); /* the main thread looks */
  checkpoint();
  allocate_all(w);
  checkpoint();
  free_all(&workers[(w->index + 1) % THREADS]); /* another's: remote frees */
  checkpoint();
  malloc_trim(0); /* sends this thread's batches of remote frees on */
  checkpoint();
  malloc_trim(0); /* takes in what the others sent */
  checkpoint();   /* the main thread looks */
  checkpoint();
  return NULL;
}

static size_t sum(size_t (*field)(const worker_t *)) {
  size_t total = 0;
  for (unsigned t = 0; t < THREADS; t++)
    total += field(&workers[t]);
  return total;
}
static size_t requested_of(const worker_t *w) {
  return w->requested;
}
static size_t usable_of(const worker_t *w) {
  return w->usable;
}
static size_t huge_requested_of(const worker_t *w) {
  return w->huge_requested;
}

/* ---- the functions are brisk's ------------------------------------------------ */
/* The object that defines the code at addr, or "(nothing)". */
static const char *object_of(const void *addr) {
  Dl_info di;
  return addr && dladdr(addr, &di) && di.dli_fname ? di.dli_fname : "(nothing)";
}

static void test_symbols(void) {
#ifdef BRISK_TEST_STATIC
  /* libbrisk.a's definitions are linked into the program, not libc's */
  const char *program = object_of((const void *)test_symbols);
  const void *functions[] = {(const void *)malloc, (const void *)mallinfo2,
                             (const void *)malloc_stats, (const void *)malloc_info,
                             (const void *)malloc_trim};
  for (size_t k = 0; k < sizeof functions / sizeof functions[0]; k++)
    CHECK_MSG(strcmp(object_of(functions[k]), program) == 0, "function %zu lies in %s, not in %s",
              k, object_of(functions[k]), program);
#else
  static const char *const names[] = {"malloc",       "mallinfo",    "mallinfo2",
                                      "malloc_stats", "malloc_info", "malloc_trim"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    const char *object = object_of(dlsym(RTLD_DEFAULT, names[k]));
    CHECK_MSG(strstr(object, "libbrisk") != NULL, "%s resolves to %s, not libbrisk", names[k],
              object);
  }
#endif
}

/* ---- mallinfo against mallinfo2 ------------------------------------------------ */
/* glibc 2.33 deprecated mallinfo for mallinfo2, but monitors still call it. */
static struct mallinfo mallinfo_int(void) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return mallinfo();
#pragma GCC diagnostic pop
}

static int saturated(size_t value) {
  return value > INT_MAX ? INT_MAX : (int)value;
}

/* mallinfo's fields are mallinfo2's, INT_MAX where they do not fit. Both
 * read figures that other threads (the background purger) may move, so they
 * are compared when two readings of mallinfo2 around mallinfo agree. */
static void check_mallinfo_matches(const char *when) {
  for (int attempt = 0; attempt < 1000; attempt++) {
    struct mallinfo2 a = mallinfo2();
    struct mallinfo m = mallinfo_int();
    struct mallinfo2 b = mallinfo2();
    if (memcmp(&a, &b, sizeof a) != 0) {
      usleep(1000);
      continue;
    }
    CHECK_MSG(m.arena == saturated(a.arena) && m.ordblks == saturated(a.ordblks) &&
                  m.smblks == saturated(a.smblks) && m.hblks == saturated(a.hblks) &&
                  m.hblkhd == saturated(a.hblkhd) && m.usmblks == saturated(a.usmblks) &&
                  m.fsmblks == saturated(a.fsmblks) && m.uordblks == saturated(a.uordblks) &&
                  m.fordblks == saturated(a.fordblks) && m.keepcost == saturated(a.keepcost),
              "%s: mallinfo (arena %d, hblks %d, hblkhd %d, uordblks %d, fordblks %d) is not "
              "mallinfo2 (%zu, %zu, %zu, %zu, %zu)",
              when, m.arena, m.hblks, m.hblkhd, m.uordblks, m.fordblks, a.arena, a.hblks, a.hblkhd,
              a.uordblks, a.fordblks);
    return;
  }
  CHECK_MSG(0, "%s: mallinfo2 never read the same twice in a row", when);
}

/* Every figure consistent with the others. */
static void check_consistent(const struct mallinfo2 *m, const char *when) {
  CHECK_MSG(m->uordblks <= m->arena && m->fordblks == m->arena - m->uordblks,
            "%s: arena %zu, uordblks %zu, fordblks %zu", when, m->arena, m->uordblks, m->fordblks);
  CHECK_MSG(m->usmblks == 0 && m->keepcost == 0, "%s: usmblks %zu, keepcost %zu", when, m->usmblks,
            m->keepcost);
}

/* ---- malloc_stats: glibc's lines ---------------------------------------------- */
typedef struct stats_lines {
  size_t arena_system, arena_in_use, total_system, total_in_use, max_regions, max_bytes;
} stats_lines;

/* Runs malloc_stats with standard error going to a file; returns its text. */
static int malloc_stats_read(char *text, size_t size) {
  FILE *file = tmpfile();
  if (!CHECK(file != NULL)) return 0;
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(file), 2);
  malloc_stats();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(file);
  size_t got = fread(text, 1, size - 1, file);
  text[got] = 0;
  fclose(file);
  return 1;
}

static int stats_parse(const char *text, stats_lines *out) {
  return sscanf(text,
                "Arena 0:\nsystem bytes     = %zu\nin use bytes     = %zu\n"
                "Total (incl. mmap):\nsystem bytes     = %zu\nin use bytes     = %zu\n"
                "max mmap regions = %zu\nmax mmap bytes   = %zu\n",
                &out->arena_system, &out->arena_in_use, &out->total_system, &out->total_in_use,
                &out->max_regions, &out->max_bytes) == 6;
}

/* ---- malloc_info: an XML document ------------------------------------------- */
/* Enough of XML for what malloc_info writes, strictly: elements with quoted
 * attributes and whitespace between them; no text, comments or entities. */
static const char *xml_space(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
    s++;
  return s;
}

static int xml_name_char(char c, int first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

static const char *xml_name(const char *s, char *name, size_t size) {
  size_t n = 0;
  if (!xml_name_char(*s, 1)) return NULL;
  while (xml_name_char(*s, n == 0)) {
    if (n + 1 < size) name[n++] = *s;
    s++;
  }
  name[n] = 0;
  return s;
}

/* One element at s (its name into name); the text after it, or NULL. */
static const char *xml_element(const char *s, char *name, size_t size, int depth) {
  if (depth > 8 || *s != '<' || !(s = xml_name(s + 1, name, size))) return NULL;
  for (;;) { /* attributes, each after whitespace */
    const char *t = xml_space(s);
    if (t[0] == '/') return t[1] == '>' ? t + 2 : NULL;
    if (t[0] == '>') {
      s = t + 1;
      break;
    }
    char attribute[64];
    if (t == s || !(t = xml_name(t, attribute, sizeof attribute)) || *t++ != '=' || *t++ != '"')
      return NULL;
    while (*t != '"') {
      if (*t == 0 || *t == '<' || *t == '&') return NULL;
      t++;
    }
    s = t + 1;
  }
  for (;;) { /* children, then the end tag */
    s = xml_space(s);
    if (s[0] == '<' && s[1] == '/') {
      char end[64];
      if (!(s = xml_name(s + 2, end, sizeof end)) || strcmp(end, name) != 0) return NULL;
      s = xml_space(s);
      return *s == '>' ? s + 1 : NULL;
    }
    char child[64];
    if (!(s = xml_element(s, child, sizeof child, depth + 1))) return NULL;
  }
}

/* The sum of the numbers that follow each occurrence of what in text. */
static size_t xml_sum(const char *text, const char *what, unsigned *count) {
  size_t total = 0;
  *count = 0;
  for (const char *at = strstr(text, what); at != NULL; at = strstr(at + 1, what)) {
    total += strtoull(at + strlen(what), NULL, 10);
    ++*count;
  }
  return total;
}

static void check_malloc_info(size_t live_requested, size_t huge_blocks) {
  char *text = NULL;
  size_t length = 0;
  FILE *stream = open_memstream(&text, &length);
  REQUIRE(stream != NULL);
  CHECK(malloc_info(0, stream) == 0);
  fclose(stream);
  char root[64];
  const char *start = xml_space(text);
  const char *end = xml_element(start, root, sizeof root, 0);
  CHECK_MSG(end != NULL && *xml_space(end) == 0, "malloc_info wrote no XML document:\n%s", text);
  CHECK_MSG(strcmp(root, "malloc") == 0, "malloc_info's root element is <%s>", root);
  CHECK_MSG(strncmp(start, "<malloc version=\"brisk-", 23) == 0,
            "malloc_info's document is not brisk's:\n%.200s", text);
  unsigned heaps, arenas, in_use_totals, mmaps;
  size_t pages = xml_sum(text, "<total type=\"pages\" size=\"", &heaps);
  size_t arena = xml_sum(text, "<total type=\"arena\" size=\"", &arenas);
  size_t in_use = xml_sum(text, "<total type=\"in-use\" size=\"", &in_use_totals);
  size_t mmap_count = xml_sum(text, "<total type=\"mmap\" count=\"", &mmaps);
  CHECK_MSG(heaps >= THREADS && arenas == heaps, "%u heaps listed (%u arenas)", heaps, arenas);
  CHECK_MSG(in_use_totals == 1 && in_use == pages + arena,
            "in use %zu, the heaps' pages %zu and arenas %zu", in_use, pages, arena);
  CHECK_MSG(in_use >= live_requested, "malloc_info: %zu in use, %zu bytes live", in_use,
            live_requested);
  CHECK_MSG(mmaps == 1 && mmap_count == huge_blocks, "malloc_info: %zu huge blocks, %zu live",
            mmap_count, huge_blocks);
  free(text);

  /* glibc's answer to options it does not know */
  stream = open_memstream(&text, &length);
  REQUIRE(stream != NULL);
  errno = 0;
  CHECK(malloc_info(1, stream) == -1 && errno == EINVAL);
  fclose(stream);
  CHECK_MSG(length == 0, "malloc_info(1) wrote %zu bytes", length);
  free(text);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer appears between the readings */
  test_symbols();
  REQUIRE(pthread_barrier_init(&barrier, NULL, THREADS + 1) == 0);
  struct mallinfo2 base = mallinfo2();
  check_consistent(&base, "at start");
  for (unsigned t = 0; t < THREADS; t++) {
    workers[t].index = t;
    REQUIRE(pthread_create(&workers[t].thread, NULL, work, &workers[t]) == 0);
  }

  /* the peak: every block allocated */
  checkpoint();
  struct mallinfo2 peak = mallinfo2();
  size_t requested = sum(requested_of), usable = sum(usable_of);
  size_t huge = sum(huge_requested_of), huge_count = (size_t)THREADS * HUGE_BLOCKS;
  size_t most =
      usable + (size_t)THREADS * (ARENA_BLOCKS * SLACK_PER_ARENA_BLOCK + SLACK_PER_THREAD) + NOISE;
  printf("peak: uordblks %zu -> %zu for %zu bytes asked (%zu usable), at most %zu more\n",
         base.uordblks, peak.uordblks, requested, usable, most);
  CHECK_MSG(peak.uordblks >= base.uordblks + requested, "uordblks rose by %zd for %zu bytes in use",
            (ssize_t)(peak.uordblks - base.uordblks), requested);
  CHECK_MSG(peak.uordblks <= base.uordblks + most, "uordblks rose by %zu, more than %zu",
            peak.uordblks - base.uordblks, most);
  CHECK_MSG(peak.hblks == base.hblks + huge_count, "hblks %zu -> %zu for %zu huge blocks",
            base.hblks, peak.hblks, huge_count);
  /* each huge block's mapping: its header, rounded up by at most an eighth */
  CHECK_MSG(peak.hblkhd >= base.hblkhd + huge && peak.hblkhd <= base.hblkhd + huge + huge / 4,
            "hblkhd %zu -> %zu for %zu bytes in huge blocks", base.hblkhd, peak.hblkhd, huge);
  CHECK_MSG(peak.arena >= peak.uordblks, "arena %zu below uordblks %zu", peak.arena, peak.uordblks);
  check_consistent(&peak, "at the peak");
  check_mallinfo_matches("at the peak");
  char text[1024];
  stats_lines lines;
  if (malloc_stats_read(text, sizeof text) &&
      CHECK_MSG(stats_parse(text, &lines), "malloc_stats wrote:\n%s", text)) {
    CHECK_MSG(lines.arena_in_use >= base.uordblks + requested,
              "malloc_stats: %zu bytes in use, %zu asked for", lines.arena_in_use, requested);
    CHECK(lines.arena_system >= lines.arena_in_use);
    CHECK(lines.total_in_use >= lines.arena_in_use + huge);
    CHECK(lines.total_system >= lines.arena_system + huge);
    CHECK_MSG(lines.max_regions >= huge_count && lines.max_bytes >= huge,
              "malloc_stats: at most %zu mmap regions of %zu bytes", lines.max_regions,
              lines.max_bytes);
  }
  check_malloc_info(requested, huge_count);
  checkpoint();

  /* every thread freed its own blocks */
  checkpoint();
  struct mallinfo2 freed = mallinfo2();
  size_t left = (size_t)THREADS * SLACK_PER_THREAD + NOISE;
  printf("own frees: uordblks %zu, at most %zu more than at start\n", freed.uordblks, left);
  CHECK_MSG(freed.uordblks <= base.uordblks + left, "uordblks %zu after the frees, %zu at start",
            freed.uordblks, base.uordblks);
  CHECK_MSG(freed.hblks == base.hblks && freed.hblkhd == base.hblkhd,
            "hblks %zu, hblkhd %zu after the frees", freed.hblks, freed.hblkhd);
  check_consistent(&freed, "after the frees");
  check_mallinfo_matches("after the frees");
  checkpoint();

  /* allocated again, freed by the next thread, trimmed */
  checkpoint();
  checkpoint();
  checkpoint();
  checkpoint();
  struct mallinfo2 remote = mallinfo2();
  printf("remote frees: uordblks %zu\n", remote.uordblks);
  CHECK_MSG(remote.uordblks <= base.uordblks + left,
            "uordblks %zu after remote frees and trims, %zu at start", remote.uordblks,
            base.uordblks);
  CHECK_MSG(remote.hblks == base.hblks, "hblks %zu after remote frees", remote.hblks);
  checkpoint();
  for (unsigned t = 0; t < THREADS; t++)
    pthread_join(workers[t].thread, NULL);

  /* the threads' heaps wait for new threads; the trim empties them */
  malloc_trim(0);
  struct mallinfo2 end = mallinfo2();
  printf("exited: uordblks %zu\n", end.uordblks);
  CHECK_MSG(end.uordblks <= base.uordblks + NOISE, "uordblks %zu after the threads, %zu at start",
            end.uordblks, base.uordblks);
  check_consistent(&end, "at the end");

  /* past INT_MAX: mallinfo saturates (address space only: never touched).
   * 3 GiB in one block, or in two of 1.125 GiB where the address space is
   * 4 GiB (a 32-bit program) and no block may pass PTRDIFF_MAX. */
  size_t piece = SIZE_MAX > 0xFFFFFFFFu ? (size_t)3 << 30 : (size_t)9 << 27;
  size_t pieces = SIZE_MAX > 0xFFFFFFFFu ? 1 : 2;
  void *p[2] = {NULL, NULL};
  bool got = true;
  for (size_t i = 0; i < pieces; i++)
    got = got && (p[i] = malloc(piece)) != NULL;
  if (!got) {
    printf("skipped: no room for %zu block(s) of %zu MiB for the saturation check\n", pieces,
           piece >> 20);
  } else {
    size_t big = piece * pieces;
    struct mallinfo2 wide = mallinfo2();
    struct mallinfo narrow = mallinfo_int();
    CHECK_MSG(wide.hblkhd >= big && narrow.hblkhd == INT_MAX,
              "%zu MiB of huge blocks: hblkhd %zu, mallinfo's %d", big >> 20, wide.hblkhd,
              narrow.hblkhd);
    CHECK(narrow.hblks == (int)wide.hblks);
    check_mallinfo_matches("with huge blocks past INT_MAX");
  }
  for (size_t i = 0; i < pieces; i++)
    free(p[i]);
  pthread_barrier_destroy(&barrier);
  return test_finish();
}
