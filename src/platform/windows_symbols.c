/* SPDX-License-Identifier: MIT */
/* The platform contract on Windows, diagnostic half: stack capture, the code
 * range of a DLL, names for code addresses, and the fault hook.
 *
 * Names come from what every module carries at run time: its file name and,
 * for the functions a module exports, its export table ("name+0x12
 * (module+0x3456)"), bounded on x64 by the exception directory's function
 * ranges; anything else is "?? (module+0x3456)", which `brisk symbolize`
 * (BRISK_SYMBOLS_LATER) or addr2line -e module resolves with the build's
 * symbols or map.
 * There is no debug-information reader here. */
#include "platform.h"

#include <string.h>

/* ---- stacks and code ranges ---------------------------------------------- */
/* The walk ends at the thread's first frame (RtlUserThreadStart); Wine's
 * can go on past it with frames that are not return addresses, from the
 * first null one. */
int platform_backtrace(void **frames, int max) {
  int count = RtlCaptureStackBackTrace(0, (DWORD)max, frames, NULL);
  for (int i = 0; i < count; i++)
    if (frames[i] == NULL) return i;
  return count;
}

/* x64 frame: [frame] = the caller's frame pointer, [frame + 8] = the return
 * address; inside the thread's stack. */
int platform_frame_walk(void *frame, void **frames, int max) {
  ULONG_PTR low, high;
  GetCurrentThreadStackLimits(&low, &high);
  uintptr_t at = (uintptr_t)frame, below = 0;
  int count = 0;
  while (count < max && at > below && at % sizeof(void *) == 0 && at >= low &&
         at + 2 * sizeof(void *) <= high) {
    const uintptr_t *words = (const uintptr_t *)at;
    if (words[1] < 4096) break; /* not a return address: the chain ends */
    frames[count++] = (void *)words[1];
    below = at;
    at = words[0];
  }
  return count;
}

/* The module (EXE or DLL) whose image holds address, or NULL. */
static HMODULE module_of(const void *address) {
  HMODULE module = NULL;
  DWORD flags =
      GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT;
  DWORD saved_error = GetLastError();
  if (!GetModuleHandleExA(flags, (LPCSTR)address, &module)) module = NULL;
  SetLastError(saved_error);
  return module;
}

static const IMAGE_NT_HEADERS *image_headers(HMODULE module) {
  const uint8_t *base = (const uint8_t *)module;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  return (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
}

bool platform_library_code(const void *address, uintptr_t *start, uintptr_t *end) {
  HMODULE module = module_of(address);
  if (module == NULL || module == GetModuleHandleA(NULL)) return false; /* the program */
  const IMAGE_NT_HEADERS *headers = image_headers(module);
  const IMAGE_SECTION_HEADER *section = IMAGE_FIRST_SECTION(headers);
  for (WORD i = 0; i < headers->FileHeader.NumberOfSections; i++, section++) {
    if (!(section->Characteristics & IMAGE_SCN_MEM_EXECUTE)) continue;
    uintptr_t first = (uintptr_t)module + section->VirtualAddress;
    uintptr_t last = first + section->Misc.VirtualSize;
    if ((uintptr_t)address >= first && (uintptr_t)address < last) {
      *start = first;
      *end = last;
      return true;
    }
  }
  return false;
}

bool platform_image_contains(const void *address, size_t size) {
  HMODULE module = module_of(address);
  if (module == NULL) return false;
  const IMAGE_NT_HEADERS *headers = image_headers(module);
  uintptr_t offset = (uintptr_t)address - (uintptr_t)module;
  const IMAGE_SECTION_HEADER *section = IMAGE_FIRST_SECTION(headers);
  for (WORD i = 0; i < headers->FileHeader.NumberOfSections; i++, section++) {
    if (!(section->Characteristics & IMAGE_SCN_MEM_READ)) continue;
    uintptr_t first = section->VirtualAddress, length = section->Misc.VirtualSize;
    if (offset >= first && offset - first <= length && size <= length - (offset - first))
      return true;
  }
  return false;
}

/* ---- names for code addresses ------------------------------------------------ */
typedef struct text_out {
  char *at, *end;
} text_out;

static void append(text_out *out, const char *text) {
  while (*text && out->at < out->end)
    *out->at++ = *text++;
}

static void append_hex(text_out *out, uintptr_t value) {
  char digits[2 + 16], *at = digits + sizeof digits;
  *--at = 0;
  do {
    *--at = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value != 0);
  append(out, "0x");
  append(out, at);
}

#ifdef _WIN64
/* The start of the function whose code holds rva, from the module's
 * exception directory (an x64 function that calls others or uses the stack
 * has an entry), or 0 when no entry holds it. */
static uint32_t function_start(HMODULE module, uint32_t rva) {
  const uint8_t *base = (const uint8_t *)module;
  const IMAGE_DATA_DIRECTORY *directory =
      &image_headers(module)->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXCEPTION];
  if (directory->VirtualAddress == 0) return 0;
  const RUNTIME_FUNCTION *functions = (const RUNTIME_FUNCTION *)(base + directory->VirtualAddress);
  size_t low = 0, high = directory->Size / sizeof *functions;
  while (low < high) { /* sorted by address */
    size_t middle = low + (high - low) / 2;
    if (functions[middle].EndAddress <= rva)
      low = middle + 1;
    else if (functions[middle].BeginAddress > rva)
      high = middle;
    else
      return functions[middle].BeginAddress;
  }
  return 0;
}
#endif

