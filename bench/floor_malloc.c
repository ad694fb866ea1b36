/* SPDX-License-Identifier: MIT */
/* The least a preloaded malloc can do, to measure allocators against: every
 * block of up to 128 bytes comes from the calling thread's own free list of
 * 128-byte slots, and free pushes a slot back onto the list of whichever
 * thread frees it. No size classes, no checks, no memory ever returned;
 * everything else goes to glibc. It pays only what any malloc in a shared
 * library pays: the calls through the PLT, the thread-local list head in
 * memory instead of a register, and the test that tells its blocks from
 * glibc's.
 *
 * `churn` runs both a hand-written pool inlined into its loop (`--pool`) and
 * malloc; preloading this library gives the third figure between them, the
 * floor no general allocator can go below. `brisk bench` shows it as churn's
 * `floor` column (docs/BENCHMARKS.md, "How close a preloaded malloc can come
 * to the pool"). Only for that measurement: it
 * never frees its slots, a block of its own passed to realloc keeps at most
 * 128 bytes, and malloc_usable_size and the aligned allocations are the C
 * library's, which must not be given its blocks.
 *
 * The C library's own functions: glibc exports them as __libc_malloc & co.
 * musl exports no such names (its own calls into its allocator are internal),
 * but its dlsym knows RTLD_NEXT and allocates nothing when the symbol is
 * found, so the next definition after this library's, musl's, is looked up
 * once, at start-up. musl refuses the aligned allocations (ENOMEM) in a
 * program whose malloc is replaced and whose aligned_alloc is not, so there
 * this library forwards aligned_alloc too, which posix_memalign and memalign
 * call. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#ifdef __GLIBC__
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
static inline void *c_malloc(size_t size) {
  return __libc_malloc(size);
}
static inline void *c_calloc(size_t count, size_t size) {
  return __libc_calloc(count, size);
}
static inline void *c_realloc(void *p, size_t size) {
  return __libc_realloc(p, size);
}
static inline void c_free(void *p) {
  __libc_free(p);
}
#else
#include <dlfcn.h>
#include <stdlib.h>

static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

static __attribute__((noinline)) void find_next(void) {
  next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  next_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  if (!next_malloc || !next_calloc || !next_realloc || !next_free || !next_aligned_alloc) abort();
}

static void *c_malloc(size_t size) {
  if (__builtin_expect(next_malloc == NULL, 0)) find_next();
  return next_malloc(size);
}
static void *c_calloc(size_t count, size_t size) {
  if (__builtin_expect(next_calloc == NULL, 0)) find_next();
  return next_calloc(count, size);
}
static void *c_realloc(void *p, size_t size) {
  if (__builtin_expect(next_realloc == NULL, 0)) find_next();
  return next_realloc(p, size);
}
static void c_free(void *p) {
  if (__builtin_expect(next_free == NULL, 0)) find_next();
  next_free(p);
}
#endif

enum { SLOT = 128, CHUNK_SLOTS = 4096 };
/* Address space only (MAP_NORESERVE); small enough for valgrind to map. */
#define REGION_BYTES ((uintptr_t)1 << 30)

typedef struct slot {
  struct slot *next;
} slot;

static char *region;
static atomic_uintptr_t region_used;
static __thread slot *free_slots;

__attribute__((constructor)) static void floor_init(void) {
#ifndef __GLIBC__
  if (next_malloc == NULL) find_next(); /* before any thread but this one */
#endif
  void *p = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) region = p;
}

static int is_floor_block(const void *p) {
  return region != NULL && (uintptr_t)p - (uintptr_t)region < REGION_BYTES;
}

/* Out of line, as an allocator's refill is: a fresh chunk of slots. Before
 * the region is mapped (a constructor that runs first), glibc's block. */
static __attribute__((noinline)) void *floor_refill(size_t size) {
  if (region == NULL) return c_malloc(size);
  const uintptr_t chunk_bytes = (uintptr_t)SLOT * CHUNK_SLOTS;
  uintptr_t offset = atomic_fetch_add_explicit(&region_used, chunk_bytes, memory_order_relaxed);
  if (offset + chunk_bytes > REGION_BYTES) return c_malloc(size);
  char *chunk = region + offset;
  for (size_t i = CHUNK_SLOTS; i-- > 1;) {
    slot *s = (slot *)(chunk + i * SLOT);
    s->next = free_slots;
    free_slots = s;
  }
  return chunk;
}

void *malloc(size_t size) {
  if (size > SLOT) return c_malloc(size);
  slot *s = free_slots;
  if (__builtin_expect(s != NULL, 1)) {
    free_slots = s->next;
    return s;
  }
  return floor_refill(size);
}

void free(void *p) {
  if (is_floor_block(p)) {
    slot *s = p;
    s->next = free_slots;
    free_slots = s;
    return;
  }
  c_free(p);
}

void *calloc(size_t count, size_t size) {
  return c_calloc(count, size);
}

void *realloc(void *p, size_t size) {
  if (!is_floor_block(p)) return c_realloc(p, size);
  void *q = malloc(size);
  if (q != NULL) {
    memcpy(q, p, size < SLOT ? size : SLOT);
    free(p);
  }
  return q;
}

#ifndef __GLIBC__
void *aligned_alloc(size_t alignment, size_t size) {
  if (__builtin_expect(next_aligned_alloc == NULL, 0)) find_next();
  return next_aligned_alloc(alignment, size);
}
#endif
