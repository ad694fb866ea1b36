/* SPDX-License-Identifier: MIT */
/* The platform contract on 64-bit Windows: memory through VirtualAlloc and
 * VirtualFree; the clock, thread exit (fiber-local storage callbacks),
 * thread-local words (TlsAlloc slots read from the TEB) and process facts.
 *
 * Everything here comes from kernel32 and bcrypt (and errno from msvcrt),
 * never from MinGW's runtime libraries, so that the static library links
 * into programs built without them (Free Pascal, Delphi). Failures that are
 * part of normal operation (an address already taken, a tail that cannot
 * be released) leave the thread's last-error value as the program set it. */
#include "platform.h"

#include <bcrypt.h>
#include <errno.h>
#include <psapi.h>
#include <stdatomic.h>
#include <string.h>

/* ---- memory -------------------------------------------------------------- */
/* Reservations and their alignment are in units of the allocation
 * granularity, 64 KiB; commits and purges in OS pages, 4 KiB. */
static void *reserve_at(void *address, size_t size) {
  return VirtualAlloc(address, size, MEM_RESERVE, PAGE_NOACCESS);
}

/* VirtualAlloc2 (Windows 10 1803 and later, Wine) reserves at an aligned
 * address in one call; it is looked up, so brisk still starts on older
 * Windows, which take the slower way below. */
typedef PVOID(WINAPI *virtual_alloc2_fn)(HANDLE, PVOID, SIZE_T, ULONG, ULONG,
                                         MEM_EXTENDED_PARAMETER *, ULONG);
static _Atomic(virtual_alloc2_fn) xvirtual_alloc2;
static _Atomic(int) xvirtual_alloc2_looked_up;

static virtual_alloc2_fn virtual_alloc2(void) {
  if (atomic_load_explicit(&xvirtual_alloc2_looked_up, memory_order_acquire))
    return atomic_load_explicit(&xvirtual_alloc2, memory_order_relaxed);
  virtual_alloc2_fn found = NULL;
  const char *const modules[] = {"kernelbase.dll", "kernel32.dll"};
  for (size_t i = 0; i < sizeof modules / sizeof modules[0] && found == NULL; i++) {
    HMODULE module = GetModuleHandleA(modules[i]);
    FARPROC address = module != NULL ? GetProcAddress(module, "VirtualAlloc2") : NULL;
    if (address != NULL) found = (virtual_alloc2_fn)(void (*)(void))address;
  }
  atomic_store_explicit(&xvirtual_alloc2, found, memory_order_relaxed);
  atomic_store_explicit(&xvirtual_alloc2_looked_up, 1, memory_order_release);
  return found;
}

static void *reserve_aligned_at_once(size_t size, size_t alignment) {
  virtual_alloc2_fn allocate = virtual_alloc2();
  if (allocate == NULL) return NULL;
  MEM_ADDRESS_REQUIREMENTS requirements = {NULL, NULL, alignment};
  MEM_EXTENDED_PARAMETER parameter = {0};
  parameter.Type = MemExtendedParameterAddressRequirements;
  parameter.Pointer = &requirements;
  return allocate(NULL, NULL, size, MEM_RESERVE, PAGE_NOACCESS, &parameter, 1);
}

/* Windows releases only whole reservations, so the Linux way (reserve more,
 * trim both ends) does not work: reserve size + alignment to find a free
 * range, release it, and reserve the aligned part of it, again if another
 * thread took it in between. base + offset must be aligned, so offset must
 * be a multiple of the allocation granularity. */
void *platform_reserve_aligned(size_t size, size_t alignment, size_t offset) {
  DWORD saved_error = GetLastError();
  void *result = NULL;
  if (offset % alignment == 0) result = reserve_aligned_at_once(size, alignment);
  for (int attempt = 0; result == NULL && attempt < 64; attempt++) {
    size_t over = size + alignment;
    if (over < size) break;
    uint8_t *raw = reserve_at(NULL, over);
    if (raw == NULL) break;
    uintptr_t base =
        (((uintptr_t)raw + offset + alignment - 1) & ~(uintptr_t)(alignment - 1)) - offset;
    if (base < (uintptr_t)raw) base += alignment;
    VirtualFree(raw, 0, MEM_RELEASE);
    result = reserve_at((void *)base, size);
    if (result != NULL && (uintptr_t)result != base) {
      VirtualFree(result, 0, MEM_RELEASE);
      result = NULL;
    }
  }
  SetLastError(saved_error);
  return result;
}

