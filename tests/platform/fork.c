/* SPDX-License-Identifier: MIT */
/* fork() in a loop while other threads allocate and free.
 *
 * Background threads hammer the allocator (small, large, aligned, realloc).
 * The main thread forks repeatedly; each child verifies and frees a block it
 * inherited, allocates/reallocs/frees a few thousand blocks with content
 * checks (and, outside ThreadSanitizer, does the same from a new thread), and
 * _exit(0)s.  The parent checks every child's exit status, and kills a child
 * that has not finished within a timeout, so an allocator deadlock after fork
 * fails the test instead of hanging it; alarm() guards the whole run.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc_api.h"
#include "pattern.h"
#include "test_time.h"

#define BG_THREADS 2
#define CHILD_TIMEOUT_MS 20000

static atomic_int stop;
static atomic_ulong bg_ops, bg_bad;

static void *background(void *arg) {
  unsigned long long rng = 0xA0761D6478BD642Full * ((unsigned long long)(uintptr_t)arg + 1);
  enum { N = 64 };
  unsigned char *p[N] = {0};
  size_t sz[N] = {0};
  uint32_t seed[N] = {0};
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    int k = (int)(test_rand(&rng) % N);
    if (p[k]) {
      if (!pattern_ok(p[k], sz[k], seed[k])) atomic_fetch_add(&bg_bad, 1);
      if (test_rand(&rng) % 4 == 0) {
        size_t m = 1 + (size_t)(test_rand(&rng) % 20000);
        unsigned char *q = A_REALLOC(p[k], m);
        if (!q) {
          atomic_fetch_add(&bg_bad, 1);
          continue;
        }
        size_t keep = m < sz[k] ? m : sz[k];
        if (!pattern_ok(q, keep, seed[k])) atomic_fetch_add(&bg_bad, 1);
        p[k] = q;
        sz[k] = m;
        pattern_fill(q, m, seed[k]);
        continue;
      }
      A_FREE(p[k]);
      p[k] = NULL;
    } else {
      unsigned r = (unsigned)(test_rand(&rng) % 100);
      size_t n = r < 2 ? (size_t)(1u << 20) + (size_t)(test_rand(&rng) % (3u << 20))
                       : (size_t)(test_rand(&rng) % 3000);
      void *q;
      if (r >= 90) {
        q = A_ALIGNED_ALLOC((size_t)64 << (r % 8), n);
      } else {
        q = A_MALLOC(n);
      }
      if (!q) {
        atomic_fetch_add(&bg_bad, 1);
        continue;
      }
      p[k] = q;
      sz[k] = n;
      seed[k] = (uint32_t)test_rand(&rng);
      pattern_fill(p[k], n, seed[k]);
    }
    atomic_fetch_add_explicit(&bg_ops, 1, memory_order_relaxed);
  }
  for (int k = 0; k < N; k++)
    A_FREE(p[k]);
  return NULL;
}

static void child_fail(const char *msg) {
  ssize_t w = write(2, msg, strlen(msg));
  (void)w;
  _exit(3);
}

/* Work done in the child; returns normally when everything checked out. */
static void child_work(unsigned long long seedv) {
  unsigned long long rng = seedv;
  enum { N = 128 };
  unsigned char *p[N] = {0};
  size_t sz[N] = {0};
  for (int op = 0; op < 1500; op++) {
    int k = (int)(test_rand(&rng) % N);
    if (p[k]) {
      if (!pattern_ok(p[k], sz[k], (uint32_t)k)) child_fail("child: block content clobbered\n");
      A_FREE(p[k]);
      p[k] = NULL;
    } else {
      unsigned r = (unsigned)(test_rand(&rng) % 100);
      sz[k] = op % 500 == 7 ? (size_t)(1u << 20) + 12345
              : r < 5       ? 4096 + (size_t)(test_rand(&rng) % 20000)
                            : (size_t)(test_rand(&rng) % 500);
      p[k] = r % 7 == 0 ? A_CALLOC(1, sz[k]) : A_MALLOC(sz[k]);
      if (!p[k]) child_fail("child: allocation failed\n");
      if (r % 7 == 0 && !all_zero(p[k], sz[k])) child_fail("child: calloc not zeroed\n");
      pattern_fill(p[k], sz[k], (uint32_t)k);
    }
  }
  unsigned char *g = A_MALLOC(10);
  if (!g) child_fail("child: malloc failed\n");
  pattern_fill(g, 10, 1);
  for (size_t n = 10; n < (2u << 20); n *= 3) {
    unsigned char *q = A_REALLOC(g, n * 3);
    if (!q || !pattern_ok(q, n, 1)) child_fail("child: realloc lost content\n");
    g = q;
    pattern_fill(g, n * 3, 1);
  }
  A_FREE(g);
  for (int k = 0; k < N; k++)
    A_FREE(p[k]);
}

