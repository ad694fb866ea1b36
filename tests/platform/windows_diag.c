/* SPDX-License-Identifier: MIT */
/* The diagnostics on Windows: statistics, leak reports (to a file, with an
 * exit status, with suppressions), the double-free check, checked mode, the
 * heap profile, sampled guard pages and frames named later (module, offset
 * and timestamp), each in a child process (this program run again with a
 * mode and BRISK_* settings), whose exit status, messages and files are
 * checked. Built twice: with the static library and with brisk.dll.
 *
 *   windows_diag              runs every check
 *   windows_diag MODE         the child's part (leak, stats, double, foreign,
 *                             fault, profile, overflow, use-after-free)
 */
#include <windows.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_api.h"

#define CHECK_EXIT 86 /* checked mode's exit status */
#define ABORT_EXIT 3  /* brisk's abort on Windows */

/* ---- the children ----------------------------------------------------------- */
static void *leaked[100];

/* The pointer a report must name, written the way brisk writes it. */
static void announce(const void *p) {
  printf("pointer=0x%llx\n", (unsigned long long)(uintptr_t)p);
  fflush(stdout);
}

/* Exported, so that brisk names it on Windows (from the program's export
 * table: the only names a module carries at run time): the heap profile's
 * stacks must show it holding its blocks. */
__declspec(dllexport) __attribute__((noinline)) void **profile_hold_blocks(int count, size_t size) {
  void **blocks = A_MALLOC((size_t)count * sizeof *blocks);
  for (int i = 0; i < count; i++)
    blocks[i] = A_MALLOC(size);
  return blocks;
}

/* With BRISK_GUARD=1 about every other block of a refill is guarded: one
 * whose usable size is what it asked (others are rounded to their class),
 * placed against the inaccessible page after it (at_end) or before it. */
#define GUARD_ASKED 20 /* 32 on a guard page */
static void *guard_kept[100000];

static char *guarded_block(int at_end) {
  for (int i = 0; i < 100000; i++) {
    char *p = A_MALLOC(GUARD_ASKED);
    if (A_USABLE_SIZE(p) == GUARD_ASKED && (((uintptr_t)p + 32) % 4096 == 0) == at_end) return p;
    guard_kept[i] = p;
  }
  return NULL;
}

static int child(const char *mode) {
  if (strcmp(mode, "profile") == 0) {
    void **held = profile_hold_blocks(256, 64 * 1024); /* 16 MiB held at exit */
    for (int i = 0; i < 20000; i++)                    /* freed: in the allocated space only */
      A_FREE(A_MALLOC(100));
    printf("held=%p\n", (void *)held);
    return 0;
  }
  if (strcmp(mode, "overflow") == 0 || strcmp(mode, "use-after-free") == 0) {
    int overflow = strcmp(mode, "overflow") == 0;
    volatile char *p = guarded_block(overflow);
    if (p == NULL) {
      printf("no guarded block\n");
      return 1;
    }
    announce((const void *)p);
    if (!overflow) A_FREE((void *)p);
    printf("read %d\n", p[overflow ? 32 : 0]); /* the page after the block; the freed block */
    printf("finished\n");
    return 0;
  }
  if (strcmp(mode, "leak") == 0) {
    for (int i = 0; i < 100; i++)
      leaked[i] = A_MALLOC(128);
    void *small = A_MALLOC(16);
    announce(small);
    for (int i = 0; i < 1000; i++) /* freed: not leaks */
      A_FREE(A_MALLOC((size_t)i + 1));
    return 0;
  }
  if (strcmp(mode, "stats") == 0) {
    for (int i = 0; i < 5000; i++)
      A_FREE(A_MALLOC((size_t)(i % 300) + 1));
    brisk_stats s = api_stats();
    /* the child's own view, counted while BRISK_STATS is set */
    printf("counting=%llu mallocs=%llu frees=%llu\n", s.counting, s.mallocs, s.frees);
    return 0;
  }
  if (strcmp(mode, "double") == 0) {
    void *p = A_MALLOC(40);
    announce(p);
    A_FREE(p);
    A_FREE(p);
    printf("finished\n");
    return 0;
  }
  if (strcmp(mode, "foreign") == 0) {
    static char not_brisks[64];
    announce(not_brisks + 16);
    A_FREE(not_brisks + 16);
    printf("finished\n");
    return 0;
  }
  if (strcmp(mode, "fault") == 0) { /* a pointer whose segment header is not mapped */
    void *wild = (void *)(uintptr_t)0x7ff0000010ull;
    announce(wild);
    A_FREE(wild);
    printf("finished\n");
    return 0;
  }
  fprintf(stderr, "windows_diag: unknown mode %s\n", mode);
  return 2;
}