/* The exported function of module nearest below rva (and its distance);
 * NULL when the exception directory says rva is in another function (one
 * the module does not export: no name is better than its neighbour's). */
static const char *nearest_export(HMODULE module, uint32_t rva, uint32_t *distance) {
  const uint8_t *base = (const uint8_t *)module;
  const IMAGE_DATA_DIRECTORY *directory =
      &image_headers(module)->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
  if (directory->VirtualAddress == 0 || directory->Size == 0) return NULL;
  const IMAGE_EXPORT_DIRECTORY *exports =
      (const IMAGE_EXPORT_DIRECTORY *)(base + directory->VirtualAddress);
  const DWORD *functions = (const DWORD *)(base + exports->AddressOfFunctions);
  const DWORD *names = (const DWORD *)(base + exports->AddressOfNames);
  const WORD *ordinals = (const WORD *)(base + exports->AddressOfNameOrdinals);
  const char *best = NULL;
  uint32_t best_rva = 0;
  for (DWORD i = 0; i < exports->NumberOfNames; i++) {
    uint32_t function = functions[ordinals[i]];
    bool forwarded = function >= directory->VirtualAddress &&
                     function < directory->VirtualAddress + directory->Size;
    if (forwarded || function > rva || (best != NULL && function <= best_rva)) continue;
    best = (const char *)(base + names[i]);
    best_rva = function;
  }
#ifdef _WIN64
  uint32_t start = best != NULL ? function_start(module, rva) : 0;
  if (start != 0 && start != best_rva) return NULL;
#endif
  *distance = rva - best_rva;
  return best;
}

void platform_symbols_prepare(void *const *frames, size_t count) {
  (void)frames; /* names are read from the loaded modules one at a time */
  (void)count;
}

void platform_symbol_describe(void *address, char *out, size_t size) {
  if (size == 0) return;
  text_out text = {out, out + size - 1};
  const uint8_t *call = (const uint8_t *)address - 1; /* inside the call, not after it */
  HMODULE module = module_of(call);
  if (module == NULL) {
    append(&text, "??");
    *text.at = 0;
    return;
  }
  uint32_t rva = (uint32_t)(call - (const uint8_t *)module), distance = 0;
  const char *function = nearest_export(module, rva, &distance);
  char path[MAX_PATH + 1];
  DWORD saved_error = GetLastError();
  DWORD length = GetModuleFileNameA(module, path, MAX_PATH);
  SetLastError(saved_error);
  path[length < MAX_PATH ? length : MAX_PATH] = 0;
  const char *file = path;
  for (const char *c = path; *c; c++)
    if (*c == '\\' || *c == '/') file = c + 1;
  if (function != NULL) {
    append(&text, function);
    append(&text, "+");
    append_hex(&text, distance);
  } else {
    append(&text, "??");
  }
  append(&text, " (");
  append(&text, file);
  append(&text, "+");
  append_hex(&text, rva);
  append(&text, ")");
  *text.at = 0;
}

