/* SPDX-License-Identifier: MIT */
/* Thread exit on Windows: brisk learns that a thread ends from a fiber-local
 * storage callback, which Windows calls before the DLLs' thread detach and
 * the other FLS callbacks of higher index. Code that runs after it in the
 * ending thread may allocate again. Here every thread does: its own FLS
 * callback (allocated after brisk's, so called after it) allocates and frees
 * through brisk. The heaps of those threads must still be abandoned once
 * they are gone and reused by the next threads: heaps_created stays near the
 * number of threads alive at once, and every heap ends up abandoned.
 * Built with the static library and with brisk.dll. */
#include <windows.h>

#include <stdint.h>

#include "alloc_api.h"

#define THREADS 300
#define AT_ONCE 4

static DWORD late_index;
static atomic_ulong late_allocations;

/* Runs in the ending thread after brisk's own callback. */
static void WINAPI late_callback(PVOID value) {
  (void)value;
  char *p = A_MALLOC(200);
  if (p != NULL) {
    memset(p, 1, 200);
    atomic_fetch_add(&late_allocations, 1);
  }
  A_FREE(p);
  void *kept = A_MALLOC(5000); /* freed by nobody: stays in the heap */
  (void)kept;
}

static DWORD WINAPI worker(LPVOID arg) {
  void *blocks[64];
  for (int i = 0; i < 64; i++)
    blocks[i] = A_MALLOC((size_t)(i * 37 + (int)(uintptr_t)arg % 50) + 1);
  for (int i = 0; i < 64; i++)
    A_FREE(blocks[i]);
  FlsSetValue(late_index, (void *)1); /* arm the late callback */
  return 0;
}

int main(void) {
  api_init();
  A_FREE(A_MALLOC(1)); /* the main thread's heap; brisk set up before main, so its FLS
                          index is below ours */
  late_index = FlsAlloc(late_callback);
  REQUIRE(late_index != FLS_OUT_OF_INDEXES);
  printf("thread exit on Windows: %d threads, %d at once, each allocating after brisk's "
         "thread-exit callback\n",
         THREADS, AT_ONCE);
  HANDLE running[AT_ONCE] = {0};
  for (int i = 0; i < THREADS; i++) {
    HANDLE *slot = &running[i % AT_ONCE];
    if (*slot != NULL) {
      REQUIRE(WaitForSingleObject(*slot, 60000) == WAIT_OBJECT_0);
      CloseHandle(*slot);
    }
    *slot = CreateThread(NULL, 0, worker, (LPVOID)(uintptr_t)i, 0, NULL);
    REQUIRE(*slot != NULL);
  }
  for (int i = 0; i < AT_ONCE; i++) {
    REQUIRE(WaitForSingleObject(running[i], 60000) == WAIT_OBJECT_0);
    CloseHandle(running[i]);
  }
  CHECK_MSG(atomic_load(&late_allocations) == THREADS, "%lu late allocations, %d threads",
            atomic_load(&late_allocations), THREADS);
  /* the last threads' heaps are abandoned by thread-pool callbacks, soon after they end */
  brisk_stats s = api_stats();
  for (int wait = 0; wait < 100 && s.heaps_abandoned + 1 < s.heaps_created; wait++) {
    Sleep(50);
    s = api_stats();
  }
  printf("heaps created %llu, abandoned %llu\n", s.heaps_created, s.heaps_abandoned);
  /* Such a heap is abandoned by a thread-pool callback just after its thread
   * ends, so a thread started in that moment takes a new heap: a few more
   * than AT_ONCE + 1, far fewer than THREADS (which is what it costs when
   * the late heaps are never abandoned). */
  CHECK_MSG(s.heaps_created <= THREADS / 8,
            "%llu heaps created for %d threads, %d at once: the heaps of threads that "
            "allocated after their exit callback were not reused",
            s.heaps_created, THREADS, AT_ONCE);
  CHECK_MSG(s.heaps_abandoned + 1 == s.heaps_created,
            "%llu of %llu heaps abandoned: every heap but the main thread's should be",
            s.heaps_abandoned, s.heaps_created);
  /* the main thread allocates late too, while the process ends */
  FlsSetValue(late_index, (void *)1);
  return test_finish();
}
