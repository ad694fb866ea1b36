/* Call sites: stack traces captured on diagnostic paths, kept once each in a
 * lock-free open-addressed table and named (function, file:line) only when a
 * report is written. Capturing never allocates through brisk: tl_in_diag
 * turns off capture for any allocation the unwinder itself makes. */
#include "internal.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SITE_CAPACITY 16384 /* a power of two */

typedef struct site_s {
  _Atomic(uint64_t) xhash; /* 0: free slot */
  _Atomic(uint32_t) xframe_count;
  int kind;
  void *frames[SITE_FRAMES];
  _Atomic(uint64_t) xcount;
  _Atomic(uint64_t) xbytes;
} site_t;

_Thread_local bool tl_in_diag;
static site_t *sites; /* reserved by sites_warm_up, before any capture */
static uintptr_t brisk_text_start, brisk_text_end; /* brisk's own code, skipped in traces */

void fd_printf(int fd, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n < 0) return;
  size_t length = (size_t)n < sizeof buffer ? (size_t)n : sizeof buffer - 1;
  for (size_t done = 0; done < length;) {
    ssize_t w = write(fd, buffer + done, length - done);
    if (w <= 0) return;
    done += (size_t)w;
  }
}

/* Find brisk's executable segment when it is a shared library of its own; a
 * brisk linked into the program shares the program's code and keeps its
 * frames in traces. */
