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
