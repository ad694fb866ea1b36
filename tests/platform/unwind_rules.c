/* SPDX-License-Identifier: MIT */
/* The cached unwind rules (src/platform/linux_unwind.c) against libgcc's
 * unwinder: from frames of several shapes built without frame pointers (a
 * plain recursion, a frame of 40 KiB, a frame sized at run time, which keeps
 * its CFA in rbp, a routine that saves rbp as an ordinary register), and on
 * a thread of its own, both must give the same return addresses, frame for
 * frame, the first time (rules worked out) and the second (rules from the
 * table). Skipped (77) where the rules are not used: CPUs other than
 * x86-64, C libraries other than glibc. */
#include <alloca.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GLIBC__)
#include <unwind.h>

int platform_backtrace_cached(void **frames, int max);
int platform_backtrace(void **frames, int max);

#define FRAMES_MAX 64
#define NOINLINE __attribute__((noinline))

typedef struct collected {
  void *ips[FRAMES_MAX];
  int count;
} collected;

static _Unwind_Reason_Code collect(struct _Unwind_Context *context, void *arg) {
  collected *c = arg;
  void *ip = (void *)_Unwind_GetIP(context);
  if (ip == NULL) return _URC_END_OF_STACK;
  c->ips[c->count++] = ip;
  return c->count == FRAMES_MAX ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static int failures;
static volatile int sink;

/* frames[0] and ips[0] are two calls in this function; from 1 on both are
 * the same frames. */
static NOINLINE int compare(const char *what, int depth) {
  int worst = 0;
  for (int round = 0; round < 2; round++) {
    void *frames[FRAMES_MAX];
    collected libgcc = {.count = 0};
    int count = platform_backtrace_cached(frames, FRAMES_MAX);
    _Unwind_Backtrace(collect, &libgcc);
    if (count < 0) {
      printf("FAIL %s depth %d round %d: the cached rules gave up on this stack\n", what, depth,
             round);
      failures++;
      return 1;
    }
    bool same = count == libgcc.count && count > depth;
    for (int i = 1; same && i < count; i++)
      same = frames[i] == libgcc.ips[i];
    void *via_contract[FRAMES_MAX];
    int contract = platform_backtrace(via_contract, FRAMES_MAX);
    same = same && contract == count &&
           memcmp(via_contract + 1, frames + 1, (size_t)(count - 1) * sizeof(void *)) == 0;
    if (!same) {
      printf("FAIL %s depth %d round %d: %d frames cached, %d from libgcc, %d through "
             "platform_backtrace\n",
             what, depth, round, count, libgcc.count, contract);
      for (int i = 0; i < FRAMES_MAX && (i < count || i < libgcc.count); i++)
        printf("  #%d %p %p\n", i, i < count ? frames[i] : NULL,
               i < libgcc.count ? libgcc.ips[i] : NULL);
      failures++;
      worst = 1;
      break;
    }
    if (round == 1) printf("ok %s depth %d: %d frames, the same as libgcc's\n", what, depth, count);
  }
  return worst;
}

static NOINLINE int plain(const char *what, int depth, int left) {
  if (left == 0) return compare(what, depth);
  int r = plain(what, depth, left - 1);
  sink = r;
  return r + (left & 1 ? 0 : sink - r);
}

static NOINLINE int big_frame(int depth, int left) {
  volatile char buffer[40 * 1024];
  buffer[left] = (char)left;
  int r = left == 0 ? compare("40 KiB frames", depth) : big_frame(depth, left - 1);
  return r + buffer[left] - (char)left;
}

static NOINLINE int sized_at_run_time(int depth, int left) {
  volatile char *buffer = alloca(64 + (size_t)left * 48);
  buffer[0] = (char)left;
  int r =
      left == 0 ? compare("alloca frames (CFA in rbp)", depth) : sized_at_run_time(depth, left - 1);
  return r + buffer[0] - (char)left;
}

/* Enough live values across the call that rbp is used as a register. */
static NOINLINE int many_registers(int depth, int left, unsigned a, unsigned b, unsigned c,
                                   unsigned d, unsigned e, unsigned f) {
  if (left == 0) return compare("rbp as a register", depth) + (a ^ b ^ c ^ d ^ e ^ f) * 0;
  int r = many_registers(depth, left - 1, b + 1, c * 3, d ^ a, e - f, f + a, a * b);
  sink = a + b + c + d + e + f;
  return r + (a + b + c + d + e + f - sink);
}

/* Frames of the three kinds in turn; each call is followed by a store, so
 * none becomes a jump. */
static NOINLINE int mixed(int depth, int left) {
  if (left == 0) return compare("mixed frames", depth);
  int r;
  if (left % 3 == 0) {
    volatile char buffer[8 * 1024];
    buffer[left] = 1;
    r = mixed(depth, left - 1) + buffer[left] - 1;
  } else if (left % 3 == 1) {
    volatile char *b = alloca((size_t)left * 16);
    b[0] = 1;
    r = mixed(depth, left - 1) + b[0] - 1;
  } else {
    r = mixed(depth, left - 1);
  }
  sink = r;
  return r;
}

static void run_all(void) {
  static const int depths[] = {0, 1, 3, 7, 20};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    int d = depths[i];
    plain("plain frames", d, d);
    big_frame(d, d);
    sized_at_run_time(d, d);
    many_registers(d, d, 1, 2, 3, 4, 5, 6);
    mixed(d, d);
  }
}

static void *thread_main(void *arg) {
  (void)arg;
  plain("plain frames on a thread", 5, 5);
  sized_at_run_time(4, 4);
  return NULL;
}

int main(void) {
  void *probe[4];
  if (platform_backtrace_cached(probe, 4) < 0) {
    printf("SKIPPED: no cached unwind rules here (x86-64 with glibc only)\n");
    return 77;
  }
  run_all();
  pthread_t thread;
  if (pthread_create(&thread, NULL, thread_main, NULL) != 0 || pthread_join(thread, NULL) != 0) {
    printf("FAIL: no thread\n");
    return 1;
  }
  printf(failures ? "%d comparisons failed\n" : "all stacks the same as libgcc's\n", failures);
  return failures ? 1 : 0;
}
#else
/* Elsewhere libgcc's unwinder may not even link statically (musl's lacks
 * _dl_find_object), and there are no cached rules to compare. */
int main(void) {
  printf("SKIPPED: no cached unwind rules here (x86-64 with glibc only)\n");
  return 77;
}
#endif
