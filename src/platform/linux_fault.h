/* SPDX-License-Identifier: MIT */
/* Between the Linux platform files, on musl: while the fault hook runs
 * (linux_symbols.c's on_fault), the interrupted code's registers and the
 * address the handler returns to, the C library's signal return, so that a
 * stack walk (linux_unwind.c) goes on from the interrupted code: the handler
 * runs on a stack of its own (platform_fault_stack), which no frame leads
 * out of. glibc's backtrace() goes through signal frames itself. */
#ifndef BRISK_LINUX_FAULT_H
#define BRISK_LINUX_FAULT_H

#include <stdint.h>
#include <ucontext.h>

#ifndef __GLIBC__
extern __thread const ucontext_t *linux_fault_context;
extern __thread uintptr_t linux_fault_return;
#endif

#endif /* BRISK_LINUX_FAULT_H */
