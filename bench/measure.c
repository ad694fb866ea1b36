/* SPDX-License-Identifier: MIT */
/* Runs one workload and reports its peak RSS and exit status as the kernel
 * saw them (wait4). The harness cannot do this itself: Linux carries a
 * process's peak RSS across exec, so a program started straight from the
 * Python harness would report at least the interpreter's size. Forked from
 * this small process, the workload's peak is its own.
 *
 * usage: measure REPORT_FILE PRELOAD PROGRAM [ARGS...]
 * PRELOAD is set as LD_PRELOAD for the workload only ("" = none), so a
 * broken allocator cannot take the launcher down with it. REPORT_FILE gets
 * `status=<wait status> maxrss_kb=<KiB> wall_s=<s> user_s=<s> sys_s=<s>`. */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: measure REPORT_FILE PRELOAD PROGRAM [ARGS...]\n");
    return 64;
  }
  double start = now();
  pid_t pid = fork();
  if (pid < 0) {
    perror("measure: fork");
    return 70;
  }
  if (pid == 0) {
    if (argv[2][0])
      setenv("LD_PRELOAD", argv[2], 1);
    else
      unsetenv("LD_PRELOAD");
    execv(argv[3], argv + 3);
    fprintf(stderr, "measure: cannot run %s: %s\n", argv[3], strerror(errno));
    _exit(127);
  }
  int status;
  struct rusage usage;
  while (wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) {
      perror("measure: wait4");
      return 70;
    }
  double wall = now() - start;
  FILE *report = fopen(argv[1], "w");
  if (!report) {
    perror("measure: report file");
    return 70;
  }
  fprintf(report, "status=%d maxrss_kb=%ld wall_s=%.6f user_s=%ld.%06ld sys_s=%ld.%06ld\n", status,
          usage.ru_maxrss, wall, (long)usage.ru_utime.tv_sec, (long)usage.ru_utime.tv_usec,
          (long)usage.ru_stime.tv_sec, (long)usage.ru_stime.tv_usec);
  return fclose(report) == 0 ? 0 : 70;
}
