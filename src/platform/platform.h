/* SPDX-License-Identifier: MIT */
/* The platform contract: everything brisk asks of the operating system.
 * Only the files in src/platform/ implement it, one set per OS; every other
 * layer reaches the OS through these functions alone.
 *
 * Memory states, in the order a range goes through them:
 *   reserved   address space is brisk's; touching it is not allowed yet
 *   committed  readable and writable; physical pages arrive as touched
 *   purged     physical pages handed back, contents lost; the range stays
 *              reserved and must be committed again before it is touched
 *   released   the address space is the OS's again
 * On Linux reserving and committing are the same mapping (the kernel backs
 * pages lazily) and commit costs nothing, except in BRISK_DEBUG builds, which
 * keep reserved and purged ranges inaccessible so that a missing commit
 * faults in Linux tests as it would on Windows. */
#ifndef BRISK_PLATFORM_H
#define BRISK_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The platforms brisk runs on, and what each CPU gives the core:
 *   PLATFORM_ADDRESS_BITS    user space addresses are below 1 << this: 47 on
 *                            x86-64 (4-level page tables, 128 TiB; 64-bit
 *                            Windows 8.1 and later too), 48 on ARM64 (Linux
 *                            hands out addresses above 2^48 only to a program
 *                            that asks for them with a hint up there)
 *   PLATFORM_STORES_IN_ORDER defined where the CPU makes a thread's stores
 *                            visible in program order (x86-64), so a release
 *                            store needs no instruction; ARM64 reorders them
 * The OS's page size is not a constant: ARM64 Linux kernels use 4, 16 or 64
 * KiB pages, so platform_page_size() reads it at run time. */
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__) || defined(__i386__)) &&    \
    !defined(__ANDROID__) && !defined(__UCLIBC__)
/* Linux with glibc 2.34 or later, or musl 1.2 or later (i386: glibc). */
#include <pthread.h>
typedef pthread_mutex_t platform_lock_t;
#define PLATFORM_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
typedef pthread_once_t platform_once_t;
#define PLATFORM_ONCE_INIT PTHREAD_ONCE_INIT
#elif defined(_WIN32) /* 64-bit and 32-bit Windows (MinGW-w64) */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <intrin.h>
typedef SRWLOCK platform_lock_t;
#define PLATFORM_LOCK_INIT SRWLOCK_INIT
typedef INIT_ONCE platform_once_t;
#define PLATFORM_ONCE_INIT INIT_ONCE_STATIC_INIT
/* The compiler's thread-locals are emulated on MinGW (a libgcc call per
 * access, and libgcc cannot be linked into a Free Pascal or Delphi
 * program), so the platform gives brisk thread-local words of its own. */
#define PLATFORM_TLS_WORDS 1
#else
#error "brisk supports Linux on x86-64 and ARM64 (AArch64), each with glibc or musl, Linux on \
i386 with glibc, and Windows on x86-64 and i386 (MinGW-w64); not macOS, the BSDs, 32-bit ARM, \
or Linux with another C library. A port implements src/platform/platform.h (memory reservation \
and commit, clock, thread-exit callbacks, locks, thread-local words, start-up hooks, a random \
secret, stack capture and naming, a fault hook) for its OS and CPU and sets PLATFORM_ADDRESS_BITS."
#endif

/* A 32-bit program may use the whole 4 GiB (on a 64-bit kernel, or 32-bit
 * Windows with large-address-aware programs). x86 makes a thread's stores
 * visible in program order on both widths. */
#if defined(__x86_64__)
#define PLATFORM_ADDRESS_BITS 47
#define PLATFORM_STORES_IN_ORDER 1
#elif defined(__aarch64__)
#define PLATFORM_ADDRESS_BITS 48
#elif defined(__i386__)
#define PLATFORM_ADDRESS_BITS 32
#define PLATFORM_STORES_IN_ORDER 1
#endif

