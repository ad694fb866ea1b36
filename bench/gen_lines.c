/* SPDX-License-Identifier: MIT */
/* Writes the line data the `lines` workloads read (format: docs/CONTRACTS.md):
 * DIR/lines_0.txt .. lines_{N-1}.txt and DIR/expect.txt. The output depends
 * only on the parameters, so a cached copy can be reused across runs and
 * machines. expect.txt holds totals over all files, written last so a
 * half-written folder is never mistaken for a complete one. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* No tab, CR or LF: those are the separators. */
static const char field_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                  " .,:;-_+=/()[]";

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  const char *dir = NULL;
  long files = 4, lines_per_file = 100000, fields_per_line = 10, max_field_len = 16, seed = 1;
  const bench_opt opts[] = {
      {"dir", BENCH_OPT_STRING, &dir, "output folder (created)"},
      {"files", BENCH_OPT_LONG, &files, "number of files (4)"},
      {"lines", BENCH_OPT_LONG, &lines_per_file, "lines per file (100000)"},
      {"fields", BENCH_OPT_LONG, &fields_per_line, "average fields per line (10)"},
      {"max-field", BENCH_OPT_LONG, &max_field_len, "longest field in bytes (16)"},
      {"seed", BENCH_OPT_LONG, &seed, "random seed (1)"},
  };
  bench_parse_args(argc, argv, "generate tab-separated line data", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (!dir || files < 1 || lines_per_file < 1 || fields_per_line < 1 || max_field_len < 1) {
    fprintf(stderr, "gen_lines: --dir is required; counts must be >= 1\n");
    return 64;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "gen_lines: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  /* Lines vary around the average field count so list growth is exercised. */
  long spread = fields_per_line / 3;
  unsigned long long total_lines = 0, total_fields = 0, total_bytes = 0;
  char path[4096];
  char *line = bench_malloc((size_t)((fields_per_line + spread) * (max_field_len + 1) + 2));
  for (long f = 0; f < files; f++) {
    snprintf(path, sizeof path, "%s/lines_%ld.txt", dir, f);
    FILE *out = fopen(path, "w");
    if (!out) {
      fprintf(stderr, "gen_lines: cannot write %s: %s\n", path, strerror(errno));
      return 1;
    }
    uint64_t rng = (uint64_t)seed * 0x100000001b3ull + (uint64_t)f;
    for (long l = 0; l < lines_per_file; l++) {
      size_t n_fields = bench_rand_range(&rng, (size_t)(fields_per_line - spread),
                                         (size_t)(fields_per_line + spread));
      size_t pos = 0;
      for (size_t k = 0; k < n_fields; k++) {
        size_t len = bench_rand_range(&rng, 1, (size_t)max_field_len);
        uint64_t bits = 0;
        for (size_t c = 0; c < len; c++) {
          if (c % 8 == 0) bits = bench_rand_next(&rng);
          line[pos++] = field_chars[(bits & 0xff) % (sizeof field_chars - 1)];
          bits >>= 8;
        }
        line[pos++] = k + 1 < n_fields ? '\t' : '\n';
        total_bytes += len;
      }
      total_fields += n_fields;
      total_lines++;
      if (fwrite(line, 1, pos, out) != pos) {
        fprintf(stderr, "gen_lines: write error on %s\n", path);
        return 1;
      }
    }
    if (fclose(out) != 0) {
      fprintf(stderr, "gen_lines: write error on %s\n", path);
      return 1;
    }
  }
  free(line);
  snprintf(path, sizeof path, "%s/expect.txt", dir);
  FILE *expect = fopen(path, "w");
  if (!expect) {
    fprintf(stderr, "gen_lines: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  fprintf(expect, "files=%ld lines=%llu fields=%llu bytes=%llu\n", files, total_lines, total_fields,
          total_bytes);
  if (fclose(expect) != 0) return 1;
  printf("gen_lines: %s: %ld files, %llu lines, %llu fields, %llu field bytes\n", dir, files,
         total_lines, total_fields, total_bytes);
  return 0;
}
