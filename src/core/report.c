/* Reports of misuse that brisk catches outside the diagnostic modes (a double
 * free), and the stack traces every report carries, which start at the
 * program's own frame: brisk's frames are left out. */
#include "core.h"

#include <string.h>

#ifndef PLATFORM_TLS_WORDS
_Thread_local uintptr_t tl_words[THREAD_WORD_COUNT];
#endif

/* brisk's code, when brisk is a shared library; when it is linked into the
 * program it has no range of its own, and its frames are skipped by count. */
static uintptr_t own_start, own_end;

void report_init(void) {
  if (!platform_library_code((const void *)report_init, &own_start, &own_end))
    own_start = own_end = 0;
}

bool report_code_is_brisk(uintptr_t pc) {
  return pc >= own_start && pc < own_end;
}

int stack_capture(void **out, unsigned skip) {
  void *raw[SITE_FRAMES + 8]; /* brisk's own frames, then the caller's */
  int n = platform_backtrace(raw, (int)(sizeof raw / sizeof raw[0]));
  /* brisk's own frames are skipped by address when it is a library of its
   * own; linked into the program, by the count the caller knows. */
  int first = own_end != 0 ? 0 : 1 + (int)skip;
  while (first < n && (uintptr_t)raw[first] >= own_start && (uintptr_t)raw[first] < own_end)
    first++;
  int count = n - first;
  if (count > SITE_FRAMES) count = SITE_FRAMES;
  if (count < 0) count = 0;
  memcpy(out, raw + first, (size_t)count * sizeof(void *));
  return count;
}

void stack_print(int fd, void *const *frames, int count, const char *indent) {
  char line[400];
  platform_symbols_prepare(frames, (size_t)count);
  for (int i = 0; i < count; i++) {
    platform_symbol_describe(frames[i], line, sizeof line);
    msg_printf(fd, "%s#%d %p %s\n", indent, i, frames[i], line);
  }
  if (count == 0) msg_printf(fd, "%s(no stack trace)\n", indent);
}

void stack_print_current(int fd, const char *indent) {
  void *frames[SITE_FRAMES];
  int count = stack_capture(frames, 1);
  stack_print(fd, frames, count, indent);
}

void double_free_detected(const void *p) {
  in_diag_set(true);
  msg_printf(2, "brisk: error: double free of pointer %p (the block is already free)\n", p);
  msg_printf(2, "brisk:   at:\n");
  stack_print_current(2, "brisk:     ");
  msg_printf(2, "brisk:   run with BRISK_CHECK=1 to see where the block was allocated\n");
  platform_abort();
}