/* Whether platform_release can give back any part of a reservation, and
 * whether platform_move_pages can move pages between reservations. */
#ifdef _WIN32
#define PLATFORM_PARTIAL_RELEASE 0
#define PLATFORM_MOVES_PAGES 0
#else
#define PLATFORM_PARTIAL_RELEASE 1
#define PLATFORM_MOVES_PAGES 1
#endif

/* ---- memory -------------------------------------------------------------- */
/* Reserves size bytes at some base such that base + offset is a multiple of
 * alignment (a power of two); NULL when the address space is exhausted. */
void *platform_reserve_aligned(size_t size, size_t alignment, size_t offset);
/* Makes [p, p + size) of a reservation committed; false when out of memory. */
bool platform_commit(void *p, size_t size);
/* Purges [p, p + size) of a reservation (see the states above). */
void platform_purge(void *p, size_t size);
/* Makes committed [p, p + size) resident now, with one call where touching
 * it would take a fault per OS page; a hint: where the OS cannot (Windows,
 * a Linux kernel before 5.14), the first touches fault as before. */
void platform_populate(void *p, size_t size);
/* Asks the OS to back [p, p + size) with huge pages (2 MiB with 4 KiB pages) where
 * it can, so touching it takes one fault per huge page; a hint: nothing
 * happens where the OS has no such pages for ordinary memory (Windows, whose
 * large pages need a privilege and cannot be purged). */
void platform_advise_huge_pages(void *p, size_t size);
/* Releases a whole reservation (p its start, size its size), or any part
 * [p, p + size) of one when PLATFORM_PARTIAL_RELEASE (Linux); false when it
 * cannot (Windows, for a part: the caller keeps or purges it instead). */
bool platform_release(void *p, size_t size);
/* Grows the reservation [p, p + size) to new_size without moving it, the
 * new part committed; false when the address space after it is taken (and
 * always on Windows, where two reservations cannot be released as one). */
bool platform_extend(void *p, size_t size, size_t new_size);
/* Moves the committed reservation [p, p + size) to a new one of new_size
 * aligned to alignment, without copying the contents; NULL when it cannot
 * (always on Windows: the caller copies). */
void *platform_move_grow(void *p, size_t size, size_t new_size, size_t alignment);
/* Moves the committed pages [from, from + size) onto [to, to + size), a
 * range of another reservation of ours, without copying; the pages that were
 * at `to` are released, and so is the range the pages left. false when it
 * cannot (always on Windows), with nothing changed. */
bool platform_move_pages(void *from, size_t size, void *to);
/* Makes [p, p + size) of a reservation (OS pages) committed and accessible
 * (contents as they were, or zero where never committed), or inaccessible:
 * any touch faults until it is made accessible again, and it stays
 * resident (sampled guard pages, core/guard.c). false when the OS refuses. */
bool platform_protect(void *p, size_t size, bool accessible);
/* Zeroed, committed memory for brisk's own tables, never returned. */
void *platform_table_alloc(size_t size);
void platform_table_free(void *p, size_t size);
/* The OS's page size, read from the OS at run time (4 KiB on x86-64; 4, 16
 * or 64 KiB on ARM64 Linux): valloc and pvalloc align to it, and every
 * range brisk commits, purges or maps starts and ends on one. */
size_t platform_page_size(void);

/* ---- time, threads, locks, fork -------------------------------------------- */
/* Milliseconds from a monotonic clock; coarse (a few ms) and cheap. */
uint64_t platform_clock_ms(void);
/* callback(value) runs in a thread that armed a value, when it exits; once
 * per process. (Windows: a fiber-local storage callback.) */
bool platform_thread_exit_init(void (*callback)(void *value));
void platform_thread_exit_arm(void *value);
/* Starts body on a thread of its own that the program never sees: detached,
 * with every signal blocked, at the program's priority (its work holds locks
 * the program's threads may wait for). false when it cannot; with errno
 * EBUSY when only not now (Linux: another thread is forking). */
