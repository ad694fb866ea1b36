# SPDX-License-Identifier: MIT
"""What a benchmark result depends on besides the workloads: the machine, how
busy it was while the benchmark ran, and exactly which allocator libraries
ran (version and sha256), so that two results.json files can be told apart.
"""
import hashlib
import os
import platform
import re
import resource
import subprocess
import time

# A machine is busy when, before we start, its 1-minute load average is above
# this share of its cores, or when other processes take more than
# OTHERS_LIMIT of its CPU time while we run.
LOAD_LIMIT = 0.3
OTHERS_LIMIT = 0.10


def _run(command, cwd=None):
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=20, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine():
    return {"cpu": cpu_model(), "cores": os.cpu_count() or 1, "kernel": platform.release(),
            "os": _os_name()}


def _os_name():
    try:
        with open("/etc/os-release") as f:
            fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        return fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        return ""


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


# --- how busy the machine was ------------------------------------------------

def _busy_seconds():
    """CPU seconds the whole machine has spent not idle since boot (steal
    included: on a virtual machine, time taken by neighbours is lost to us)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _our_seconds():
    """CPU seconds used by this process and every workload it waited for."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


class BusyMeter:
    """Measures the machine's load around the run: the load average at start
    and end and, more telling, the share of the CPU that processes other
    than the benchmark used (the load average counts our own workloads)."""

    def __init__(self):
        self.load_start = load_average()
        self.wall_start = time.monotonic()
        self.busy_start = _busy_seconds()
        self.ours_start = _our_seconds()

    def finish(self):
        cores = os.cpu_count() or 1
        elapsed = max(time.monotonic() - self.wall_start, 1e-6)
        others = (_busy_seconds() - self.busy_start) - (_our_seconds() - self.ours_start)
        return {"load_start": self.load_start, "load_end": load_average(),
                "others_cpu_share": round(max(others, 0.0) / (elapsed * cores), 3)}


def busy_warnings(load, cores):
    """Sentences saying why the timings may not be trusted; [] on a quiet machine."""
    warnings = []
    if load["load_start"][0] > LOAD_LIMIT * cores:
        warnings.append(f"the load average was {load['load_start'][0]:.2f} at the start on "
                        f"{cores} core(s) (quiet: below {LOAD_LIMIT * cores:.1f})")
    share = load.get("others_cpu_share")
    if share is not None and share > OTHERS_LIMIT:
        warnings.append(f"other processes used {share:.0%} of the CPU during the run (load "
                        f"average {load['load_start'][0]:.2f} at start, "
                        f"{load['load_end'][0]:.2f} at end)")
    return warnings


# --- which allocators ran ----------------------------------------------------

def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def debian_version(path):
    """'package version' of the Debian package that installed `path`, or ''."""
    for candidate in dict.fromkeys([path, os.path.realpath(path)]):
        owner = _run(["dpkg-query", "-S", candidate])
        if owner:
            package = owner.split(":")[0].strip()
            version = _run(["dpkg-query", "-W", "-f=${Version}", package])
            return f"{package} {version}".strip()
    return ""


def version_file(path):
    """The first line of NAME.version beside NAME.so (scripts/build-anchors.sh
    writes one), or ''."""
    stem = path[:-len(".so")] if path.endswith(".so") else path
    for candidate in (stem + ".version", path + ".version"):
        try:
            with open(candidate) as f:
                return f.readline().strip()
        except OSError:
            continue
    return ""


def brisk_version(root):
    header = os.path.join(root, "include", "brisk.h")
    parts = {}
    try:
        with open(header) as f:
            for match in re.finditer(r"#define BRISK_VERSION_(MAJOR|MINOR|PATCH) (\d+)", f.read()):
                parts[match.group(1)] = match.group(2)
    except OSError:
        pass
    version = ".".join(parts.get(k, "?") for k in ("MAJOR", "MINOR", "PATCH"))
    described = _run(["git", "describe", "--tags", "--always", "--dirty"], cwd=root)
    return f"brisk {version}" + (f" (git {described})" if described else "")


def glibc_library():
    out = _run(["ldconfig", "-p"])
    for line in out.splitlines():
        if line.strip().startswith("libc.so.6 ") and "x86-64" in line and "=>" in line:
            return line.split("=>")[-1].strip()
    return ""


def describe_allocator(allocator, root):
    """{library, sha256, version, source} for results.json."""
    if not allocator.preload:
        library = glibc_library()
        version = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
        if library:
            version = " / ".join(v for v in (version, debian_version(library)) if v)
    elif allocator.source == "build":
        library, version = allocator.preload, brisk_version(root)
    else:
        library = allocator.preload
        version = version_file(library) or debian_version(library) or "unknown"
    info = {"library": library, "version": version, "source": allocator.source}
    if library and os.path.isfile(library):
        info["sha256"] = sha256(os.path.realpath(library))
    return info
