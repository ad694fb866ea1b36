// SPDX-License-Identifier: MIT
// The workloads under the system allocator.

fn main() {
    briskalloc_bench::main()
}
