/* SPDX-License-Identifier: MIT */
/* fork while other threads hold stdio locks and allocate.
 *
 * The real-world complaint: a multithreaded program that forks (to run a
 * command) hangs for good when another thread was writing to a FILE at that
 * moment. fork must take stdio's list lock; fflush(NULL) holds that list lock
 * while it waits for each FILE's lock; a thread inside stdio holds its FILE's
 * lock while stdio grows a buffer with malloc or realloc. If the allocator's
 * fork handler holds the allocator's locks while fork waits for the list
 * lock, and that realloc needs one of them, no thread can move.
 *
 * Each run: the main thread forks FORKS times (each child allocates, writes
 * and frees a few blocks, up to a huge one, and _exits); meanwhile one thread
 * calls fflush(NULL) in a loop, one writes 768 KiB of text at a time with
 * fprintf into open_memstream streams (their buffers grow past the huge
 * block threshold, 512 KiB, while the stream is locked), and one reads lines
 * of up to 768 KiB with getline (which grows its line buffer while the
 * stream is locked). A run goes on past FORKS forks until each stdio thread
 * has done a full round, so the forks overlap their work. fork_scenario.h runs this 20 times,
 * each under a watchdog.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_scenario.h"

/* Each run forks at least FORKS times, and on (for up to SCENARIO_WORK_S)
 * until every stdio thread has done a full round. */
#define FORKS 20
#define TEXT_BYTES ((size_t)768 << 10) /* per stream and longest line: past 512 KiB */
#define LINES 7                        /* in the text getline reads */

static atomic_int stop;
static atomic_ulong flushes, streams_written, lines_read;
static atomic_int failed;

static void fail(const char *what) {
  fprintf(stderr, "FAIL: %s\n", what);
  atomic_store(&failed, 1);
}

static void *flusher(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    fflush(NULL);
    atomic_fetch_add(&flushes, 1);
  }
  return NULL;
}

/* Text into memory streams: fprintf appends while the stream is locked and
 * the stream grows its buffer (past 512 KiB) as it goes. */
static void *stream_writer(void *arg) {
  (void)arg;
  unsigned long round = 0;
  while (!atomic_load(&stop)) {
    char *buffer = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&buffer, &length);
    if (stream == NULL) {
      fail("open_memstream returned NULL");
      return NULL;
    }
    size_t written = 0;
    for (unsigned long line = 0; written < TEXT_BYTES; line++) {
      int n = fprintf(stream, "round %lu line %lu: %0*lu\n", round, line, (int)(16 + line % 200),
                      line * 2654435761ul);
      if (n < 0) {
        fail("fprintf into a memory stream failed");
        break;
      }
      written += (size_t)n;
    }
    if (fclose(stream) != 0) fail("fclose of a memory stream failed");
    if (length != written || buffer == NULL || strncmp(buffer, "round ", 6) != 0)
      fail("a memory stream lost text");
    free(buffer);
    round++;
    atomic_fetch_add(&streams_written, 1);
  }
  return NULL;
}

/* Long lines through getline, which reallocs its line buffer while the
 * stream is locked; each line starts from an empty buffer. */
static void *line_reader(void *arg) {
  char *text = arg;
  while (!atomic_load(&stop)) {
    FILE *stream = fmemopen(text, strlen(text), "r");
    if (stream == NULL) {
      fail("fmemopen returned NULL");
      return NULL;
    }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t n;
    while (!atomic_load(&stop) && (n = getline(&line, &capacity, stream)) > 0) {
      if (line[0] != 'L' || line[n - 1] != '\n') fail("getline returned a broken line");
      free(line);
      line = NULL;
      capacity = 0;
      atomic_fetch_add(&lines_read, 1);
    }
    free(line);
    fclose(stream);
  }
  return NULL;
}

/* Lines from 100 bytes to 768 KiB, so line buffers cross every size range. */
static char *make_lines(void) {
  static const size_t lengths[LINES] = {100, 5000, 70000, 300000, 700000, TEXT_BYTES, 2000};
  size_t total = 1;
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
    total += lengths[i];
  char *text = malloc(total);
  if (text == NULL) return NULL;
  char *cursor = text;
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
    memset(cursor, 'L', lengths[i] - 1);
    cursor[lengths[i] - 1] = '\n';
    cursor += lengths[i];
  }
  *cursor = 0;
  return text;
}

static void child_after_fork(unsigned i) {
  static const size_t sizes[] = {24, 1000, 20000, 200000, 3u << 20};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t n = sizes[(k + i) % (sizeof sizes / sizeof sizes[0])];
    unsigned char *p = malloc(n);
    if (p == NULL) _exit(3);
    memset(p, (int)k, n);
    if (p[n - 1] != (unsigned char)k) _exit(4);
    free(p);
  }
  _exit(0);
}

static int run_once(void) {
  char *text = make_lines();
  if (text == NULL) {
    fail("malloc for the line text");
    return 1;
  }
  pthread_t threads[3];
  if (pthread_create(&threads[0], NULL, flusher, NULL) != 0 ||
      pthread_create(&threads[1], NULL, stream_writer, NULL) != 0 ||
      pthread_create(&threads[2], NULL, line_reader, text) != 0) {
    fail("pthread_create");
    return 1;
  }
  unsigned children_ok = 0, forks = 0;
  double started = child_now_s();
  for (unsigned i = 0; child_now_s() - started < SCENARIO_WORK_S; i++) {
    if (i >= FORKS && atomic_load(&streams_written) >= 1 && atomic_load(&lines_read) >= LINES &&
        atomic_load(&flushes) >= 2)
      break;
    pid_t pid = scenario_fork();
    if (pid == 0) child_after_fork(i);
    if (pid < 0) {
      fail("fork failed");
      break;
    }
    forks++;
    int status = scenario_wait_child(pid);
    if (status == 0)
      children_ok++;
    else
      fprintf(stderr, "FAIL: child %u: wait status %#x\n", i, (unsigned)status);
  }
  atomic_store(&stop, 1);
  for (int t = 0; t < 3; t++)
    pthread_join(threads[t], NULL);
  free(text);
  printf("%u of %u children ok; %lu flushes, %lu streams written, %lu lines read\n", children_ok,
         forks, atomic_load(&flushes), atomic_load(&streams_written), atomic_load(&lines_read));
  if (children_ok != forks) fail("some children of fork failed");
  if (atomic_load(&streams_written) < 1 || atomic_load(&lines_read) < LINES)
    fail("the stdio threads made too little progress to overlap the forks");
  return atomic_load(&failed) ? 1 : 0;
}

int main(int argc, char **argv) {
  return scenario_main(argc, argv, "fork while threads hold stdio locks and allocate", run_once);
}
