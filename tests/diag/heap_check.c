/* SPDX-License-Identifier: MIT */
/* brisk_heap_check(): finds nothing wrong with a heap after a mixed
 * workload, and finds each kind of damage when a free list is corrupted on
 * purpose (in a child process, which dies with its damaged heap). */
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_api.h"

enum { BLOCKS = 2000 };

static void *blocks[BLOCKS];

static void mixed_workload(void) {
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = A_MALLOC(16 + (size_t)(i * 37) % 2000);
  for (int i = 0; i < BLOCKS; i += 3)
    A_FREE(blocks[i]);
  for (int i = 0; i < BLOCKS; i += 3)
    blocks[i] = A_REALLOC(NULL, 48);
  for (int i = 1; i < BLOCKS; i += 2)
    if (i % 3 != 0) A_FREE(blocks[i]); /* the multiples of 3 stay live */
}

/* Blocks of the heap's arena (64-512 KiB), freed, grown and shrunk in
 * place, aligned, and one freed by another thread (on the arena's remote
 * list when the heap is checked), so that the arena's count of the bytes it
 * has in use, which mallinfo reports, meets every way a chunk changes. */
enum { ARENA_BLOCKS = 48 };
static void *arena_blocks[ARENA_BLOCKS + 1];

static void *free_elsewhere(void *p) {
  A_FREE(p);
  return NULL;
}

static void arena_workload(void) {
  for (int i = 0; i < ARENA_BLOCKS; i++)
    arena_blocks[i] = A_MALLOC(70000 + (size_t)i * 9000);
  for (int i = 0; i < ARENA_BLOCKS; i += 2) {
    A_FREE(arena_blocks[i]);
    arena_blocks[i] = NULL;
  }
  for (int i = 1; i < ARENA_BLOCKS; i += 4) /* grows into the free chunk after it */
    arena_blocks[i] = A_REALLOC(arena_blocks[i], 70000 + (size_t)i * 9000 + 30000);
  for (int i = 3; i < ARENA_BLOCKS; i += 4) /* shrinks past half: its tail goes back */
    arena_blocks[i] = A_REALLOC(arena_blocks[i], 66000);
  arena_blocks[ARENA_BLOCKS] = A_ALIGNED_ALLOC(65536, 100000);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, free_elsewhere, arena_blocks[5]) == 0);
  pthread_join(thread, NULL);
  arena_blocks[5] = NULL;
}

/* Runs damage() in a child after freeing two blocks of one class; returns
 * the child's brisk_heap_check() result (or -1 if it died). */
static int check_after(void (*damage)(void **first, void **second)) {
  pid_t pid = fork();
  if (pid == 0) {
    void *first = A_MALLOC(64), *second = A_MALLOC(64);
    A_FREE(first);
    A_FREE(second);
    damage((void **)first, (void **)second);
    int problems = A_HEAP_CHECK();
    _exit(problems > 100 ? 100 : problems);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A write through a dangling pointer: the link now points outside the page. */
static void garbage_link(void **first, void **second) {
  (void)first;
  *second = (void *)(uintptr_t)0x1234;
}

/* A free list that loops back on itself. */
static void cycle(void **first, void **second) {
  (void)second;
  *first = (void *)first;
}

/* A block dropped from the list: the counts no longer add up. */
static void lost_block(void **first, void **second) {
  (void)first;
  *second = NULL;
}

int main(void) {
  api_init();
  CHECK(A_HEAP_CHECK() == 0);
  mixed_workload();
  arena_workload();
  CHECK_MSG(A_HEAP_CHECK() == 0, "a healthy heap reported problems");
  int problems = check_after(garbage_link);
  CHECK_MSG(problems > 0, "garbage link not found (%d)", problems);
  problems = check_after(cycle);
  CHECK_MSG(problems > 0, "cycle not found (%d)", problems);
  problems = check_after(lost_block);
  CHECK_MSG(problems > 0, "lost block not found (%d)", problems);
  for (int i = 0; i < BLOCKS; i += 3)
    A_FREE(blocks[i]);
  for (int i = 0; i <= ARENA_BLOCKS; i++)
    A_FREE(arena_blocks[i]);
  CHECK(A_HEAP_CHECK() == 0);
  return test_finish();
}
