/* SPDX-License-Identifier: MIT */
/* Prints what a C library's headers fix in the code compiled against them
 * and that SQLite's objects pass to the C library: the sizes and field
 * offsets of the structures, the flag, command and errno values, the mutex
 * type's size and static initializer. The musl build's preload_sqlite links
 * Debian's glibc-built libsqlite3.a into a musl program
 * (sqlite_glibc_shim.c says why that is sound); the test libc_layout runs
 * this program built for glibc and for musl and requires the same output.
 * O_LARGEFILE is left out on purpose: glibc's is 0 on x86-64 and musl's is
 * the kernel's bit, which the kernel sets itself for every 64-bit process. */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#define SIZE(type) printf("sizeof %s %zu\n", #type, sizeof(type))
#define FIELD(type, field) printf("offsetof %s.%s %zu\n", #type, #field, offsetof(type, field))
#define VALUE(name) printf("%s %ld\n", #name, (long)(name))

int main(void) {
  SIZE(struct stat);
  FIELD(struct stat, st_dev);
  FIELD(struct stat, st_ino);
  FIELD(struct stat, st_mode);
  FIELD(struct stat, st_nlink);
  FIELD(struct stat, st_uid);
  FIELD(struct stat, st_gid);
  FIELD(struct stat, st_size);
  FIELD(struct stat, st_blksize);
  FIELD(struct stat, st_blocks);
  FIELD(struct stat, st_atim);
  FIELD(struct stat, st_mtim);
  FIELD(struct stat, st_ctim);
  SIZE(struct flock);
  FIELD(struct flock, l_type);
  FIELD(struct flock, l_whence);
  FIELD(struct flock, l_start);
  FIELD(struct flock, l_len);
  FIELD(struct flock, l_pid);
  SIZE(struct tm);
  FIELD(struct tm, tm_sec);
  FIELD(struct tm, tm_min);
  FIELD(struct tm, tm_hour);
  FIELD(struct tm, tm_mday);
  FIELD(struct tm, tm_mon);
  FIELD(struct tm, tm_year);
  FIELD(struct tm, tm_wday);
  FIELD(struct tm, tm_yday);
  FIELD(struct tm, tm_isdst);
  SIZE(struct timeval);
  FIELD(struct timeval, tv_sec);
  FIELD(struct timeval, tv_usec);
  SIZE(struct utimbuf);
  FIELD(struct utimbuf, actime);
  FIELD(struct utimbuf, modtime);
  SIZE(off_t);
  SIZE(time_t);
  SIZE(pid_t);
  SIZE(uid_t);
  SIZE(mode_t);
  SIZE(pthread_t);
  SIZE(pthread_mutex_t);
  SIZE(pthread_mutexattr_t);
  static pthread_mutex_t initial = PTHREAD_MUTEX_INITIALIZER;
  int zero = 1;
  for (size_t i = 0; i < sizeof initial; i++)
    zero &= ((const unsigned char *)&initial)[i] == 0;
  printf("PTHREAD_MUTEX_INITIALIZER %s\n", zero ? "all zeros" : "not all zeros");
  VALUE(PTHREAD_MUTEX_RECURSIVE);
  VALUE(O_RDONLY);
  VALUE(O_WRONLY);
  VALUE(O_RDWR);
  VALUE(O_CREAT);
  VALUE(O_EXCL);
  VALUE(O_TRUNC);
  VALUE(O_APPEND);
  VALUE(O_NOFOLLOW);
  VALUE(O_CLOEXEC);
  VALUE(O_DIRECTORY);
  VALUE(F_GETFD);
  VALUE(F_SETFD);
  VALUE(F_GETFL);
  VALUE(F_GETLK);
  VALUE(F_SETLK);
  VALUE(F_SETLKW);
  VALUE(FD_CLOEXEC);
  VALUE(F_RDLCK);
  VALUE(F_WRLCK);
  VALUE(F_UNLCK);
  VALUE(SEEK_SET);
  VALUE(F_OK);
  VALUE(R_OK);
  VALUE(W_OK);
  VALUE(X_OK);
  VALUE(S_IFMT);
  VALUE(S_IFDIR);
  VALUE(S_IFREG);
  VALUE(S_IFLNK);
  VALUE(PROT_READ);
  VALUE(PROT_WRITE);
  VALUE(MAP_SHARED);
  VALUE(MREMAP_MAYMOVE);
  VALUE(_SC_PAGESIZE);
  VALUE(RTLD_LAZY);
  VALUE(RTLD_NOW);
  VALUE(RTLD_GLOBAL);
  VALUE(EPERM);
  VALUE(ENOENT);
  VALUE(EINTR);
  VALUE(EIO);
  VALUE(EAGAIN);
  VALUE(ENOMEM);
  VALUE(EACCES);
  VALUE(EBUSY);
  VALUE(EEXIST);
  VALUE(ENOTDIR);
  VALUE(EISDIR);
  VALUE(EINVAL);
  VALUE(ENOSPC);
  VALUE(EROFS);
  VALUE(ERANGE);
  VALUE(EDEADLK);
  VALUE(ENOLCK);
  VALUE(ENOSYS);
  VALUE(EOVERFLOW);
  VALUE(ETIMEDOUT);
  return 0;
}
