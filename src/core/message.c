/* SPDX-License-Identifier: MIT */
/* brisk's messages to the user: formatted into a buffer on the stack and
 * written with one platform call, so printing never allocates.
 *
 * The formatting is brisk's own rather than the C library's: MinGW's
 * snprintf comes from libmingwex, which a Free Pascal or Delphi program
 * cannot link, and msvcrt's _vsnprintf does not know %zu on older Windows.
 * It covers what brisk's messages use, with glibc's output: flags - and 0,
 * a width, a precision, the lengths hh h l ll z j t, and the conversions
 * d i u x X p s c f %. */
#include "core.h"

#include <stdarg.h>

typedef struct output {
  char *at, *end; /* end: where the terminating 0 goes */
} output;

static void put(output *out, char c) {
  if (out->at < out->end) *out->at++ = c;
}

static void put_padding(output *out, size_t count, char c) {
  for (; count > 0; count--)
    put(out, c);
}

/* text (length bytes) in a field of width, on the left when left_align;
 * a leading sign or "0x" stays before zero padding. */
static void put_field(output *out, const char *text, size_t length, size_t width, bool left_align,
                      bool zero_pad) {
  size_t pad = width > length ? width - length : 0;
  if (left_align) {
    for (size_t i = 0; i < length; i++)
      put(out, text[i]);
    put_padding(out, pad, ' ');
    return;
  }
  if (zero_pad) {
    size_t prefix = 0;
    if (length > 0 && (text[0] == '-' || text[0] == '+')) prefix = 1;
    if (length > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) prefix = 2;
    for (size_t i = 0; i < prefix; i++)
      put(out, text[i]);
    put_padding(out, pad, '0');
    text += prefix;
    length -= prefix;
  } else {
    put_padding(out, pad, ' ');
  }
  for (size_t i = 0; i < length; i++)
    put(out, text[i]);
}

/* The digits of value in base (10 or 16), at least min_digits of them,
 * written backwards from end; returns where they start. */
static char *digits(char *end, uint64_t value, unsigned base, bool upper, size_t min_digits) {
  const char *symbols = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char *at = end;
  size_t count = 0;
  do {
    *--at = symbols[value % base];
    value /= base;
    count++;
  } while (value != 0);
  while (count++ < min_digits)
    *--at = '0';
  return at;
}

/* value with decimals digits after the point, rounded; for the magnitudes
 * of brisk's figures (below 2^64). */
static size_t format_fixed(char *buffer, size_t size, double value, unsigned decimals) {
  char *end = buffer + size, *at = end;
  bool negative = value < 0;
  if (negative) value = -value;
  if (value != value || value >= 1.8e19) { /* NaN, or beyond 64 bits */
    const char *text = value != value ? "nan" : "inf";
    at -= 3;
    for (int i = 0; i < 3; i++)
      at[i] = text[i];
  } else {
    if (decimals > 9) decimals = 9;
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
      scale *= 10;
    uint64_t whole = (uint64_t)value;
    uint64_t fraction = (uint64_t)((value - (double)whole) * (double)scale + 0.5);
    if (fraction >= scale) {
      whole++;
      fraction -= scale;
    }
    if (decimals > 0) {
      at = digits(at, fraction, 10, false, decimals);
      *--at = '.';
    }
    at = digits(at, whole, 10, false, 1);
  }
  if (negative) *--at = '-';
  size_t length = (size_t)(end - at);
  for (size_t i = 0; i < length; i++)
    buffer[i] = at[i];
  return length;
}

