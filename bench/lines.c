/* SPDX-License-Identifier: MIT */
/* Line splitting that does not scale with threads: threads each read their
 * own text file line by line and split every line on Tab into separately
 * allocated field strings kept in a growable list, freed line by line -- the
 * pattern of ReadLn/TStreamReader + TStringList in the account. Every line
 * becomes a string of its own, as a String does in the original, so the
 * allocator sees one block per line, one per field and the list's growth.
 * Totals are checked against expect.txt. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct field_list {
  char **items;
  size_t count, capacity;
} field_list;

typedef struct totals {
  unsigned long long lines, fields, bytes;
} totals;

typedef struct worker {
  BENCH_CACHE_ALIGNED const char *dir;
  long first_file, n_files, stride;
  totals seen;
} worker;

static void list_push(field_list *list, char *field) {
  if (list->count == list->capacity) {
    list->capacity = list->capacity ? list->capacity * 2 : 4;
    list->items = bench_realloc(list->items, list->capacity * sizeof *list->items);
  }
  list->items[list->count++] = field;
}

static char *copy_bytes(const char *text, size_t len) {
  char *copy = bench_malloc(len + 1);
  memcpy(copy, text, len);
  copy[len] = '\0';
  return copy;
}

static void split_line(const char *line, size_t len, totals *seen) {
  field_list list = {NULL, 0, 0};
  const char *start = line, *end = line + len;
  for (const char *p = line;; p++) {
    if (p == end || *p == '\t') {
      list_push(&list, copy_bytes(start, (size_t)(p - start)));
      if (p == end) break;
      start = p + 1;
    }
  }
  /* Measure the copies, not the input, so a corrupted block shows up. */
  for (size_t i = 0; i < list.count; i++) {
    seen->bytes += strlen(list.items[i]);
    free(list.items[i]);
  }
  seen->fields += list.count;
  free(list.items);
}

static void *read_files(void *arg) {
  worker *w = arg;
  char path[4096];
  char *buffer = NULL;
  size_t buffer_size = 0;
  for (long f = w->first_file; f < w->n_files; f += w->stride) {
    snprintf(path, sizeof path, "%s/lines_%ld.txt", w->dir, f);
    FILE *in = fopen(path, "r");
    if (!in) bench_fail("cannot open %s", path);
    ssize_t got;
    while ((got = getline(&buffer, &buffer_size, in)) > 0) {
      size_t len = (size_t)got;
      if (buffer[len - 1] == '\n') len--;
      char *line = copy_bytes(buffer, len);
      split_line(line, len, &w->seen);
      free(line);
      w->seen.lines++;
    }
    fclose(in);
  }
  free(buffer);
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  const char *dir = NULL;
  const bench_opt opts[] = {{"dir", BENCH_OPT_STRING, &dir, "line data folder (gen_lines)"}};
  bench_parse_args(argc, argv, "read and split tab-separated files in threads", &common, opts, 1);
  if (!dir) {
    fprintf(stderr, "lines: --dir is required\n");
    return 64;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/expect.txt", dir);
  FILE *expect_file = fopen(path, "r");
  totals expected;
  long n_files;
  if (!expect_file || fscanf(expect_file, "files=%ld lines=%llu fields=%llu bytes=%llu", &n_files,
                             &expected.lines, &expected.fields, &expected.bytes) != 4) {
    fprintf(stderr, "lines: cannot read %s (generate it with gen_lines)\n", path);
    return 64;
  }
  fclose(expect_file);

  worker *workers = bench_calloc_workers(common.threads, sizeof *workers);
  for (long t = 0; t < common.threads; t++)
    workers[t] = (worker){dir, t, n_files, common.threads, {0, 0, 0}};
  double start = bench_now();
  bench_run_threads(common.threads, read_files, workers, sizeof *workers);
  double secs = bench_now() - start;

  totals seen = {0, 0, 0};
  for (long t = 0; t < common.threads; t++) {
    seen.lines += workers[t].seen.lines;
    seen.fields += workers[t].seen.fields;
    seen.bytes += workers[t].seen.bytes;
  }
  free(workers);
  if (seen.lines != expected.lines || seen.fields != expected.fields ||
      seen.bytes != expected.bytes)
    bench_fail("read lines=%llu fields=%llu bytes=%llu, expected %llu %llu %llu", seen.lines,
               seen.fields, seen.bytes, expected.lines, expected.fields, expected.bytes);
  char extra[160];
  snprintf(extra, sizeof extra, "lines=%llu fields=%llu bytes=%llu files=%ld", seen.lines,
           seen.fields, seen.bytes, n_files);
  /* One op = one line read and split. */
  return bench_finish(1, seen.lines, secs, extra);
}
