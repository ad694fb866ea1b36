/* SPDX-License-Identifier: MIT */
/* The platform contract on Linux, diagnostic half: stack capture, the code
 * ranges of shared libraries, names for code addresses, and the fault hook.
 *
 * Names are "function (file:line)". addr2line (binutils) gives file and line
 * for the program's own modules; it runs once per module for all the
 * addresses of a report, with a bare environment (inheriting LD_PRELOAD and
 * BRISK_* would make it write reports of its own). System libraries, and
 * everything when addr2line is missing, are named from the dynamic symbol
 * table. What depends on the CPU (the registers a fault saw, the call
 * instruction before a return address) is written for x86-64 and ARM64. */
#include "platform.h"
#include "linux_fault.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- stacks and code ranges (stack capture: linux_unwind.c) ------------- */
#ifndef __GLIBC__
__thread const ucontext_t *linux_fault_context;
__thread uintptr_t linux_fault_return;
#endif

typedef struct image_find {
  uintptr_t address;
  size_t size;
  bool found;
} image_find;

static int find_image(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  image_find *find = arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R)) continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (find->address >= start && find->address - start <= ph->p_memsz &&
        find->size <= ph->p_memsz - (find->address - start)) {
      find->found = true;
      return 1;
    }
  }
  return 0;
}

bool platform_image_contains(const void *address, size_t size) {
  image_find find = {(uintptr_t)address, size, false};
  dl_iterate_phdr(find_image, &find);
  return find.found;
}

/* The calling thread's stack, found once per thread (for the main thread
 * the C library reads /proc/self/maps). */
static _Thread_local uintptr_t stack_low, stack_high;

static bool stack_bounds(void) {
  if (stack_high != 0) return true;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void *low;
  size_t size;
  bool ok = pthread_attr_getstack(&attr, &low, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return false;
  stack_low = (uintptr_t)low;
  stack_high = (uintptr_t)low + size;
  return true;
}

typedef struct code_find {
  uintptr_t address;
  bool found;
} code_find;

static int find_code(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  code_find *find = arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    /* the 7 bytes before the address are read too: inside the segment */
    if (find->address >= start + 7 && find->address < start + ph->p_memsz) {
      find->found = true;
      return 1;
    }
  }
  return 0;
}

enum call_kind { NOT_AFTER_CALL, AFTER_DIRECT_CALL, AFTER_INDIRECT_CALL };

/* Whether address is a return address: inside some module's code, just
 * after a call (the encodings compilers emit: direct; through a register;
 * through memory at a register plus a displacement, or RIP-relative). For a
 * direct call, *target is the routine it called. */
static enum call_kind call_before(uintptr_t address, uintptr_t *target) {
  if (address < 4096 || (uint64_t)address >> 47 != 0) return NOT_AFTER_CALL;
  code_find find = {address, false};
  dl_iterate_phdr(find_code, &find);
  if (!find.found) return NOT_AFTER_CALL;
  const uint8_t *code = (const uint8_t *)address;
  if (code[-5] == 0xE8) { /* call rel32 */
    int32_t displacement;
    memcpy(&displacement, code - 4, sizeof displacement);
    *target = address + (uintptr_t)(intptr_t)displacement;
    return AFTER_DIRECT_CALL;
  }
  if ((code[-2] == 0xFF && (code[-1] & 0xF8) == 0xD0) ||                       /* call reg */
      (code[-3] == 0xFF && (code[-2] & 0xF8) == 0x50) ||                       /* [reg+d8] */
      (code[-6] == 0xFF && (code[-5] == 0x15 || (code[-5] & 0xF8) == 0x90)) || /* d32 */
      (code[-4] == 0xFF && code[-3] == 0x54 && code[-2] == 0x24))              /* [rsp+d8] */
    return AFTER_INDIRECT_CALL;
  return NOT_AFTER_CALL;
}

/* x86-64 frame: [frame] = the caller's frame pointer, [frame + 8] = the
 * return address. A routine that keeps no frame (Free Pascal's RTL keeps
 * none in GetMem, NewInstance, the string helpers) leaves no mark in that
 * chain, so following it from the allocator's entry names the caller of the
 * first routine that keeps one, not the line in that routine that
 * allocated. That line is the return address of its call into the
 * frameless routines, on the stack between the first frame and the next;
 * the routine is known from the call into it that the next frame's return
 * address follows. Of the return addresses into that routine found there,
 * the lowest is the one: the others lie higher, in its locals (an
 * exception frame keeps an address in the routine, for one). A routine's
 * size is not known here: addresses past the first 16 KiB of it are taken
 * for another's (an old return address into code linked after it). */