bool platform_commit(void *p, size_t size) {
  return VirtualAlloc(p, size, MEM_COMMIT, PAGE_READWRITE) != NULL;
}

/* Decommitted pages are exactly the contract's purged state: they hold no
 * memory, and fault until committed again (when they read zero). */
void platform_purge(void *p, size_t size) {
  VirtualFree(p, size, MEM_DECOMMIT);
}

/* Committing pages already committed sets their protection. */
bool platform_protect(void *p, size_t size, bool accessible) {
  if (accessible) return platform_commit(p, size);
  DWORD old;
  if (VirtualProtect(p, size, PAGE_NOACCESS, &old)) return true;
  MEMORY_BASIC_INFORMATION info; /* reserved and never committed: no access already */
  return VirtualQuery(p, &info, sizeof info) != 0 && info.State == MEM_RESERVE &&
         (const char *)info.BaseAddress + info.RegionSize >= (const char *)p + size;
}

/* Committed pages fault in one at a time here too, but Windows has no call
 * that writes them in ahead of use (PrefetchVirtualMemory reads). */
void platform_populate(void *p, size_t size) {
  (void)p;
  (void)size;
}

void platform_advise_huge_pages(void *p, size_t size) {
  (void)p;
  (void)size;
}

/* MEM_RELEASE takes a reservation's start and releases all of it; for any
 * other address (a tail) it fails, and so does this. */
bool platform_release(void *p, size_t size) {
  (void)size;
  DWORD saved_error = GetLastError();
  bool released = VirtualFree(p, 0, MEM_RELEASE) != 0;
  SetLastError(saved_error);
  return released;
}

/* A reservation placed after another is a reservation of its own, which
 * the single release of the block would leave behind: never. */
bool platform_extend(void *p, size_t size, size_t new_size) {
  (void)p;
  (void)size;
  (void)new_size;
  return false;
}

/* Windows cannot move pages between reservations: the caller copies. */
void *platform_move_grow(void *p, size_t size, size_t new_size, size_t alignment) {
  (void)p;
  (void)size;
  (void)new_size;
  (void)alignment;
  return NULL;
}

/* Nor can it move pages onto another reservation. */
bool platform_move_pages(void *from, size_t size, void *to) {
  (void)from;
  (void)size;
  (void)to;
  return false;
}

/* Committed at once (it counts against the commit limit, but pages become
 * resident only when touched), because tables are read anywhere. */