#if !TEST_UNDER_TSAN
static void *child_thread(void *arg) {
  child_work((unsigned long long)(uintptr_t)arg);
  return arg;
}
#endif

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "fork test: timed out (deadlock?)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(2);
}

int main(void) {
  api_init();
  signal(SIGALRM, on_alarm);
  /* Under an emulator (qemu-user: tests/CMakeLists.txt gives its command
   * to the tests) every fork copies the emulator too: three times as long,
   * as CTest's limit there. */
  alarm(TEST_UNDER_TSAN ? 280 : getenv("CROSSCOMPILING_EMULATOR") != NULL ? 300 : 100);
  const unsigned long forks = test_scaled(150);
  printf("fork through the %s API: %lu forks while %d threads allocate\n", API_NAME, forks,
         BG_THREADS);
  fflush(stdout);

  pthread_t bg[BG_THREADS];
  for (int k = 0; k < BG_THREADS; k++)
    REQUIRE(pthread_create(&bg[k], NULL, background, (void *)(uintptr_t)k) == 0);
  while (atomic_load(&bg_ops) < 1000)
    sleep_ms(1);

  unsigned long long rng = 12345;
  unsigned long ok_children = 0;
  for (unsigned long i = 0; i < forks; i++) {
    size_t n = i % 10 == 0 ? (size_t)(3u << 20) : 1 + (size_t)(test_rand(&rng) % 5000);
    unsigned char *inherited = A_MALLOC(n);
    REQUIRE(inherited != NULL);
    pattern_fill(inherited, n, (uint32_t)i);
    unsigned long long child_seed = test_rand(&rng);

    pid_t pid = fork();
    if (pid == 0) {
      alarm(CHILD_TIMEOUT_MS / 1000 + 5);
      if (!pattern_ok(inherited, n, (uint32_t)i)) child_fail("child: inherited block clobbered\n");
      A_FREE(inherited);
      child_work(child_seed);
#if !TEST_UNDER_TSAN
      if (i % 4 == 0) { /* a thread in the child */
        pthread_t t;
        void *ret = NULL;
        if (pthread_create(&t, NULL, child_thread, (void *)(uintptr_t)child_seed) != 0 ||
            pthread_join(t, &ret) != 0)
          child_fail("child: thread create/join failed\n");
      }
#endif
      _exit(0);
    }
    if (!CHECK_MSG(pid > 0, "fork failed: %s", strerror(errno))) break;
    CHECK(pattern_ok(inherited, n, (uint32_t)i));
    A_FREE(inherited);

    int status = 0;
    long waited = 0;
    pid_t w;
    while ((w = waitpid(pid, &status, WNOHANG)) == 0 && waited < CHILD_TIMEOUT_MS) {
      sleep_ms(1);
      waited++;
    }
    if (w == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      CHECK_MSG(0, "child %lu did not finish within %d ms (deadlock after fork?)", i,
                CHILD_TIMEOUT_MS);
      break;
    }
    CHECK(w == pid);
    if (CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %lu: %s %d", i,
                  WIFEXITED(status) ? "exit status" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status)))
      ok_children++;
    else if (test_failures() > 10)
      break;
  }
  atomic_store(&stop, 1);
  for (int k = 0; k < BG_THREADS; k++)
    REQUIRE(pthread_join(bg[k], NULL) == 0);
  printf("%lu of %lu children ok; background ops %lu\n", ok_children, forks, atomic_load(&bg_ops));
  CHECK(ok_children == forks);
  CHECK(atomic_load(&bg_bad) == 0);
  return test_finish();
}
