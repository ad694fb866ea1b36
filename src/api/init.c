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
  heaps_after_fork();
  segment_cache_after_fork();
  huge_cache_after_fork();
}

static void process_init_once(void) {
  free_secret = platform_random_secret() | 1; /* never equal to a block's (even) address */
  options_init();
  report_init();
  diag_init();
  platform_thread_exit_init(collect_thread_exit);
  platform_atfork(NULL, NULL, fork_child);
}

void process_init(void) {
  platform_once(&init_once, process_init_once);
}

heap_t *heap_first_use(void) {
  process_init();
  return heap_acquire();
}

/* Read the options before main, while the environment is certainly intact.
 * Stack traces are warmed up here, not in process_init: the unwinder's first
 * use loads libgcc_s, which allocates, which must find brisk initialised. */
__attribute__((constructor)) static void brisk_load(void) {
  process_init();
  if (diag_counting || profile_on) sites_warm_up();
}

/* Reports of the diagnostic modes, after the program's own destructors. */
__attribute__((destructor)) static void brisk_unload(void) {
  diag_reports_at_exit();
}

const char *brisk_version(void) {
  return BRISK_VERSION_STRING;
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
