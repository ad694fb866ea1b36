/* SPDX-License-Identifier: MIT */
/* Driver for the fork scenarios: a scenario that deadlocks must fail fast.
 *
 * Run without arguments, the program runs its scenario SCENARIO_RUNS times in
 * a row, each time in a fresh copy of itself (child_process.h), and fails at
 * the first run that fails or hangs. Each copy arms a watchdog: if the
 * scenario has not finished after SCENARIO_WATCHDOG_S seconds, SIGALRM
 * reports where it is stuck ("deadlock: fork did not return within 10 s")
 * and ends it. The runner's deadline, a few seconds later, is the backstop.
 *
 * "--expect=brisk" or "--expect=glibc" (passed through to every run) makes
 * the run check which malloc serves the process, so a test of brisk cannot
 * pass on glibc's malloc because LD_PRELOAD went missing, and the reference
 * run on glibc really is on glibc.
 */
#ifndef BRISK_TEST_FORK_SCENARIO_H
#define BRISK_TEST_FORK_SCENARIO_H

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "child_process.h"

/* A build whose tests run fewer iterations (BRISK_TEST_SCALE below 100:
 * sanitizers, emulation) runs slower by as much: its runs get as many times
 * longer to do their work, and to hang. */
static inline int scenario_slowness(void) {
  unsigned long scale = test_scale_percent();
  return scale >= 100 ? 1 : (int)((100 + scale - 1) / scale);
}

/* 20 runs; 5 under an emulator (qemu-user: tests/CMakeLists.txt gives its
 * command to the tests), where a run takes ten times as long. */
#define SCENARIO_RUNS (getenv("CROSSCOMPILING_EMULATOR") != NULL ? 5 : 20)
/* A deadlock lasts for ever, a machine busy with other jobs only slows a
 * run down: the watchdog waits long enough that only the first trips it. */
#define SCENARIO_WATCHDOG_S (30 * scenario_slowness())
/* A run that goes on until its threads have done enough stops trying after
 * this long (and says the machine was too busy), well before the watchdog:
 * 20 s natively, where a busy machine is the only reason to go on that
 * long; a slowed build keeps to 5 s a unit of its slowness (under qemu-user
 * a run rarely gets more signals by waiting). */
#define SCENARIO_WORK_S (scenario_slowness() == 1 ? 20.0 : 5.0 * scenario_slowness())

/* Where the scenario is, for the watchdog's report. Set with plain stores of
 * sig_atomic_t: the watchdog reads them from a signal handler. */
static volatile sig_atomic_t scenario_forks_in_progress; /* fork() called, not yet returned */
static volatile sig_atomic_t scenario_waiting_for_child; /* waitpid() on a fork child */

static char scenario_msg_fork[160], scenario_msg_child[160], scenario_msg_other[160];

static void scenario_watchdog(int signal_number) {
  (void)signal_number;
  const char *msg = scenario_forks_in_progress > 0   ? scenario_msg_fork
                    : scenario_waiting_for_child > 0 ? scenario_msg_child
                                                     : scenario_msg_other;
  ssize_t w = write(2, msg, strlen(msg));
  (void)w;
  _exit(2);
}

/* fork() with the bookkeeping the watchdog reports from. */
static inline pid_t scenario_fork(void) {
  scenario_forks_in_progress++;
  pid_t pid = fork();
  if (pid != 0) scenario_forks_in_progress--;
  return pid;
}

/* waitpid() for a fork child; returns its wait status, or -1. */
static inline int scenario_wait_child(pid_t pid) {
  int status = 0;
  scenario_waiting_for_child++;
  pid_t w;
  while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  scenario_waiting_for_child--;
  return w == pid ? status : -1;
}

static inline int scenario_check_allocator(const char *expect) {
  int brisk_loaded = dlsym(RTLD_DEFAULT, "brisk_version") != NULL;
  if (strcmp(expect, "brisk") == 0 && !brisk_loaded) {
    fprintf(stderr, "this run must use brisk as malloc, but libbrisk is not loaded\n");
    return 0;
  }
  if (strcmp(expect, "glibc") == 0 && brisk_loaded) {
    fprintf(stderr, "this run must use glibc's malloc, but libbrisk is loaded\n");
    return 0;
  }
  return 1;
}

/* main() of a scenario test: run_once() runs the scenario in this process
 * and returns 0 when it checked out. */
static inline int scenario_main(int argc, char **argv, const char *description,
                                int (*run_once)(void)) {
  const char *expect = "";
  int single_run = 0;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--expect=", 9) == 0) expect = argv[i] + 9;
    if (strcmp(argv[i], "--run") == 0) single_run = 1;
  }
  if (single_run) {
    if (!scenario_check_allocator(expect)) return 1;
    snprintf(scenario_msg_fork, sizeof scenario_msg_fork,
             "deadlock: fork did not return within %d s\n", SCENARIO_WATCHDOG_S);
    snprintf(scenario_msg_child, sizeof scenario_msg_child,
             "deadlock: a child of fork did not exit within %d s (stuck after fork)\n",
             SCENARIO_WATCHDOG_S);
    snprintf(scenario_msg_other, sizeof scenario_msg_other,
             "deadlock: the scenario did not finish within %d s (not inside fork)\n",
             SCENARIO_WATCHDOG_S);
    signal(SIGALRM, scenario_watchdog);
    alarm(SCENARIO_WATCHDOG_S);
    return run_once();
  }

  printf("%s: %d runs, each with a %d s watchdog\n", description, SCENARIO_RUNS,
         SCENARIO_WATCHDOG_S);
  fflush(stdout);
  static child_result result;
  char expect_arg[64];
  snprintf(expect_arg, sizeof expect_arg, "--expect=%s", expect);
  char *child_argv[] = {argv[0], "--run", expect_arg, NULL};
  double deadline = SCENARIO_WATCHDOG_S + 5;
  double started = child_now_s();
  for (int run = 1; run <= SCENARIO_RUNS; run++) {
    if (child_run_self(child_argv, deadline, &result) != 0) {
      fprintf(stderr, "FAIL: run %d of %d could not be started: %s\n", run, SCENARIO_RUNS,
              strerror(errno));
      return 1;
    }
    if (result.exited && result.exit_status == 0) {
      if (run == SCENARIO_RUNS) fputs(result.out, stdout);
      continue;
    }
    char outcome[80];
    fputs(result.out, stdout);
    fputs(result.err, stderr);
    fprintf(stderr, "FAIL: run %d of %d: %s\n", run, SCENARIO_RUNS,
            result.timed_out ? "deadlock: the run did not finish and was killed"
                             : child_outcome(&result, deadline, outcome, sizeof outcome));
    return 1;
  }
  printf("PASS: %d runs in a row in %.1f s\n", SCENARIO_RUNS, child_now_s() - started);
  return 0;
}

#endif /* BRISK_TEST_FORK_SCENARIO_H */
