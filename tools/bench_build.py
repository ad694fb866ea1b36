# SPDX-License-Identifier: MIT
"""Getting ready to benchmark: the prerequisites (through
scripts/install-deps.sh, the one place that installs packages), the build
of brisk and the workloads, and the cached line data.
"""
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.join(ROOT, "build")
BENCH_ONLY_BUILD_DIR = os.path.join(ROOT, "build-bench")
LINES_CACHE = os.path.join(ROOT, ".cache", "lines")
INSTALL_DEPS = os.path.join(ROOT, "scripts", "install-deps.sh")


class BuildError(Exception):
    """A problem the user can fix; reported as one clear message."""


def install_deps(log):
    """Runs `scripts/install-deps.sh bench` (which installs the Debian peers
    and the chart library when run as root). Returns a phrase saying why a
    peer may still be missing, for the skipped list."""
    if not os.access(INSTALL_DEPS, os.X_OK):
        return f"{os.path.relpath(INSTALL_DEPS, ROOT)} is missing"
    log("checking prerequisites: scripts/install-deps.sh bench")
    result = subprocess.run([INSTALL_DEPS, "bench"], cwd=ROOT)
    if result.returncode != 0:
        log(f"scripts/install-deps.sh bench failed (exit status {result.returncode}); going on "
            "with what is installed")
        return "scripts/install-deps.sh bench failed to install it"
    if os.geteuid() != 0:
        return "install it as root, e.g. sudo scripts/install-deps.sh bench"
    return "scripts/install-deps.sh bench did not install it"


def _run_quiet(command, what):
    """Runs a build step; returns None on success, else the tail of its output."""
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    lines = (result.stdout + result.stderr).strip().splitlines()
    # The compiler's or CMake's own words first; make's summary lines last.
    errors = ([l for l in lines if "error:" in l.lower() or "CMake Error" in l]
              or [l for l in lines if "error" in l.lower()] or lines)
    return f"{what} failed: " + " | ".join(l.strip() for l in errors[:3])


def _configure_command(source, build_dir):
    command = ["cmake", "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
               # Packages are install-deps.sh's business, never the build's.
               "-DBRISK_INSTALL_FPC=OFF",
               # the workloads are built with the tests (a folder set up by
               # hand for the README's first try has them off)
               "-DBRISK_BUILD_TESTS=ON"]
    # Same generator as `make build`, so either can reuse the other's folder.
    if shutil.which("ninja") and not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        command += ["-G", "Ninja"]
    return command


def build(no_build, log, fastmm4_dir=None, fpcx64mm_dir=None):
    """Builds everything; falls back to the workloads alone while the
    allocator core does not build. Returns (bench binary folder, brisk
    library or None). fastmm4_dir, fpcx64mm_dir: where FastMM4's and
    fpcx64mm's sources may be (those folders of --anchors), for their Pascal
    variants."""
    brisk_lib = os.path.join(BUILD_DIR, "libbrisk.so")
    if no_build:
        for candidate in (os.path.join(BUILD_DIR, "bench"), BENCH_ONLY_BUILD_DIR):
            if os.path.exists(os.path.join(candidate, "lines")):
                return candidate, brisk_lib if os.path.exists(brisk_lib) else None
        raise BuildError("--no-build: no workload binaries in build/bench or build-bench")
    if not shutil.which("cmake"):
        raise BuildError("cmake is needed to build the workloads (scripts/install-deps.sh "
                         "installs it)")
    log("building (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build) ...")
    configure = _configure_command(".", BUILD_DIR)
    if fastmm4_dir:
        # Every time, so the build follows --anchors, and a FastMM4 put there
        # since the last build is picked up (pascal/CMakeLists.txt looks at
        # configure time).
        configure.append(f"-DBRISK_FASTMM4_DIR={os.path.abspath(fastmm4_dir)}")
    if fpcx64mm_dir:
        configure.append(f"-DBRISK_FPCX64MM_DIR={os.path.abspath(fpcx64mm_dir)}")
    problem = _run_quiet(configure, "configure") or _run_quiet(
        ["cmake", "--build", BUILD_DIR, "-j"], "build")
    if problem is None and os.path.exists(brisk_lib):
        return os.path.join(BUILD_DIR, "bench"), brisk_lib
    log(problem or "the build made no libbrisk.so")
    log("building the workloads alone (build-bench/), comparing the other allocators")
    problem = _run_quiet(_configure_command("bench", BENCH_ONLY_BUILD_DIR),
                         "configure of bench/") or _run_quiet(
        ["cmake", "--build", BENCH_ONLY_BUILD_DIR, "-j"], "build of bench/")
    if problem:
        raise BuildError(problem)
    return BENCH_ONLY_BUILD_DIR, None


def lines_data(bench_dir, params, log):
    """The line data folder for these parameters, generated once and cached."""
    key = "-".join(f"{k}{v}" for k, v in params.items()).replace("max-field", "m")
    folder = os.path.join(LINES_CACHE, key)
    if os.path.exists(os.path.join(folder, "expect.txt")):
        return folder
    os.makedirs(LINES_CACHE, exist_ok=True)
    partial = f"{folder}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    log(f"generating line data {key} (once; cached in .cache/lines) ...")
    command = [os.path.join(bench_dir, "gen_lines"), "--dir", partial]
    for name, value in params.items():
        command += [f"--{name}", str(value)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise BuildError(f"gen_lines failed: {result.stderr.strip()}")
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(partial, folder)  # atomic: a folder with expect.txt is always complete
    return folder
