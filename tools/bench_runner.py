# SPDX-License-Identifier: MIT
"""Runs one workload process and measures it from the outside.

Wall time is taken around the process; peak RSS and the exit status come
from the kernel (wait4 in the small launcher bench/measure.c), so the
figures cost the workload nothing and mean the same for every allocator.
"""
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

OK, WRONG, CRASH, TIMEOUT, ERROR = "ok", "WRONG", "CRASH", "TIMEOUT", "ERROR"


@dataclass
class RunResult:
    status: str
    wall_s: float
    peak_rss_mb: float
    result: dict = field(default_factory=dict)  # the RESULT line's key=value pairs
    detail: str = ""
    user_s: float = 0.0  # CPU time of the workload (wait4), user and system:
    sys_s: float = 0.0  # page faults and madvise show up as system time


def parse_result_line(stdout):
    """The last `RESULT k=v ...` line of stdout as a dict, or None."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if not lines or not lines[-1].startswith("RESULT"):
        return None
    fields = {}
    for item in lines[-1].split()[1:]:
        key, sep, value = item.partition("=")
        if sep:
            fields[key] = value
    return fields


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _read_report(path):
    try:
        with open(path) as f:
            return dict(item.split("=", 1) for item in f.read().split())
    except (OSError, ValueError):
        return None


def run_measured(launcher, argv, preload, timeout_s, extra_env=None):
    """Runs argv through the `measure` launcher (bench/measure.c), which
    forks it, sets LD_PRELOAD for it alone and reports wait4's figures."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if extra_env:
        env.update(extra_env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="brisk-measure-") as report_file:
        start = time.monotonic()
        try:
            proc = subprocess.Popen([launcher, report_file.name, preload, *argv], stdout=out,
                                    stderr=err, env=env, start_new_session=True)
        except OSError as exc:
            return RunResult(ERROR, 0.0, 0.0, detail=f"cannot start {launcher}: {exc}")
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the launcher and the workload
            except ProcessLookupError:
                pass

        # A blocking wait plus a timer: Popen.wait(timeout) polls in steps of
        # up to 50 ms, which would quantise the wall time.
        timer = threading.Timer(timeout_s, kill)
        timer.start()
        try:
            proc.wait()
        except BaseException:
            # Interrupted (Ctrl-C): the workload runs in its own session, so
            # it would outlive us unless killed here.
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            timer.cancel()
        wall = time.monotonic() - start
        report = _read_report(report_file.name)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    fields = parse_result_line(stdout) or {}
    last_err = stderr.strip().splitlines()[-1][:200] if stderr.strip() else ""
    if timed_out.is_set():
        return RunResult(TIMEOUT, wall, 0.0, fields, f"killed after {timeout_s:g} s")
    if not report or "status" not in report:
        return RunResult(ERROR, wall, 0.0, fields,
                         f"launcher failed (exit {proc.returncode}): {last_err}".strip())
    status = int(report["status"])
    wall = float(report.get("wall_s", wall))  # fork to wait4, without the launcher's start
    rss_mb = int(report.get("maxrss_kb", 0)) / 1024.0  # Linux reports KiB
    cpu = {"user_s": float(report.get("user_s", 0)), "sys_s": float(report.get("sys_s", 0))}
    if os.WIFSIGNALED(status):
        return RunResult(CRASH, wall, rss_mb, fields,
                         f"{_signal_name(os.WTERMSIG(status))} {last_err}".strip(), **cpu)
    code = os.WEXITSTATUS(status)
    if code == 0 and fields.get("ok") == "1":
        return RunResult(OK, wall, rss_mb, fields, **cpu)
    if code in (0, 2) or fields.get("ok") == "0":
        why = last_err or ("no RESULT line" if not fields else "ok=0")
        return RunResult(WRONG, wall, rss_mb, fields, why, **cpu)
    return RunResult(ERROR, wall, rss_mb, fields, f"exit status {code}: {last_err}".strip(),
                     **cpu)
