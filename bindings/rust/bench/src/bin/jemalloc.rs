// SPDX-License-Identifier: MIT
// The workloads under the jemalloc allocator.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    briskalloc_bench::main()
}