bool platform_thread_start(void (*body)(void), const char *name);
void platform_sleep_ms(unsigned ms);
/* An asymmetric fence: platform_fence_all() makes every running thread of
 * the process pass a full memory barrier before it returns, so that threads
 * which only mark themselves with plain stores and loads can be kept out of
 * a structure by one that announces itself and then calls it. Ready only
 * once platform_fence_all_ready() has returned true (Linux: membarrier,
 * 4.14 and later; never on Windows, which runs no purger); false from
 * platform_fence_all() means the barrier may not have happened. */
bool platform_fence_all_ready(void);
bool platform_fence_all(void);
/* prepare runs in the forking thread before fork; parent and child after it
 * (nothing on Windows, which has no fork). */
void platform_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

#ifdef _WIN32
static inline bool platform_lock_try(platform_lock_t *lock) {
  return TryAcquireSRWLockExclusive(lock) != 0;
}
static inline void platform_lock_acquire(platform_lock_t *lock) {
  AcquireSRWLockExclusive(lock);
}
static inline void platform_lock_release(platform_lock_t *lock) {
  ReleaseSRWLockExclusive(lock);
}
typedef struct platform_once_call {
  void (*init)(void);
} platform_once_call;
static inline BOOL CALLBACK platform_once_run(PINIT_ONCE once, PVOID call, PVOID *context) {
  (void)once;
  (void)context;
  ((platform_once_call *)call)->init();
  return TRUE;
}
/* Runs init exactly once per process; other callers wait until it is done. */
static inline void platform_once(platform_once_t *once, void (*init)(void)) {
  platform_once_call call = {init};
  InitOnceExecuteOnce(once, platform_once_run, &call, NULL);
}
#else
static inline bool platform_lock_try(platform_lock_t *lock) {
  return pthread_mutex_trylock(lock) == 0;
}
static inline void platform_lock_acquire(platform_lock_t *lock) {
  pthread_mutex_lock(lock);
}
static inline void platform_lock_release(platform_lock_t *lock) {
  pthread_mutex_unlock(lock);
}
/* Runs init exactly once per process; other callers wait until it is done. */
static inline void platform_once(platform_once_t *once, void (*init)(void)) {
  pthread_once(once, init);
}
#endif
/* The lock is free again, whichever thread held it (a forked child's reset,
 * and a lock's first state). */
static inline void platform_lock_reset(platform_lock_t *lock) {
  const platform_lock_t unlocked = PLATFORM_LOCK_INIT;
  *lock = unlocked;
}

/* ---- thread-local words ------------------------------------------------------
 * Where PLATFORM_TLS_WORDS is defined, brisk keeps its per-thread state in
 * PLATFORM_TLS_COUNT words the platform provides (core.h names them), each
 * read or written with one instruction: on Windows, TlsAlloc slots read
 * straight from the thread's TEB. A word reads 0 in a thread that has not
 * written it. Elsewhere brisk uses the compiler's _Thread_local. */
#define PLATFORM_TLS_COUNT 4
/* Sets the words up, once, at process start; false when the OS has no room
 * for them (Windows: no TEB slot free among the 64). Nothing to do, and
 * true, without PLATFORM_TLS_WORDS. */
bool platform_tls_init(void);
#ifdef PLATFORM_TLS_WORDS
/* Each word's offset in the TEB (its TlsSlots entry). Before
 * platform_tls_init every word is TEB slot 63, the last that TlsAlloc hands
 * out, so that a call that comes first reads 0 as long as fewer than 64 TLS
 * indices are in use. */
extern uint32_t platform_tls_offset[PLATFORM_TLS_COUNT];
#ifdef _WIN64
static inline uintptr_t platform_tls_word(unsigned word) {
  return (uintptr_t)__readgsqword(platform_tls_offset[word]);
}
static inline void platform_tls_word_set(unsigned word, uintptr_t value) {
  __writegsqword(platform_tls_offset[word], value);
}
#else /* 32-bit Windows: the TEB is at fs:0 */
static inline uintptr_t platform_tls_word(unsigned word) {
  return (uintptr_t)__readfsdword(platform_tls_offset[word]);
}
static inline void platform_tls_word_set(unsigned word, uintptr_t value) {
  __writefsdword(platform_tls_offset[word], value);
}
#endif
#endif

