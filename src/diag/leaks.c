/* SPDX-License-Identifier: MIT */
/* BRISK_LEAKS: at exit, every block still allocated, grouped by the call site
 * that allocated it, largest total first. Blocks are found by walking every
 * segment brisk has mapped; a block is live when its trailer says so.
 *
 * The totals are the sum of the groups: blocks allocated where no call site
 * could be recorded form a group of their own, and the groups past the top
 * ones are summed in one line. Blocks that the C library allocated for its
 * own use and keeps until exit are not the program's leaks, nor are the blocks
 * brisk's own diagnostics allocated: both are counted apart. The C library's
 * are found by this rule: the block was allocated by the C library's stdio
 * buffer allocator (_IO_file_doallocate), or by the dynamic loader, or inside
 * a C library function the program called that keeps data for the process
 * (setlocale, newlocale, tzset and the time functions that call it, dlopen,
 * dlerror, the name-service functions).
 *
 * A group of Free Pascal objects is named by class: a block whose first word
 * points to a Free Pascal VMT in the program's image (or a library's) whose
 * instance size is the block's size, as TObject.NewInstance allocates it. */
#include "diag.h"

#include <errno.h>
#include <string.h>

#define TOP_SITES 20

typedef struct leak_totals {
  uint64_t blocks;
  uint64_t bytes;
} leak_totals;

static void totals_add(leak_totals *totals, uint64_t blocks, uint64_t bytes) {
  totals->blocks += blocks;
  totals->bytes += bytes;
}

typedef struct site_class {
  const uint8_t *name; /* a ShortString in the program's image; NULL: none found */
  uint64_t objects;    /* blocks of the site that are objects of that class */
  uint32_t misses;     /* blocks looked at before one was an object */
} site_class;

/* A site whose first blocks are no objects is not looked at further: the
 * check walks the loaded images, and a C program may leak millions. */
#define CLASS_MISSES_MAX 4

typedef struct leak_walk {
  leak_totals all;          /* blocks of the program's and the C library's */
  leak_totals unattributed; /* no call site was recorded */
  leak_totals brisk;        /* brisk's diagnostics' own (not counted) */
  site_class *classes;      /* per site: the class of its first object found */
} leak_walk;

/* Free Pascal's VMT (objpas: TVmt): the instance size, its negation, the
 * parent, then the class name as a ShortString pointer. */
typedef struct fpc_vmt {
  intptr_t instance_size, instance_size_negated;
  const void *parent;
  const uint8_t *class_name;
} fpc_vmt;

static bool is_name_char(uint8_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '<' || c == '>' || c == ',';
}

/* The class name (a length byte, then the characters) of the Free Pascal
 * object in this block, or NULL when it does not look like one. Every
 * pointer is checked to lie in a loaded image before it is followed. */
static const uint8_t *fpc_class_name(const void *block, uint64_t requested) {
  if (requested < sizeof(void *)) return NULL;
  const fpc_vmt *vmt = *(const fpc_vmt *const *)block;
  if ((uintptr_t)vmt % sizeof(void *) != 0 || !platform_image_contains(vmt, sizeof *vmt))
    return NULL;
  if (vmt->instance_size != (intptr_t)requested ||
      vmt->instance_size_negated != -vmt->instance_size)
    return NULL;
  const uint8_t *name = vmt->class_name;
  if (name == NULL || !platform_image_contains(name, 1) || name[0] == 0 ||
      !platform_image_contains(name, (size_t)name[0] + 1))
    return NULL;
  for (int i = 1; i <= name[0]; i++)
    if (!is_name_char(name[i])) return NULL;
  return name;
}

static void note_block(uint8_t *end, leak_walk *walk) {
  const diag_trailer_t *trailer = (const diag_trailer_t *)(end - sizeof(diag_trailer_t));
  if (trailer->state != DIAG_LIVE) return;
  if (trailer->site == SITE_BRISK) {
    totals_add(&walk->brisk, 1, trailer->requested);
    return;
  }
  totals_add(&walk->all, 1, trailer->requested);
  if (trailer->site == 0) totals_add(&walk->unattributed, 1, trailer->requested);
  site_note(trailer->site, 1, trailer->requested);
  if (walk->classes == NULL || trailer->site > SITE_CAPACITY) return;
  site_class *class = &walk->classes[trailer->site - 1];
  if (class->name == NULL && class->misses >= CLASS_MISSES_MAX) return;
  const uint8_t *name = fpc_class_name((const void *)trailer->user, trailer->requested);
  if (name == NULL) {
    class->misses++;
    return;
  }
  if (class->name == NULL) class->name = name;
  if (class->name == name) class->objects++;
}