/* ---- the fault hook ------------------------------------------------------- */
static void (*fault_hook)(const platform_fault *fault);

/* A vectored handler sees an access violation before the program's own
 * exception handlers (which Free Pascal and Delphi programs install
 * everywhere); it returns, so they still get it when the hook lets go. */
static LONG WINAPI on_exception(EXCEPTION_POINTERS *exception) {
  const EXCEPTION_RECORD *record = exception->ExceptionRecord;
  if (record->ExceptionCode != EXCEPTION_ACCESS_VIOLATION || record->NumberParameters < 2)
    return EXCEPTION_CONTINUE_SEARCH;
  const CONTEXT *c = exception->ContextRecord;
#ifdef _WIN64
  /* the Win64 argument registers first */
  const DWORD64 registers[PLATFORM_FAULT_REGISTERS] = {c->Rcx, c->Rdx, c->R8,  c->R9,  c->Rax,
                                                       c->Rbx, c->Rbp, c->Rsi, c->Rdi, c->R10,
                                                       c->R11, c->R12, c->R13, c->R14, c->R15};
  platform_fault fault = {.pc = (uintptr_t)c->Rip,
                          .address = (const void *)record->ExceptionInformation[1]};
  for (int i = 0; i < PLATFORM_FAULT_REGISTERS; i++)
    fault.registers[i] = (uintptr_t)registers[i];
#else
  /* 32-bit: arguments go on the stack; the registers a function loaded them
   * into, then the words on top of the stack */
  const DWORD registers[] = {c->Eax, c->Ecx, c->Edx, c->Ebx, c->Esi, c->Edi, c->Ebp};
  enum { REGISTER_COUNT = sizeof registers / sizeof registers[0] };
  platform_fault fault = {.pc = (uintptr_t)c->Eip,
                          .address = (const void *)record->ExceptionInformation[1]};
  for (int i = 0; i < REGISTER_COUNT; i++)
    fault.registers[i] = (uintptr_t)registers[i];
  const uintptr_t *stack = (const uintptr_t *)(uintptr_t)c->Esp;
  for (int i = REGISTER_COUNT; i < PLATFORM_FAULT_REGISTERS; i++)
    fault.registers[i] = stack[i - REGISTER_COUNT];
#endif
  fault_hook(&fault);
  return EXCEPTION_CONTINUE_SEARCH;
}

void platform_on_fault(void (*hook)(const platform_fault *fault)) {
  bool installed = fault_hook != NULL;
  fault_hook = hook;
  if (!installed) AddVectoredExceptionHandler(1, on_exception);
}

void platform_fault_stack(void) {
  /* Windows reports a stack overflow on a guard page of its own. */
}

bool platform_code_location(const void *return_address, char *module, size_t module_size,
                            uintptr_t *offset, char *build, size_t build_size) {
  HMODULE handle;
  const char *pc = (const char *)return_address - 1;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          pc, &handle))
    return false;
  if (GetModuleFileNameA(handle, module, (DWORD)module_size) == 0) module[0] = 0;
  *offset = (uintptr_t)pc - (uintptr_t)handle;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)handle;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)((const char *)handle + dos->e_lfanew);
  /* By hand: MinGW's snprintf is libmingwex's, which libbrisk.a cannot carry. */
  static const char prefix[] = "timestamp ";
  if (build_size >= sizeof prefix + 8) {
    memcpy(build, prefix, sizeof prefix - 1);
    uint32_t stamp = (uint32_t)nt->FileHeader.TimeDateStamp;
    for (int i = 0; i < 8; i++)
      build[sizeof prefix - 1 + i] = "0123456789abcdef"[(stamp >> (28 - 4 * i)) & 15];
    build[sizeof prefix + 7] = 0;
  } else if (build_size > 0) {
    build[0] = 0;
  }
  return true;
}

void platform_code_names(const void *address, char *module, char *function, size_t size) {
  module[0] = function[0] = 0;
  HMODULE handle;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          (LPCSTR)address, &handle))
    return;
  DWORD length = GetModuleFileNameA(handle, module, (DWORD)size);
  module[length < size ? length : size - 1] = 0;
}

const void *platform_call_target(const void *return_address) {
  (void)return_address; /* not worked out on Windows: the leak report counts all */
  return NULL;
}
