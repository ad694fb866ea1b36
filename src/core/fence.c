/* SPDX-License-Identifier: MIT */
/* The fence between a heap's owner and the background purger, which both
 * change a live heap's queues and batches (the purger retires an idle
 * thread's empty pages and sends its batches on). pages_lock keeps them
 * apart, but its exchange, on every medium block and batched remote free,
 * waits for every earlier store of the thread to reach the cache. Where the
 * OS has an asymmetric fence (Linux's membarrier), the owner's side is
 * plain stores: fence_owner_enter marks the owner busy, then reads whether
 * the purger is in; fence_purger_enter, holding pages_lock, says the purger
 * is in, makes every running thread pass a full barrier, then reads the
 * mark. Either the purger sees the mark and leaves the heap for its next
 * round, or the owner sees the purger and takes pages_lock
 * (fence_owner_lock). The purger is the only other thread that takes a live
 * heap's pages_lock, so the mark stands in for the lock over a whole take,
 * refill included. Until the purger runs, under ThreadSanitizer (blind to
 * the fence) and on Windows, owners take the lock. tests/core/fence_protocol.c
 * holds each side inside the fence and checks that the other finds it. */
#include "core.h"

_Atomic(bool) xfence_ready;
#ifdef BRISK_EAGER_PURGER
__attribute__((visibility("default"))) test_hooks_t brisk_test_hooks;
#endif

/* Registered at start-up, while the process most often has one thread:
 * with others running, registering waits for the kernel to sync every CPU
 * that runs one (an RCU grace period), which held up the thread that
 * started the purger, or the purger's first round. */
static _Atomic(bool) xfence_registered;

void fence_init(void) {
#ifndef BRISK_TSAN
  atomic_store_relaxed(&xfence_registered, platform_fence_all_ready());
#endif
}

bool fence_start(void) {
  if (!atomic_load_relaxed(&xfence_registered)) return false;
  atomic_store_relaxed(&xfence_ready, true);
  return true;
}

bool fence_purger_enter(heap_t *heap) {
  if (!atomic_load_relaxed(&xfence_ready)) return true; /* owners take the lock */
  atomic_store_relaxed(&heap->xpurger_in, 1);
  if (platform_fence_all() && !atomic_load_acquire(&heap->xowner_busy)) {
    TEST_HOOK(purger_in, heap);
    return true;
  }
  atomic_store_release(&heap->xpurger_in, 0);
  TEST_COUNT(purger_found_busy);
  return false;
}

void fence_purger_leave(heap_t *heap) {
  atomic_store_release(&heap->xpurger_in, 0);
}
