// SPDX-License-Identifier: MIT
// The workloads under the brisk allocator.
#[global_allocator]
static GLOBAL: briskalloc::Brisk = briskalloc::Brisk;

fn main() {
    briskalloc_bench::main()
}
