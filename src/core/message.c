/* brisk's messages to the user: formatted into a buffer on the stack and
 * written with one platform call, so printing never allocates. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>

void msg_printf(int fd, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (n < 0) return;
  size_t length = (size_t)n < sizeof buffer ? (size_t)n : sizeof buffer - 1;
  platform_write(fd, buffer, length);
}

void assert_failed(const char *condition, const char *file, int line) {
  msg_printf(2, "brisk: internal error: %s:%d: assertion failed: %s\n", file, line, condition);
  platform_abort();
}
