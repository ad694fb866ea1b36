# SPDX-License-Identifier: MIT
"""Finding and checking the allocators `brisk bench` compares.

Every allocator except glibc is a shared library preloaded with LD_PRELOAD:
brisk from the build folder, the Debian peers where their packages are
installed, the libraries scripts/build-anchors.sh built into .cache/anchors/
(one NAME.so each, picked up automatically), and any --alloc NAME=path.so.
A library is only used after a trivial preloaded program runs cleanly with
it, so a broken one is reported once instead of failing every run.
Installing packages is scripts/install-deps.sh's job, not this module's.
"""
import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

GLIBC = "glibc"
BRISK = "brisk"
NAME_PATTERN = r"[A-Za-z0-9_.+-]+"


@dataclass
class Peer:
    name: str
    package: str  # Debian package that provides it
    sonames: tuple  # first one found wins


PEERS = (
    Peer("jemalloc", "libjemalloc2", ("libjemalloc.so.2",)),
    Peer("tcmalloc", "libtcmalloc-minimal4", ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4")),
    Peer("mimalloc", "libmimalloc2.0", ("libmimalloc.so.2", "libmimalloc.so.2.0")),
    Peer("tbb", "libtbbmalloc2", ("libtbbmalloc_proxy.so.2",)),
)

LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/usr/local/lib", "/usr/lib/*-linux-gnu")


@dataclass
class Allocator:
    name: str
    preload: str  # "" for glibc: the system malloc needs no preload
    source: str  # "system", "build", "debian", "anchor" or "--alloc"


def _ldconfig_paths():
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    paths = {}
    for line in out.splitlines():
        if "=>" not in line:
            continue
        soname = line.split()[0]
        # 32-bit builds of a library are listed as plain "libc6"; skip them.
        if "(libc6)" in line and soname in paths:
            continue
        paths.setdefault(soname, line.split("=>")[-1].strip())
    return paths


def find_library(sonames):
    known = _ldconfig_paths()
    for soname in sonames:
        if soname in known and os.path.exists(known[soname]):
            return known[soname]
    for soname in sonames:
        for pattern in LIBRARY_DIRS:
            for path in glob.glob(os.path.join(pattern, soname)):
                if os.path.exists(path):
                    return path
    return None


def anchors_in(folder):
    """{name: path} for every NAME.so in the anchors folder."""
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.so"))):
        name = os.path.basename(path)[:-len(".so")]
        if re.fullmatch(NAME_PATTERN, name):
            found[name] = os.path.abspath(path)
    return found


def check_preload(path):
    """Returns None if `path` can be preloaded into a trivial program, else why not."""
    if not os.path.isfile(path):
        return f"{path}: no such file"
    true = shutil.which("true") or "/bin/true"
    env = dict(os.environ, LD_PRELOAD=path)
    try:
        result = subprocess.run([true], env=env, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return f"{path}: a trivial program hangs with it preloaded"
    # ld.so only warns (and exits 0) when a preload cannot be loaded.
    if result.returncode != 0 or "ld.so" in result.stderr or "error" in result.stderr.lower():
        message = result.stderr.strip().splitlines()[:1] or [f"exit status {result.returncode}"]
        return f"{path}: broken as a preload: {message[0]}"
    return None


def _candidates(brisk_path, extra, anchors, why_missing):
    """Every allocator that could run, in table order, and why others cannot."""
    skipped = {}
    found = [Allocator(GLIBC, "", "system")]
    if brisk_path and os.path.exists(brisk_path):
        found.append(Allocator(BRISK, brisk_path, "build"))
    else:
        skipped[BRISK] = ("build/libbrisk.so not built yet (the allocator core is missing or "
                          "failed to build)")
    for peer in PEERS:
        path = find_library(peer.sonames)
        if path:
            found.append(Allocator(peer.name, path, "debian"))
        else:
            skipped[peer.name] = f"not installed (Debian package {peer.package}; {why_missing})"
    for name, path in anchors.items():
        found.append(Allocator(name, path, "anchor"))
    for name, path in extra.items():  # --alloc wins over a library of the same name
        found = [a for a in found if a.name != name]
        skipped.pop(name, None)
        found.append(Allocator(name, os.path.abspath(path), "--alloc"))
    return found, skipped


def discover(brisk_path, extra, wanted, anchors_dir, why_missing):
    """Returns (allocators in table order, {name: reason skipped}).
    why_missing says why a missing Debian peer was not installed."""
    anchors = anchors_in(anchors_dir) if anchors_dir and os.path.isdir(anchors_dir) else {}
    allocators, skipped = _candidates(brisk_path, extra, anchors, why_missing)
    if wanted:
        allocators = [a for a in allocators if a.name in wanted]
        skipped = {k: v for k, v in skipped.items() if k in wanted}
    usable = []
    for allocator in allocators:
        problem = check_preload(allocator.preload) if allocator.preload else None
        if problem:
            skipped[allocator.name] = problem
        else:
            usable.append(allocator)
    return usable, skipped
