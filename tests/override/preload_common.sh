# SPDX-License-Identifier: MIT
# Shared by the preload tests (sourced): counters, and the check that the
# glibc run and the brisk run of a program printed the same thing.
pass=0
fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

# same_output DIR: DIR/out.glibc and DIR/out.brisk (stdout), err.* (stderr)
same_output() {
  if cmp -s "$1/out.glibc" "$1/out.brisk"; then
    ok "stdout identical ($(wc -l <"$1/out.brisk") lines)"
  else
    bad "stdout differs"
    diff "$1/out.glibc" "$1/out.brisk" | head -40
  fi
  if cmp -s "$1/err.glibc" "$1/err.brisk"; then
    ok "stderr identical"
  else
    bad "stderr differs"
    diff "$1/err.glibc" "$1/err.brisk" | head -40
  fi
}

# limit SECONDS: the time one program run may take; three times that under
# an emulator (qemu-user), as CTest's limits (tests/CMakeLists.txt).
limit() { if [ -n "${CROSSCOMPILING_EMULATOR:-}" ]; then echo $(($1 * 3)); else echo "$1"; fi; }

# prepare LIB: the library must exist; makes $tmp, removed at exit.
prepare() {
  if [ ! -f "$1" ]; then
    bad "$1 does not exist"
    finish
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

# same_machine LIB PROGRAM: skips the test (exit status 77, CTest's SKIPPED)
# when PROGRAM cannot load LIB: a library of another width or CPU than the
# program's (a 32-bit or ARM64 libbrisk and Debian's x86-64 python3 or
# sqlite3, whose builds for those come only from Debian's i386 or arm64
# architecture). Compares the ELF class and machine.
same_machine() {
  program=$(readlink -f "$2")
  machine() { # ELF class (01/02) and e_machine, as hex bytes
    echo "$(od -An -tx1 -j4 -N1 "$1" | tr -d ' ')/$(od -An -tx1 -j18 -N2 "$1" | tr -d ' ')"
  }
  name() {
    case $(machine "$1") in
      02/3e00) echo "an x86-64" ;; 01/0300) echo "a 32-bit x86" ;; 02/b700) echo "an ARM64" ;;
      *) echo "a $(machine "$1") (ELF class/machine)" ;;
    esac
  }
  if [ "$(machine "$1")" != "$(machine "$program")" ]; then
    echo "skipped: $program is $(name "$program") program and $1 $(name "$1") library: it" \
      "cannot be preloaded there (Debian has the program for that machine only in its own" \
      "architecture)"
    exit 77
  fi
}
