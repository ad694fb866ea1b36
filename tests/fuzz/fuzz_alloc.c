/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: random programs of allocation calls on two threads,
 * checked against a shadow model of every live block.
 *
 * The input is a program. Its first byte holds flags; then each operation
 * takes 5 bytes: an opcode, a slot (one of SLOTS), a 16-bit size code and a
 * parameter byte (an alignment, a count, a variant). Each slot belongs to one of two
 * threads, A (the fuzzer's own) and B (a worker), and the slot's owner runs
 * every operation on it, so the threads never race on the model. A "give"
 * operation hands a slot to the other thread at the end of the phase, which
 * is how a block allocated on one thread comes to be freed or realloc'd on
 * the other (a remote free). Phases end at a "phase" operation; within one,
 * A and B run their operations at the same time (flag bit 0), or A's then
 * B's, which makes the run repeatable. "restart" ends thread B at the phase
 * end and starts a new one, which adopts the old one's heap.
 *
 * Checked after every call, against the model:
 *   - every block is 16-aligned (brisk's guarantee) and aligned as asked;
 *   - its usable size is at least the size asked for, and stays the same;
 *   - brisk owns it, and it overlaps no other live block (usable sizes);
 *   - its contents are what was written: a pattern from the slot's seed,
 *     over the first 4 KiB, every 16381st byte after, the last 64 bytes and
 *     the last usable byte; checked before each free and realloc, and over
 *     the kept prefix after a realloc;
 *   - calloc's memory reads zero; realloc keeps the prefix, realloc(p, 0)
 *     frees and returns NULL; a failed realloc leaves the block intact;
 *   - impossible requests fail with NULL and ENOMEM (posix_memalign: EINVAL
 *     for a bad alignment), and allocate nothing;
 *   - brisk_heap_check() finds each thread's heap consistent;
 *   - at the end of the program, with every block freed and brisk_collect()
 *     called on both threads, brisk maps nothing any more (no leak).
 * A failed check prints what failed and aborts, so libFuzzer keeps the input.
 *
 * Sizes run from 0 to about 3 MiB (huge blocks above 512 KiB included);
 * SLOTS bounds the live memory to a few hundred megabytes.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brisk.h"

#define SLOTS 64
#define OP_BYTES 5
#define FULL_CHECK_BYTES 4096 /* every byte of a block's start is checked */
#define STRIDE 16381          /* then one byte in this many (every 4th OS page) */
#define TAIL_BYTES 64         /* and the block's last bytes */
#define ZERO_CHECK_BYTES (64 * 1024)
#define VALLOC_PARAMETER 240 /* memalign's parameter from here on: valloc, pvalloc */
#define OS_PAGE 4096

enum { THREAD_A, THREAD_B };

typedef enum opcode {
  OP_MALLOC,
  OP_MALLOC_2,
  OP_CALLOC,
  OP_REALLOC,
  OP_REALLOC_2,
  OP_ALIGNED_ALLOC,
  OP_POSIX_MEMALIGN,
  OP_MEMALIGN,
  OP_FREE,
  OP_FREE_SIZED,
  OP_USABLE_SIZE,
  OP_GIVE,
  OP_PHASE,
  OP_HEAP_CHECK,
  OP_RESTART_B,
  OP_IMPOSSIBLE,
  OP_COUNT
} opcode;

typedef struct op {
  uint8_t code, slot, parameter;
  uint16_t size_code;
} op;

typedef struct slot {
  uint8_t *p; /* NULL: empty */
  size_t size, usable, alignment;
  uint32_t seed;
  int owner;
} slot;

static slot slots[SLOTS];
/* Guards p, size and usable of every slot against the other thread's
 * overlap scan; the owner reads its own slots without it. */
static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_seed = 1;

/* ---- failure ------------------------------------------------------------------- */

static void fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("fuzz_alloc: CHECK FAILED: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  abort();
}

/* ---- decoding ---------------------------------------------------------------------- */

/* Sizes from 0 to ~3 MiB, weighted towards small ones (1 in 16 is huge:
 * each costs page faults, which would dominate the run). */
static size_t decode_size(uint16_t code) {
  size_t low = code & 8191;
  switch (code >> 13) {
  case 0:
  case 1:
    return code & 127;
  case 2:
    return code & 1023;
  case 3:
    return low;
  case 4:
    return low * 16; /* up to 128 KiB: medium pages, then the arena */
  case 5:
    return low * 64; /* up to 512 KiB: the arena */
  case 6:
    return code & 255;
  default:
    if (low & 4096) return code & 511;
    return 512 * 1024 - 64 + (low & 4095) * 640; /* huge: up to ~3 MiB */
  }
}

/* A power of two from 1 to 4 MiB. */
static size_t decode_alignment(uint8_t parameter) {
  return (size_t)1 << (parameter % 23);
}

/* ---- contents ------------------------------------------------------------------------ */

static inline uint8_t pattern(uint32_t seed, size_t i) {
  uint32_t x = seed * 0x9E3779B1u ^ (uint32_t)i * 0x85EBCA6Bu ^ (uint32_t)(i >> 16);
  return (uint8_t)(x >> 24 ^ x);
}

/* The byte after i that carries the pattern in a block of `written` bytes:
 * every byte of the first FULL_CHECK_BYTES and of the last TAIL_BYTES, and
 * every STRIDE-th between. The set of such bytes below n is the same for
 * every written >= n + TAIL_BYTES, so a realloc's kept prefix can be checked
 * against the old block's filling. */
static inline size_t next_checked(size_t i, size_t written) {
  size_t n = i + 1;
  if (n < FULL_CHECK_BYTES || n % STRIDE == 0 || n + TAIL_BYTES >= written) return n;
  size_t stride = n + STRIDE - n % STRIDE;
  size_t tail = written - TAIL_BYTES;
  return stride < tail ? stride : tail;
}

static void fill(slot *s) {
  for (size_t i = 0; i < s->size; i = next_checked(i, s->size))
    s->p[i] = pattern(s->seed, i);
  if (s->usable > s->size) s->p[s->usable - 1] = pattern(s->seed, s->usable - 1);
}

/* Checks the first n bytes of a block that had `written` bytes filled. */
static void verify_prefix(const slot *s, const uint8_t *p, size_t n, size_t written,
                          const char *when) {
  for (size_t i = 0; i < n; i = next_checked(i, written))
    if (p[i] != pattern(s->seed, i))
      fail("%s: byte %zu of the %zu-byte block %p is %#x, want %#x (block overwritten)", when, i,
           s->size, (void *)p, p[i], pattern(s->seed, i));
}

static void verify(const slot *s, const char *when) {
  verify_prefix(s, s->p, s->size, s->size, when);
  if (s->usable > s->size && s->p[s->usable - 1] != pattern(s->seed, s->usable - 1))
    fail("%s: the last usable byte (%zu) of block %p was overwritten", when, s->usable - 1,
         (void *)s->p);
}

static void verify_zero(const uint8_t *p, size_t size) {
  for (size_t i = 0; i < size; i += i < ZERO_CHECK_BYTES ? 1 : STRIDE)
    if (p[i] != 0) fail("calloc(%zu) = %p: byte %zu is %#x, not zero", size, (void *)p, i, p[i]);
}

/* ---- the model ------------------------------------------------------------------------- */

/* Fails if [p, p + usable) overlaps the block of another slot. */
static void overlap_scan(int index, const uint8_t *p, size_t usable, const char *what) {
  for (int j = 0; j < SLOTS; j++) {
    const slot *o = &slots[j];
    if (j == index || o->p == NULL) continue;
    if (p < o->p + o->usable && o->p < p + usable)
      fail("%s = %p (usable %zu) overlaps the live block %p (usable %zu, slot %d)", what,
           (const void *)p, usable, (void *)o->p, o->usable, j);
  }
}

/* Takes a new block into slot index (empty): checks it and fills it with
 * the pattern of seed (0: a new one). */
static void adopt(int index, uint8_t *p, size_t size, size_t alignment, uint32_t seed,
                  const char *call) {
  slot *s = &slots[index];
  char what[96];
  if (alignment != 0)
    snprintf(what, sizeof what, "%s(%zu, %zu)", call, alignment, size);
  else
    snprintf(what, sizeof what, "%s(%zu)", call, size);
  if (p == NULL) fail("%s returned NULL (errno %d)", what, errno);
  size_t want = alignment > 16 ? alignment : 16;
  if ((uintptr_t)p % want != 0) fail("%s = %p: not aligned to %zu", what, (void *)p, want);
  size_t usable = brisk_usable_size(p);
  if (usable < size) fail("%s = %p: usable size %zu", what, (void *)p, usable);
  if (!brisk_owns(p))
    fail("%s = %p (usable size %zu): brisk_owns says it is not brisk's", what, (void *)p, usable);
  pthread_mutex_lock(&model_lock);
  overlap_scan(index, p, usable, what);
  s->p = p;
  s->size = size;
  s->usable = usable;
  pthread_mutex_unlock(&model_lock);
  s->alignment = alignment;
  s->seed = seed != 0 ? seed : __atomic_fetch_add(&next_seed, 1, __ATOMIC_RELAXED);
  fill(s);
}

/* Empties slot index before its block is freed. */
static uint8_t *release(int index) {
  slot *s = &slots[index];
  uint8_t *p = s->p;
  pthread_mutex_lock(&model_lock);
  s->p = NULL;
  pthread_mutex_unlock(&model_lock);
  return p;
}

static void do_free(int index, int sized) {
  slot *s = &slots[index];
  if (s->p == NULL) return;
  verify(s, "before free");
  size_t size = s->size;
  uint8_t *p = release(index);
  if (sized)
    brisk_free_sized(p, size);
  else
    brisk_free(p);
}

static void do_realloc(int index, size_t size) {
  slot *s = &slots[index];
  if (s->p == NULL) {
    adopt(index, brisk_realloc(NULL, size), size, 0, 0, "realloc(NULL)");
    return;
  }
  verify(s, "before realloc");
  slot old = *s;
  uint8_t *p = release(index);
  uint8_t *q = brisk_realloc(p, size);
  if (size == 0) {
    if (q != NULL) fail("realloc(%p, 0) = %p: want NULL (the block freed)", (void *)p, (void *)q);
    return;
  }
  if (q == NULL) fail("realloc(%p, %zu) returned NULL (errno %d)", (void *)p, size, errno);
  size_t kept = old.size < size ? old.size : size;
  verify_prefix(&old, q, kept, old.size, "after realloc (kept prefix)");
  adopt(index, q, size, 0, old.seed, "realloc"); /* the kept prefix keeps its pattern */
}

static void expect_failure(void *p, int want_errno, const char *call) {
  if (p != NULL) fail("%s = %p: want NULL", call, p);
  if (errno != want_errno) fail("%s: errno %d, want %d", call, errno, want_errno);
}

/* Requests that must fail, and a realloc that fails and keeps its block. */
static void do_impossible(int index, uint8_t parameter) {
  void *p = NULL;
  errno = 0;
  switch (parameter % 6) {
  case 0:
    expect_failure(brisk_malloc(SIZE_MAX - parameter), ENOMEM, "malloc(SIZE_MAX)");
    break;
  case 1:
    expect_failure(brisk_calloc(SIZE_MAX / 2, 3), ENOMEM, "calloc(SIZE_MAX / 2, 3)");
    break;
  case 2:
    expect_failure(brisk_aligned_alloc(64, PTRDIFF_MAX), ENOMEM, "aligned_alloc(64, PTRDIFF_MAX)");
    break;
  case 3:
    if (brisk_posix_memalign(&p, 24, 100) != EINVAL || p != NULL)
      fail("posix_memalign(24, 100): want EINVAL and *result untouched");
    break;
  case 4:
    expect_failure(brisk_reallocarray(NULL, SIZE_MAX, 2), ENOMEM,
                   "reallocarray(NULL, SIZE_MAX, 2)");
    break;
  default:
    if (slots[index].p == NULL) break;
    expect_failure(brisk_realloc(slots[index].p, SIZE_MAX - 4096), ENOMEM, "realloc(p, SIZE_MAX)");
    verify(&slots[index], "after a failed realloc");
  }
}

static void run_op(const op *o) {
  int index = o->slot;
  slot *s = &slots[index];
  size_t size = decode_size(o->size_code);
  switch ((opcode)o->code) {
  case OP_MALLOC:
  case OP_MALLOC_2:
    do_free(index, 0);
    adopt(index, brisk_malloc(size), size, 0, 0, "malloc");
    break;
  case OP_CALLOC: {
    do_free(index, 0);
    size_t count = (size_t)(o->parameter % 8) + 1;
    uint8_t *p = brisk_calloc(count, size / count);
    if (p != NULL) verify_zero(p, count * (size / count));
    adopt(index, p, count * (size / count), 0, 0, "calloc");
    break;
  }
  case OP_REALLOC:
  case OP_REALLOC_2:
    do_realloc(index, o->parameter % 16 == 0 ? 0 : size);
    break;
  case OP_ALIGNED_ALLOC: {
    do_free(index, 0);
    size_t alignment = decode_alignment(o->parameter);
    adopt(index, brisk_aligned_alloc(alignment, size), size, alignment, 0, "aligned_alloc");
    break;
  }
  case OP_POSIX_MEMALIGN: {
    do_free(index, 0);
    size_t alignment = decode_alignment(o->parameter);
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    int error = brisk_posix_memalign(&p, alignment, size);
    if (error != 0) fail("posix_memalign(%zu, %zu) returned %d", alignment, size, error);
    adopt(index, p, size, alignment, 0, "posix_memalign");
    break;
  }
  case OP_MEMALIGN: {
    do_free(index, 0);
    if (o->parameter >= VALLOC_PARAMETER) { /* page-aligned: valloc, pvalloc */
      int rounded = o->parameter & 1;
      adopt(index, rounded ? brisk_pvalloc(size) : brisk_valloc(size), size, OS_PAGE, 0,
            rounded ? "pvalloc" : "valloc");
      break;
    }
    size_t alignment = decode_alignment(o->parameter);
    adopt(index, brisk_memalign(alignment, size), size, alignment, 0, "memalign");
    break;
  }
  case OP_FREE:
    do_free(index, 0);
    break;
  case OP_FREE_SIZED:
    do_free(index, 1);
    break;
  case OP_USABLE_SIZE:
    if (s->p != NULL && brisk_usable_size(s->p) != s->usable)
      fail("usable size of %p changed from %zu to %zu", (void *)s->p, s->usable,
           brisk_usable_size(s->p));
    if (s->p != NULL && !brisk_owns(s->p)) fail("brisk_owns(%p) turned false", (void *)s->p);
    break;
  case OP_HEAP_CHECK:
    if (brisk_heap_check() != 0) fail("brisk_heap_check() found problems (listed above)");
    if (o->parameter % 4 == 0) brisk_collect();
    break;
  case OP_IMPOSSIBLE:
    do_impossible(index, o->parameter);
    break;
  default:
    break; /* give, phase, restart: handled when the phase is built */
  }
}

/* ---- threads and phases ------------------------------------------------------------- */

#define PHASE_MAX 4096
typedef struct phase {
  op ops[2][PHASE_MAX];
  int count[2];
} phase;
static phase current;

static sem_t worker_go, worker_done;
static pthread_t worker;
static int worker_quit;

static void run_list(int thread) {
  for (int i = 0; i < current.count[thread]; i++)
    run_op(&current.ops[thread][i]);
}

static void *worker_main(void *arg) {
  (void)arg;
  for (;;) {
    while (sem_wait(&worker_go) != 0) {
    }
    if (worker_quit) return NULL;
    run_list(THREAD_B);
    sem_post(&worker_done);
  }
}

static void worker_start(void) {
  worker_quit = 0;
  if (pthread_create(&worker, NULL, worker_main, NULL) != 0) fail("pthread_create");
}

static void worker_stop(void) {
  worker_quit = 1;
  sem_post(&worker_go);
  pthread_join(worker, NULL);
}

static void run_phase(int concurrent) {
  if (concurrent) {
    sem_post(&worker_go);
    run_list(THREAD_A);
    while (sem_wait(&worker_done) != 0) {
    }
  } else {
    run_list(THREAD_A);
    sem_post(&worker_go);
    while (sem_wait(&worker_done) != 0) {
    }
  }
  current.count[THREAD_A] = current.count[THREAD_B] = 0;
}

/* With every block freed and brisk_collect() run by both threads, the heap
 * memory is back with the OS: a byte still mapped is a leak (or a counter
 * that lost track of a mapping, which hides one). */
static void check_nothing_mapped(void) {
  brisk_memory_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  brisk_memory_info_get(&info);
  if (info.mapped != 0 || info.committed != 0 || info.large_in_use != 0)
    fail("leak: %zu bytes still mapped (%zu committed, %zu in huge blocks) after every block "
         "was freed and both threads called brisk_collect()",
         info.mapped, info.committed, info.large_in_use);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  sem_init(&worker_go, 0, 0);
  sem_init(&worker_done, 0, 0);
  for (int i = 0; i < SLOTS; i++)
    slots[i].owner = i % 2;
  worker_start();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int concurrent = data[0] & 1;
  int gives[SLOTS] = {0};
  int restart = 0;
  for (size_t at = 1; at < size; at += OP_BYTES) {
    uint8_t b[OP_BYTES] = {0};
    memcpy(b, data + at, size - at < OP_BYTES ? size - at : OP_BYTES);
    op o = {.code = (uint8_t)(b[0] % OP_COUNT),
            .slot = (uint8_t)(b[1] % SLOTS),
            .size_code = (uint16_t)(b[2] | b[3] << 8),
            .parameter = b[4]};
    int end_phase = 0;
    if (o.code == OP_GIVE)
      gives[o.slot] = 1;
    else if (o.code == OP_RESTART_B || o.code == OP_PHASE) {
      restart |= o.code == OP_RESTART_B;
      end_phase = 1;
    } else {
      int thread = slots[o.slot].owner;
      current.ops[thread][current.count[thread]++] = o;
      if (current.count[thread] == PHASE_MAX) end_phase = 1;
    }
    if (!end_phase && at + OP_BYTES < size) continue;
    run_phase(concurrent);
    for (int i = 0; i < SLOTS; i++) {
      if (gives[i]) slots[i].owner ^= 1;
      gives[i] = 0;
    }
    if (restart) {
      worker_stop();
      worker_start();
      restart = 0;
    }
  }
  /* Each thread frees its own blocks; then, one after the other, both heaps
   * must check out and give everything back to the OS. */
  for (int i = 0; i < SLOTS; i++) {
    op o = {.code = OP_FREE, .slot = (uint8_t)i};
    current.ops[slots[i].owner][current.count[slots[i].owner]++] = o;
  }
  run_phase(concurrent);
  op check_and_collect = {.code = OP_HEAP_CHECK, .parameter = 0};
  current.ops[THREAD_B][current.count[THREAD_B]++] = check_and_collect;
  run_phase(0);
  run_op(&check_and_collect);
  check_nothing_mapped();
  return 0;
}