void *platform_table_alloc(size_t size) {
  return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void platform_table_free(void *p, size_t size) {
  (void)size;
  VirtualFree(p, 0, MEM_RELEASE);
}

size_t platform_page_size(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
}

/* ---- time, threads --------------------------------------------------------- */
uint64_t platform_clock_ms(void) {
  return GetTickCount64();
}

/* A fiber-local storage callback runs in every kind of program (a DLL's
 * DLL_THREAD_DETACH runs only in the DLL, TLS callbacks only where the
 * linker builds the image's list), before the DLLs' thread detach. So code
 * that runs after it in the ending thread (another DLL's DLL_THREAD_DETACH,
 * a TLS callback, a later FLS callback) may allocate again, and Windows
 * would not call back for a value stored then: such a late arm waits for
 * the thread's handle instead, and the callback runs on a thread-pool
 * thread once the thread is gone. (Deleting a fiber calls the callbacks
 * too, for the fiber's value; its thread then takes the late way.) */
static DWORD fls_index = FLS_OUT_OF_INDEXES;
static DWORD exited_index = TLS_OUT_OF_INDEXES; /* non-NULL: the callback ran here */
static void (*_Atomic xthread_exit_callback)(void *value);

static void WINAPI on_fiber_exit(PVOID value) {
  void (*callback)(void *) = atomic_load_explicit(&xthread_exit_callback, memory_order_acquire);
  if (callback == NULL) return;
  DWORD saved_error = GetLastError();
  TlsSetValue(exited_index, (void *)1);
  SetLastError(saved_error);
  if (value != NULL) callback(value);
}

typedef struct late_exit {
  HANDLE thread, wait;
  void *value;
} late_exit;

static void CALLBACK on_thread_end(PVOID context, BOOLEAN timed_out) {
  (void)timed_out;
  late_exit *late = context;
  void (*callback)(void *) = atomic_load_explicit(&xthread_exit_callback, memory_order_acquire);
  if (callback != NULL) callback(late->value);
  UnregisterWait(late->wait);
  CloseHandle(late->thread);
  HeapFree(GetProcessHeap(), 0, late);
}

/* The record lives in the process heap, not in brisk: this runs while
 * brisk gives the thread a heap. */
static bool arm_thread_end(void *value) {
  late_exit *late = HeapAlloc(GetProcessHeap(), 0, sizeof *late);
  if (late == NULL) return false;
  late->value = value;
  if (DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(), &late->thread,
                      SYNCHRONIZE, FALSE, 0)) {
    if (RegisterWaitForSingleObject(&late->wait, late->thread, on_thread_end, late, INFINITE,
                                    WT_EXECUTEONLYONCE))
      return true;
    CloseHandle(late->thread);
  }
  HeapFree(GetProcessHeap(), 0, late);
  return false;
}

/* While the process ends (ExitProcess: the DLLs' process detach), a late
 * heap is left as it is: nobody will need it, and the thread pool is going. */
typedef BOOLEAN(WINAPI *shutdown_query_fn)(void);
static shutdown_query_fn shutdown_in_progress;

static bool process_ending(void) {
  return shutdown_in_progress != NULL && shutdown_in_progress();
}

bool platform_thread_exit_init(void (*callback)(void *value)) {
  atomic_store_explicit(&xthread_exit_callback, callback, memory_order_release);
  HMODULE ntdll = GetModuleHandleA("ntdll.dll");
  FARPROC query = ntdll != NULL ? GetProcAddress(ntdll, "RtlDllShutdownInProgress") : NULL;
  if (query != NULL) shutdown_in_progress = (shutdown_query_fn)(void (*)(void))query;
  exited_index = TlsAlloc();
  if (exited_index == TLS_OUT_OF_INDEXES) return false;
  fls_index = FlsAlloc(on_fiber_exit);
  return fls_index != FLS_OUT_OF_INDEXES;
}

void platform_thread_exit_arm(void *value) {
  if (fls_index == FLS_OUT_OF_INDEXES) return;
  DWORD saved_error = GetLastError();
  if (TlsGetValue(exited_index) == NULL || process_ending() || !arm_thread_end(value))
    FlsSetValue(fls_index, value);
  SetLastError(saved_error);
}

/* No background thread on Windows: ExitProcess ends other threads wherever
 * they are, and one that held a brisk lock then would hang the exit reports
 * that run after it. brisk purges eagerly instead (core/background.c). */
bool platform_thread_start(void (*body)(void), const char *name) {
  (void)body;
  (void)name;
  return false;
}

/* No background purger runs here (platform_thread_start), so owners have
 * nobody to fence against and keep the lock. */
bool platform_fence_all_ready(void) {
  return false;
}

bool platform_fence_all(void) {
  return false;
}

void platform_sleep_ms(unsigned ms) {
  Sleep(ms);
}

void platform_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  (void)prepare; /* no fork on Windows */
  (void)parent;
  (void)child;
}

/* ---- thread-local words ----------------------------------------------------- */
/* The TEB (at gs:0; fs:0 on 32-bit Windows) holds a thread's first 64 TLS
 * slots at this offset, and TlsGetValue does no more than read them. Higher
 * indices live elsewhere. */
