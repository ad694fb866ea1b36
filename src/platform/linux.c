/* SPDX-License-Identifier: MIT */
/* The platform contract on Linux (x86-64 and ARM64; glibc or musl): memory
 * through mmap, madvise and mremap; time, thread exit, fork hooks and
 * process facts. Nothing here depends on the CPU, and only what both C
 * libraries provide is used. */
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The kernel's membarrier commands (linux/membarrier.h, which musl-gcc's
 * include path leaves out with the other kernel headers). */
#define MEMBARRIER_CMD_QUERY 0
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; headers may be older */
#endif

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* ---- memory -------------------------------------------------------------- */
/* Release builds map reservations readable and writable, so committing is
 * free; BRISK_DEBUG builds map them inaccessible and commit with mprotect,
 * so code that touches memory it never committed faults here too. */
#ifdef BRISK_DEBUG
#define RESERVE_PROTECTION PROT_NONE
#else
#define RESERVE_PROTECTION (PROT_READ | PROT_WRITE)
#endif

static void *map_at(void *hint, size_t size, int protection, int extra_flags) {
  void *p = mmap(hint, size, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* The kernel hands out addresses top-down; asking just below the last
 * reservation usually yields an aligned range in one call. */
static _Atomic(uintptr_t) xnext_hint;

void *platform_reserve_aligned(size_t size, size_t alignment, size_t offset) {
  if (offset % alignment == 0) {
    uintptr_t hint = atomic_load_explicit(&xnext_hint, memory_order_relaxed);
    if (hint > size + alignment) {
      uintptr_t want = (hint - size) & ~(uintptr_t)(alignment - 1);
      void *p = map_at((void *)want, size, RESERVE_PROTECTION, 0);
      if (p != NULL && ((uintptr_t)p & (alignment - 1)) == 0) {
        atomic_store_explicit(&xnext_hint, (uintptr_t)p, memory_order_relaxed);
        return p;
      }
      if (p != NULL) munmap(p, size);
    }
  }
  /* Over-map and trim both ends. */
  size_t over = size + alignment;
  if (over < size) return NULL;
  uint8_t *raw = map_at(NULL, over, RESERVE_PROTECTION, 0);
  if (raw == NULL) return NULL;
  uintptr_t base =
      ((((uintptr_t)raw + offset + alignment - 1) & ~(uintptr_t)(alignment - 1))) - offset;
  if (base < (uintptr_t)raw) base += alignment;
  size_t head = base - (uintptr_t)raw;
  size_t tail = over - head - size;
  if (head != 0) munmap(raw, head);
  if (tail != 0) munmap((uint8_t *)base + size, tail);
  atomic_store_explicit(&xnext_hint, base, memory_order_relaxed);
  return (void *)base;
}

/* The kernel takes ranges that start on an OS page and rounds their ends up
 * (madvise would purge the rest of the last page), so brisk hands it only
 * whole pages. A debug build stops at a range that is not: qemu-user, which
 * tests 16 and 64 KiB pages on its 4 KiB ones, would not refuse it. */
static void check_whole_pages(const void *p, size_t size) {
#ifdef BRISK_DEBUG
  size_t page = platform_page_size();
  if (((uintptr_t)p | size) & (page - 1)) {
    static const char text[] = "brisk: internal error: a range of memory that is not whole OS "
                               "pages was committed or purged\n";
    platform_write(2, text, sizeof text - 1);
    abort();
  }
#else
  (void)p;
  (void)size;
#endif
}

bool platform_commit(void *p, size_t size) {
  check_whole_pages(p, size);
#ifdef BRISK_DEBUG
  return size == 0 || mprotect(p, size, PROT_READ | PROT_WRITE) == 0;
#else
  (void)p;
  (void)size;
  return true;
#endif
}

void platform_purge(void *p, size_t size) {
  check_whole_pages(p, size);
  if (size == 0) return;
  madvise(p, size, MADV_DONTNEED);
#ifdef BRISK_DEBUG
  mprotect(p, size, PROT_NONE);
#endif
}

bool platform_protect(void *p, size_t size, bool accessible) {
  return mprotect(p, size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
}

/* Asked once more after a refusal would cost a system call per block. */
static _Atomic(bool) xpopulate_refused;

void platform_populate(void *p, size_t size) {
  check_whole_pages(p, size);
  if (atomic_load_explicit(&xpopulate_refused, memory_order_relaxed)) return;
  if (madvise(p, size, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
    atomic_store_explicit(&xpopulate_refused, true, memory_order_relaxed); /* before 5.14 */
}

/* Transparent huge pages: the kernel backs a 2 MiB-aligned range with one
 * huge page (2 MiB with 4 KiB pages; 32 MiB with 16 KiB, 512 MiB with 64
 * KiB) at the first touch when the range is advised (the default "madvise"
 * mode) or always ("always" mode); "never", or a kernel without them,
 * refuses the advice, and the range keeps its ordinary pages. A purge of
 * part of a huge page splits it. */
void platform_advise_huge_pages(void *p, size_t size) {
  madvise(p, size, MADV_HUGEPAGE);
}

bool platform_release(void *p, size_t size) {
  return munmap(p, size) == 0;
}

bool platform_extend(void *p, size_t size, size_t new_size) {
  uint8_t *want = (uint8_t *)p + size;
  size_t extra = new_size - size;
  void *got = map_at(want, extra, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
  if (got == NULL) return false;
  if (got != want) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
    munmap(got, extra);
    return false;
  }
  return true;
}

void *platform_move_grow(void *p, size_t size, size_t new_size, size_t alignment) {
  void *target = platform_reserve_aligned(new_size, alignment, 0);
  if (target == NULL) return NULL;
  void *moved = mremap(p, size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (moved == MAP_FAILED) {
    munmap(target, new_size);
    return NULL;
  }
  platform_commit(moved, new_size);
  return moved;
}

bool platform_move_pages(void *from, size_t size, void *to) {
  return mremap(from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED;
}

void *platform_table_alloc(size_t size) {
  return map_at(NULL, size, PROT_READ | PROT_WRITE, 0);
}

void platform_table_free(void *p, size_t size) {
  munmap(p, size);
}

/* From the auxiliary vector the kernel gave the process (no system call),
 * once: ARM64 kernels are built with 4, 16 or 64 KiB pages. */
size_t platform_page_size(void) {
  size_t size = (size_t)getauxval(AT_PAGESZ);
  return size != 0 ? size : (size_t)sysconf(_SC_PAGESIZE);
}

/* ---- time, threads, fork ---------------------------------------------------- */
uint64_t platform_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static pthread_key_t thread_exit_key;

bool platform_thread_exit_init(void (*callback)(void *value)) {
  return pthread_key_create(&thread_exit_key, callback) == 0;
}

void platform_thread_exit_arm(void *value) {
  pthread_setspecific(thread_exit_key, value);
}

static void *thread_body(void *body) {
  ((void (*)(void))body)();
  return NULL;
}

/* brisk starts its thread from inside an allocation, where the caller may
 * hold any lock of its own: a thread growing a stdio buffer holds that
 * FILE's. musl's fork takes the lock pthread_create needs before stdio's
 * list lock, and fflush(NULL) holds the list lock while it waits for each
 * FILE: a thread start inside fprintf's realloc, a fork and a flush at the
 * same moment wait on each other for good. So no start begins once a fork
 * has begun (the start gives up, to be tried again later), and a fork waits
 * for a start under way, which waits on no lock fork has taken yet: fork
 * runs this prepare handler before it takes any. The starter keeps every
 * signal blocked while it is marked, so a handler that forks never waits
 * for its own thread. */
static _Atomic(int) xforks_under_way;
static _Atomic(int) xstarts_under_way;

static void fork_prepare(void) {
  atomic_fetch_add(&xforks_under_way, 1);
  while (atomic_load(&xstarts_under_way) != 0)
    sched_yield();
}

static void fork_parent(void) {
  atomic_fetch_sub(&xforks_under_way, 1);
}

static void fork_child(void) {
  atomic_store(&xforks_under_way, 0);
  atomic_store(&xstarts_under_way, 0);
}

/* pthread_create's result (or pthread_attr_init's). */
static int thread_create(void (*body)(void), pthread_t *thread) {
  pthread_attr_t attr;
  int error = pthread_attr_init(&attr);
  if (error != 0) return error;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* 64 KiB, or the C library's least where it is more (glibc on ARM64:
   * 128 KiB, for kernels with 64 KiB pages). */
  long least = sysconf(_SC_THREAD_STACK_MIN);
  pthread_attr_setstacksize(&attr, least > 64 * 1024 ? (size_t)least : 64 * 1024);
  error = pthread_create(thread, &attr, thread_body, (void *)body);
  pthread_attr_destroy(&attr);
  return error;
}

bool platform_thread_start(void (*body)(void), const char *name) {
  /* Signals meant for the program never land on the new thread (it keeps
   * this mask), nor on this one while it is marked as starting (above). */
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  /* From pthread_attr_init on: musl's takes the lock fork holds too. */
  atomic_fetch_add(&xstarts_under_way, 1);
  int error = EBUSY;
  pthread_t thread;
  if (atomic_load(&xforks_under_way) == 0) error = thread_create(body, &thread);
  atomic_fetch_sub(&xstarts_under_way, 1);
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (error == EBUSY) errno = EBUSY;
  if (error != 0) return false;
  pthread_setname_np(thread, name);
  return true;
}

/* Private expedited membarrier: an interrupt to each CPU running one of the
 * process's threads, none to the others; registered once. */
bool platform_fence_all_ready(void) {
  long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

bool platform_fence_all(void) {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void platform_sleep_ms(unsigned ms) {
  struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

void platform_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  pthread_atfork(prepare, parent, child);
}

bool platform_tls_init(void) {
  return true; /* brisk uses the compiler's _Thread_local (initial-exec) here */
}

/* ---- process ------------------------------------------------------------------ */
uint64_t platform_random_secret(void) {
  uint64_t secret = 0x9e3779b97f4a7c15u;
  const uint8_t *random_bytes = (const uint8_t *)getauxval(AT_RANDOM);
  if (random_bytes != NULL) memcpy(&secret, random_bytes, sizeof secret);
  return secret;
}

const char *platform_getenv(const char *name) {
  return getenv(name);
}

const char *const *platform_environment(void) {
  extern char **environ;
  return (const char *const *)environ;
}

/* The log beside the executable that stands in for a closed standard error
 * (see platform.h); -1 when it cannot be created. */
static int message_log(void) {
  static _Atomic(int) xlog = -2; /* -2: not tried yet */
  int log = atomic_load_explicit(&xlog, memory_order_acquire);
  if (log != -2) return log;
  char path[4096 + 16];
  ssize_t length = readlink("/proc/self/exe", path, 4096);
  log = -1;
  if (length > 0) {
    memcpy(path + length, ".brisk.log", sizeof ".brisk.log");
    log = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  }
  int expected = -2;
  if (!atomic_compare_exchange_strong(&xlog, &expected, log)) {
    if (log >= 0) close(log);
    log = expected; /* another thread opened it first */
  }
  return log;
}

void platform_write(int fd, const char *text, size_t length) {
  for (size_t done = 0; done < length;) {
    ssize_t written = write(fd, text + done, length - done);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && errno == EBADF && fd == 2) {
      fd = message_log();
      if (fd < 0) return;
      continue;
    }
    if (written <= 0) return;
    done += (size_t)written;
  }
}

int platform_open_output(const char *path) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

void platform_close(int fd) {
  close(fd);
}

long platform_read_file(const char *path, char *text, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t length = 0;
  ssize_t n;
  while (length + 1 < size && (n = read(fd, text + length, size - 1 - length)) > 0)
    length += (size_t)n;
  close(fd);
  text[length] = 0;
  return (long)length;
}

/* "Key:   N kB" from /proc/self/status, in bytes. */
static uint64_t status_kb(const char *text, const char *key) {
  const char *at = strstr(text, key);
  return at ? strtoull(at + strlen(key), NULL, 10) * 1024u : 0;
}

void platform_resident(uint64_t *current, uint64_t *peak) {
  char text[4096] = ""; /* left empty when the file cannot be read: 0 */
  platform_read_file("/proc/self/status", text, sizeof text);
  *current = status_kb(text, "VmRSS:");
  *peak = status_kb(text, "VmHWM:");
}

int platform_pid(void) {
  return (int)getpid();
}

uint32_t platform_thread_id(void) {
  return (uint32_t)syscall(SYS_gettid);
}

const char *platform_program_name(void) {
  return program_invocation_name;
}

const char *platform_program_short_name(void) {
  return program_invocation_short_name;
}

void platform_abort(void) {
  abort();
}

void platform_exit_now(int status) {
  _exit(status);
}

static void (*signal_hook)(void);

static void on_signal(int signal) {
  (void)signal;
  if (signal_hook != NULL) signal_hook();
}

bool platform_on_signal(int signal, void (*hook)(void)) {
  if (signal <= 0 || signal >= NSIG || signal == SIGKILL || signal == SIGSTOP) return false;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  signal_hook = hook;
  return sigaction(signal, &action, NULL) == 0;
}
