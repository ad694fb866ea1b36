/* SPDX-License-Identifier: MIT */
/* Stack capture with the cached unwind rules (src/platform/linux_unwind.c),
 * from frames of several shapes built without frame pointers (a plain
 * recursion, a frame of 40 KiB, a frame sized at run time, which keeps its
 * CFA in the frame pointer, a routine that uses the frame pointer as an
 * ordinary register, one that realigns its stack), on the main thread and on one of its own, the
 * first time (rules worked out) and the second (rules from the table):
 * - the frames are the known call chain: frames[0] inside compare(), then
 *   the return address each function of the chain saw on entry
 *   (__builtin_return_address), innermost first, up to run_all();
 * - platform_backtrace gives the same frames;
 * - with glibc, libgcc's unwinder gives the same return addresses, frame
 *   for frame, to the end of the stack (musl has no unwinder to compare:
 *   gcc's, built for glibc, does not link there).
 * Skipped (77) where the rules are not used (glibc before 2.35). */
#include <alloca.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <unwind.h>
#endif

int platform_backtrace_cached(void **frames, int max);
int platform_backtrace(void **frames, int max);

#define FRAMES_MAX 64
#define NOINLINE __attribute__((noinline))

/* The chain: chain[i] is the return address of the function i calls deep
 * below the one run_all() called (chain[0]: that one's, into run_all). A
 * function pops its entry after its call returns, so no call in the chain
 * becomes a jump. */
static _Thread_local void *chain[FRAMES_MAX];
static _Thread_local int chain_depth;
#define CHAIN_ENTER() (chain[chain_depth++] = __builtin_return_address(0))
#define CHAIN_LEAVE() (chain_depth--)

#ifdef __GLIBC__
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
#endif

static int failures;
static volatile int sink;

static void show(const char *what, int depth, int round, const char *why, void *const *frames,
                 int count) {
  printf("FAIL %s depth %d round %d: %s\n", what, depth, round, why);
  for (int i = 0; i < FRAMES_MAX && (i < count || i <= chain_depth); i++)
    printf("  #%d %p %p\n", i, i < count ? frames[i] : NULL,
           i == 0             ? (void *)NULL
           : i <= chain_depth ? chain[chain_depth - i]
                              : NULL);
}

/* Whether the frames are the chain: frames[0] inside compare() (which
 * spans less than 4 KiB), frames[1 .. chain_depth] the chain innermost
 * first. */
static bool is_chain(void *const *frames, int count, uintptr_t compare_start) {
  if (count <= chain_depth) return false;
  uintptr_t first = (uintptr_t)frames[0];
  if (first <= compare_start || first - compare_start >= 4096) return false;
  for (int i = 1; i <= chain_depth; i++)
    if (frames[i] != chain[chain_depth - i]) return false;
  return true;
}

static NOINLINE int compare(const char *what, int depth) {
  CHAIN_ENTER();
  int worst = 0;
  for (int round = 0; round < 2 && worst == 0; round++) {
    void *frames[FRAMES_MAX];
    int count = platform_backtrace_cached(frames, FRAMES_MAX);
    if (count < 0) {
      show(what, depth, round, "the cached rules gave up on this stack", frames, 0);
      worst = 1;
      break;
    }
    if (count <= depth || !is_chain(frames, count, (uintptr_t)compare)) {
      show(what, depth, round, "not the call chain (left: captured, right: expected)", frames,
           count);
      worst = 1;
      break;
    }
#ifdef __GLIBC__
    /* ips[0] and frames[0] are two calls in this function; from 1 on both
     * are the same frames. */
    collected libgcc = {.count = 0};
    _Unwind_Backtrace(collect, &libgcc);
    bool same = count == libgcc.count;
    for (int i = 1; same && i < count; i++)
      same = frames[i] == libgcc.ips[i];
    if (!same) {
      printf("FAIL %s depth %d round %d: %d frames cached, %d from libgcc\n", what, depth, round,
             count, libgcc.count);
      for (int i = 0; i < FRAMES_MAX && (i < count || i < libgcc.count); i++)
        printf("  #%d %p %p\n", i, i < count ? frames[i] : NULL,
               i < libgcc.count ? libgcc.ips[i] : NULL);
      worst = 1;
      break;
    }
#endif
    void *via_contract[FRAMES_MAX];
    int contract = platform_backtrace(via_contract, FRAMES_MAX);
    if (contract != count ||
        memcmp(via_contract + 1, frames + 1, (size_t)(count - 1) * sizeof(void *)) != 0) {
      show(what, depth, round, "platform_backtrace gave other frames (left)", via_contract,
           contract);
      worst = 1;
      break;
    }
    if (round == 1)
      printf("ok %s depth %d: %d frames, the call chain's %d first%s\n", what, depth, count,
             chain_depth + 1,
#ifdef __GLIBC__
             ", all as libgcc's"
#else
             ""
#endif
      );
  }
  failures += worst;
  CHAIN_LEAVE();
  return worst;
}

