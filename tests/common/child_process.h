/* SPDX-License-Identifier: MIT */
/* Running this test program again as a child process, with a deadline.
 *
 * Tests whose subject ends the process (an abort on an invalid free), or may
 * hang it (a deadlock in fork), run each case in a fresh copy of themselves:
 * child_run_self() executes /proc/self/exe with the given arguments (the
 * environment, LD_PRELOAD included, is inherited), captures its stdout and
 * stderr, and kills it when the deadline passes, so a hang fails the case
 * instead of stalling the test run (the kill reaches the child's own children
 * too: it runs in a process group of its own). Core dumps are switched off in the child:
 * its aborts are expected. In a cross build run under an emulator (qemu-user:
 * cmake/aarch64-linux-gnu.cmake) the copy starts through the emulator too,
 * named by the environment variable CROSSCOMPILING_EMULATOR.
 */
#ifndef BRISK_TEST_CHILD_PROCESS_H
#define BRISK_TEST_CHILD_PROCESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_OUTPUT_MAX 32768

typedef struct child_result {
  int exited;      /* it returned from main or called exit: exit_status is valid */
  int exit_status; /* its exit status */
  int signal;      /* the signal that ended it, 0 if none */
  int timed_out;   /* the runner killed it at the deadline */
  char out[CHILD_OUTPUT_MAX];
  char err[CHILD_OUTPUT_MAX];
  size_t out_length, err_length;
} child_result;

static inline double child_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Appends what fd has to buffer; returns 0 at end of file. */
static inline int child_drain(int fd, char *buffer, size_t *length) {
  char scratch[4096];
  ssize_t n = read(fd, scratch, sizeof scratch);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
  if (n <= 0) return 0;
  size_t room = CHILD_OUTPUT_MAX - 1 - *length;
  size_t keep = (size_t)n < room ? (size_t)n : room;
  memcpy(buffer + *length, scratch, keep);
  *length += keep;
  buffer[*length] = 0;
  return 1;
}

/* Runs /proc/self/exe with argv (argv[0] is only a name; NULL-terminated).
 * Returns 0 when the child ran (whatever its outcome), -1 when it could not
 * be started. */
static inline int child_run_self(char *const argv[], double timeout_s, child_result *r) {
  memset(r, 0, sizeof *r);
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0) return -1;
  if (pipe(err_pipe) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setpgid(0, 0); /* its own group: a kill at the deadline reaches its children too */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    const char *emulator = getenv("CROSSCOMPILING_EMULATOR");
    if (emulator != NULL && emulator[0] != 0) { /* its words, then this program */
      static char words[1024], self[4096];
      static char *emulated[64];
      int n = 0;
      snprintf(words, sizeof words, "%s", emulator);
      for (char *word = strtok(words, " "); word != NULL && n < 16; word = strtok(NULL, " "))
        emulated[n++] = word;
      ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
      if (length <= 0) _exit(127);
      self[length] = 0;
      emulated[n++] = self;
      for (int i = 1; argv[i] != NULL && n < 63; i++)
        emulated[n++] = argv[i];
      emulated[n] = NULL;
      execv(emulated[0], emulated);
      _exit(127);
    }
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  setpgid(pid, pid); /* as the child does: whichever runs first */
  close(out_pipe[1]);
  close(err_pipe[1]);
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_count = 2, status = 0, ended = 0;
  double deadline = child_now_s() + timeout_s;
  /* Until both pipes close, or the child has ended and its output is read
   * (a child of its own, stuck, may hold the pipes open). */
  while (open_count > 0) {
    double left = deadline - child_now_s();
    if (left <= 0) {
      r->timed_out = 1;
      break;
    }
    int ready = poll(fds, 2, left > 0.1 ? 100 : (int)(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && ended) break;
    for (int i = 0; i < 2 && ready > 0; i++) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      int more = i == 0 ? child_drain(fds[i].fd, r->out, &r->out_length)
                        : child_drain(fds[i].fd, r->err, &r->err_length);
      if (!more) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_count--;
      }
    }
    if (!ended && waitpid(pid, &status, WNOHANG) == pid) ended = 1;
  }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  kill(-pid, SIGKILL); /* whatever is left of its process group */
  if (!ended) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) {
    r->exited = 1;
    r->exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r->signal = WTERMSIG(status);
  }
  return 0;
}

/* "SEGV" for SIGSEGV (glibc's sigabbrev_np, which musl lacks, names them all). */
static inline const char *child_signal_name(int signal_number) {
#ifdef __GLIBC__
  const char *name = sigabbrev_np(signal_number);
  return name ? name : "?";
#else
  static const struct {
    int number;
    const char *name;
  } names[] = {{SIGABRT, "ABRT"}, {SIGSEGV, "SEGV"}, {SIGBUS, "BUS"},   {SIGKILL, "KILL"},
               {SIGILL, "ILL"},   {SIGFPE, "FPE"},   {SIGTRAP, "TRAP"}, {SIGTERM, "TERM"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].number == signal_number) return names[i].name;
  return "?";
#endif
}

/* "exit status 3", "killed by SIGSEGV", "no answer within 10 s (killed)". */
static inline const char *child_outcome(const child_result *r, double timeout_s, char *text,
                                        size_t size) {
  if (r->timed_out)
    snprintf(text, size, "no answer within %.0f s (killed)", timeout_s);
  else if (r->exited)
    snprintf(text, size, "exit status %d", r->exit_status);
  else
    snprintf(text, size, "killed by SIG%s", child_signal_name(r->signal));
  return text;
}

/* ---- for the child ------------------------------------------------------------- */

/* printf to stdout without stdio, which would allocate (its buffers come
 * from the allocator under test when brisk is malloc): what a child says
 * before it does something that may end it. */
static inline void child_say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static inline void child_say(const char *format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (n > 0) {
    ssize_t w = write(1, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    (void)w;
  }
}

/* ---- for the runner -------------------------------------------------------------- */

/* Whether text names pointer (as %p writes it) as a whole word, not as the
 * start of a longer number. */
static inline int child_output_names(const char *text, const char *pointer) {
  size_t n = strlen(pointer);
  for (const char *at = strstr(text, pointer); at != NULL; at = strstr(at + 1, pointer)) {
    char after = at[n];
    int hex_digit = (after >= '0' && after <= '9') || (after >= 'a' && after <= 'f');
    if (!hex_digit) return 1;
  }
  return 0;
}

#endif /* BRISK_TEST_CHILD_PROCESS_H */
