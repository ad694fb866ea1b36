"""Finding, installing and checking the allocators `brisk bench` compares.

Every allocator except glibc is a shared library preloaded with LD_PRELOAD.
A library is only used after a trivial preloaded program runs cleanly with
it, so a broken install is reported once instead of failing every run.
"""
import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

GLIBC = "glibc"
BRISK = "brisk"


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


def install_missing(missing, log):
    """apt-get installs the packages of missing peers when we can.
    Returns a message about what happened, or None if nothing was tried."""
    if not missing:
        return None
    packages = [p.package for p in missing]
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        why = "not root" if os.geteuid() != 0 else "no apt-get"
        return f"cannot install {' '.join(packages)} ({why})"
    log(f"installing {' '.join(packages)} with apt-get ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    command = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    for attempt in range(2):
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode == 0:
            return f"installed {' '.join(packages)}"
        if attempt == 0:  # stale package lists are the usual cause
            subprocess.run(["apt-get", "update"], capture_output=True, env=env)
    tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["?"]
    return f"apt-get install failed: {tail[0]}"


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


def discover(brisk_path, extra, wanted, install, log):
    """Returns (allocators in table order, {name: reason skipped})."""
    skipped = {}
    allocators = [Allocator(GLIBC, "")]
    if brisk_path and os.path.exists(brisk_path):
        allocators.append(Allocator(BRISK, brisk_path))
    else:
        skipped[BRISK] = "build/libbrisk.so not built yet (the allocator core is missing or failed to build)"
    found = {p.name: find_library(p.sonames) for p in PEERS}
    missing = [p for p in PEERS if not found[p.name] and (not wanted or p.name in wanted)
               and p.name not in extra]
    if missing and install:
        note = install_missing(missing, log)
        if note:
            log(note)
        found.update({p.name: find_library(p.sonames) for p in missing})
    for peer in PEERS:
        if found[peer.name]:
            allocators.append(Allocator(peer.name, found[peer.name]))
        elif peer.name not in extra:
            skipped[peer.name] = f"not installed (Debian package {peer.package})"
    for name, path in extra.items():
        allocators = [a for a in allocators if a.name != name]
        skipped.pop(name, None)
        allocators.append(Allocator(name, os.path.abspath(path)))
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
