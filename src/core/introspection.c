/* SPDX-License-Identifier: MIT */
/* What a tool outside the process reads to show brisk's state live (`brisk
 * top PID`): one exported descriptor, `brisk_introspection`, that says where
 * the heaps and the process-wide figures lie and where each field it needs
 * sits in a heap. The tool finds the symbol in the ELF symbol tables of the
 * modules mapped in the process and reads the process's memory
 * (process_vm_readv); the program runs no code for it and the fast paths
 * keep nothing: every figure is one brisk keeps anyway or counts on a slow
 * path. A tool that reads another layout says so instead of guessing:
 * INTROSPECTION_LAYOUT changes whenever the descriptor's meaning does
 * (docs/DESIGN.md, "Looking inside a running program"). */
#include "core.h"

#include <stddef.h>

/* Layout 2: the descriptor is the same on 32-bit and 64-bit builds, and
 * gives the width of each word the reader reads, which differ (pointers and
 * size_t are 4 bytes on a 32-bit build, the counts 8 on both). */
#define INTROSPECTION_LAYOUT 2
#define FIGURE_PURGER_ROUNDS MEMORY_FIGURE_COUNT
#define FIGURE_PURGER_RETURNED (MEMORY_FIGURE_COUNT + 1)
#define INTROSPECTION_FIGURES (MEMORY_FIGURE_COUNT + 2)

/* Every field a fixed-size little-endian word, so the reader needs no C;
 * what it points at is of the widths given at the end. */
typedef struct introspection_s {
  char magic[16];   /* "brisk-introspect", no terminating zero */
  uint32_t layout;  /* INTROSPECTION_LAYOUT */
  uint32_t size;    /* of this descriptor */
  char version[16]; /* brisk's version, zero-terminated */
  uint64_t ready;   /* 1 once brisk is set up and the addresses below are set */
  uint64_t heaps;   /* address of the first heap's address (heap_t *) */
  uint64_t classes; /* address of class_size[], uint32_t each */
  uint32_t class_count;
  uint32_t figure_count;
  uint64_t figures[INTROSPECTION_FIGURES]; /* addresses: memory_figure's order, then the purger's */
  /* Offsets in heap_t of what the reader reads. */
  uint32_t heap_size, heap_next, heap_state, heap_thread, heap_carved, heap_arena_in_use,
      heap_refills, heap_remote_in, heap_class_refills, heap_class_carved;
  /* The width in bytes of each of those fields after heap_size (of one
   * element for the arrays), in their order; heaps' word is a heap_t *, as
   * heap_next. */
  uint8_t heap_widths[9];
  uint8_t figure_widths[INTROSPECTION_FIGURES]; /* of each word figures[] points at */
} introspection_t;
/* No padding but the end's, to a multiple of 8 bytes, on every build: the
 * reader checks size against the fields it knows. */
_Static_assert(sizeof(introspection_t) ==
                   (offsetof(introspection_t, figure_widths) + INTROSPECTION_FIGURES + 7) / 8 * 8,
               "the descriptor is the same size on 32-bit and 64-bit builds");

#ifdef __ELF__
#define EXPORTED __attribute__((visibility("default"), used))
#else
#define EXPORTED __attribute__((used))
#endif

EXPORTED introspection_t brisk_introspection = {
    .magic = "brisk-introspect",
    .layout = INTROSPECTION_LAYOUT,
    .size = sizeof(introspection_t),
    .version = BRISK_VERSION_STRING,
    .class_count = CLASS_COUNT,
    .figure_count = INTROSPECTION_FIGURES,
    .heap_size = sizeof(heap_t),
    .heap_next = offsetof(heap_t, next_created),
    .heap_state = offsetof(heap_t, xstate),
    .heap_thread = offsetof(heap_t, os_thread),
    .heap_carved = offsetof(heap_t, carved_bytes),
    .heap_arena_in_use = offsetof(heap_t, arena.in_use_bytes),
    .heap_refills = offsetof(heap_t, counters.page_refills),
    .heap_remote_in = offsetof(heap_t, activity.remote_frees_in),
    .heap_class_refills = offsetof(heap_t, activity.class_refills),
    .heap_class_carved = offsetof(heap_t, activity.class_carved),
#define WIDTH(field) (uint8_t)sizeof(((heap_t *)0)->field)
    .heap_widths = {WIDTH(next_created), WIDTH(xstate), WIDTH(os_thread), WIDTH(carved_bytes),
                    WIDTH(arena.in_use_bytes), WIDTH(counters.page_refills),
                    WIDTH(activity.remote_frees_in), WIDTH(activity.class_refills[0]),
                    WIDTH(activity.class_carved[0])},
#undef WIDTH
};
_Static_assert(sizeof BRISK_VERSION_STRING <= 16, "the version fits its field");

void introspection_publish(void) {
  brisk_introspection.heaps = (uintptr_t)heaps_list_address();
  brisk_introspection.classes = (uintptr_t)class_size;
  uint8_t *width = brisk_introspection.figure_widths;
  for (int i = 0; i < MEMORY_FIGURE_COUNT; i++)
    brisk_introspection.figures[i] = (uintptr_t)memory_figure_address((memory_figure)i, &width[i]);
  brisk_introspection.figures[FIGURE_PURGER_ROUNDS] =
      (uintptr_t)background_figure_address(false, &width[FIGURE_PURGER_ROUNDS]);
  brisk_introspection.figures[FIGURE_PURGER_RETURNED] =
      (uintptr_t)background_figure_address(true, &width[FIGURE_PURGER_RETURNED]);
  atomic_store_release((_Atomic(uint64_t) *)&brisk_introspection.ready, 1);
}