/* ---- running a child ------------------------------------------------------------- */
typedef struct run_result {
  DWORD status;
  char output[16384]; /* stdout and stderr together */
} run_result;

static run_result result;

/* Runs this program with mode, the BRISK_* settings (NAME=VALUE, several
 * separated by '|', or NULL) in its environment; fills result. */
static void run(const char *mode, const char *setting) {
  static const char *const names[] = {
      "BRISK_STATS",          "BRISK_LEAKS",        "BRISK_CHECK",
      "BRISK_PROFILE",        "BRISK_LEAKS_FILE",   "BRISK_LEAKS_EXITCODE",
      "BRISK_LEAKS_SUPPRESS", "BRISK_HEAP_PROFILE", "BRISK_HEAP_PROFILE_RATE",
      "BRISK_GUARD",          "BRISK_SYMBOLS_LATER"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    SetEnvironmentVariableA(names[i], NULL);
  for (const char *at = setting; at != NULL && *at != 0;) {
    const char *end = strchr(at, '|');
    size_t length = end != NULL ? (size_t)(end - at) : strlen(at);
    char name[64], value[MAX_PATH + 64];
    const char *eq = memchr(at, '=', length);
    REQUIRE(eq != NULL && (size_t)(eq - at) < sizeof name &&
            length - (size_t)(eq - at) - 1 < sizeof value);
    memcpy(name, at, (size_t)(eq - at));
    name[eq - at] = 0;
    memcpy(value, eq + 1, length - (size_t)(eq - at) - 1);
    value[length - (size_t)(eq - at) - 1] = 0;
    SetEnvironmentVariableA(name, value);
    at = end != NULL ? end + 1 : NULL;
  }
  SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
  HANDLE read_end, write_end;
  REQUIRE(CreatePipe(&read_end, &write_end, &inherit, 0));
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOA startup;
  memset(&startup, 0, sizeof startup);
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = write_end;
  startup.hStdError = write_end;
  char program[MAX_PATH], command[MAX_PATH + 64];
  GetModuleFileNameA(NULL, program, sizeof program);
  snprintf(command, sizeof command, "\"%s\" %s", program, mode);
  PROCESS_INFORMATION process;
  REQUIRE(CreateProcessA(program, command, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process));
  CloseHandle(write_end);
  DWORD length = 0, got;
  while (length < sizeof result.output - 1 &&
         ReadFile(read_end, result.output + length, (DWORD)(sizeof result.output - 1 - length),
                  &got, NULL) &&
         got > 0)
    length += got;
  result.output[length] = 0;
  CloseHandle(read_end);
  WaitForSingleObject(process.hProcess, INFINITE);
  GetExitCodeProcess(process.hProcess, &result.status);
  CloseHandle(process.hProcess);
  CloseHandle(process.hThread);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    SetEnvironmentVariableA(names[i], NULL);
}

/* "of pointer P" for the pointer P the child announced (never found in the
 * output when it announced none). */
static const char *announced(void) {
  static char text[64];
  const char *at = strstr(result.output, "pointer=");
  char pointer[32] = "(none announced)";
  if (at != NULL) sscanf(at + 8, "%31s", pointer);
  snprintf(text, sizeof text, "of pointer %s", pointer);
  return text;
}

static int has(const char *text) {
  return strstr(result.output, text) != NULL;
}

/* A file beside the program's temporary files: TEMP\\brisk-diag-PID-NAME. */
static const char *temp_file(const char *name) {
  static char paths[4][MAX_PATH];
  static int next;
  char *path = paths[next++ % 4], folder[MAX_PATH];
  DWORD length = GetTempPathA(sizeof folder, folder);
  REQUIRE(length > 0 && length < sizeof folder);
  snprintf(path, MAX_PATH, "%sbrisk-diag-%lu-%s", folder, (unsigned long)GetCurrentProcessId(),
           name);
  DeleteFileA(path);
  return path;
}

/* The file's text (NUL-terminated, at most 64 KiB), or NULL; the file goes. */
static char file_text[65536];
static const char *take_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t n = fread(file_text, 1, sizeof file_text - 1, f);
  fclose(f);
  file_text[n] = 0;
  DeleteFileA(path);
  return file_text;
}

