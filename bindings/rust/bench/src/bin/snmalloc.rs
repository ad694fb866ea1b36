// SPDX-License-Identifier: MIT
// The workloads under the snmalloc allocator.
#[global_allocator]
static GLOBAL: snmalloc_rs::SnMalloc = snmalloc_rs::SnMalloc;

fn main() {
    briskalloc_bench::main()
}