/* ---- start and end ----------------------------------------------------------
 * PLATFORM_PROCESS_HOOKS(start, stop), once in the library: start runs when
 * brisk is loaded, before the program's own code (returning false when brisk
 * cannot work), stop when the process ends, after the program's own
 * destructors. Linux: a constructor and a destructor. Windows: DllMain in
 * brisk.dll; a constructor and a destructor in the static library, which a
 * MinGW-linked program runs. Programs linked by Free Pascal or Delphi run
 * no C constructors: their binding calls brisk_binding_init() instead. */
#ifdef _WIN32
/* brisk.dll is being unloaded (FreeLibrary): gives back what would call
 * into it later (the thread-exit callback, the TLS slots). */
void platform_unload(void);
#endif
#if defined(_WIN32) && defined(BRISK_BUILDING_DLL)
#define PLATFORM_PROCESS_HOOKS(start, stop)                                                        \
  BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, LPVOID reserved);                            \
  BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, LPVOID reserved) {                           \
    (void)module;                                                                                  \
    if (reason == DLL_PROCESS_ATTACH) return start() ? TRUE : FALSE;                               \
    if (reason == DLL_PROCESS_DETACH) {                                                            \
      stop();                                                                                      \
      if (reserved == NULL) platform_unload();                                                     \
    }                                                                                              \
    return TRUE;                                                                                   \
  }
#elif defined(_WIN32)
/* The first user priority: before any constructor of the program's own. */
#define PLATFORM_PROCESS_HOOKS(start, stop)                                                        \
  __attribute__((constructor(101))) static void platform_process_start(void) {                     \
    if (!start()) platform_abort();                                                                \
  }                                                                                                \
  __attribute__((destructor(101))) static void platform_process_stop(void) {                       \
    stop();                                                                                        \
  }
#else
#define PLATFORM_PROCESS_HOOKS(start, stop)                                                        \
  __attribute__((constructor)) static void platform_process_start(void) {                          \
    (void)start();                                                                                 \
  }                                                                                                \
  __attribute__((destructor)) static void platform_process_stop(void) {                            \
    stop();                                                                                        \
  }
#endif

/* ---- process ------------------------------------------------------------------ */
/* Random bits chosen at process start (never the same two runs). */
uint64_t platform_random_secret(void);
/* The value of environment variable name, or NULL. Safe before main; never
 * allocates through brisk. The text lasts for the life of the process (on
 * Windows, for the first 16 KiB of values read; later ones until a few more
 * calls). */
const char *platform_getenv(const char *name);
/* The environment as NAME=value strings, ending with NULL. */
const char *const *platform_environment(void);
/* Writes all of text to fd (retrying short writes); never allocates. fd 1
 * and 2 are standard output and error everywhere. What goes to fd 2 goes
 * to PROGRAM.brisk.log beside the executable (PROGRAM.exe -> PROGRAM.brisk.log
 * on Windows), created at the first message, in a program without a console:
 * a Windows GUI program, or one whose standard error is closed. */
void platform_write(int fd, const char *text, size_t length);
/* Opens path for writing (created or truncated); -1 with errno on failure. */
int platform_open_output(const char *path);
void platform_close(int fd);
/* Reads up to size - 1 bytes of the file into text, NUL-terminated; the
 * length, or -1 with errno set. */
long platform_read_file(const char *path, char *text, size_t size);
/* Resident set size now and at its peak, in bytes (0 when unknown). */
void platform_resident(uint64_t *current, uint64_t *peak);
int platform_pid(void);
/* The calling thread's id as the OS names it (Linux: its TID, as in
 * /proc/PID/task/TID), for `brisk top`; set once per heap taken. */
