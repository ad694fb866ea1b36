/* SPDX-License-Identifier: MIT */
/* The C allocation functions of the process, served by brisk when this
 * library is preloaded or linked first. malloc and free inline the fast
 * paths; the rest forward to their brisk_* namesakes. */
#include "fast_path.h"

#define EXPORT __attribute__((visibility("default")))

/* The symbols this file exports (libc's headers lack some of them). */
EXPORT void *malloc(size_t size);
EXPORT void free(void *p);
EXPORT void cfree(void *p);
EXPORT void free_sized(void *p, size_t size);
EXPORT void free_aligned_sized(void *p, size_t alignment, size_t size);
EXPORT void *calloc(size_t count, size_t size);
EXPORT void *realloc(void *p, size_t size);
EXPORT void *reallocarray(void *p, size_t count, size_t size);
EXPORT int posix_memalign(void **result, size_t alignment, size_t size);
EXPORT void *aligned_alloc(size_t alignment, size_t size);
EXPORT void *memalign(size_t alignment, size_t size);
EXPORT void *valloc(size_t size);
EXPORT void *pvalloc(size_t size);
EXPORT size_t malloc_usable_size(void *p);
EXPORT int malloc_trim(size_t pad);

EXPORT void *malloc(size_t size) {
  return fast_malloc(size);
}
READS_POINTER_HEADER EXPORT void free(void *p) {
  fast_free(p);
}
READS_POINTER_HEADER EXPORT void cfree(void *p) {
  fast_free(p);
}
EXPORT void free_sized(void *p, size_t size) {
  brisk_free_sized(p, size);
}
EXPORT void free_aligned_sized(void *p, size_t alignment, size_t size) {
  (void)alignment;
  brisk_free_sized(p, size);
}
EXPORT void *calloc(size_t count, size_t size) {
  return brisk_calloc(count, size);
}
EXPORT void *realloc(void *p, size_t size) {
  return brisk_realloc(p, size);
}
EXPORT void *reallocarray(void *p, size_t count, size_t size) {
  return brisk_reallocarray(p, count, size);
}
EXPORT int posix_memalign(void **result, size_t alignment, size_t size) {
  return brisk_posix_memalign(result, alignment, size);
}
EXPORT void *aligned_alloc(size_t alignment, size_t size) {
  return brisk_aligned_alloc(alignment, size);
}
EXPORT void *memalign(size_t alignment, size_t size) {
  return brisk_memalign(alignment, size);
}
EXPORT void *valloc(size_t size) {
  return brisk_valloc(size);
}
EXPORT void *pvalloc(size_t size) {
  return brisk_pvalloc(size);
}
EXPORT size_t malloc_usable_size(void *p) {
  return brisk_usable_size(p);
}

/* glibc's own names for the same functions, public in every glibc since
 * 2.2.5: a malloc hook or tracing library that calls "the real malloc" as
 * __libc_malloc, or a program that frees with __libc_free, would otherwise
 * mix glibc's blocks with brisk's, and either allocator aborts on the
 * other's pointer. Aliases: the same code, fast paths included. */
#ifdef __GLIBC__
#define GLIBC_NAME(name, target) __typeof__(target) name __attribute__((alias(#target), used))
EXPORT GLIBC_NAME(__libc_malloc, malloc);
EXPORT GLIBC_NAME(__libc_free, free);
EXPORT GLIBC_NAME(__libc_calloc, calloc);
EXPORT GLIBC_NAME(__libc_realloc, realloc);
EXPORT GLIBC_NAME(__libc_memalign, memalign);
EXPORT GLIBC_NAME(__libc_valloc, valloc);
EXPORT GLIBC_NAME(__libc_pvalloc, pvalloc);
#endif

/* glibc extras some programs call: trimming means collecting here. */
EXPORT int malloc_trim(size_t pad) {
  (void)pad;
  brisk_collect();
  return 1;
}
