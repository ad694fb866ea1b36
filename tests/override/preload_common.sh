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
# when PROGRAM cannot load LIB: a 32-bit libbrisk and Debian's 64-bit python3
# or sqlite3 (their 32-bit builds come only from Debian's i386 architecture).
same_machine() {
  program=$(readlink -f "$2")
  header() { od -An -tx1 -j4 -N1 "$1" | tr -d ' '; }
  if [ "$(header "$1")" != "$(header "$program")" ]; then
    echo "skipped: $program is a $( [ "$(header "$program")" = 02 ] && echo 64 || echo 32)-bit" \
      "program and $1 a $( [ "$(header "$1")" = 02 ] && echo 64 || echo 32)-bit library: it" \
      "cannot be preloaded there (Debian has the program for this machine only in its i386" \
      "architecture)"
    exit 77
  fi
}
