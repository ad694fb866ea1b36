/* SPDX-License-Identifier: MIT */
/* C++ operator new and delete in all their forms, written in C against the
 * Itanium C++ ABI names. A failed new calls the program's new_handler and
 * retries, or throws std::bad_alloc through libstdc++'s own thrower; both are
 * weak references, so a C program needs no C++ runtime. This file is built
 * with -fexceptions so the exception can unwind through it. */
#include "api.h"

#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*new_handler_fn)(void);
extern new_handler_fn _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

/* Returns NULL only for nothrow callers; throwing callers never see NULL. */
static NOINLINE void *new_failed(size_t size, size_t alignment, bool nothrow) {
  for (;;) {
    new_handler_fn handler = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
    if (handler == NULL) {
      if (nothrow) return NULL;
      if (_ZSt17__throw_bad_allocv) _ZSt17__throw_bad_allocv();
      abort();
    }
    handler();
    void *p = alignment ? aligned_malloc(alignment, size) : brisk_malloc(size);
    if (p != NULL) return p;
  }
}

static inline void *new_plain(size_t size, bool nothrow) {
  void *p = brisk_malloc(size);
  return likely(p != NULL) ? p : new_failed(size, 0, nothrow);
}

static inline void *new_aligned(size_t size, size_t alignment, bool nothrow) {
  void *p = aligned_malloc(alignment, size);
  return likely(p != NULL) ? p : new_failed(size, alignment, nothrow);
}

typedef struct nothrow_t nothrow_t; /* std::nothrow_t, passed by reference */

/* The symbols this file exports. size_t's letter in a mangled name is m
 * (unsigned long) on 64-bit machines and j (unsigned int) on 32-bit ones: the
 * functions keep the 64-bit names here, and the symbols take the target's. */
#if SIZE_MAX > 0xFFFFFFFFu
#define SIZE_CODE "m"
#else
#define SIZE_CODE "j"
#endif
#define MANGLED(before, after) __asm__(before SIZE_CODE after)
EXPORT void *_Znwm(size_t size) MANGLED("_Znw", "");
EXPORT void *_Znam(size_t size) MANGLED("_Zna", "");
EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const nothrow_t *tag)
    MANGLED("_Znw", "RKSt9nothrow_t");
EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const nothrow_t *tag)
    MANGLED("_Zna", "RKSt9nothrow_t");
EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t alignment) MANGLED("_Znw", "St11align_val_t");
EXPORT void *_ZnamSt11align_val_t(size_t size, size_t alignment) MANGLED("_Zna", "St11align_val_t");
EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const nothrow_t *tag)
    MANGLED("_Znw", "St11align_val_tRKSt9nothrow_t");
EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const nothrow_t *tag)
    MANGLED("_Zna", "St11align_val_tRKSt9nothrow_t");
EXPORT void _ZdlPv(void *p);
EXPORT void _ZdaPv(void *p);
EXPORT void _ZdlPvm(void *p, size_t size) MANGLED("_ZdlPv", "");
EXPORT void _ZdaPvm(void *p, size_t size) MANGLED("_ZdaPv", "");
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const nothrow_t *tag);
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const nothrow_t *tag);
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t alignment);
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t alignment);
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t alignment)
    MANGLED("_ZdlPv", "St11align_val_t");
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t alignment)
    MANGLED("_ZdaPv", "St11align_val_t");
EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t alignment, const nothrow_t *tag);
EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t alignment, const nothrow_t *tag);

/* operator new / new[] */
EXPORT void *_Znwm(size_t size) {
  return new_plain(size, false);
}
EXPORT void *_Znam(size_t size) {
  return new_plain(size, false);
}
EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const nothrow_t *tag) {
  (void)tag;
  return new_plain(size, true);
}
EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const nothrow_t *tag) {
  (void)tag;
  return new_plain(size, true);
}
EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t alignment) {
  return new_aligned(size, alignment, false);
}
EXPORT void *_ZnamSt11align_val_t(size_t size, size_t alignment) {
  return new_aligned(size, alignment, false);
}
EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment,
                                                const nothrow_t *tag) {
  (void)tag;
  return new_aligned(size, alignment, true);
}
EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment,
                                                const nothrow_t *tag) {
  (void)tag;
  return new_aligned(size, alignment, true);
}

/* operator delete / delete[]: sizes and alignments are hints brisk does not
 * need, since every block knows its page. */
EXPORT void _ZdlPv(void *p) {
  brisk_free(p);
}
EXPORT void _ZdaPv(void *p) {
  brisk_free(p);
}
EXPORT void _ZdlPvm(void *p, size_t size) {
  brisk_free_sized(p, size);
}
EXPORT void _ZdaPvm(void *p, size_t size) {
  brisk_free_sized(p, size);
}
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const nothrow_t *tag) {
  (void)tag;
  brisk_free(p);
}
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const nothrow_t *tag) {
  (void)tag;
  brisk_free(p);
}
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t alignment) {
  (void)alignment;
  brisk_free(p);
}
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t alignment) {
  (void)alignment;
  brisk_free(p);
}
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t alignment) {
  (void)alignment;
  brisk_free_sized(p, size);
}
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t alignment) {
  (void)alignment;
  brisk_free_sized(p, size);
}
EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t alignment, const nothrow_t *tag) {
  (void)alignment;
  (void)tag;
  brisk_free(p);
}
EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t alignment, const nothrow_t *tag) {
  (void)alignment;
  (void)tag;
  brisk_free(p);
}