static NOINLINE int plain(const char *what, int depth, int left) {
  CHAIN_ENTER();
  int r = left == 0 ? compare(what, depth) : plain(what, depth, left - 1);
  sink = r;
  r += left & 1 ? 0 : sink - r;
  CHAIN_LEAVE();
  return r;
}

static NOINLINE int big_frame(int depth, int left) {
  CHAIN_ENTER();
  volatile char buffer[40 * 1024];
  buffer[left] = (char)left;
  int r = left == 0 ? compare("40 KiB frames", depth) : big_frame(depth, left - 1);
  r += buffer[left] - (char)left;
  CHAIN_LEAVE();
  return r;
}

static NOINLINE int sized_at_run_time(int depth, int left) {
  CHAIN_ENTER();
  volatile char *buffer = alloca(64 + (size_t)left * 48);
  buffer[0] = (char)left;
  int r = left == 0 ? compare("alloca frames (CFA in the frame pointer)", depth)
                    : sized_at_run_time(depth, left - 1);
  r += buffer[0] - (char)left;
  CHAIN_LEAVE();
  return r;
}

/* Over-aligned locals and a frame sized at run time: on x86 the routine
 * realigns its stack on entry, its CFA a word it saved below the frame
 * pointer (what i386's main does too). */
static NOINLINE int realigned(int depth, int left) {
  CHAIN_ENTER();
  volatile char aligned[100] __attribute__((aligned(64)));
  volatile char *sized = alloca(16 + (size_t)left);
  aligned[left] = 1;
  sized[0] = 1;
  int r = left == 0 ? compare("realigned frames", depth) : realigned(depth, left - 1);
  r += aligned[left] - 1 + sized[0] - 1;
  CHAIN_LEAVE();
  return r;
}

/* Enough live values across the call that the frame pointer is used as a
 * register. */
static NOINLINE int many_registers(int depth, int left, unsigned a, unsigned b, unsigned c,
                                   unsigned d, unsigned e, unsigned f) {
  CHAIN_ENTER();
  int r;
  if (left == 0)
    r = compare("frame pointer as a register", depth) + (int)((a ^ b ^ c ^ d ^ e ^ f) * 0);
  else
    r = many_registers(depth, left - 1, b + 1, c * 3, d ^ a, e - f, f + a, a * b);
  sink = (int)(a + b + c + d + e + f);
  r += (int)(a + b + c + d + e + f - (unsigned)sink);
  CHAIN_LEAVE();
  return r;
}

/* Frames of the three kinds in turn. */
static NOINLINE int mixed(int depth, int left) {
  CHAIN_ENTER();
  int r;
  if (left == 0) {
    r = compare("mixed frames", depth);
  } else if (left % 3 == 0) {
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
  CHAIN_LEAVE();
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
    realigned(d, d);
    mixed(d, d);
  }
}

static void *thread_main(void *arg) {
  (void)arg;
  plain("plain frames on a thread", 5, 5);
  sized_at_run_time(4, 4);
  big_frame(2, 2);
  realigned(3, 3);
  return NULL;
}

int main(void) {
  void *probe[4];
  if (platform_backtrace_cached(probe, 4) < 0) {
    printf("SKIPPED: no cached unwind rules here (glibc before 2.35, or a module without "
           ".eh_frame_hdr)\n");
    return 77;
  }
  run_all();
  pthread_t thread;
  if (pthread_create(&thread, NULL, thread_main, NULL) != 0 || pthread_join(thread, NULL) != 0) {
    printf("FAIL: no thread\n");
    return 1;
  }
  printf(failures ? "%d stacks failed\n" : "every stack the call chain\n", failures);
  return failures ? 1 : 0;
}