#define ROUTINE_SIZE_MAX 0x4000
static uintptr_t frameless_caller(const uintptr_t *from, uintptr_t next) {
  uintptr_t routine;
  if (call_before(((const uintptr_t *)next)[1], &routine) != AFTER_DIRECT_CALL) return 0;
  for (const uintptr_t *slot = from; (uintptr_t)slot < next; slot++) {
    uintptr_t ignored;
    if (*slot > routine && *slot - routine < ROUTINE_SIZE_MAX &&
        call_before(*slot, &ignored) != NOT_AFTER_CALL)
      return *slot;
  }
  return 0;
}

int platform_frame_walk(void *frame, void **frames, int max) {
  if (!stack_bounds()) return 0;
  uintptr_t at = (uintptr_t)frame, below = 0;
  int count = 0;
  while (count < max && at > below && at % sizeof(void *) == 0 && at >= stack_low &&
         at + 2 * sizeof(void *) <= stack_high) {
    const uintptr_t *words = (const uintptr_t *)at;
    if (words[1] < 4096) break; /* not a return address: the chain ends */
    frames[count++] = (void *)words[1];
    uintptr_t next = words[0];
    if (below == 0 && next > at && next % sizeof(void *) == 0 &&
        next + 2 * sizeof(void *) <= stack_high && count < max) {
      uintptr_t line = frameless_caller(words + 2, next);
      if (line != 0) frames[count++] = (void *)line;
    }
    below = at;
    at = next;
  }
  return count;
}

typedef struct code_search {
  uintptr_t address;
  uintptr_t start, end;
} code_search;

