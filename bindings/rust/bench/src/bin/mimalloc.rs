// SPDX-License-Identifier: MIT
// The workloads under the mimalloc allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    briskalloc_bench::main()
}