uint32_t platform_thread_id(void);
/* The program's name as invoked, and without its directory. */
const char *platform_program_name(void);
const char *platform_program_short_name(void);
void platform_abort(void) __attribute__((noreturn));
/* hook runs when the process gets this signal (Linux); false when it cannot
 * be caught (a bad number, or a platform without signals: Windows). */
bool platform_on_signal(int signal, void (*hook)(void));
void platform_exit_now(int status) __attribute__((noreturn));

/* ---- stacks and code addresses (diagnostics) ------------------------------------ */
/* Return addresses of the calling thread's stack, innermost first. */
int platform_backtrace(void **frames, int max);
/* The same walked with the cached unwind rules alone (Linux,
 * linux_unwind.c), -1 where platform_backtrace would hand the stack to the
 * C library's unwinder (with glibc) or where the rules do not follow even
 * the first frame (musl, whose walk goes on by frame pointers past the last
 * frame they follow): for tests. */
int platform_backtrace_cached(void **frames, int max);
/* The same from a frame pointer of the calling thread (code that keeps frame
 * pointers and no unwind tables: Free Pascal's): the return address beside
 * each saved frame pointer, following the chain while it stays inside the
 * thread's stack and goes up it. */
int platform_frame_walk(void *frame, void **frames, int max);
/* When address lies in a shared library or DLL (not the program itself),
 * the bounds of that library's code; false otherwise. */
bool platform_library_code(const void *address, uintptr_t *start, uintptr_t *end);
/* Whether the size bytes at address lie in the loaded image of the program
 * or of a library (its constant or static data, or its code), so that
 * reading them cannot fault: what a diagnostic checks before it follows a
 * pointer it found in a block. */
bool platform_image_contains(const void *address, size_t size);
/* Names every frame of a report at once (an expensive step, batched). */
void platform_symbols_prepare(void *const *frames, size_t count);
/* "function (file:line)" for a return address, as well as it can be named
 * (Windows: "?? (module+offset)"). */
void platform_symbol_describe(void *address, char *out, size_t size);
/* Where a return address lies, for naming it later (`brisk symbolize`):
 * the file of its module, the offset in it that addr2line takes, and what
 * tells that build apart: "build id HEX" (Linux: NT_GNU_BUILD_ID; empty
 * when the module has none) or "timestamp HEX" (Windows: the PE header's).
 * false when no module holds it. Never spawns. */
bool platform_code_location(const void *return_address, char *module, size_t module_size,
                            uintptr_t *offset, char *build, size_t build_size);
/* The file of the module holding a code address, and the exported function
 * containing it (empty strings when unknown). Never cached, never spawns. */
void platform_code_names(const void *address, char *module, char *function, size_t size);
/* The function that the call instruction just before a return address
 * called, when it was a direct call (through the PLT or the GOT); else NULL. */
const void *platform_call_target(const void *return_address);

/* A fault (SIGSEGV, SIGBUS; Windows: an access violation) seen by the hook:
 * where, and the registers that may hold a pointer argument, the argument
 * registers first, then (i386, ARM64) the words on top of the stack, where
 * arguments are passed or kept by unoptimised code. */
#define PLATFORM_FAULT_REGISTERS 15
typedef struct platform_fault {
  uintptr_t pc;
  const void *address;
  uintptr_t registers[PLATFORM_FAULT_REGISTERS];
} platform_fault;
/* hook runs on faults; if it returns, the fault goes to whatever handled it
 * before (Linux: by default the OS's default treatment; Windows: the
 * program's own exception handlers). */
void platform_on_fault(void (*hook)(const platform_fault *fault));
/* Gives the calling thread a stack of its own for the fault hook, so that
 * even a stack overflow reaches it (checked mode, main thread). */
void platform_fault_stack(void);

#endif /* BRISK_PLATFORM_H */