static void note_arena_block(uint8_t *block, size_t size, void *walk) {
  note_block(block + size, walk);
}

static void visit_segment(segment_t *segment, void *arg) {
  leak_walk *walk = arg;
  if (segment->kind == SEGMENT_ARENA) {
    arena_chunks_visit(segment, note_arena_block, walk);
    return;
  }
  if (segment->kind == SEGMENT_HUGE) {
    if (atomic_load_relaxed(&segment->pages[0].xflags) & PAGE_IN_USE)
      note_block((uint8_t *)segment + segment->size, walk);
    return;
  }
  if (segment->owner == NULL) return; /* cached: nothing allocated */
  for (uint16_t i = 0; i < segment->page_count; i++) {
    page_t *page = &segment->pages[i];
    if (!(atomic_load_relaxed(&page->xflags) & PAGE_IN_USE)) continue;
    for (uint32_t b = 0; b < page->capacity; b++)
      note_block(page->area + (size_t)(b + 1) * page->block_size, walk);
  }
}

static bool starts_with(const char *text, const char *prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The C library's functions that keep what they allocate for the process. */
static bool keeps_data(const char *function) {
  static const char *const keepers[] = {
      "setlocale", "newlocale", "tzset",       "localtime", "mktime",    "strftime",
      "ctime",     "gmtime",    "dlopen",      "dlerror",   "dlsym",     "getpw",
      "getgr",     "getspnam",  "getaddrinfo", "gethostby", "getservby", "getprotoby"};
  for (size_t i = 0; i < sizeof keepers / sizeof keepers[0]; i++)
    if (starts_with(function, keepers[i])) return true;
  return false;
}

static bool kept_by_c_runtime(uint32_t site) {
  void *const *frames;
  int count = site_frames(site, &frames);
  char module[256], function[256];
  for (int i = 0; i < count; i++) {
    platform_code_names(frames[i], module, function, sizeof module);
    if (strstr(module, "/ld-linux") != NULL) return true; /* the dynamic loader's */
    if (strstr(module, "/libc.so") == NULL) {
      /* The program's frame: what did it call? */
      if (i == 0) return false;
      const void *called = platform_call_target(frames[i]);
      if (called == NULL) return false;
      platform_code_names(called, module, function, sizeof module);
      return keeps_data(function);
    }
    if (i == 0 && starts_with(function, "_IO_file_doallocate")) return true; /* stdio buffer */
  }
  return count > 0; /* the whole stack is the runtime's (start-up) */
}

/* ---- suppressions (BRISK_LEAKS_SUPPRESS) ------------------------------------------ */
#define SUPPRESS_TEXT 65536
#define SUPPRESS_MAX 512

static char suppress_text[SUPPRESS_TEXT];
static const char *suppress[SUPPRESS_MAX];
static size_t suppress_count;

/* Whether text matches pattern, whose '*' stands for any run of characters. */
static bool glob_match(const char *pattern, const char *text) {
  if (*pattern == 0) return *text == 0;
  if (*pattern == '*') {
    for (const char *at = text;; at++) {
      if (glob_match(pattern + 1, at)) return true;
      if (*at == 0) return false;
    }
  }
  return *text != 0 && *pattern == *text && glob_match(pattern + 1, text + 1);
}

/* One pattern a line; blank lines and lines starting with '#' are skipped,
 * and LeakSanitizer's "leak:" prefix is accepted. */
static void suppressions_load(void) {
  const char *path = option_text(OPTION_LEAKS_SUPPRESS);
  if (path == NULL) return;
  if (platform_read_file(path, suppress_text, sizeof suppress_text) < 0) {
    msg_printf(2, "brisk: warning: BRISK_LEAKS_SUPPRESS=%s cannot be read: %s\n", path,
               strerror(errno));
    return;
  }
  char *line = suppress_text;
  while (*line && suppress_count < SUPPRESS_MAX) {
    char *end = line + strcspn(line, "\r\n");
    char *next = *end ? end + 1 : end;
    *end = 0;
    while (*line == ' ' || *line == '\t')
      line++;
    for (char *tail = line + strlen(line); tail > line && (tail[-1] == ' ' || tail[-1] == '\t');)
      *--tail = 0;
    if (starts_with(line, "leak:")) line += 5;
    if (*line != 0 && *line != '#') suppress[suppress_count++] = line;
    line = next;
  }
}

/* A frame's function (platform_symbol_describe, less its place) and module. */
static bool frame_suppressed(void *pc) {
  char text[400], module[256], exported[256];
  platform_symbol_describe(pc, text, sizeof text);
  char *cut = strstr(text, " (");
  if (cut != NULL) *cut = 0;
  cut = strstr(text, "+0x");
  if (cut != NULL) *cut = 0;
  platform_code_names(pc, module, exported, sizeof module);
  const char *slash = strrchr(module, '/');
  const char *backslash = strrchr(module, '\\');
  const char *base = backslash > slash ? backslash + 1 : slash ? slash + 1 : module;
  for (size_t i = 0; i < suppress_count; i++)
    if (glob_match(suppress[i], text) || (module[0] && glob_match(suppress[i], module)) ||
        (base[0] && glob_match(suppress[i], base)))
      return true;
  return false;
}

static bool site_suppressed(uint32_t site) {
  void *const *frames;
  int count = site_frames(site, &frames);
  for (int i = 0; i < count; i++)
    if (frame_suppressed(frames[i])) return true;
  return false;
}

/* ---- the report -------------------------------------------------------------------- */
static const char *blocks_word(uint64_t count) {
  return count == 1 ? "block" : "blocks";
}

static void print_group(int fd, int number, uint64_t bytes, uint64_t blocks, const char *where) {
  msg_printf(fd, "brisk: #%d %llu bytes in %llu %s %s\n", number, (unsigned long long)bytes,
             (unsigned long long)blocks, blocks_word(blocks), where);
}

static void print_class(int fd, const site_class *class, uint64_t blocks) {
  char name[256];
  memcpy(name, class->name + 1, class->name[0]);
  name[class->name[0]] = 0;
  if (class->objects == blocks)
    msg_printf(fd, "brisk:     (%s of class %s)\n", class->objects == 1 ? "an object" : "objects",
               name);
  else
    msg_printf(fd, "brisk:     (%llu of the %llu blocks: objects of class %s)\n",
               (unsigned long long)class->objects, (unsigned long long)blocks, name);
}

static void print_text(int fd, const uint32_t *ids, size_t kept, leak_totals program,
                       const leak_walk *walk) {
  if (program.blocks == 0) {
    msg_printf(fd, "brisk: leak report: no blocks left allocated at exit by the program\n");
    return;
  }
  msg_printf(fd, "brisk: leak report: %llu bytes in %llu %s still allocated at exit\n",
             (unsigned long long)program.bytes, (unsigned long long)program.blocks,
             blocks_word(program.blocks));
  size_t shown = kept < TOP_SITES ? kept : TOP_SITES;
  sites_prepare_names(ids, shown);
  int number = 1;
  for (size_t i = 0; i < shown; i++, number++) {
    print_group(fd, number, site_bytes(ids[i]), site_count(ids[i]), "allocated at:");
    if (walk->classes != NULL && walk->classes[ids[i] - 1].name != NULL)
      print_class(fd, &walk->classes[ids[i] - 1], site_count(ids[i]));
    site_print_trace(fd, ids[i], "brisk:     ");
  }
  leak_totals rest = {0, 0};
  for (size_t i = shown; i < kept; i++)
    totals_add(&rest, site_count(ids[i]), site_bytes(ids[i]));
  if (rest.blocks != 0) {
    char where[80];
    msg_format(where, sizeof where, "allocated at %zu more call sites", kept - shown);
    print_group(fd, number++, rest.bytes, rest.blocks, where);
  }
  if (walk->unattributed.blocks != 0)
    print_group(fd, number, walk->unattributed.bytes, walk->unattributed.blocks,
                "allocated where no call site was recorded (before start-up was complete)");
}

/* pprof or folded stacks: one sample per call site, blocks and bytes. */
static void write_stacks(int fd, report_format format, const uint32_t *ids, size_t kept) {
  profile_sample *samples = platform_table_alloc(SITE_CAPACITY * sizeof *samples);
  if (samples == NULL) return;
  for (size_t i = 0; i < kept; i++)
    samples[i] = (profile_sample){
        .site = ids[i], .values = {(int64_t)site_count(ids[i]), (int64_t)site_bytes(ids[i])}};
  if (format == FORMAT_PPROF) {
    static const profile_shape shape = {
        .value_count = 2,
        .types = {"leaked_objects", "leaked_space"},
        .units = {"count", "bytes"},
        .default_type = 1,
        .period_type = 1,
        .comment = "brisk leak report: blocks still allocated at exit, by allocation stack",
    };
    if (!profile_write_pprof(fd, &shape, samples, kept))
      msg_printf(2, "brisk: the leak report is too large for pprof's format here\n");
  } else {
    profile_write_folded(fd, samples, kept, 1);
  }
  platform_table_free(samples, SITE_CAPACITY * sizeof *samples);
}

static void print_not_counted(int fd, const char *what, leak_totals totals) {
  if (totals.blocks != 0)
    msg_printf(fd, "brisk: not counted: %llu bytes in %llu %s %s\n",
               (unsigned long long)totals.bytes, (unsigned long long)totals.blocks,
               blocks_word(totals.blocks), what);
}

bool leaks_report(void) {
  in_diag_set(true);
  sites_reset_counts();
  suppressions_load();
  leak_walk walk;
  memset(&walk, 0, sizeof walk);
  walk.classes = platform_table_alloc(SITE_CAPACITY * sizeof *walk.classes);
  segment_map_visit(visit_segment, &walk);
  uint32_t *ids = platform_table_alloc(SITE_CAPACITY * sizeof *ids);
  size_t count = ids ? sites_sorted(ids, SITE_CAPACITY, true, false) : 0;
  /* The runtime's own blocks and the suppressed ones leave the list; the
   * program's stay in order. */
  leak_totals runtime = {0, 0}, suppressed = {0, 0};
  size_t kept = 0;
  /* Patterns name functions: every frame is named first (a name looked up
   * before that would stay the symbol table's). */
  for (size_t i = 0; suppress_count != 0 && i < count; i += 16)
    sites_prepare_names(ids + i, count - i < 16 ? count - i : 16);
  for (size_t i = 0; i < count; i++) {
    leak_totals *apart = kept_by_c_runtime(ids[i])                        ? &runtime
                         : suppress_count != 0 && site_suppressed(ids[i]) ? &suppressed
                                                                          : NULL;
    if (apart != NULL)
      totals_add(apart, site_count(ids[i]), site_bytes(ids[i]));
    else
      ids[kept++] = ids[i];
  }
  leak_totals program = {walk.all.blocks - runtime.blocks - suppressed.blocks,
                         walk.all.bytes - runtime.bytes - suppressed.bytes};
  const char *path = option_text(OPTION_LEAKS_FILE);
  report_format format = report_format_of(path);
  int fd = path != NULL ? platform_open_output(path) : 2;
  if (fd < 0) {
    msg_printf(2, "brisk: cannot write the leak report to %s: %s; it follows here\n", path,
               strerror(errno));
    fd = 2;
    format = FORMAT_TEXT;
  }
  if (format == FORMAT_TEXT) {
    print_text(fd, ids, kept, program, &walk);
    print_not_counted(fd,
                      "the C library allocated for its own use and keeps until exit (stdio "
                      "buffers, locale, time zone, loader)",
                      runtime);
    print_not_counted(fd, "allocated where BRISK_LEAKS_SUPPRESS names", suppressed);
    print_not_counted(fd, "brisk's own diagnostics allocated (loading the stack unwinder)",
                      walk.brisk);
  } else {
    write_stacks(fd, format, ids, kept);
  }
  if (fd != 2) {
    platform_close(fd);
    msg_printf(2,
               "brisk: leak report: %llu bytes in %llu %s still allocated at exit; written to %s\n",
               (unsigned long long)program.bytes, (unsigned long long)program.blocks,
               blocks_word(program.blocks), path);
  }
  if (ids != NULL) platform_table_free(ids, SITE_CAPACITY * sizeof *ids);
  if (walk.classes != NULL) platform_table_free(walk.classes, SITE_CAPACITY * sizeof *walk.classes);
  return program.blocks != 0;
}
