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
 * 128 bytes, and malloc_usable_size and the aligned allocations are glibc's,
 * which must not be given its blocks. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);

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
  if (region == NULL) return __libc_malloc(size);
  const uintptr_t chunk_bytes = (uintptr_t)SLOT * CHUNK_SLOTS;
  uintptr_t offset = atomic_fetch_add_explicit(&region_used, chunk_bytes, memory_order_relaxed);
  if (offset + chunk_bytes > REGION_BYTES) return __libc_malloc(size);
  char *chunk = region + offset;
  for (size_t i = CHUNK_SLOTS; i-- > 1;) {
    slot *s = (slot *)(chunk + i * SLOT);
    s->next = free_slots;
    free_slots = s;
  }
  return chunk;
}

void *malloc(size_t size) {
  if (size > SLOT) return __libc_malloc(size);
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
  __libc_free(p);
}

void *calloc(size_t count, size_t size) {
  return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
  if (!is_floor_block(p)) return __libc_realloc(p, size);
  void *q = malloc(size);
  if (q != NULL) {
    memcpy(q, p, size < SLOT ? size : SLOT);
    free(p);
  }
  return q;
}
