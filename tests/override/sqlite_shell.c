/* SPDX-License-Identifier: MIT */
/* A small sqlite3 shell over Debian's libsqlite3 of this build's width, for
 * preload_sqlite.sh in a 32-bit build: Debian's sqlite3 program cannot be
 * installed for i386 beside the 64-bit one, its library (libsqlite3-0:i386,
 * Multi-Arch: same) can. Like `sqlite3 -batch DB` it reads SQL from stdin,
 * runs each complete statement, and prints rows in list mode ('|' between
 * columns, a header line per statement that returns rows, NULL as nothing);
 * it knows the three dot commands the workload uses (.bail on, .headers on,
 * .mode list) and stops at the first error. With a statement as its second
 * argument it runs that instead of stdin.
 * The few library functions are declared here rather than taken from
 * sqlite3.h, which would need the -dev package of that architecture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_open(const char *filename, sqlite3 **db);
int sqlite3_close(sqlite3 *db);
const char *sqlite3_errmsg(sqlite3 *db);
int sqlite3_complete(const char *sql);
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **stmt,
                       const char **tail);
int sqlite3_step(sqlite3_stmt *stmt);
int sqlite3_column_count(sqlite3_stmt *stmt);
const char *sqlite3_column_name(sqlite3_stmt *stmt, int column);
const unsigned char *sqlite3_column_text(sqlite3_stmt *stmt, int column);
int sqlite3_finalize(sqlite3_stmt *stmt);
#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_DONE 101

static int headers;

/* Whether line holds only blanks and a "--" comment, which the shell skips
 * between statements. */
static int blank(const char *line) {
  while (*line == ' ' || *line == '\t' || *line == '\r' || *line == '\n')
    line++;
  return *line == '\0' || (line[0] == '-' && line[1] == '-');
}

/* Runs every statement of sql; 0, or 1 after printing the error. */
static int run(sqlite3 *db, const char *sql) {
  while (*sql) {
    sqlite3_stmt *stmt = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, &tail) != SQLITE_OK) {
      fprintf(stderr, "Error: %s\n", sqlite3_errmsg(db));
      return 1;
    }
    sql = tail;
    if (stmt == NULL) continue; /* whitespace or a comment */
    int columns = sqlite3_column_count(stmt), status, rows = 0;
    while ((status = sqlite3_step(stmt)) == SQLITE_ROW) {
      if (rows++ == 0 && headers) {
        for (int c = 0; c < columns; c++)
          printf("%s%s", c ? "|" : "", sqlite3_column_name(stmt, c));
        putchar('\n');
      }
      for (int c = 0; c < columns; c++) {
        const unsigned char *text = sqlite3_column_text(stmt, c);
        printf("%s%s", c ? "|" : "", text ? (const char *)text : "");
      }
      putchar('\n');
    }
    sqlite3_finalize(stmt);
    if (status != SQLITE_DONE) {
      fprintf(stderr, "Error: %s\n", sqlite3_errmsg(db));
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s [-batch] DATABASE [SQL] <SCRIPT\n", argv[0]);
    return 2;
  }
  int first = strcmp(argv[1], "-batch") == 0 ? 2 : 1;
  sqlite3 *db = NULL;
  if (first >= argc || sqlite3_open(argv[first], &db) != SQLITE_OK) {
    fprintf(stderr, "Error: cannot open %s\n", first < argc ? argv[first] : "(none)");
    return 1;
  }
  int failed = 0;
  if (first + 1 < argc) {
    failed = run(db, argv[first + 1]);
  } else {
    size_t size = 0, capacity = 4096;
    char *sql = malloc(capacity), line[4096];
    if (sql == NULL) return 1;
    sql[0] = '\0';
    while (!failed && fgets(line, sizeof line, stdin)) {
      if (size == 0 && blank(line)) continue;
      if (size == 0 && line[0] == '.') {
        if (strcmp(line, ".headers on\n") == 0)
          headers = 1;
        else if (strcmp(line, ".bail on\n") != 0 && strcmp(line, ".mode list\n") != 0) {
          fprintf(stderr, "Error: unknown dot command: %s", line);
          failed = 1;
        }
        continue;
      }
      size_t length = strlen(line);
      if (size + length + 1 > capacity) {
        capacity = 2 * (size + length + 1);
        char *bigger = realloc(sql, capacity);
        if (bigger == NULL) return 1;
        sql = bigger;
      }
      memcpy(sql + size, line, length + 1);
      size += length;
      if (sqlite3_complete(sql)) {
        failed = run(db, sql);
        size = 0;
        sql[0] = '\0';
      }
    }
    if (!failed && size > 0) failed = run(db, sql);
    free(sql);
  }
  sqlite3_close(db);
  return failed;
}