#define CHECK_RUN(expr) CHECK_MSG(expr, "child output:\n%s", result.output)

/* ---- the checks --------------------------------------------------------------- */
static void check_double_free(void) {
  run("double", NULL);
  CHECK_MSG(result.status == ABORT_EXIT, "double free: exit status %lu, not %d",
            (unsigned long)result.status, ABORT_EXIT);
  CHECK_RUN(has("brisk: error: double free of pointer"));
  CHECK_RUN(has(announced()));
  CHECK_RUN(has("brisk:     #0 0x")); /* a stack trace, frames named by module */
  CHECK_RUN(!has("finished"));

  run("double", "BRISK_CHECK=1");
  CHECK_MSG(result.status == CHECK_EXIT, "checked double free: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk: error: double free") && has(announced()));
  CHECK_RUN(has("was allocated at:"));
  CHECK_RUN(!has("finished"));

  run("foreign", "BRISK_CHECK=1");
  CHECK_MSG(result.status == CHECK_EXIT, "checked foreign free: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk never returned this pointer") && has(announced()));
}

/* A wild pointer faults in the free path reading its segment header; the
 * fault hook (a vectored exception handler) turns that into a report when
 * the fault is in brisk's own code, which it can tell only in brisk.dll. */
#ifndef BRISK_STATIC
static void check_fault_hook(void) {
  run("fault", "BRISK_CHECK=1");
  CHECK_MSG(result.status == CHECK_EXIT, "checked wild free: exit status %lx",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk never returned this pointer: reading its header at"));
  CHECK_RUN(has(announced()));
}
#endif

static void check_leaks(void) {
  run("leak", "BRISK_LEAKS=1");
  CHECK_MSG(result.status == 0, "leak run: exit status %lu", (unsigned long)result.status);
  CHECK_RUN(has("brisk: leak report: 12816 bytes in 101 blocks still allocated at exit"));
  CHECK_RUN(has("brisk: #1 12800 bytes in 100 blocks allocated at:"));
  CHECK_RUN(has("16 bytes in 1 block allocated at:"));
  run("stats", "BRISK_LEAKS=1");
  CHECK_RUN(has("brisk: leak report: no blocks left allocated at exit"));
}

/* What CI acts on: the report in a file, an exit status of its own for a
 * program that leaked (and its own for one that did not), suppressions. */
static void check_leaks_for_ci(void) {
  char setting[3 * MAX_PATH];
  const char *report = temp_file("leaks.txt");
  snprintf(setting, sizeof setting, "BRISK_LEAKS=1|BRISK_LEAKS_EXITCODE=23|BRISK_LEAKS_FILE=%s",
           report);
  run("leak", setting);
  CHECK_MSG(result.status == 23, "BRISK_LEAKS_EXITCODE=23: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk: the program leaked: exit status 23 (BRISK_LEAKS_EXITCODE)"));
  CHECK_RUN(has("; written to ") && has(report));
  CHECK_RUN(!has("allocated at:")); /* the stacks went to the file */
  const char *text = take_file(report);
  CHECK_MSG(text != NULL && strstr(text, "brisk: leak report: 12816 bytes in 101 blocks") &&
                strstr(text, "12800 bytes in 100 blocks allocated at:"),
            "BRISK_LEAKS_FILE=%s: %s", report, text ? text : "(not written)");

  run("stats", setting); /* no leak: the program's own exit status */
  CHECK_MSG(result.status == 0, "no leak with BRISK_LEAKS_EXITCODE: exit status %lu",
            (unsigned long)result.status);
  take_file(report);

  /* every leak is allocated in this program: suppressed by its name */
  const char *suppress = temp_file("suppress.txt");
  FILE *f = fopen(suppress, "w");
  REQUIRE(f != NULL);
  fprintf(f, "# the test program\nbrisk_windows_diag*\n");
  fclose(f);
  snprintf(setting, sizeof setting, "BRISK_LEAKS=1|BRISK_LEAKS_EXITCODE=23|BRISK_LEAKS_SUPPRESS=%s",
           suppress);
  run("leak", setting);
  CHECK_MSG(result.status == 0, "all leaks suppressed: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk: leak report: no blocks left allocated at exit by the program"));
  CHECK_RUN(has("brisk: not counted: 12816 bytes in 101 blocks allocated where "
                "BRISK_LEAKS_SUPPRESS names"));
  DeleteFileA(suppress);
}

