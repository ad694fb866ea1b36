/* SPDX-License-Identifier: MIT */
/* The diagnostics on Windows: statistics, leak counts, the double-free check
 * and checked mode, each in a child process (this program run again with a
 * mode and BRISK_* settings), whose exit status and messages are checked.
 * Built twice: with the static library and with brisk.dll.
 *
 *   windows_diag              runs every check
 *   windows_diag MODE         the child's part (leak, stats, double, foreign, fault)
 */
#include <windows.h>

#include <stdint.h>
#include <stdio.h>
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

static int child(const char *mode) {
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

/* Runs this program with mode, the BRISK_* setting (NAME=VALUE, or NULL)
 * in its environment; fills result. */
static void run(const char *mode, const char *setting) {
  static const char *const names[] = {"BRISK_STATS", "BRISK_LEAKS", "BRISK_CHECK", "BRISK_PROFILE"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    SetEnvironmentVariableA(names[i], NULL);
  char name[64] = "";
  if (setting != NULL) {
    const char *eq = strchr(setting, '=');
    memcpy(name, setting, (size_t)(eq - setting));
    SetEnvironmentVariableA(name, eq + 1);
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
  if (setting != NULL) SetEnvironmentVariableA(name, NULL);
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
  check_stats();
  return test_finish();
}
