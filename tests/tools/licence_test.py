#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source file of the repository names its licence in its first lines
(`SPDX-License-Identifier: MIT`), so that a file copied out of brisk still
says under which terms; and LICENSE holds the MIT text it refers to.

usage: licence_test.py SOURCE_DIR     exit status 1 and the files' names if any lacks it
"""
import os
import sys

TAG = "SPDX-License-Identifier: MIT"
# What counts as source: code, build and packaging files. Prose, pictures
# and the fuzzer's input corpus are not.
SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".py", ".sh", ".cmake", ".pas", ".inc",
                   ".lpk", ".lpr", ".def", ".map", ".sql", ".in", ".rs")
SOURCE_NAMES = {"CMakeLists.txt", "Makefile", "brisk", "run", "Cargo.toml"}
SKIP_DIRS = {".git", "corpus", "examples-out", ".cache"}  # .cache: downloads, others' sources
# A file a tool writes and rewrites as it wants it: Lazarus regenerates a
# package's main unit (pascal/brisk.pas) whenever its text differs.
GENERATED = "{ This file was automatically created by Lazarus. Do not edit!"


def is_source(name):
    return name in SOURCE_NAMES or name.endswith(SOURCE_SUFFIXES)


def is_build_dir(path):
    """A CMake build folder, cargo's target/ (which holds the packed crates'
    manifests, written by cargo without the identifier), or a crate of
    someone else's that `cargo vendor` copied (bindings/rust/vendor/: under
    its own licence, which its folder holds)."""
    return any(os.path.exists(os.path.join(path, marker))
               for marker in ("CMakeCache.txt", "CACHEDIR.TAG", ".cargo-checksum.json"))


def untagged(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and not d.startswith("bench-results")
                             and not is_build_dir(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            if not is_source(name):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                head = "".join(f.readline() for _ in range(3))
            if TAG not in head and not head.startswith(GENERATED):
                yield os.path.relpath(path, root)


def main(argv):
    root = argv[1]
    bad = list(untagged(root))
    for path in bad:
        print(f"licence: {path} lacks '{TAG}' in its first three lines")
    with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
        licence = f.read()
    if not licence.startswith("MIT License") or "Permission is hereby granted" not in licence:
        print("licence: LICENSE does not hold the MIT licence text")
        bad.append("LICENSE")
    if bad:
        return 1
    print("licence: every source file carries the MIT SPDX identifier")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