/* BRISK_HEAP_PROFILE: pprof's gzipped file and folded stacks beside it,
 * whose in-use stacks name the function that holds the memory. */
static void check_heap_profile(void) {
  char setting[2 * MAX_PATH];
  const char *profile = temp_file("heap.pb.gz");
  snprintf(setting, sizeof setting, "BRISK_HEAP_PROFILE=%s|BRISK_HEAP_PROFILE_RATE=65536", profile);
  run("profile", setting);
  CHECK_MSG(result.status == 0, "heap profile run: exit status %lu", (unsigned long)result.status);
  CHECK_RUN(has("brisk: heap profile written to ") && has(profile));
  const char *text = take_file(profile);
  CHECK_MSG(text != NULL && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b,
            "%s: no gzip file", profile);
  char folded[MAX_PATH];
  snprintf(folded, sizeof folded, "%.*s.inuse.folded", (int)(strlen(profile) - 6), profile);
  text = take_file(folded);
  CHECK_MSG(text != NULL, "%s not written", folded);
  if (text == NULL) return;
  /* "...;profile_hold_blocks[;0x...] BYTES": the stacks through it hold
   * about 16 MiB, estimated (in a static link brisk's own frames, unnamed,
   * may follow it) */
  unsigned long long bytes = 0;
  int stacks = 0;
  for (const char *line = text; *line != 0;) {
    const char *end = strchr(line, '\n');
    if (end == NULL) end = line + strlen(line);
    const char *count = end; /* the line's last word: its bytes */
    while (count > line && count[-1] != ' ')
      count--;
    const char *frame = strstr(line, ";profile_hold_blocks");
    if (frame != NULL && frame < count && (frame[20] == ';' || frame[20] == ' ')) {
      bytes += strtoull(count, NULL, 10);
      stacks++;
    }
    line = *end != 0 ? end + 1 : end;
  }
  CHECK_MSG(stacks > 0, "in-use stacks without profile_hold_blocks:\n%s", text);
  CHECK_MSG(bytes >= 12ull << 20 && bytes <= 20ull << 20,
            "profile_hold_blocks holds 16 MiB, the profile says %llu bytes:\n%s", bytes, text);
  snprintf(folded, sizeof folded, "%.*s.alloc.folded", (int)(strlen(profile) - 6), profile);
  take_file(folded);
}

/* BRISK_GUARD=1: an overflow into the page after a guarded block, and a
 * read of a freed guarded block, stop the program at the bad access with
 * the block's stacks. */