static int find_library_code(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  code_search *search = arg;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == 0) return 0; /* the program */
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (search->address >= start && search->address < start + ph->p_memsz) {
      search->start = start;
      search->end = start + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

bool platform_library_code(const void *address, uintptr_t *start, uintptr_t *end) {
  code_search search = {(uintptr_t)address, 0, 0};
  if (!dl_iterate_phdr(find_library_code, &search)) return false;
  *start = search.start;
  *end = search.end;
  return true;
}

/* ---- the fault hook -------------------------------------------------------
 * Installed once; a later call only changes the hook. A fault the hook does
 * not claim goes on as if brisk had never been there: to the handler that
 * was installed before, or, when that was the default, by faulting again
 * with the default action. */
static void (*_Atomic fault_hook)(const platform_fault *fault);
static struct sigaction previous_segv, previous_bus;

/* The faulting instruction and its registers, the argument registers first. */
static void fault_registers(const ucontext_t *uc, platform_fault *fault) {
#if defined(__x86_64__)
  static const int order[PLATFORM_FAULT_REGISTERS] = {REG_RDI, REG_RSI, REG_RDX, REG_RCX, REG_R8,
                                                      REG_R9,  REG_RAX, REG_RBX, REG_RBP, REG_R10,
                                                      REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  fault->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  for (int i = 0; i < PLATFORM_FAULT_REGISTERS; i++)
    fault->registers[i] = (uintptr_t)uc->uc_mcontext.gregs[order[i]];
#elif defined(__aarch64__)
  /* x0-x7 (the arguments), then the words on top of the stack: unoptimised
   * code keeps its arguments there and reuses x0-x7 as scratch, so that
   * when page_of's read of the header faults, x0 and x1 hold the offset and
   * the header, and only [sp] still holds the pointer. */
  enum { ARGUMENT_REGISTERS = 8 };
  fault->pc = (uintptr_t)uc->uc_mcontext.pc;
  for (int i = 0; i < ARGUMENT_REGISTERS; i++)
    fault->registers[i] = (uintptr_t)uc->uc_mcontext.regs[i];
  const uintptr_t *stack = (const uintptr_t *)uc->uc_mcontext.sp;
  for (int i = ARGUMENT_REGISTERS; i < PLATFORM_FAULT_REGISTERS; i++)
    fault->registers[i] = stack[i - ARGUMENT_REGISTERS];
#else
  /* i386 passes arguments on the stack: the registers a function has loaded
   * them into, then the words on top of the stack. */
  static const int order[] = {REG_EAX, REG_ECX, REG_EDX, REG_EBX, REG_ESI, REG_EDI, REG_EBP};
  enum { ORDER_COUNT = sizeof order / sizeof order[0] };
  fault->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
  for (int i = 0; i < ORDER_COUNT; i++)
    fault->registers[i] = (uintptr_t)uc->uc_mcontext.gregs[order[i]];
  const uintptr_t *stack = (const uintptr_t *)uc->uc_mcontext.gregs[REG_ESP];
  for (int i = ORDER_COUNT; i < PLATFORM_FAULT_REGISTERS; i++)
    fault->registers[i] = stack[i - ORDER_COUNT];
#endif
}

static void on_fault(int signal_number, siginfo_t *info, void *context) {
  platform_fault fault = {.address = info->si_addr};
  fault_registers(context, &fault);
#ifndef __GLIBC__
  const ucontext_t *outer_context = linux_fault_context; /* a fault inside the hook */
  uintptr_t outer_return = linux_fault_return;
  linux_fault_return = (uintptr_t)__builtin_return_address(0);
  linux_fault_context = context;
  fault_hook(&fault);
  linux_fault_context = outer_context;
  linux_fault_return = outer_return;
#else
  fault_hook(&fault);
#endif
  const struct sigaction *previous = signal_number == SIGSEGV ? &previous_segv : &previous_bus;
  if ((previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction != NULL) {
    previous->sa_sigaction(signal_number, info, context);
  } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
    previous->sa_handler(signal_number);
  } else {
    /* Not brisk's: fault again, the default way. A signal another process
     * or the program itself sent (kill, raise) does not come again by
     * returning, so it is sent once more. */
    signal(signal_number, SIG_DFL);
    if (info->si_code <= 0) raise(signal_number);
  }
}

void platform_on_fault(void (*hook)(const platform_fault *fault)) {
  if (atomic_exchange(&fault_hook, hook) != NULL) return; /* installed already */
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

void platform_fault_stack(void) {
  static char stack_memory[16 * 1024];
  stack_t stack = {.ss_sp = stack_memory, .ss_size = sizeof stack_memory, .ss_flags = 0};
  sigaltstack(&stack, NULL);
}

/* ---- names for code addresses ------------------------------------------------ */
void platform_code_names(const void *address, char *module, char *function, size_t size) {
  Dl_info info;
  module[0] = function[0] = 0;
  if (!dladdr(address, &info)) return;
  if (info.dli_fname != NULL) snprintf(module, size, "%s", info.dli_fname);
  if (info.dli_sname != NULL) snprintf(function, size, "%s", info.dli_sname);
}

#if defined(__x86_64__)
/* Where a PLT stub jumps: "[endbr64] [bnd] jmp *slot(%rip)". */
static const void *plt_target(const uint8_t *stub) {
  if (stub[0] == 0xf3 && stub[1] == 0x0f && stub[2] == 0x1e && stub[3] == 0xfa) stub += 4;
  if (stub[0] == 0xf2) stub++;
  if (stub[0] != 0xff || stub[1] != 0x25) return stub;
  int32_t offset;
  memcpy(&offset, stub + 2, sizeof offset);
  return *(const void *const *)(stub + 6 + offset);
}

const void *platform_call_target(const void *return_address) {
  const uint8_t *next = return_address;
  int32_t offset;
  if (next[-5] == 0xe8) { /* call rel32: to a PLT stub, or straight to the function */
    memcpy(&offset, next - 4, sizeof offset);
    return plt_target(next + offset);
  }
  if (next[-6] == 0xff && next[-5] == 0x15) { /* call *slot(%rip): -fno-plt */
    memcpy(&offset, next - 4, sizeof offset);
    return *(const void *const *)(next + offset);
  }
  return NULL;
}
#elif defined(__i386__)
/* i386: "call rel32", to the function or to a PLT stub. A program's stub
 * jumps through an absolute slot ("jmp *slot"), which is followed; a shared
 * library's goes through %ebx, unknown here, and the stub is the answer. */
const void *platform_call_target(const void *return_address) {
  const uint8_t *next = return_address;
  if (next[-5] != 0xe8) return NULL;
  int32_t offset;
  memcpy(&offset, next - 4, sizeof offset);
  const uint8_t *stub = next + offset;
  if (stub[0] == 0xf3 && stub[1] == 0x0f && stub[2] == 0x1e && stub[3] == 0xfb) stub += 4;
  if (stub[0] != 0xff || stub[1] != 0x25) return stub;
  const void *const *slot;
  memcpy(&slot, stub + 2, sizeof slot);
  return *slot;
}
#elif defined(__aarch64__)
static uint32_t instruction_at(const uint8_t *at) {
  uint32_t word;
  memcpy(&word, at, sizeof word);
  return word;
}

/* Sign-extends the low bits of value. */
static int64_t signed_field(uint64_t value, unsigned bits) {
  return (int64_t)(value << (64 - bits)) >> (64 - bits);
}

/* Where a PLT stub jumps: "[bti c] adrp x16, slot page; ldr x17, [x16, slot
 * offset]; add x16, ...; br x17". */
static const void *plt_target(const uint8_t *stub) {
  if (instruction_at(stub) == 0xd503245fu) stub += 4; /* bti c */
  uint32_t adrp = instruction_at(stub), ldr = instruction_at(stub + 4);
  if ((adrp & 0x9f00001fu) != 0x90000010u || (ldr & 0xffc003ffu) != 0xf9400211u) return stub;
  int64_t pages = signed_field(((adrp >> 3) & 0x1ffffcu) | ((adrp >> 29) & 3u), 21);
  uintptr_t page = ((uintptr_t)stub & ~(uintptr_t)0xfff) + (uintptr_t)(pages * 4096);
  uintptr_t slot = page + ((ldr >> 10) & 0xfffu) * 8u;
  return *(const void *const *)slot;
}

const void *platform_call_target(const void *return_address) {
  const uint8_t *call = (const uint8_t *)return_address - 4;
  uint32_t bl = instruction_at(call);
  if ((bl & 0xfc000000u) != 0x94000000u) return NULL; /* not "bl": an indirect call (blr) */
  return plt_target(call + signed_field(bl & 0x3ffffffu, 26) * 4);
}
#endif

#define NAME_CAPACITY 4096 /* a power of two */
#define NAME_TEXT 300
#define BATCH 128 /* addresses per addr2line run */

typedef struct name_s {
  uintptr_t pc; /* 0: empty slot */
  char text[NAME_TEXT];
} name_t;

static name_t *names;

static name_t *name_slot(uintptr_t pc) {
  if (names == NULL) names = platform_table_alloc(NAME_CAPACITY * sizeof(name_t));
  if (names == NULL) return NULL;
  for (uintptr_t probe = 0; probe < NAME_CAPACITY; probe++) {
    name_t *slot = &names[(pc * 0x9e3779b97f4a7c15ull + probe) & (NAME_CAPACITY - 1)];
    if (slot->pc == pc || slot->pc == 0) return slot;
  }
  return NULL;
}

static void copy_text(char *out, size_t size, const char *text) {
  size_t n = strnlen(text, size - 1);
  memcpy(out, text, n);
  out[n] = 0;
}

/* The module holding address: where it is mapped and its path. glibc's
 * _dl_find_object looks it up in a sorted table; dladdr also searches the
 * module's symbols (tens of thousands of instructions a call in libc, which
 * naming a profile's frames at exit would pay for each), but it gives the
 * program's own path, which the program's link map leaves empty. */
static bool module_of(uintptr_t address, const ElfW(Ehdr) * *base, const char **name) {
#if defined(__GLIBC__) && defined(DLFO_STRUCT_HAS_EH_DBASE)
  struct dl_find_object found;
  if (_dl_find_object((void *)address, &found) != 0 || found.dlfo_link_map == NULL) return false;
  *base = found.dlfo_map_start;
  *name = found.dlfo_link_map->l_name;
  if (*name != NULL && (*name)[0] != 0) return true;
#endif
  Dl_info info;
  if (!dladdr((void *)address, &info)) return false;
  *base = info.dli_fbase;
  *name = info.dli_fname;
  return *name != NULL;
}

/* module+offset of a return address, the way addr2line wants it. */
static bool locate(uintptr_t pc, const ElfW(Ehdr) * *base, uintptr_t *offset, const char **module) {
  const char *name;
  if (!module_of(pc - 1, base, &name)) return false;
  *offset = (*base)->e_type == ET_DYN ? pc - 1 - (uintptr_t)*base : pc - 1;
  *module = name[0] ? name : "/proc/self/exe";
  return true;
}

static void name_from_symbol_table(name_t *slot, uintptr_t pc) {
  Dl_info info;
  const ElfW(Ehdr) * base;
  uintptr_t offset;
  const char *module;
  if (!locate(pc, &base, &offset, &module) || !dladdr((void *)(pc - 1), &info)) {
    snprintf(slot->text, NAME_TEXT, "??");
  } else if (info.dli_sname != NULL) {
    snprintf(slot->text, NAME_TEXT, "%s+0x%lx (%s+0x%lx)", info.dli_sname,
             (unsigned long)(pc - 1 - (uintptr_t)info.dli_saddr), module, (unsigned long)offset);
  } else {
    snprintf(slot->text, NAME_TEXT, "?? (%s+0x%lx)", module, (unsigned long)offset);
  }
  slot->pc = pc;
}

/* ---- names from the module's file -------------------------------------------
 * A module built without debug information gives addr2line nothing but the
 * symbol names its own symbol table holds (a release build, the benchmark
 * workloads): those are read here from the mapped file, and addr2line, a
 * process started for each module (1-2 ms), runs only for modules with line
 * tables, or with separate debug information it may find (a debug link), or
 * whose names need demangling. */
typedef struct elf_file {
  const uint8_t *bytes;
  size_t size;
  const ElfW(Shdr) * sections;
  unsigned section_count;
  const char *section_names;
  size_t section_names_size;
} elf_file;

static bool elf_open(const char *path, elf_file *file) {
  memset(file, 0, sizeof *file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  off_t size = lseek(fd, 0, SEEK_END);
  void *bytes = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (bytes == MAP_FAILED) return false;
  file->bytes = bytes;
  file->size = (size_t)size;
  const ElfW(Ehdr) *header = bytes;
  if (file->size < sizeof *header || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      header->e_shentsize != sizeof(ElfW(Shdr)) || header->e_shoff > file->size ||
      header->e_shnum > (file->size - header->e_shoff) / sizeof(ElfW(Shdr)) ||
      header->e_shstrndx >= header->e_shnum)
    return true; /* mapped, but no sections to read: nothing is named from it */
  file->sections = (const ElfW(Shdr) *)(file->bytes + header->e_shoff);
  file->section_count = header->e_shnum;
  const ElfW(Shdr) *shstr = &file->sections[header->e_shstrndx];
  if (shstr->sh_offset <= file->size && shstr->sh_size <= file->size - shstr->sh_offset) {
    file->section_names = (const char *)file->bytes + shstr->sh_offset;
    file->section_names_size = shstr->sh_size;
  }
  return true;
}

static void elf_close(elf_file *file) {
  if (file->bytes != NULL) munmap((void *)file->bytes, file->size);
}

/* A section's contents, if the file holds them whole. */
static const uint8_t *elf_contents(const elf_file *file, const ElfW(Shdr) * section) {
  if (section->sh_type == SHT_NOBITS || section->sh_offset > file->size ||
      section->sh_size > file->size - section->sh_offset)
    return NULL;
  return file->bytes + section->sh_offset;
}

static const ElfW(Shdr) * elf_section_named(const elf_file *file, const char *name) {
  for (unsigned i = 0; i < file->section_count && file->section_names != NULL; i++) {
    size_t at = file->sections[i].sh_name;
    if (at < file->section_names_size &&
        strncmp(file->section_names + at, name, file->section_names_size - at) == 0)
      return &file->sections[i];
  }
  return NULL;
}

/* Whether addr2line could tell more than the symbol table: line tables in
 * the file (DWARF, or stabs: Free Pascal's on i386), or a link to debug
 * information kept apart. */
static bool elf_may_have_lines(const elf_file *file) {
  return file->section_names == NULL || elf_section_named(file, ".debug_line") != NULL ||
         elf_section_named(file, ".zdebug_line") != NULL ||
         elf_section_named(file, ".stab") != NULL ||
         elf_section_named(file, ".gnu_debuglink") != NULL ||
         elf_section_named(file, ".gnu_debugaltlink") != NULL;
}

/* The function of the file's symbol table that holds offset (a link-time
 * address, as addr2line takes it), or NULL. */
static const char *elf_function_at(const elf_file *file, uintptr_t offset) {
  const ElfW(Shdr) *table = NULL;
  for (unsigned i = 0; i < file->section_count && table == NULL; i++)
    if (file->sections[i].sh_type == SHT_SYMTAB) table = &file->sections[i];
  if (table == NULL || table->sh_link >= file->section_count) return NULL;
  const ElfW(Sym) *symbols = (const ElfW(Sym) *)elf_contents(file, table);
  const ElfW(Shdr) *strings_section = &file->sections[table->sh_link];
  const char *strings = (const char *)elf_contents(file, strings_section);
  if (symbols == NULL || strings == NULL) return NULL;
  size_t count = table->sh_size / sizeof(ElfW(Sym));
  for (size_t i = 0; i < count; i++) {
    const ElfW(Sym) *symbol = &symbols[i];
    if (ELF64_ST_TYPE(symbol->st_info) != STT_FUNC || symbol->st_shndx == SHN_UNDEF ||
        offset < symbol->st_value || offset - symbol->st_value >= symbol->st_size ||
        symbol->st_name >= strings_section->sh_size)
      continue;
    const char *name = strings + symbol->st_name;
    return memchr(name, 0, strings_section->sh_size - symbol->st_name) ? name : NULL;
  }
  return NULL;
}

/* Names one module's offsets from its symbol table, as addr2line would
 * without line tables ("function (module)"); false, naming none, when
 * addr2line could tell more, or must demangle. */
static bool name_from_file(const char *module, const uintptr_t *pcs, const uintptr_t *offsets,
                           size_t count) {
  elf_file file;
  if (!elf_open(module, &file)) return false;
  const char *functions[BATCH];
  bool named = !elf_may_have_lines(&file);
  for (size_t i = 0; i < count && named; i++) {
    functions[i] = elf_function_at(&file, offsets[i]);
    named = functions[i] == NULL || strncmp(functions[i], "_Z", 2) != 0;
  }
  for (size_t i = 0; i < count && named; i++) {
    name_t *slot = name_slot(pcs[i]);
    if (slot == NULL || functions[i] == NULL) continue; /* left to the dynamic symbols */
    char text[NAME_TEXT];
    snprintf(text, sizeof text, "%.150s (%.140s)", functions[i], module);
    copy_text(slot->text, NAME_TEXT, text);
    slot->pc = pcs[i];
  }
  elf_close(&file);
  return named;
}

/* Runs addr2line on one module's offsets; fills the slots of those it names. */
static void name_batch(const char *module, const uintptr_t *pcs, const uintptr_t *offsets,
                       size_t count) {
  static const char tool[] = "/usr/bin/addr2line";
  char address_text[BATCH][24];
  char *argv[BATCH + 6] = {(char *)tool, "-C", "-f", "-e", (char *)module};
  for (size_t i = 0; i < count; i++) {
    snprintf(address_text[i], sizeof address_text[i], "0x%lx", (unsigned long)offsets[i]);
    argv[5 + i] = address_text[i];
  }
  argv[5 + count] = NULL;
  char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
  int fds[2];
  if (pipe(fds) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid;
  int failed = posix_spawn(&pid, tool, &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (failed) {
    close(fds[0]);
    return;
  }
  static char output[BATCH * 2 * NAME_TEXT];
  size_t length = 0;
  ssize_t n;
  while (length < sizeof output - 1 &&
         (n = read(fds[0], output + length, sizeof output - 1 - length)) > 0)
    length += (size_t)n;
  output[length] = 0;
  close(fds[0]);
  waitpid(pid, NULL, 0);
  char *cursor = output;
  for (size_t i = 0; i < count && *cursor; i++) {
    char *function = cursor;
    char *where = strchr(function, '\n');
    if (where == NULL) break;
    *where++ = 0;
    char *next = strchr(where, '\n');
    if (next != NULL) *next++ = 0;
    cursor = next != NULL ? next : where + strlen(where);
    name_t *slot = name_slot(pcs[i]);
    if (slot == NULL || strcmp(function, "??") == 0) continue;
    char text[NAME_TEXT];
    /* no line: a routine of a library built without debug information, as
     * Free Pascal's run-time library is; its symbol names it */
    if (strncmp(where, "??", 2) == 0) where = (char *)module;
    snprintf(text, sizeof text, "%.150s (%.140s)", function, where);
    copy_text(slot->text, NAME_TEXT, text);
    slot->pc = pcs[i];
  }
}

/* The system's libraries are named from their symbol tables: reports are
 * about the program's own code, and reading libc's separate debug info
 * would cost every report tens of milliseconds. */
static bool is_system_module(const char *module) {
  static const char *const prefixes[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(module, prefixes[i], strlen(prefixes[i])) == 0) return true;
  return false;
}

void platform_symbols_prepare(void *const *frames, size_t count) {
  bool have_tool = access("/usr/bin/addr2line", X_OK) == 0;
  bool done[256] = {false};
  if (count > 256) count = 256;
  for (size_t i = 0; i < count; i++) {
    name_t *slot = name_slot((uintptr_t)frames[i]);
    if (slot == NULL || slot->pc != 0) done[i] = true; /* named already (or no room) */
  }
  for (size_t i = 0; i < count; i++) {
    if (done[i]) continue;
    const ElfW(Ehdr) * base;
    uintptr_t offset;
    const char *module;
    if (!have_tool || !locate((uintptr_t)frames[i], &base, &offset, &module) ||
        is_system_module(module)) {
      done[i] = true;
      continue;
    }
    /* every pending frame of the same module goes into this run */
    uintptr_t pcs[BATCH], offsets[BATCH];
    size_t batch = 0;
    for (size_t j = i; j < count && batch < BATCH; j++) {
      const ElfW(Ehdr) * other_base;
      uintptr_t other_offset;
      const char *other_module;
      if (done[j] || !locate((uintptr_t)frames[j], &other_base, &other_offset, &other_module) ||
          strcmp(other_module, module) != 0)
        continue;
      pcs[batch] = (uintptr_t)frames[j];
      offsets[batch++] = other_offset;
      done[j] = true;
    }
    if (!name_from_file(module, pcs, offsets, batch)) name_batch(module, pcs, offsets, batch);
  }
}

void platform_symbol_describe(void *address, char *out, size_t size) {
  name_t *slot = name_slot((uintptr_t)address);
  if (slot != NULL && slot->pc == 0) name_from_symbol_table(slot, (uintptr_t)address);
  copy_text(out, size, slot != NULL ? slot->text : "??");
}

/* ---- locations to name later ------------------------------------------------------ */
/* The build id note of the ELF module loaded at base, read from memory: its
 * program headers lie in the first page, which the loader maps. */
static void build_id_of(const ElfW(Ehdr) * elf, char *out, size_t size) {
  out[0] = 0;
  uintptr_t bias = elf->e_type == ET_DYN ? (uintptr_t)elf : 0;
  const ElfW(Phdr) *headers = (const ElfW(Phdr) *)((uintptr_t)elf + elf->e_phoff);
  for (int h = 0; h < elf->e_phnum; h++) {
    if (headers[h].p_type != PT_NOTE) continue;
    const uint8_t *note = (const uint8_t *)(bias + headers[h].p_vaddr);
    const uint8_t *end = note + headers[h].p_memsz;
    while (note + 12 <= end) {
      uint32_t name_size, desc_size, type;
      memcpy(&name_size, note, 4);
      memcpy(&desc_size, note + 4, 4);
      memcpy(&type, note + 8, 4);
      const uint8_t *name = note + 12;
      const uint8_t *desc = name + ((name_size + 3) & ~3u);
      if (type == NT_GNU_BUILD_ID && name_size == 4 && memcmp(name, "GNU", 4) == 0) {
        size_t at = (size_t)snprintf(out, size, "build id ");
        for (uint32_t i = 0; i < desc_size && at + 3 <= size; i++, at += 2)
          snprintf(out + at, size - at, "%02x", desc[i]);
        return;
      }
      note = desc + ((desc_size + 3) & ~3u);
    }
  }
}

bool platform_code_location(const void *return_address, char *module, size_t module_size,
                            uintptr_t *offset, char *build, size_t build_size) {
  const ElfW(Ehdr) * base;
  const char *file;
  if (!locate((uintptr_t)return_address, &base, offset, &file)) return false;
  if (strcmp(file, "/proc/self/exe") == 0) { /* the program: its real path, for later */
    ssize_t n = readlink(file, module, module_size - 1);
    module[n > 0 ? n : 0] = 0;
    if (n <= 0) snprintf(module, module_size, "%s", program_invocation_name);
  } else {
    snprintf(module, module_size, "%s", file);
  }
  build_id_of(base, build, build_size);
  return true;
}
