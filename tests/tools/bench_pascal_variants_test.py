# SPDX-License-Identifier: MIT
"""`brisk bench` finds the Pascal binaries it has: fastmm4 and the three
fpcx64mm settings are columns where their binaries were built and go
unmentioned where they were not (few machines have their sources), while a
missing variant of the others is reported.
usage: bench_pascal_variants_test.py TOOLS_DIR
"""
import os
import stat
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import bench_workloads  # noqa: E402
from expect import expect, finish  # noqa: E402 (beside this script)

def make_binaries(bench_dir, names):
    os.makedirs(os.path.join(bench_dir, "pascal"), exist_ok=True)
    for name in names:
        path = os.path.join(bench_dir, "pascal", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, stat.S_IRWXU)


with tempfile.TemporaryDirectory() as scratch:
    # pascal_workloads wants fpc on PATH; any executable of that name will do.
    make_binaries(scratch, ["fpc"])
    os.environ["PATH"] = os.path.join(scratch, "pascal") + os.pathsep + os.environ["PATH"]
    programs = ("lines", "objects", "pipeline")
    usual = [f"{w}_{m}" for w in programs for m in ("fpcheap", "cmem", "brisk")]

    without = os.path.join(scratch, "without")
    make_binaries(without, usual)
    workloads, note = bench_workloads.pascal_workloads(without)
    expect("without FastMM4: no note", note is None, note)
    expect("without FastMM4: four Pascal workloads", len(workloads) == 4, workloads)
    expect("without FastMM4: no fastmm4 variant",
           all("fastmm4" not in w.binary_variants for w in workloads))

    with_fastmm4 = os.path.join(scratch, "with")
    make_binaries(with_fastmm4, usual + [f"{w}_fastmm4" for w in programs])
    workloads, note = bench_workloads.pascal_workloads(with_fastmm4)
    expect("with FastMM4: no note", note is None, note)
    for w in workloads:
        variants = bench_workloads.variants_for(w, with_fastmm4, [], scratch)
        fastmm4 = [v for v in variants if v.name == "fastmm4"]
        expect(f"with FastMM4: {w.name} has a fastmm4 column that runs on fastmm4",
               len(fastmm4) == 1 and fastmm4[0].allocator == "fastmm4"
               and fastmm4[0].argv_prefix[0].endswith("_fastmm4") and not fastmm4[0].preload,
               variants)

    with_fpcx64mm = os.path.join(scratch, "fpcx64mm")
    make_binaries(with_fpcx64mm, usual + [f"{w}_{m}" for w in programs
                                          for m in bench_workloads.FPCX64MM])
    workloads, note = bench_workloads.pascal_workloads(with_fpcx64mm)
    expect("with fpcx64mm: no note", note is None, note)
    for w in workloads:
        names = {v.name: v for v in bench_workloads.variants_for(w, with_fpcx64mm, [], scratch)}
        expect(f"with fpcx64mm: {w.name} has its three settings as columns, each its own binary",
               all(m in names and names[m].allocator == m and names[m].argv_prefix[0].endswith(
                   "_" + m) for m in bench_workloads.FPCX64MM), names)

    partial = os.path.join(scratch, "partial")
    make_binaries(partial, [n for n in usual if n != "objects_cmem"])
    workloads, note = bench_workloads.pascal_workloads(partial)
    expect("a missing cmem binary is reported, fastmm4 and fpcx64mm are not",
           note is not None and "objects_cmem" in note and "fastmm4" not in note
           and "fpcx64mm" not in note, note)

finish()
