# SPDX-License-Identifier: MIT
"""`brisk bench` shows churn against its two references, never ranked: the
pool inlined into the loop (`--pool`) and the loop over the floor malloc
preloaded from the bench folder. A bench folder without the floor library
(built before it existed) runs without that column.
usage: bench_reference_variants_test.py TOOLS_DIR
"""
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import bench_workloads  # noqa: E402
from expect import expect, finish  # noqa: E402 (beside this script)

churn = next(w for w in bench_workloads.WORKLOADS if w.name == "churn")
with tempfile.TemporaryDirectory() as bench_dir:
    variants = bench_workloads.variants_for(churn, bench_dir, [], bench_dir)
    by_name = {v.name: v for v in variants}
    expect("without the floor library: the pool alone", set(by_name) == {"pool"}, variants)

    floor = os.path.join(bench_dir, bench_workloads.FLOOR_LIBRARY)
    open(floor, "w").close()
    variants = bench_workloads.variants_for(churn, bench_dir, [], bench_dir)
    by_name = {v.name: v for v in variants}
    expect("with it: pool and floor", set(by_name) == {"pool", "floor"}, variants)
    pool, floor_column = by_name["pool"], by_name.get("floor")
    expect("the pool runs churn --pool with nothing preloaded",
           pool.argv_prefix[1:] == ["--pool"] and not pool.preload, pool)
    expect("the floor runs plain churn with the library preloaded",
           floor_column is not None and floor_column.argv_prefix[1:] == []
           and floor_column.preload == floor, floor_column)
    expect("both are references, never ranked",
           all(v.reference and not v.allocator for v in variants), variants)

finish()
