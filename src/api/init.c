/* SPDX-License-Identifier: MIT */
/* Process set-up, fork handling, and the process-wide parts of the API. */
#include "fast_path.h"

#include <string.h>

static platform_once_t init_once = PLATFORM_ONCE_INIT;

/* Fork copies only the calling thread, and brisk holds nothing across it:
 * taking its locks before fork would wait on threads that may in turn wait
 * on locks fork itself takes (stdio's), and a signal handler that forks
 * during fork would wait on itself. Instead the child, whose only thread is
 * the forking one, frees brisk's locks whoever held them: every structure
 * they guard is kept walkable after each store (see span_cache.c), so what a
 * thread frozen mid-change leaves behind is at worst a segment or a heap the
 * child never reuses. The forking thread's own heap is consistent (fork is
 * not called from inside malloc), and the heaps of threads that do not
 * exist in the child are never used there again. */
static void fork_child(void) {
  background_after_fork();
  collect_after_fork();
  arena_after_fork(); /* before heaps_after_fork, which empties the heap's locks */
  heaps_after_fork();
  segment_cache_after_fork();
  huge_cache_after_fork();
  heap_profile_after_fork();
  guard_after_fork();
}

static bool init_done; /* process_init_once ran to its end */

static void process_init_once(void) {
  /* First: the thread-local words back in_diag() and heap_current(). */
  if (!platform_tls_init()) {
    msg_printf(2, "brisk: cannot start: the OS has no thread-local storage slot left "
                  "(Windows: all 64 TLS indices are taken)\n");
    return;
  }
  free_secret = platform_random_secret() | 1; /* never equal to a block's (even) address */
  options_init();
  report_init();
  diag_init();
  guard_init(); /* after diag_init: not with a mode that counts every call */
  platform_thread_exit_init(collect_thread_exit);
  fence_init(); /* while the process most often has one thread */
  introspection_publish();
  init_done = true;
}

/* The fork handler is registered once the set-up above has ended and the
 * thread has its heap, not inside the set-up: musl's pthread_atfork
 * allocates, and that malloc would wait for the set-up it is part of. Its
 * block is brisk's own, as the diagnostics' are (the leak report leaves it
 * out). */
static void fork_handler_register(void) {
  static _Atomic(bool) xregistered;
  if (atomic_exchange_relaxed(&xregistered, true)) return;
  bool was_in_diag = in_diag();
  in_diag_set(true);
  platform_atfork(NULL, NULL, fork_child);
  in_diag_set(was_in_diag);
}

bool process_init(void) {
  platform_once(&init_once, process_init_once);
  return init_done;
}

heap_t *heap_first_use(void) {
  if (!process_init()) platform_abort(); /* said why; the fast paths cannot work */
  heap_t *heap = heap_acquire();
  fork_handler_register();
  return heap;
}

/* Read the options before main, while the environment is certainly intact.
 * Stack traces are warmed up here, not in process_init: the unwinder's first
 * use loads libgcc_s, which allocates, which must find brisk initialised. */
bool process_start(void) {
  if (!process_init()) return false;
  if (diag_counting || profile_on || heap_sampling || guard_on) sites_warm_up();
  fork_handler_register();
  return true;
}

/* Reports of the diagnostic modes, after the program's own destructors;
 * once, whichever of the platform's hook and brisk_binding_done comes first. */
void process_stop(void) {
  static _Atomic(bool) xstopped;
  if (init_done && !atomic_exchange_relaxed(&xstopped, true)) diag_reports_at_exit();
}

PLATFORM_PROCESS_HOOKS(process_start, process_stop)

const char *brisk_version(void) {
  return BRISK_VERSION_STRING;
}

int brisk_heap_profile_dump(const char *path) {
  return heap_profile_dump(path) ? 0 : -1;
}

void brisk_collect(void) {
  collect_all(heap_current());
}

int brisk_memory_info_get(brisk_memory_info *info) {
  if (info == NULL) return -1;
  brisk_memory_info full;
  memory_info(&full);
  size_t size = info->struct_size;
  if (size == 0 || size > sizeof full) size = sizeof full;
  full.struct_size = size;
  memcpy(info, &full, size);
  return 0;
}
