/* SPDX-License-Identifier: MIT */
/* `true`, built for the machine brisk is built for. The tests that run a
 * program under brisk run the system's true and sh where they can; a 32-bit
 * libbrisk cannot be preloaded into those 64-bit programs, so there they run
 * this one. With the argument SEGV or KILL it dies of that signal, as
 * sh -c 'kill -SEGV $$' does. */
#include <signal.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "SEGV") == 0) raise(SIGSEGV);
  if (argc > 1 && strcmp(argv[1], "KILL") == 0) raise(SIGKILL);
  return 0;
}