#ifdef _WIN64
#define TEB_TLS_SLOTS 0x1480
#define TEB_READ(offset) __readgsqword(offset)
#else
#define TEB_TLS_SLOTS 0xE10
#define TEB_READ(offset) __readfsdword(offset)
#endif
#define TEB_SLOT_COUNT 64
#define TEB_SLOT_OFFSET(index) (TEB_TLS_SLOTS + sizeof(void *) * (uint32_t)(index))

uint32_t platform_tls_offset[PLATFORM_TLS_COUNT] = {[0 ... PLATFORM_TLS_COUNT - 1] =
                                                        TEB_SLOT_OFFSET(TEB_SLOT_COUNT - 1)};
static DWORD tls_index[PLATFORM_TLS_COUNT];

/* TlsAlloc zeroes the slot in every thread; a value stored through the API
 * must read back through the TEB, or the layout is not what brisk knows. */
static bool tls_slot_usable(DWORD index) {
  if (index == TLS_OUT_OF_INDEXES || index >= TEB_SLOT_COUNT) return false;
  uintptr_t probe = (uintptr_t)&tls_index;
  TlsSetValue(index, (void *)probe);
  bool readable = TEB_READ(TEB_SLOT_OFFSET(index)) == probe;
  TlsSetValue(index, NULL);
  return readable;
}

bool platform_tls_init(void) {
  DWORD saved_error = GetLastError();
  int taken = 0;
  for (; taken < PLATFORM_TLS_COUNT; taken++) {
    tls_index[taken] = TlsAlloc();
    if (!tls_slot_usable(tls_index[taken])) break;
  }
  bool ready = taken == PLATFORM_TLS_COUNT;
  if (ready) {
    for (int i = 0; i < PLATFORM_TLS_COUNT; i++)
      platform_tls_offset[i] = TEB_SLOT_OFFSET(tls_index[i]);
  } else { /* give back what was taken */
    if (tls_index[taken] != TLS_OUT_OF_INDEXES) TlsFree(tls_index[taken]);
    while (taken-- > 0)
      TlsFree(tls_index[taken]);
  }
  SetLastError(saved_error);
  return ready;
}

void platform_unload(void) {
  atomic_store_explicit(&xthread_exit_callback, NULL, memory_order_release);
  if (fls_index != FLS_OUT_OF_INDEXES) FlsFree(fls_index);
  fls_index = FLS_OUT_OF_INDEXES;
  if (exited_index != TLS_OUT_OF_INDEXES) TlsFree(exited_index);
  exited_index = TLS_OUT_OF_INDEXES;
  for (int i = 0; i < PLATFORM_TLS_COUNT; i++) {
    platform_tls_offset[i] = TEB_SLOT_OFFSET(TEB_SLOT_COUNT - 1);
    TlsFree(tls_index[i]);
  }
}

/* ---- process ------------------------------------------------------------------ */
uint64_t platform_random_secret(void) {
  uint64_t secret = 0;
  if (BCryptGenRandom(NULL, (PUCHAR)&secret, sizeof secret, BCRYPT_USE_SYSTEM_PREFERRED_RNG) < 0 ||
      secret == 0) {
    LARGE_INTEGER now;
    QueryPerformanceCounter(&now);
    secret = ((uint64_t)now.QuadPart * 0x9e3779b97f4a7c15u) ^ (uintptr_t)&now ^
             ((uint64_t)GetCurrentProcessId() << 32);
  }
  return secret;
}

/* The value is copied into static memory, never into allocated memory, and
 * stays there: the options keep the text of file settings (BRISK_LEAKS_FILE,
 * BRISK_HEAP_PROFILE, ...) for the life of the process. Values go one after
 * another into a pool; when it is full, into one of a few buffers reused
 * from the fourth call on. */
#define ENV_TEXT 1024
#define ENV_POOL (16 * ENV_TEXT)
#define ENV_BUFFERS 4
static char env_pool[ENV_POOL];
static _Atomic(size_t) xenv_pool_used;
static char env_text[ENV_BUFFERS][ENV_TEXT];
static _Atomic(unsigned) xenv_next;

