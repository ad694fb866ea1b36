# SPDX-License-Identifier: MIT
"""`brisk test`: build brisk and run every test, one build folder per stage.

Each stage configures, builds and runs CTest in its own folder, prints one
line, and the last line counts the tests of every stage: "N passed, N skipped,
N failed" (a test skips, with exit status 77, where this machine lacks what it
checks, and says why in the stage's log).
The whole output of each stage goes to FOLDER/brisk-test.log. Add a stage
(another compiler, a cross build) with one more entry in STAGES; a stage
that is not CMake's (the Rust crates: cargo) names its own runner in `run`.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = ["-DCMAKE_C_COMPILER=clang", "-DCMAKE_CXX_COMPILER=clang++"]
# explicit, as a folder configured by hand (README: "Try it") may have them off
TESTS = ["-DBRISK_BUILD_TESTS=ON"]

# prepare: commands run before configuring; finish: after the tests, whatever
# their outcome (e.g. waiting for background processes the tests left);
# run: the name, in RUNNERS, of a function(stage, jobs, log_file) -> Result
# that replaces configure, build and CTest (cmake_args is then unused).
# excluded: {test name regex: why} for the tests a stage leaves out (what
# this machine cannot run for that target); its log lists them.
Stage = namedtuple("Stage", "name folder summary cmake_args prepare finish run excluded",
                   defaults=[(), (), None, {}])

# Linux on ARM64, cross-built and run under qemu-user (cmake/aarch64-linux-gnu.cmake).
# Left out: the tests of what qemu-user does not pass on to the kernel (memory
# advice) or whose bounds would measure the emulator's own resident memory,
# each with the reason; the stage leaves them out by name and its log lists
# them. Every other test runs, python3 and sqlite3 preloaded on Debian's
# arm64 libraries among them (skipped, saying why, where apt cannot install
# those). The Free
# Pascal tests are not built there: Debian has no Free Pascal cross compiler
# for aarch64-linux (BRISK_PASCAL=OFF).
ARM64_EXCLUDED = {
    "brisk_huge_pages_on": "qemu-user ignores MADV_HUGEPAGE: no huge-page advice to check",
    "brisk_medium_block_resident_at_return":
        "qemu-user ignores MADV_POPULATE_WRITE: nothing is made resident ahead of use",
    "brisk_thread_churn|override_thread_churn_linked":
        "its RSS bound measures qemu-user, which keeps memory for every thread that ran",
    "memory_bounds": "its bounds are the process's resident memory while threads come and go, "
                     "and qemu-user keeps memory for every thread that ran",
}
# 32-bit Linux runs every test.
LINUX32_EXCLUDED = {}
# With 64 KiB pages emulated on this machine's 4 KiB ones, qemu-user fails
# some mmap and mprotect calls of a multithreaded program (ETIMEDOUT, under
# glibc's malloc too; python3's threads then meet a MemoryError now and then)
# and cuts the dynamic loader's LD_DEBUG lines short at names brisk
# allocated; the arm64 stage runs both tests with 4 KiB pages.
ARM64_DEBUG_EXCLUDED = dict(ARM64_EXCLUDED, **{
    "preload_python|preload_sqlite":
        "qemu-user emulating 64 KiB pages fails some mmap and mprotect calls of python3's "
        "threads, and cuts short the loader's LD_DEBUG lines that preload_sqlite reads (both "
        "run in the arm64 stage)",
})
ARM64 = ["-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake", "-DBRISK_PASCAL=OFF",
         # a quarter of the iterations: every instruction is emulated
         "-DBRISK_TEST_SCALE=25", *TESTS]

# brisk built with musl-gcc (cmake/x86_64-linux-musl.cmake): its tests run as
# musl programs, brisk linked, preloaded, or statically linked with musl
# (SQLite's program linked by musl-gcc against Debian's libsqlite3.a, built
# for glibc: tests/override/sqlite_glibc_shim.c says why). Not built there:
# the C++ test (Debian has no C++ library for musl), the Free Pascal tests
# (nor Free Pascal), mallinfo's (glibc's functions).
MUSL_EXCLUDED = {
    "preload_python": "needs a CPython built for musl: Debian has none, PyPI's musllinux wheels "
                      "hold extension modules for one, not the interpreter, and the tools that "
                      "build one download CPython's source from python.org, out of reach here",
}

def ctest_exclusions(excluded):
    return ["-E", "^(" + "|".join(excluded) + ")$"] if excluded else []
STAGES = [
    Stage("release", "build", "the release build: every test, Free Pascal, preloaded programs",
          ["-DCMAKE_BUILD_TYPE=Release", *TESTS]),
    Stage("debug", "build-debug", "internal assertions on (BRISK_DEBUG)",
          ["-DCMAKE_BUILD_TYPE=Debug", "-DBRISK_DEBUG=ON", *TESTS]),
    Stage("tsan", "build-tsan", "ThreadSanitizer (clang), through the brisk_* API",
          ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", *CLANG, "-DBRISK_SANITIZE=thread",
           "-DBRISK_PASCAL=OFF", *TESTS]),
    Stage("ubsan", "build-ubsan", "UndefinedBehaviorSanitizer (clang), through the brisk_* API",
          ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", *CLANG, "-DBRISK_SANITIZE=undefined",
           "-DBRISK_PASCAL=OFF", *TESTS]),
    # the release files: the Debian package installed, used and removed (as
    # root, where no brisk package is installed), the source tarball built
    Stage("package", "build-package", "the Debian package and the source tarball",
          ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_PREFIX=/usr", "-DBRISK_BUILD_TESTS=OFF",
           "-DBRISK_PACKAGE_TESTS=ON"]),
    # the Win64 build (MinGW-w64, Free Pascal's win64 units), its tests under Wine
    Stage("windows", "build-win64", "Win64 (brisk.dll, libbrisk.a, BriskMM), tests under Wine",
          ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake",
           *TESTS],
          (["scripts/install-deps.sh", "windows"], ["scripts/build-fpc-win64.sh"]),
          (["scripts/wine-wait.sh", "build-win64"],)),
    # 32-bit Linux: gcc -m32 (cmake/linux-i386.cmake), Free Pascal for i386-linux
    # built from fpc-source (scripts/build-fpc-i386.sh); the kernel runs it natively
    Stage("linux32", "build-linux32", "32-bit Linux (gcc -m32): every test, Free Pascal i386",
          ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_TOOLCHAIN_FILE=cmake/linux-i386.cmake", *TESTS],
          (["scripts/install-deps.sh", "linux32"],), excluded=LINUX32_EXCLUDED),
    # the Win32 build (MinGW-w64 i686, Free Pascal's i386-win32 units), its tests
    # under Wine's 32-bit side; where wine32:i386 cannot be installed every run
    # is skipped, saying why
    Stage("win32", "build-win32", "Win32 (brisk.dll, libbrisk.a, BriskMM), tests under Wine 32",
          ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-i686.cmake",
           *TESTS],
          (["scripts/install-deps.sh", "win32"], ["scripts/build-fpc-i386.sh"]),
          (["scripts/wine-wait.sh", "build-win32"],)),
    # Linux on ARM64: release with 4 KiB pages, debug (whose platform layer
    # stops at any range that is not whole OS pages) with 64 KiB pages
    Stage("arm64", "build-arm64", "Linux on ARM64, cross-built, tests under qemu-user (4 KiB pages)",
          ["-DCMAKE_BUILD_TYPE=Release", *ARM64], (["scripts/install-deps.sh", "arm64"],),
          excluded=ARM64_EXCLUDED),
    Stage("arm64-debug", "build-arm64-debug",
          "ARM64 with BRISK_DEBUG, tests under qemu-user with 64 KiB pages",
          # unoptimised code emulated: a tenth of the iterations
          ["-DCMAKE_BUILD_TYPE=Debug", "-DBRISK_DEBUG=ON", "-DBRISK_QEMU_PAGE_SIZE=65536", *ARM64,
           "-DBRISK_TEST_SCALE=10"],
          (["scripts/install-deps.sh", "arm64"],), excluded=ARM64_DEBUG_EXCLUDED),
    Stage("musl", "build-musl", "built with musl-gcc: tests linked, preloaded, static with musl",
          ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_TOOLCHAIN_FILE=cmake/x86_64-linux-musl.cmake",
           *TESTS], (["scripts/install-deps.sh", "musl"],), excluded=MUSL_EXCLUDED),
    # bindings/rust with Debian's cargo and rustc 1.63 (see run_rust)
    Stage("rust", "build-rust", "the Rust crates (cargo, Debian's rustc), Linux and Win64",
          [], (["scripts/install-deps.sh", "rust"],), (), "rust"),
]

# Stages that run only when named in --stages, not by a plain `./brisk test`
# (nor CI), with why: their tests do not all pass yet, or they take too long.
# None today.
ON_REQUEST = {}

Result = namedtuple("Result", "passed skipped failed problem failures why_skipped",
                    defaults=[()])


def log(message):
    print(f"brisk test: {message}", flush=True)


def run_logged(command, log_file):
    """Runs command with its output appended to log_file; returns its output."""
    log_file.write(f"\n$ {' '.join(command)}\n")
    log_file.flush()
    result = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    log_file.write(result.stdout)
    log_file.flush()
    return result.returncode, result.stdout


def count_tests(folder):
    out = subprocess.run(["ctest", "--test-dir", folder, "-N"], capture_output=True,
                         text=True).stdout
    match = re.search(r"Total Tests: (\d+)", out)
    return int(match.group(1)) if match else 0


def run_stage(stage, jobs, log_path):
    folder = os.path.join(ROOT, stage.folder)
    os.makedirs(folder, exist_ok=True)
    with open(log_path, "w") as log_file:
        for command in stage.prepare:
            status, _ = run_logged(command, log_file)
            if status != 0:
                return Result(0, 0, 0, f"{command[0]} failed", [])
        if stage.run:
            try:
                return RUNNERS[stage.run](stage, jobs, log_file)
            finally:
                for command in stage.finish:
                    run_logged(command, log_file)
        status, _ = run_logged(["cmake", "-S", ROOT, "-B", folder, *stage.cmake_args], log_file)
        if status != 0:
            return Result(0, 0, 0, "configure failed", [])
        status, _ = run_logged(["cmake", "--build", folder, "-j", str(jobs)], log_file)
        if status != 0:
            not_run = count_tests(folder)
            return Result(0, 0, not_run, f"build failed, {not_run} tests not run", [])
        if stage.excluded:
            log_file.write("\nleft out on this stage (this machine cannot run them for it):\n")
            for names, why in stage.excluded.items():
                log_file.write(f"  {names}: {why}\n")
        status, out = run_logged(["ctest", "--test-dir", folder, "--output-on-failure",
                                  "-j", str(jobs), *ctest_exclusions(stage.excluded)], log_file)
        for command in stage.finish:
            run_logged(command, log_file)
    match = re.search(r"tests passed, (\d+) tests? failed out of (\d+)", out)
    if not match:
        return Result(0, 0, 0, "ctest found no tests" if "No tests were found" in out
                      else "ctest printed no summary", [])
    failed, total = int(match.group(1)), int(match.group(2))
    failed_list = out.split("The following tests FAILED:")[-1] if failed else ""
    failures = re.findall(r"^\s*\d+ - (\S+) \((.*)\)$", failed_list, re.MULTILINE)
    skipped = len(re.findall(r"^\s*\d+ - \S+ \(Skipped\)$", out, re.MULTILINE))
    return Result(total - failed - skipped, skipped, failed, None, failures,
                  skip_reasons(folder) if skipped else ())


def skip_reasons(folder):
    """The distinct "skipped: ..." lines the skipped tests printed (CTest
    keeps every test's output in LastTest.log, the skipped ones' too)."""
    try:
        with open(os.path.join(folder, "Testing", "Temporary", "LastTest.log")) as f:
            lines = f.read().splitlines()
    except OSError:
        return ()
    reasons = []
    for line in lines:
        # one reason per cause: the part before the program's own name
        reason = re.sub(r": cannot run \S+$", "", line.strip())
        if reason.startswith("skipped:") and reason not in reasons:
            reasons.append(reason)
    return tuple(reasons[:5])


RUST = os.path.join(ROOT, "bindings", "rust")
WIN64 = "x86_64-pc-windows-gnu"


def rust_env(folder, jobs):
    """The environment of the rust stage's cargo commands: Debian's cargo and
    rustc (what CI's bare Debian 12 has), never rustup's, whatever PATH says,
    offline, with the crates of bindings/rust/vendor/ (cc alone): a fresh
    Debian root has no CA certificates for crates.io, and bookworm's cargo
    would read its old git index."""
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:" + env.get("PATH", "")
    cargo_home = os.path.join(folder, "cargo-home")
    os.makedirs(cargo_home, exist_ok=True)
    with open(os.path.join(cargo_home, "config.toml"), "w") as config:
        config.write('[source.crates-io]\nreplace-with = "brisk-vendor"\n'
                     f'[source.brisk-vendor]\ndirectory = "{os.path.join(RUST, "vendor")}"\n'
                     "[net]\noffline = true\n")
    env.update(
        CARGO="/usr/bin/cargo", RUSTC="/usr/bin/rustc", RUSTDOC="/usr/bin/rustdoc",
        CARGO_HOME=cargo_home, CARGO_TARGET_DIR=os.path.join(folder, "target"),
        CARGO_BUILD_JOBS=str(jobs),
        # a warning in brisk's C sources fails the build, as in CMake's builds
        CFLAGS="-Werror",
        # failing tests print where
        RUST_BACKTRACE="1")
    for name in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "RUSTUP_TOOLCHAIN"):
        env.pop(name, None)
    return env


def cargo_counts(out):
    """passed, ignored, failed summed over cargo test's "test result:" lines."""
    counts = [0, 0, 0]
    for match in re.finditer(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored",
                             out, re.MULTILINE):
        counts[0] += int(match.group(1))
        counts[1] += int(match.group(3))
        counts[2] += int(match.group(2))
    return counts


def wine_setup(folder, env, log_file):
    """Wine for the Win64 tests, in a prefix of the stage's own (created once,
    as cmake/mingw-w64-x86_64.cmake does); None when wine64 is missing."""
    wine = shutil.which("wine64") or shutil.which("wine64", path="/usr/lib/wine")
    if not wine:
        return None
    env.update(WINEPREFIX=os.path.join(folder, "wine-prefix"), WINEDEBUG="-all",
               WINEDLLOVERRIDES="mscoree,mshtml=")
    if not os.path.exists(os.path.join(env["WINEPREFIX"], "system.reg")):
        log_file.write("\n$ wine64 wineboot --init\n")
        log_file.flush()
        subprocess.run([wine, "wineboot", "--init"], env=env, stdin=subprocess.DEVNULL,
                       stdout=log_file, stderr=subprocess.STDOUT)
    return wine


def wine_wait(env):
    """Waits for the Wine server to leave (it outlives the programs a while)."""
    server = shutil.which("wineserver") or shutil.which("wineserver", path="/usr/lib/wine")
    if server and "WINEPREFIX" in env:
        subprocess.run([server, "-w"], env=env, timeout=60, check=False)


def run_rust(stage, jobs, log_file):
    """bindings/rust: each cargo run's tests counted from its "test result:"
    lines; one that fails to build, or exits non-zero with no failed test to
    show for it, is the stage's problem."""
    folder = os.path.join(ROOT, stage.folder)
    env = rust_env(folder, jobs)
    runs = [
        # default features: C libraries keep glibc's malloc
        ("cargo test", ["cargo", "test", "--locked", "--no-fail-fast"], {}),
        # brisk serves malloc & co too
        ("cargo test --features override",
         ["cargo", "test", "--locked", "--no-fail-fast", "-p", "briskalloc",
          "--features", "override"], {}),
        # brisk's C code under UndefinedBehaviorSanitizer, driven by the Rust
        # tests (rustc 1.63 has no sanitizer of its own: see the crate README)
        ("cargo test, C under UBSan",
         ["cargo", "test", "--locked", "--no-fail-fast"],
         {"CFLAGS": "-Werror -fsanitize=undefined -fno-sanitize-recover=undefined",
          "RUSTFLAGS": "-C link-arg=-lubsan",
          "CARGO_TARGET_DIR": os.path.join(folder, "target-ubsan")}),
    ]
    wine = None
    win64_std = os.path.join("/usr/lib/rustlib", WIN64)
    if os.path.isdir(win64_std):
        wine = wine_setup(folder, env, log_file)
    if wine:
        runs.append((f"cargo test --target {WIN64} (Wine)",
                     ["cargo", "test", "--locked", "--no-fail-fast", "--target", WIN64],
                     {"CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER": "x86_64-w64-mingw32-gcc",
                      "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER": wine}))
    runs.append(("bindings/rust/package.sh", [os.path.join(RUST, "package.sh")], {}))
    passed = skipped = failed = 0
    problems, failures = [], []
    # another target: the build must stop, saying which ones brisk supports
    # (only the build script runs: no standard library for it is needed)
    command = ["cargo", "build", "--locked", "-p", "briskalloc-sys",
               "--target", "aarch64-unknown-linux-gnu"]
    log_file.write(f"\n$ {' '.join(command)}   (must fail)\n")
    log_file.flush()
    result = subprocess.run(command, cwd=RUST, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    log_file.write(result.stdout)
    if result.returncode != 0 and "brisk supports Linux on x86-64 with glibc" in result.stdout:
        passed += 1
    else:
        failed += 1
        failures.append(("unsupported_target_refused", "cargo build --target aarch64"))
    if not wine:
        skipped += 1
        log_file.write(f"\nskipped: the {WIN64} tests (no Rust std for it in {win64_std}, "
                       "or no wine64: scripts/install-deps.sh rust installs both)\n")
    try:
        for name, command, extra in runs:
            log_file.write(f"\n$ {' '.join(f'{k}={v}' for k, v in extra.items())} "
                           f"{' '.join(command)}\n")
            log_file.flush()
            result = subprocess.run(command, cwd=RUST, env={**env, **extra},
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            log_file.write(result.stdout)
            log_file.flush()
            ok, ignored, bad = cargo_counts(result.stdout)
            passed, skipped, failed = passed + ok, skipped + ignored, failed + bad
            failures += [(test, name) for test in
                         re.findall(r"^test (\S+) \.\.\. FAILED$", result.stdout, re.MULTILINE)]
            if result.returncode != 0 and bad == 0:
                problems.append(f"{name} failed")
    finally:
        wine_wait(env)
    return Result(passed, skipped, failed, "; ".join(problems) or None, failures)


RUNNERS = {"rust": run_rust}


def failed_tests_output(out):
    """The lines CTest printed for its failed tests (--output-on-failure)."""
    shown, keep = [], False
    for line in out.splitlines():
        if re.match(r"\s*\d+/\d+ Test +#\d+: ", line):
            keep = "Passed" not in line
        elif re.match(r"\s+Start +\d+: |\d+% tests passed", line):
            keep = False
        if keep:
            shown.append(line)
    return shown


def failed_cargo_output(out):
    """What cargo test printed of its failed tests: each "failures:" section."""
    shown, keep = [], False
    for line in out.splitlines():
        if line == "failures:":
            keep = True
        elif line.startswith("test result:"):
            keep = False
        if keep:
            shown.append(line)
    return shown


def show(lines, what):
    """Prints part of a stage's output: a fresh machine may be gone before
    anyone reads the log."""
    log(f"  {what}:")
    for line in lines:
        print(f"  | {line}")


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="brisk test", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Build brisk and run every test, one build folder per stage:\n" + "\n".join(
            f"  {s.name:<8} {s.folder + '/':<13} {s.summary}" for s in STAGES) +
        ("\n\nRun only when named in --stages:\n" + "\n".join(
            f"  {name:<11} {why}" for name, why in ON_REQUEST.items()) if ON_REQUEST else ""))
    parser.add_argument("--stages", metavar="S1,S2",
                        default=",".join(s.name for s in STAGES if s.name not in ON_REQUEST),
                        help="run only these stages (default: all but those run on request)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="parallel build and test jobs (default: the number of CPUs)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.stages.split(",") if n.strip()]
    known = {s.name: s for s in STAGES}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        parser.error(f"--stages: unknown stage(s) {', '.join(unknown)}; known: "
                     f"{', '.join(known)}")
    args.stages = [known[n] for n in names]
    return args


def main(argv):
    args = parse(argv)
    passed = skipped = failed = 0
    all_ok = True
    for stage in args.stages:
        log_path = os.path.join(ROOT, stage.folder, "brisk-test.log")
        log(f"{stage.name}: {stage.summary} ({stage.folder}/) ...")
        start = time.monotonic()
        result = run_stage(stage, args.jobs, log_path)
        minutes, seconds = divmod(int(time.monotonic() - start), 60)
        passed += result.passed
        skipped += result.skipped
        failed += result.failed
        outcome = result.problem or (f"{result.passed} passed, {result.skipped} skipped, "
                                     f"{result.failed} failed")
        log(f"{stage.name:<8} {outcome}  ({minutes}m{seconds:02d}s)")
        for name, why in result.failures:
            log(f"  FAILED {name} ({why})")
        for reason in result.why_skipped:
            log(f"  {reason}")
        if result.problem or result.failed:
            all_ok = False
            with open(log_path) as f:
                out = f.read()
            if not result.failures:
                lines = out.splitlines()[-40:]
            elif stage.run:
                lines = failed_cargo_output(out) or out.splitlines()[-40:]
            else:
                lines = failed_tests_output(out)
            show(lines, f"from {os.path.relpath(log_path, ROOT)}")
    print(f"{passed} passed, {skipped} skipped, {failed} failed", flush=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
