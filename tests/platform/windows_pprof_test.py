# SPDX-License-Identifier: MIT
"""A Windows program's heap profile read by Google's pprof: windows_diag's
`profile` child (run under Wine with BRISK_HEAP_PROFILE) holds 16 MiB in
blocks that profile_hold_blocks (an exported function, which brisk names on
Windows) allocated; `pprof -top` of its in-use space must put that function
first with 12 to 20 MiB (the estimate of a sampled profile). Skipped (exit
status 77) without pprof (scripts/install-profile-tools.sh builds it).

usage: windows_pprof_test.py PROGRAM.exe WINE-COMMAND...
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def tool(name):
    for path in (shutil.which(name), f"/usr/local/bin/{name}",
                 os.path.expanduser(f"~/go/bin/{name}")):
        if path and os.access(path, os.X_OK):
            return path
    return None


def main(argv):
    program, *wine = argv
    pprof = tool("pprof")
    if pprof is None:
        print("SKIPPED: Google's pprof is not installed (scripts/install-profile-tools.sh "
              "builds it from tools/vendor/pprof with Debian's golang-go)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "heap.pb.gz")
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
        env.update(BRISK_HEAP_PROFILE=profile, BRISK_HEAP_PROFILE_RATE="65536")
        run = subprocess.run(wine + [program, "profile"], env=env, capture_output=True,
                             text=True, timeout=120)
        print(run.stdout + run.stderr)
        if run.returncode != 0 or not os.path.exists(profile):
            print(f"FAIL the program (exit status {run.returncode}) wrote no {profile}")
            return 1
        top = subprocess.run([pprof, "-top", "-sample_index=inuse_space", profile],
                             capture_output=True, text=True, timeout=120)
        print(top.stdout + top.stderr)
    # flat flat% sum% cum cum% name, the figures in pprof's units
    row = re.compile(r"^\s*([\d.]+)(\w*)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+\w*\s+[\d.]+%\s+(.+)$")
    rows = [m for m in map(row.match, top.stdout.splitlines()) if m]
    if not rows:
        print("FAIL pprof -top listed no function")
        return 1
    scale = {"": 1, "B": 1, "kB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}.get(rows[0].group(2), 0)
    held = float(rows[0].group(1)) * scale
    first = rows[0].group(3).strip()
    ok = first == "profile_hold_blocks" and 12 * 2 ** 20 <= held <= 20 * 2 ** 20
    print(("ok   " if ok else "FAIL ") + f"pprof's first function is {first}, holding "
          f"{held / 2 ** 20:.1f} MiB (profile_hold_blocks, 12 to 20 MiB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