const char *platform_getenv(const char *name) {
  DWORD saved_error = GetLastError();
  char *out =
      env_text[atomic_fetch_add_explicit(&xenv_next, 1, memory_order_relaxed) % ENV_BUFFERS];
  SetLastError(ERROR_SUCCESS);
  DWORD length = GetEnvironmentVariableA(name, out, ENV_TEXT);
  bool found = length < ENV_TEXT && (length > 0 || GetLastError() != ERROR_ENVVAR_NOT_FOUND);
  if (length == 0) out[0] = 0;
  SetLastError(saved_error);
  if (!found) return NULL;
  size_t at = atomic_fetch_add_explicit(&xenv_pool_used, (size_t)length + 1, memory_order_relaxed);
  if (at + length + 1 > ENV_POOL) return out;
  memcpy(env_pool + at, out, (size_t)length + 1);
  return env_pool + at;
}

/* File descriptors are handles, except 1 and 2 for the standard streams
 * (handles are multiples of 4, and fit in 32 bits on 64-bit Windows). */
static HANDLE handle_of(int fd) {
  if (fd == 1) return GetStdHandle(STD_OUTPUT_HANDLE);
  if (fd == 2) return GetStdHandle(STD_ERROR_HANDLE);
  return (HANDLE)(intptr_t)fd;
}

/* The environment block, "NAME=value" strings one after another, as an
 * array of pointers (the block is the OS's, never brisk's). */
const char *const *platform_environment(void) {
  static const char *entries[512];
  char *block = GetEnvironmentStringsA();
  size_t count = 0;
  for (char *entry = block; entry != NULL && *entry != 0 && count + 1 < 512;
       entry += strlen(entry) + 1)
    entries[count++] = entry;
  entries[count] = NULL;
  return entries;
}

/* The log beside the executable that stands in for a missing standard error
 * (see platform.h); INVALID_HANDLE_VALUE when it cannot be created. */
static HANDLE log_handle = INVALID_HANDLE_VALUE;

static BOOL CALLBACK log_open(PINIT_ONCE once, PVOID parameter, PVOID *context) {
  (void)once, (void)parameter, (void)context;
  static const char suffix[] = ".brisk.log";
  char path[MAX_PATH + sizeof suffix];
  DWORD length = GetModuleFileNameA(NULL, path, MAX_PATH);
  if (length == 0 || length >= MAX_PATH) return TRUE;
  DWORD end = length; /* PROGRAM.exe -> PROGRAM.brisk.log */
  while (end > 0 && path[end - 1] != '.' && path[end - 1] != '\\')
    end--;
  end = end > 0 && path[end - 1] == '.' ? end - 1 : length;
  memcpy(path + end, suffix, sizeof suffix);
  log_handle = CreateFileA(path, GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_ALWAYS,
                           FILE_ATTRIBUTE_NORMAL, NULL);
  return TRUE;
}

static HANDLE message_log(void) {
  static INIT_ONCE once = INIT_ONCE_STATIC_INIT;
  InitOnceExecuteOnce(&once, log_open, NULL, NULL);
  return log_handle;
}

/* A GUI program (PE subsystem "Windows GUI": built with -mwindows, Free
 * Pascal's -WG or {$APPTYPE GUI}) has no console: started from Explorer it
 * has no standard error at all, and what a parent may pass instead is
 * seldom read. Its messages go to the log whatever its handles are, so
 * that they are found in one place. */
static bool is_gui_program(void) {
  const uint8_t *base = (const uint8_t *)GetModuleHandleA(NULL);
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  const IMAGE_NT_HEADERS64 *nt = (const IMAGE_NT_HEADERS64 *)(base + dos->e_lfanew);
  return nt->OptionalHeader.Subsystem == IMAGE_SUBSYSTEM_WINDOWS_GUI;
}

