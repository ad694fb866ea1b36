/* SPDX-License-Identifier: MIT */
/* The three glibc functions that Debian's libsqlite3.a (built for glibc,
 * libsqlite3-dev) calls and musl lacks, for the musl build's preload_sqlite,
 * whose program is sqlite_shell.c linked by musl-gcc against that archive:
 * Debian packages no SQLite for musl, and this way the test needs only apt.
 *
 * Why a glibc-built archive is sound in a musl program here: it is SQLite's
 * own code alone (no glibc code is in it; its C library calls resolve to
 * musl's), and what its objects baked in from glibc's headers is the same
 * in musl's on x86-64: the structures it passes to the C library (stat,
 * flock, tm, timeval, utimbuf) are the kernel's layout or the same ISO/POSIX
 * fields in both, the flag values are the kernel's, pthread_mutex_t and its
 * static initializer (all zeros) match in size, and both keep the stack
 * guard at %fs:0x28. The test libc_layout checks those figures (libc_layout.c
 * built for glibc and for musl, outputs compared). Its undefined symbols are
 * POSIX, libm, pthread and dl functions that musl 1.2 has, the LFS64 names
 * (open64, fstat64, pread64, ...) among them, save these three. The archive
 * uses no stdio, so no FILE crosses between the two. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void *__memcpy_chk(void *to, const void *from, size_t size, size_t room);
void *__memset_chk(void *to, int byte, size_t size, size_t room);
int fcntl64(int fd, int command, ...);

/* _FORTIFY_SOURCE's checked copies: room is the destination's size as the
 * compiler knew it; a copy past it is a buffer overflow, which glibc stops
 * the process for, and so does this. */
void *__memcpy_chk(void *to, const void *from, size_t size, size_t room) {
  if (size > room) abort();
  return memcpy(to, from, size);
}

void *__memset_chk(void *to, int byte, size_t size, size_t room) {
  if (size > room) abort();
  return memset(to, byte, size);
}

/* glibc's fcntl with a 64-bit struct flock, the same struct as fcntl's on
 * x86-64 (and musl's); SQLite passes every command at most one argument,
 * an int or a pointer, which travels as a pointer-sized register either way. */
int fcntl64(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void *argument = va_arg(arguments, void *);
  va_end(arguments);
  return fcntl(fd, command, argument);
}