static int find_own_text(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  uintptr_t self = (uintptr_t)&site_capture;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == 0) return 0; /* the program */
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (self >= start && self < start + ph->p_memsz) {
      brisk_text_start = start;
      brisk_text_end = start + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

void sites_find_own_code(void) {
  dl_iterate_phdr(find_own_text, NULL);
}

void sites_warm_up(void) {
  if (sites != NULL) return;
  tl_in_diag = true;
  sites = os_reserve(SITE_CAPACITY * sizeof(site_t));
  void *frames[4];
  backtrace(frames, 4); /* loads the unwinder now, not inside some malloc */
  tl_in_diag = false;
}

bool sites_code_is_brisk(uintptr_t pc) {
  if (brisk_text_end != 0) return pc >= brisk_text_start && pc < brisk_text_end;
  /* Linked into the program: the entry points that take a pointer, each
   * assumed shorter than 512 bytes (the free path is about 100). */
  static const void *const entries[] = {
      (const void *)brisk_free,         (const void *)brisk_free_sized,
      (const void *)brisk_realloc,      (const void *)brisk_usable_size,
      (const void *)brisk_reallocarray, (const void *)free_slow,
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (pc >= (uintptr_t)entries[i] && pc < (uintptr_t)entries[i] + 512) return true;
  return false;
}

static uint64_t hash_frames(void *const *frames, int count, int kind) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)kind;
  for (int i = 0; i < count; i++) {
    h ^= (uint64_t)(uintptr_t)frames[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h == 0 ? 1 : h;
}

static int capture_frames(void **out, unsigned skip) {
  void *raw[SITE_FRAMES + 8]; /* brisk's own frames, then the caller's */
  int n = backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  /* brisk's own frames are skipped by address when it is a library of its
   * own; linked into the program, by the count the caller knows. */
  int first = brisk_text_end != 0 ? 0 : 1 + (int)skip;
  while (first < n && (uintptr_t)raw[first] >= brisk_text_start &&
         (uintptr_t)raw[first] < brisk_text_end)
    first++;
  int count = n - first;
  if (count > SITE_FRAMES) count = SITE_FRAMES;
  if (count < 0) count = 0;
  memcpy(out, raw + first, (size_t)count * sizeof(void *));
  return count;
}

static uint32_t site_intern(void *const *frames, int count, int kind) {
  uint64_t h = hash_frames(frames, count, kind);
  for (uint32_t probe = 0; probe < SITE_CAPACITY; probe++) {
    uint32_t index = (uint32_t)(h + probe) & (SITE_CAPACITY - 1);
    site_t *site = &sites[index];
    uint64_t seen = atomic_load_acquire(&site->xhash);
    if (seen == h) return index + 1;
    if (seen == 0) {
      if (atomic_cas_strong_acq_rel(&site->xhash, &seen, h)) {
        memcpy(site->frames, frames, (size_t)count * sizeof(void *));
        site->kind = kind;
        atomic_store_release(&site->xframe_count, (uint32_t)count);
        return index + 1;
      }
      if (seen == h) return index + 1;
    }
  }
  return 0; /* table full: the site stays unnamed */
}

uint32_t site_capture_kind(unsigned skip, int kind) {
  if (tl_in_diag || sites == NULL) return 0;
  tl_in_diag = true;
  void *frames[SITE_FRAMES];
  int count = capture_frames(frames, skip + 1);
  uint32_t id = site_intern(frames, count, kind);
  tl_in_diag = false;
  return id;
}

uint32_t site_capture(unsigned skip) {
  return site_capture_kind(skip + 1, -1);
}

static site_t *site_get(uint32_t id) {
  return (id == 0 || id > SITE_CAPACITY || sites == NULL) ? NULL : &sites[id - 1];
}

void site_note(uint32_t id, uint64_t count, uint64_t bytes) {
  site_t *site = site_get(id);
  if (site == NULL) return;
  atomic_add_relaxed(&site->xcount, count);
  atomic_add_relaxed(&site->xbytes, bytes);
}

uint64_t site_count(uint32_t id) {
  site_t *site = site_get(id);
  return site ? atomic_load_relaxed(&site->xcount) : 0;
}

uint64_t site_bytes(uint32_t id) {
  site_t *site = site_get(id);
  return site ? atomic_load_relaxed(&site->xbytes) : 0;
}

int site_kind(uint32_t id) {
  site_t *site = site_get(id);
  return site ? site->kind : -1;
}

void sites_reset_counts(void) {
  if (sites == NULL) return;
  for (uint32_t i = 0; i < SITE_CAPACITY; i++) {
    atomic_store_relaxed(&sites[i].xcount, 0);
    atomic_store_relaxed(&sites[i].xbytes, 0);
  }
}

/* Sites with a non-zero count, most bytes (or most events) first. */
size_t sites_sorted(uint32_t *ids, size_t max, bool by_bytes, bool events) {
  size_t found = 0;
  if (sites == NULL) return 0;
  for (uint32_t i = 0; i < SITE_CAPACITY; i++) {
    if (atomic_load_relaxed(&sites[i].xcount) == 0) continue;
    if ((sites[i].kind >= 0) != events) continue;
    uint32_t id = i + 1;
    uint64_t key = by_bytes ? site_bytes(id) : site_count(id);
    size_t at = found < max ? found : max;
    while (at > 0 && (by_bytes ? site_bytes(ids[at - 1]) : site_count(ids[at - 1])) < key) {
      if (at < max) ids[at] = ids[at - 1];
      at--;
    }
    if (at < max) ids[at] = id;
    if (found < max) found++;
  }
  return found;
}

static void print_frames(int fd, void *const *frames, int count, const char *indent) {
  char line[400];
  symbols_prepare(frames, (size_t)count);
  for (int i = 0; i < count; i++) {
    symbols_describe(frames[i], line, sizeof line);
    fd_printf(fd, "%s#%d %p %s\n", indent, i, frames[i], line);
  }
  if (count == 0) fd_printf(fd, "%s(no stack trace)\n", indent);
}

void sites_prepare_names(const uint32_t *ids, size_t count) {
  void *frames[256];
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    site_t *site = site_get(ids[i]);
    if (site == NULL) continue;
    uint32_t depth = atomic_load_acquire(&site->xframe_count);
    for (uint32_t f = 0; f < depth && n < sizeof frames / sizeof frames[0]; f++)
      frames[n++] = site->frames[f];
  }
  symbols_prepare(frames, n);
}

void site_print_trace(int fd, uint32_t id, const char *indent) {
  site_t *site = site_get(id);
  if (site == NULL) return;
  print_frames(fd, site->frames, (int)atomic_load_acquire(&site->xframe_count), indent);
}

void site_print_current(int fd, const char *indent) {
  void *frames[SITE_FRAMES];
  int count = capture_frames(frames, 1);
  print_frames(fd, frames, count, indent);
}