static void check_guard(void) {
  run("overflow", "BRISK_GUARD=1");
  CHECK_MSG(result.status == ABORT_EXIT, "guarded overflow: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("brisk: error: heap overflow: access at ") &&
            has("12 bytes past the end of the 20-byte block at"));
  CHECK_RUN(has("the block was allocated by thread") && has("found by BRISK_GUARD"));
  CHECK_RUN(!has("finished"));

  run("use-after-free", "BRISK_GUARD=1");
  CHECK_MSG(result.status == ABORT_EXIT, "guarded use after free: exit status %lu",
            (unsigned long)result.status);
  CHECK_RUN(has("0 bytes into the 20-byte block at") && has(", freed"));
  CHECK_RUN(has("and freed by thread"));
  CHECK_RUN(!has("finished"));
}

/* BRISK_SYMBOLS_LATER=1: frames as MODULE+0xOFFSET (timestamp HEX), the
 * timestamp the program's PE header holds, for `brisk symbolize`. */
static void check_symbols_later(void) {
  run("leak", "BRISK_LEAKS=1|BRISK_SYMBOLS_LATER=1");
  const uint8_t *base = (const uint8_t *)GetModuleHandleA(NULL);
  const IMAGE_NT_HEADERS *nt =
      (const IMAGE_NT_HEADERS *)(base + ((const IMAGE_DOS_HEADER *)base)->e_lfanew);
  char program[MAX_PATH], frame[MAX_PATH + 64];
  GetModuleFileNameA(NULL, program, sizeof program);
  snprintf(frame, sizeof frame, "%s+0x", program);
  CHECK_RUN(has(frame));
  snprintf(frame, sizeof frame, " (timestamp %08lx)", (unsigned long)nt->FileHeader.TimeDateStamp);
  CHECK_RUN(has(frame));
  CHECK_RUN(!has("?? ("));
}

static void check_stats(void) {
  run("stats", "BRISK_STATS=1");
  CHECK_MSG(result.status == 0, "stats run: exit status %lu", (unsigned long)result.status);
  unsigned long long counting = 0, mallocs = 0, frees = 0;
  const char *line = strstr(result.output, "counting=");
  CHECK_RUN(line != NULL && sscanf(line, "counting=%llu mallocs=%llu frees=%llu", &counting,
                                   &mallocs, &frees) == 3);
  CHECK_MSG(counting == 1 && mallocs >= 5000 && frees >= 5000,
            "in-process statistics: counting %llu mallocs %llu frees %llu", counting, mallocs,
            frees);
  CHECK_RUN(has("statistics (pid"));
  const char *report = strstr(result.output, "  mallocs");
  unsigned long long reported = 0;
  CHECK_RUN(report != NULL && sscanf(report, " mallocs %llu", &reported) == 1);
  CHECK_MSG(reported >= mallocs, "report at exit: %llu mallocs, the program saw %llu", reported,
            mallocs);
  CHECK_RUN(has("resident_peak"));
  const char *resident = strstr(result.output, "  resident ");
  unsigned long long bytes = 0;
  CHECK_RUN(resident != NULL && sscanf(resident, " resident %llu", &bytes) == 1 && bytes > 0);

  run("stats", "BRISK_STATS=json");
  CHECK_RUN(has("{\"brisk_version\": \"") && has("\"heaps_created\": 1,"));
}

int main(int argc, char **argv) {
  api_init();
  if (argc > 1) return child(argv[1]);
  printf("diagnostics on Windows through the %s API (%s)\n", API_NAME,
#ifdef BRISK_STATIC
         "static library"
#else
         "brisk.dll"
#endif
  );
  check_double_free();
#ifndef BRISK_STATIC
  check_fault_hook();
#endif
  check_leaks();
  check_leaks_for_ci();
  check_heap_profile();
  check_guard();
  check_symbols_later();
  check_stats();
  return test_finish();
}
