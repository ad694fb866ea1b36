/* SPDX-License-Identifier: MIT */
/* brisk_link.o: linked in front of libbrisk.so.0 by -lbrisk (through the
 * installed libbrisk.so, a linker script) and by brisk::brisk. Its one
 * reference to brisk's BRISK_LINK_ANCHOR (malloc) comes from the program
 * itself, so the linker keeps libbrisk.so.0 even under --as-needed when the
 * program allocates only inside libc (fopen, printf, getline). */
void BRISK_LINK_ANCHOR(void);

static void (*const brisk_link_anchor_reference)(void) __attribute__((used)) = BRISK_LINK_ANCHOR;