size_t msg_vformat(char *buffer, size_t size, const char *format, va_list args) {
  if (size == 0) return 0;
  output out = {buffer, buffer + size - 1};
  for (const char *f = format; *f; f++) {
    if (*f != '%') {
      put(&out, *f);
      continue;
    }
    const char *spec = f++;
    bool left_align = false, zero_pad = false;
    for (;; f++) {
      if (*f == '-')
        left_align = true;
      else if (*f == '0')
        zero_pad = true;
      else
        break;
    }
    size_t width = 0;
    while (*f >= '0' && *f <= '9')
      width = width * 10 + (size_t)(*f++ - '0');
    bool has_precision = false;
    size_t precision = 0;
    if (*f == '.') {
      has_precision = true;
      for (f++; *f >= '0' && *f <= '9'; f++)
        precision = precision * 10 + (size_t)(*f - '0');
    }
    int length = 0; /* -2 hh, -1 h, 0 int, 1 long, 2 long long, 3 size_t/intmax_t/ptrdiff_t */
    if (*f == 'h') {
      length = -1;
      if (*++f == 'h') {
        length = -2;
        f++;
      }
    } else if (*f == 'l') {
      length = 1;
      if (*++f == 'l') {
        length = 2;
        f++;
      }
    } else if (*f == 'z' || *f == 'j' || *f == 't') {
      length = 3;
      f++;
    }
    char text[80];
    char *end = text + sizeof text, *at = end;
    switch (*f) {
    case 'd':
    case 'i': {
      int64_t value = length == 3   ? (int64_t)va_arg(args, ptrdiff_t)
                      : length == 2 ? (int64_t)va_arg(args, long long)
                      : length == 1 ? (int64_t)va_arg(args, long)
                                    : (int64_t)va_arg(args, int);
      if (length == -1) value = (short)value;
      if (length == -2) value = (signed char)value;
      uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
      at = digits(end, magnitude, 10, false, has_precision ? precision : 1);
      if (value < 0) *--at = '-';
      put_field(&out, at, (size_t)(end - at), width, left_align, zero_pad && !has_precision);
      break;
    }
    case 'u':
    case 'x':
    case 'X': {
      uint64_t value = length == 3   ? (uint64_t)va_arg(args, size_t)
                       : length == 2 ? (uint64_t)va_arg(args, unsigned long long)
                       : length == 1 ? (uint64_t)va_arg(args, unsigned long)
                                     : (uint64_t)va_arg(args, unsigned);
      if (length == -1) value = (unsigned short)value;
      if (length == -2) value = (unsigned char)value;
      at = digits(end, value, *f == 'u' ? 10 : 16, *f == 'X', has_precision ? precision : 1);
      put_field(&out, at, (size_t)(end - at), width, left_align, zero_pad && !has_precision);
      break;
    }
    case 'p': {
      uintptr_t value = (uintptr_t)va_arg(args, void *);
      if (value == 0) {
        put_field(&out, "(nil)", 5, width, left_align, false);
        break;
      }
      at = digits(end, value, 16, false, 1);
      *--at = 'x';
      *--at = '0';
      put_field(&out, at, (size_t)(end - at), width, left_align, zero_pad);
      break;
    }
    case 's': {
      const char *s = va_arg(args, const char *);
      if (s == NULL) s = "(null)";
      size_t n = 0;
      while (s[n] && (!has_precision || n < precision))
        n++;
      put_field(&out, s, n, width, left_align, false);
      break;
    }
    case 'c':
      text[0] = (char)va_arg(args, int);
      put_field(&out, text, 1, width, left_align, false);
      break;
    case 'f': {
      size_t n = format_fixed(text, sizeof text, va_arg(args, double),
                              has_precision ? (unsigned)precision : 6);
      put_field(&out, text, n, width, left_align, zero_pad);
      break;
    }
    case '%':
      put(&out, '%');
      break;
    default: /* not brisk's: copied as it stands */
      for (; spec <= f && *spec; spec++)
        put(&out, *spec);
      if (*f == 0) f--;
      break;
    }
  }
  *out.at = 0;
  return (size_t)(out.at - buffer);
}

size_t msg_format(char *buffer, size_t size, const char *format, ...) {
  va_list args;
  va_start(args, format);
  size_t length = msg_vformat(buffer, size, format, args);
  va_end(args);
  return length;
}

void msg_printf(int fd, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  size_t length = msg_vformat(buffer, sizeof buffer, format, args);
  va_end(args);
  platform_write(fd, buffer, length);
}

void assert_failed(const char *condition, const char *file, int line) {
  msg_printf(2, "brisk: internal error: %s:%d: assertion failed: %s\n", file, line, condition);
  platform_abort();
}