void platform_write(int fd, const char *text, size_t length) {
  HANDLE handle = handle_of(fd);
  if (fd == 2 && (handle == NULL || handle == INVALID_HANDLE_VALUE || is_gui_program()))
    handle = message_log();
  if (handle == NULL || handle == INVALID_HANDLE_VALUE) return;
  while (length > 0) {
    DWORD chunk = length > 0x40000000u ? 0x40000000u : (DWORD)length, written = 0;
    if (!WriteFile(handle, text, chunk, &written, NULL) || written == 0) return;
    text += written;
    length -= written;
  }
}

int platform_open_output(const char *path) {
  HANDLE handle = CreateFileA(path, GENERIC_WRITE, FILE_SHARE_READ, NULL, CREATE_ALWAYS,
                              FILE_ATTRIBUTE_NORMAL, NULL);
  if (handle != INVALID_HANDLE_VALUE) return (int)(intptr_t)handle;
  switch (GetLastError()) {
  case ERROR_FILE_NOT_FOUND:
  case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_NAME:
    errno = ENOENT;
    break;
  case ERROR_ACCESS_DENIED:
  case ERROR_SHARING_VIOLATION:
    errno = EACCES;
    break;
  default:
    errno = EIO;
  }
  return -1;
}

void platform_close(int fd) {
  CloseHandle(handle_of(fd));
}

long platform_read_file(const char *path, char *text, size_t size) {
  HANDLE handle = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, NULL);
  if (handle == INVALID_HANDLE_VALUE) {
    errno = ENOENT;
    return -1;
  }
  size_t length = 0;
  DWORD n;
  while (length + 1 < size &&
         ReadFile(handle, text + length, (DWORD)(size - 1 - length), &n, NULL) && n > 0)
    length += n;
  CloseHandle(handle);
  text[length] = 0;
  return (long)length;
}

void platform_resident(uint64_t *current, uint64_t *peak) {
  PROCESS_MEMORY_COUNTERS counters;
  *current = *peak = 0;
  if (!K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return;
  *current = counters.WorkingSetSize;
  *peak = counters.PeakWorkingSetSize;
}

int platform_pid(void) {
  return (int)GetCurrentProcessId();
}

uint32_t platform_thread_id(void) {
  return (uint32_t)GetCurrentThreadId();
}

/* The program's path, and its file name without ".exe", read once. */
static char program_path[MAX_PATH + 1];
static char program_short[MAX_PATH + 1];

static void program_names(void) {
  if (program_path[0] != 0) return;
  char path[MAX_PATH + 1];
  DWORD length = GetModuleFileNameA(NULL, path, MAX_PATH);
  if (length == 0 || length >= MAX_PATH) {
    path[0] = '?';
    length = 1;
  }
  path[length] = 0;
  DWORD start = length;
  while (start > 0 && path[start - 1] != '\\' && path[start - 1] != '/')
    start--;
  DWORD end = length;
  if (end - start > 4 && path[end - 4] == '.' && (path[end - 3] | 0x20) == 'e' &&
      (path[end - 2] | 0x20) == 'x' && (path[end - 1] | 0x20) == 'e')
    end -= 4;
  for (DWORD i = start; i < end; i++)
    program_short[i - start] = path[i];
  program_short[end - start] = 0;
  for (DWORD i = 0; i <= length; i++)
    program_path[i] = path[i];
}

const char *platform_program_name(void) {
  program_names();
  return program_path;
}

const char *platform_program_short_name(void) {
  program_names();
  return program_short;
}

/* Exit status 3, as abort() gives on Windows, without the C runtime's
 * message box or its exit processing. */
void platform_abort(void) {
  platform_exit_now(3);
}

/* Like _exit: no atexit handlers, no DLL detach. (ExitProcess only in case
 * TerminateProcess came back.) */
bool platform_on_signal(int signal, void (*hook)(void)) {
  (void)signal;
  (void)hook;
  return false; /* no user signals: brisk_heap_profile_dump instead */
}

void platform_exit_now(int status) {
  TerminateProcess(GetCurrentProcess(), (UINT)status);
  ExitProcess((UINT)status);
}
