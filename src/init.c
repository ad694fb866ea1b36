/* Process set-up, fork handling, and the process-wide parts of the API. */
#include "internal.h"

#include <string.h>
#include <sys/auxv.h>

pthread_key_t thread_exit_key;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Fork copies only the calling thread: hold every global lock across it so
 * the child never inherits one mid-update. Thread heaps need no lock: the
 * forking thread's own heap is consistent between calls, and the heaps of
 * threads that do not exist in the child are never used there again. */
static void fork_prepare(void) {
  heaps_lock();
  segment_cache_lock();
  huge_cache_lock();
}

static void fork_release(void) {
  huge_cache_unlock();
  segment_cache_unlock();
  heaps_unlock();
}

static void process_init_once(void) {
  const uint8_t *random_bytes = (const uint8_t *)getauxval(AT_RANDOM);
  if (random_bytes != NULL) memcpy(&free_secret, random_bytes, sizeof free_secret);
  free_secret |= 1; /* a cookie never equals the (even) address of a block */
  options_init();
  diag_init();
  pthread_key_create(&thread_exit_key, heap_thread_exit);
  pthread_atfork(fork_prepare, fork_release, fork_release);
}

void process_init(void) {
  pthread_once(&init_once, process_init_once);
}

/* Read the options before main, while the environment is certainly intact. */
/* Stack traces are warmed up here, not in process_init: the unwinder's first
 * use loads libgcc_s, which allocates, which must find brisk initialised. */
__attribute__((constructor)) static void brisk_load(void) {
  process_init();
  if (diag_counting || profile_on) sites_warm_up();
}

/* Reports of the diagnostic modes, after the program's own destructors. */
__attribute__((destructor)) static void brisk_unload(void) {
  if (option_get(OPTION_PROFILE)) profile_report();
  if (option_get(OPTION_STATS)) stats_report_at_exit();
  if (option_get(OPTION_LEAKS)) leaks_report();
}

const char *brisk_version(void) {
  return BRISK_VERSION_STRING;
}

void brisk_collect(void) {
  heap_t *heap = tl_heap;
  if (heap != &heap_empty) heap_housekeeping(heap, true);
  heaps_collect_abandoned(true);
  uint64_t now = os_clock_ms();
  segment_cache_collect(now, true);
  huge_cache_collect(now, true);
}

int brisk_memory_info_get(brisk_memory_info *info) {
  if (info == NULL) return -1;
  brisk_memory_info full;
  os_memory_info(&full);
  size_t size = info->struct_size;
  if (size == 0 || size > sizeof full) size = sizeof full;
  full.struct_size = size;
  memcpy(info, &full, size);
  return 0;
}
