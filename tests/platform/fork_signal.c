/* SPDX-License-Identifier: MIT */
/* fork from a signal handler that interrupted fork, malloc or free.
 *
 * The real-world complaint: a single-threaded server forks a worker from its
 * SIGCHLD or SIGUSR1 handler (fork is async-signal-safe), and it hangs when
 * the signal arrived while the main program was itself inside fork: the
 * handler's fork runs the allocator's fork handler again, which waits for a
 * lock the same thread already holds.
 *
 * Each run: a helper process sends SIGUSR1 to this one, each signal aimed
 * at a fork or a malloc/free of the main program (it watches a shared flag
 * and waits a random few microseconds), pacing itself on the handler's
 * progress. The handler forks; its child
 * allocates, writes and frees a block (only when the interrupted code was
 * not itself inside malloc or free: the heap may be mid-update there, and
 * malloc is not async-signal-safe in any allocator) and _exits. Meanwhile
 * the main program loops: now and then a fork of its own (child: _exit),
 * then a free and a malloc of up to 70 KB, sometimes a huge block, in a
 * table of live blocks. The process stays single-threaded, as the
 * complaint's programs are. A run goes on until enough signals have landed
 * while fork ran, so it always tests what it is for. fork_scenario.h runs this 20 times, each under
 * a watchdog.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fork_scenario.h"

/* Each run goes at least ITERATIONS rounds of its main loop, and on (for up
 * to SCENARIO_WORK_S: a busy machine delivers fewer signals) until
 * SIGNALS_IN_FORK_MIN signals have landed while fork ran: 3, or 1 under an
 * emulator (qemu-user: tests/CMakeLists.txt gives its command to the tests),
 * which delivers a signal only between blocks of emulated code while its
 * fork spends most of its time in the host's: about one in a hundred forks
 * takes one. */
#define ITERATIONS 300
#define SIGNALS_IN_FORK_MIN (getenv("CROSSCOMPILING_EMULATOR") != NULL ? 1 : 3)
#define SIGNALS_MAX 100000
#define SLOTS 256

/* Shared with the sender process: what the main program is doing, and how
 * many signals the handler has finished. */
enum { DOING_OTHER, DOING_FORK, DOING_ALLOCATION };
typedef struct shared_state {
  atomic_int doing;
  atomic_ulong handled;
} shared_state;
static shared_state *shared;
static volatile sig_atomic_t in_allocator; /* main program inside malloc or free */
static volatile sig_atomic_t handler_failed;
static volatile sig_atomic_t signals_in_fork, signals_in_allocator;

static void on_signal(int signal_number) {
  (void)signal_number;
  int errno_saved = errno;
  if (scenario_forks_in_progress > 0) signals_in_fork++;
  int may_allocate = !in_allocator;
  if (in_allocator) signals_in_allocator++;
  pid_t pid = scenario_fork();
  if (pid == 0) {
    if (may_allocate) {
      unsigned char *p = malloc(1000);
      if (p == NULL) _exit(3);
      memset(p, 0x5A, 1000);
      free(p);
    }
    _exit(0);
  }
  if (pid < 0 || scenario_wait_child(pid) != 0) handler_failed = 1;
  atomic_fetch_add(&shared->handled, 1);
  errno = errno_saved;
}

static void spin_us(unsigned us) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000 + (now.tv_nsec - start.tv_nsec) / 1000 < (long)us);
}

/* Aims each signal at a fork or an allocation of the main program: waits
 * (up to 2 ms) until it starts one, then sends after a random delay, and
 * waits for the handler to finish (up to 5 ms) before the next. */
static void __attribute__((noreturn)) sender(pid_t target) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  unsigned long long rng = (unsigned long long)target * 0x9E3779B97F4A7C15ull + 1;
  for (unsigned long sent = 0; sent < SIGNALS_MAX; sent++) {
    int aim = test_rand(&rng) % 3 == 0 ? DOING_ALLOCATION : DOING_FORK;
    for (int waited = 0; atomic_load(&shared->doing) != aim && waited < 2000; waited++)
      spin_us(1);
    spin_us((unsigned)(test_rand(&rng) % (aim == DOING_FORK ? 150 : 3)));
    unsigned long before = atomic_load(&shared->handled);
    if (kill(target, SIGUSR1) != 0) _exit(0);
    for (int waited = 0; atomic_load(&shared->handled) == before && waited < 5000; waited += 10)
      spin_us(10);
  }
  _exit(0);
}

static int run_once(void) {
  shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return 1;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, NULL);

  pid_t target = getpid();
  pid_t sender_pid = fork(); /* before any signal: an ordinary fork */
  if (sender_pid == 0) sender(target);
  if (sender_pid < 0) return 1;

  static void *blocks[SLOTS];
  unsigned long long rng = 42;
  unsigned forks = 0, children_ok = 0;
  double started = child_now_s();
  for (unsigned i = 0; child_now_s() - started < SCENARIO_WORK_S; i++) {
    if (i >= ITERATIONS && signals_in_fork >= SIGNALS_IN_FORK_MIN) break;
    if (test_rand(&rng) % 4 == 0) {
      atomic_store(&shared->doing, DOING_FORK);
      pid_t pid = scenario_fork();
      if (pid == 0) _exit(0);
      atomic_store(&shared->doing, DOING_OTHER);
      if (pid > 0) {
        forks++;
        if (scenario_wait_child(pid) == 0) children_ok++;
      }
    }
    unsigned slot = (unsigned)(test_rand(&rng) % SLOTS);
    size_t size = test_rand(&rng) % 16 == 0 ? (size_t)(1u << 20) + (size_t)(test_rand(&rng) % 70000)
                                            : (size_t)(test_rand(&rng) % 70000);
    in_allocator = 1;
    atomic_store(&shared->doing, DOING_ALLOCATION);
    free(blocks[slot]);
    blocks[slot] = malloc(size);
    atomic_store(&shared->doing, DOING_OTHER);
    in_allocator = 0;
    if (blocks[slot] == NULL) {
      fprintf(stderr, "FAIL: malloc(%zu) returned NULL\n", size);
      return 1;
    }
    memset(blocks[slot], (int)i, size < 64 ? size : 64);
  }
  kill(sender_pid, SIGKILL);
  waitpid(sender_pid, NULL, 0);
  signal(SIGUSR1, SIG_IGN);
  for (unsigned slot = 0; slot < SLOTS; slot++)
    free(blocks[slot]);

  printf("%u forks (%u children ok); %lu signals handled: %d while fork ran, %d inside malloc or "
         "free\n",
         forks, children_ok, atomic_load(&shared->handled), (int)signals_in_fork,
         (int)signals_in_allocator);
  int ok = 1;
  if (children_ok != forks) {
    fprintf(stderr, "FAIL: %u children of fork failed\n", forks - children_ok);
    ok = 0;
  }
  if (handler_failed) {
    fprintf(stderr, "FAIL: a fork in the signal handler failed, or its child did\n");
    ok = 0;
  }
  if (signals_in_fork < SIGNALS_IN_FORK_MIN) {
    fprintf(stderr,
            "FAIL: only %d signals arrived while fork ran (want %d): the run did not test what it "
            "is for\n",
            (int)signals_in_fork, SIGNALS_IN_FORK_MIN);
    ok = 0;
  }
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  return scenario_main(argc, argv, "fork in a signal handler that interrupted fork or malloc",
                       run_once);
}
