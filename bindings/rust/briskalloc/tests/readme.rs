// SPDX-License-Identifier: MIT
//! The README's example, run by `cargo test` so that it stays true: brisk
//! as the global allocator, and its figures from safe Rust. (A test, not an
//! example program: a package with an example carries a Cargo.lock, which
//! `cargo package` cannot write while briskalloc-sys is not on crates.io.)

#[global_allocator]
static GLOBAL: briskalloc::Brisk = briskalloc::Brisk;

#[test]
fn readme_example() {
    let words: Vec<String> = (0..10_000).map(|i| format!("word{}", i)).collect();
    println!("brisk {}", briskalloc::version());
    let info = briskalloc::memory_info(); // mapped, committed, their peaks, large_in_use
    println!("{} bytes mapped, {} committed", info.mapped, info.committed);
    let stats = briskalloc::stats(); // brisk_stats: stats.mapped, stats.resident, ...
    for class in stats.classes().filter(|c| c.mallocs > 0) {
        println!("{:>8} bytes: {} blocks", class.size, class.mallocs);
    }
    drop(words);
    briskalloc::collect(); // give unused memory back to the OS now
    briskalloc::print_stats(false); // the BRISK_STATS report, now, on stderr
    let boxed = Box::new(1u8);
    assert!(briskalloc::owns(&*boxed as *const u8)); // brisk's block (the global allocator is)
    assert_eq!(briskalloc::heap_check(), 0); // this thread's heap is consistent

    // what the example shows holds: the strings were brisk's, and counted
    // only in a diagnostic mode
    assert!(info.mapped > 0 && info.committed <= info.mapped);
    assert!(stats.resident > 0 && stats.resident_peak >= stats.resident);
    if !stats.counting() {
        assert!(stats.classes().all(|c| c.mallocs == 0));
    }
}
