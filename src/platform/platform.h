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

#if defined(__linux__) && defined(__x86_64__) && defined(__GLIBC__)
#include <pthread.h>
typedef pthread_mutex_t platform_lock_t;
#define PLATFORM_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
typedef pthread_once_t platform_once_t;
#define PLATFORM_ONCE_INIT PTHREAD_ONCE_INIT
#else
#error "brisk supports Linux on x86-64 with glibc. A port implements src/platform/platform.h \
(memory reservation and commit, clock, thread-exit callbacks, locks, fork hooks, a random \
secret, stack capture and naming, a fault hook) for its OS and checks the 47-bit address \
space assumed by src/core/segment_map.c."
#endif

/* ---- memory -------------------------------------------------------------- */
/* Reserves size bytes at some base such that base + offset is a multiple of
 * alignment (a power of two); NULL when the address space is exhausted. */
void *platform_reserve_aligned(size_t size, size_t alignment, size_t offset);
/* Makes [p, p + size) of a reservation committed; false when out of memory. */
bool platform_commit(void *p, size_t size);
/* Purges [p, p + size) of a reservation (see the states above). */
void platform_purge(void *p, size_t size);
/* Releases a whole reservation, or any part [p, p + size) of one when
 * PLATFORM_PARTIAL_RELEASE; returns false when it cannot (the caller keeps
 * or purges the range). */
bool platform_release(void *p, size_t size);
#define PLATFORM_PARTIAL_RELEASE 1 /* Linux: munmap takes any page range */
/* Grows the reservation [p, p + size) to new_size without moving it, the
 * new part committed; false when the address space after it is taken. */
bool platform_extend(void *p, size_t size, size_t new_size);
/* Moves the committed reservation [p, p + size) to a new one of new_size
 * aligned to alignment, without copying the contents; NULL when it cannot. */
void *platform_move_grow(void *p, size_t size, size_t new_size, size_t alignment);
/* Zeroed, committed memory for brisk's own tables, never returned. */
void *platform_table_alloc(size_t size);
void platform_table_free(void *p, size_t size);
/* The OS's page size (valloc, pvalloc). */
size_t platform_page_size(void);

/* ---- time, threads, locks, fork -------------------------------------------- */
/* Milliseconds from a monotonic clock; coarse (a few ms) and cheap. */
uint64_t platform_clock_ms(void);
/* callback(value) runs when a thread that armed a value exits; once per process. */
bool platform_thread_exit_init(void (*callback)(void *value));
void platform_thread_exit_arm(void *value);
/* Starts body on a thread of its own that the program never sees: detached,
 * at the lowest priority, with every signal blocked. false when it cannot. */
bool platform_thread_start(void (*body)(void), const char *name);
void platform_sleep_ms(unsigned ms);
/* prepare runs in the forking thread before fork; parent and child after it. */
void platform_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

static inline bool platform_lock_try(platform_lock_t *lock) {
  return pthread_mutex_trylock(lock) == 0;
}
static inline void platform_lock_acquire(platform_lock_t *lock) {
  pthread_mutex_lock(lock);
}
static inline void platform_lock_release(platform_lock_t *lock) {
  pthread_mutex_unlock(lock);
}
/* In a forked child: the lock is free again, whichever thread held it. */
static inline void platform_lock_reset(platform_lock_t *lock) {
  const platform_lock_t unlocked = PLATFORM_LOCK_INIT;
  *lock = unlocked;
}
/* Runs init exactly once per process; other callers wait until it is done. */
static inline void platform_once(platform_once_t *once, void (*init)(void)) {
  pthread_once(once, init);
}

/* ---- process ------------------------------------------------------------------ */
/* Random bits chosen at process start (never the same two runs). */
uint64_t platform_random_secret(void);
/* The value of environment variable name, or NULL. Safe before main. */
const char *platform_getenv(const char *name);
/* The environment as NAME=value strings, ending with NULL. */
const char *const *platform_environment(void);
/* Writes all of text to fd (retrying short writes); never allocates. */
void platform_write(int fd, const char *text, size_t length);
/* Opens path for writing (created or truncated); -1 with errno on failure. */
int platform_open_output(const char *path);
void platform_close(int fd);
/* Resident set size now and at its peak, in bytes (0 when unknown). */
void platform_resident(uint64_t *current, uint64_t *peak);
int platform_pid(void);
/* The program's name as invoked, and without its directory. */
const char *platform_program_name(void);
const char *platform_program_short_name(void);
void platform_abort(void) __attribute__((noreturn));
void platform_exit_now(int status) __attribute__((noreturn));

/* ---- stacks and code addresses (diagnostics) ------------------------------------ */
/* Return addresses of the calling thread's stack, innermost first. */
int platform_backtrace(void **frames, int max);
/* When address lies in a shared library (not the program itself), the
 * bounds of that library's code; false otherwise. */
bool platform_library_code(const void *address, uintptr_t *start, uintptr_t *end);
/* Names every frame of a report at once (an expensive step, batched). */
void platform_symbols_prepare(void *const *frames, size_t count);
/* "function (file:line)" for a return address, as well as it can be named. */
void platform_symbol_describe(void *address, char *out, size_t size);
/* The file of the module holding a code address, and the exported function
 * containing it (empty strings when unknown). Never cached, never spawns. */
void platform_code_names(const void *address, char *module, char *function, size_t size);
/* The function that the call instruction just before a return address
 * called, when it was a direct call (through the PLT or the GOT); else NULL. */
const void *platform_call_target(const void *return_address);

/* A fault (SIGSEGV, SIGBUS) seen by the hook: where, and the registers that
 * may hold a pointer argument, the argument registers first. */
#define PLATFORM_FAULT_REGISTERS 15
typedef struct platform_fault {
  uintptr_t pc;
  const void *address;
  uintptr_t registers[PLATFORM_FAULT_REGISTERS];
} platform_fault;
/* hook runs on faults; if it returns, the fault goes to whatever handled it
 * before (by default: the OS's default treatment). */
void platform_on_fault(void (*hook)(const platform_fault *fault));
/* Gives the calling thread a stack of its own for the fault hook, so that
 * even a stack overflow reaches it (checked mode, main thread). */
void platform_fault_stack(void);

#endif /* BRISK_PLATFORM_H */
