#!/bin/sh
# SPDX-License-Identifier: MIT
# Fails unless every C and C++ source is clang-format clean (the repository's
# .clang-format). Fix one with: clang-format -i FILE
set -eu
cd "$(dirname "$0")/.."
find src include bench tests docs/examples cmake \( -name '*.[ch]' -o -name '*.cpp' \) | sort |
  xargs clang-format --dry-run -Werror
echo "check-format: every C and C++ source is clang-format clean"
