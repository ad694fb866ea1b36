// SPDX-License-Identifier: MIT
//! brisk as Rust's global allocator: every thread gets its own heap, so
//! allocating and freeing your own blocks takes no lock and no atomic
//! instruction, and a block freed by another thread costs one
//! compare-and-swap.
//!
//! ```no_run
//! #[global_allocator]
//! static GLOBAL: briskalloc::Brisk = briskalloc::Brisk;
//!
//! fn main() {
//!     let v: Vec<String> = (0..100).map(|i| i.to_string()).collect();
//!     assert_eq!(v.len(), 100);
//!     println!("brisk {}: {} bytes mapped", briskalloc::version(),
//!              briskalloc::memory_info().mapped);
//! }
//! ```
//!
//! brisk's diagnostics work as in C, switched on from the environment
//! without rebuilding: `BRISK_STATS=1`, `BRISK_LEAKS=1`, `BRISK_CHECK=1`
//! (checked mode), `BRISK_VERBOSE=1`; see brisk's README.
//!
//! Supported targets: `x86_64-unknown-linux-gnu` and `x86_64-pc-windows-gnu`.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::CStr;
use std::ops::Deref;
use std::ptr;

pub use briskalloc_sys as sys;
pub use sys::brisk_memory_info as MemoryInfo;

/// The alignment of every block `brisk_malloc` returns: brisk's smallest
/// size class is 16 bytes and every class is a multiple of 16 (see
/// src/core/size_class.c), whatever the size asked for.
const MALLOC_ALIGN: usize = 16;

/// brisk as a [`GlobalAlloc`]: `#[global_allocator] static GLOBAL: Brisk = Brisk;`
///
/// Every [`Layout`] alignment is honoured: up to 16 bytes by `brisk_malloc`
/// itself, above by `brisk_aligned_alloc`. `dealloc` passes the layout's
/// size to `brisk_free_sized`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Brisk;

unsafe impl GlobalAlloc for Brisk {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            sys::brisk_malloc(layout.size()) as *mut u8
        } else {
            sys::brisk_aligned_alloc(layout.align(), layout.size()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // calloc knows when fresh pages are zero already and skips the memset
            sys::brisk_calloc(1, layout.size()) as *mut u8
        } else {
            let block = self.alloc(layout);
            if !block.is_null() {
                ptr::write_bytes(block, 0, layout.size());
            }
            block
        }
    }

    #[inline]
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        sys::brisk_free_sized(block as *mut sys::c_void, layout.size());
    }

    #[inline]
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            sys::brisk_realloc(block as *mut sys::c_void, new_size) as *mut u8
        } else {
            realloc_aligned(self, block, layout, new_size)
        }
    }
}

/// realloc for an alignment above 16: brisk_realloc keeps only 16, so a
/// block that must move is allocated anew with the alignment, copied and
/// freed. One that still holds new_size bytes stays where it is unless it
/// would then waste more than half of itself (brisk_realloc's own rule for
/// large blocks), so shrinking a large aligned buffer gives memory back.
#[cold]
unsafe fn realloc_aligned(
    brisk: &Brisk,
    block: *mut u8,
    layout: Layout,
    new_size: usize,
) -> *mut u8 {
    let usable = sys::brisk_usable_size(block as *const sys::c_void);
    if new_size <= usable && new_size >= usable / 2 {
        return block;
    }
    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
    let moved = brisk.alloc(new_layout);
    if !moved.is_null() {
        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
        brisk.dealloc(block, layout);
    }
    moved
}

impl Brisk {
    /// Bytes usable in a block from brisk: at least the size it was asked
    /// for. In checked mode (`BRISK_CHECK=1`) exactly that size.
    ///
    /// # Safety
    /// `block` is null or a live block that brisk handed out.
    pub unsafe fn usable_size(&self, block: *const u8) -> usize {
        sys::brisk_usable_size(block as *const sys::c_void)
    }
}

/// "major.minor.patch" of the brisk linked in.
pub fn version() -> &'static str {
    // a static string literal of brisk's (BRISK_VERSION_STRING)
    unsafe { CStr::from_ptr(sys::brisk_version()) }.to_str().unwrap_or("?")
}

/// Returns unused memory to the OS now: this thread's free pages, the empty
/// pages of exited threads, cached segments and large spans.
pub fn collect() {
    unsafe { sys::brisk_collect() }
}

/// Whether `block` lies in memory brisk manages (any thread's heap): true
/// for what [`Brisk`] handed out, false for the stack, statics and other
/// allocators' blocks.
pub fn owns<T: ?Sized>(block: *const T) -> bool {
    unsafe { sys::brisk_owns(block as *const u8 as *const sys::c_void) != 0 }
}

/// Checks the calling thread's heap (every free block where it should be,
/// once, and each page's counts); the number of problems found, each
/// described on stderr. 0: consistent. It walks every free list: for tests.
pub fn heap_check() -> usize {
    unsafe { sys::brisk_heap_check() }.max(0) as usize
}

/// Process-wide memory figures, read from counters (cheap).
pub fn memory_info() -> MemoryInfo {
    let mut info = MemoryInfo::new();
    unsafe { sys::brisk_memory_info_get(&mut info) };
    info
}

/// brisk's statistics. The OS-level figures (`mapped`, `committed`,
/// `resident`, ...) are always kept; per-call counts (`mallocs`, `frees`,
/// `remote_frees`, the per-class arrays) only while a diagnostic mode is on
/// (`BRISK_STATS`, `BRISK_LEAKS` or `BRISK_CHECK` in the environment), which
/// [`Stats::counting`] tells. The fields are `sys::brisk_stats`'s, through
/// `Deref`: `stats.mapped`, `stats.remote_frees`.
#[derive(Clone, Copy, Debug)]
pub struct Stats(sys::brisk_stats);

/// One size class of [`Stats::classes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeClass {
    /// Largest block of the class, in bytes; 0 for the last class, which
    /// counts the blocks above 512 KiB.
    pub size: u64,
    pub mallocs: u64,
    pub frees: u64,
}

impl Stats {
    /// Whether every call is counted (a diagnostic mode is on).
    pub fn counting(&self) -> bool {
        self.0.counting != 0
    }

    /// The size classes, smallest first.
    pub fn classes(&self) -> impl Iterator<Item = SizeClass> + '_ {
        (0..sys::BRISK_STATS_CLASSES).map(move |i| SizeClass {
            size: self.0.class_size[i],
            mallocs: self.0.class_mallocs[i],
            frees: self.0.class_frees[i],
        })
    }
}

impl Deref for Stats {
    type Target = sys::brisk_stats;
    fn deref(&self) -> &sys::brisk_stats {
        &self.0
    }
}

/// A snapshot of brisk's statistics.
pub fn stats() -> Stats {
    let mut stats = sys::brisk_stats::new();
    unsafe { sys::brisk_stats_get(&mut stats) };
    Stats(stats)
}

/// Writes the statistics to standard error, as text or JSON (the report of
/// `BRISK_STATS=1`, now).
pub fn print_stats(json: bool) {
    unsafe { sys::brisk_stats_print(2, json as sys::c_int) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALIGNMENTS: [usize; 8] = [1, 8, 16, 32, 64, 4096, 65536, 1 << 20];

    fn pattern(i: usize, salt: usize) -> u8 {
        (i.wrapping_mul(31) ^ salt) as u8
    }

    #[test]
    fn version_is_the_crates() {
        assert_eq!(version(), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn alloc_honours_alignment() {
        for &align in &ALIGNMENTS {
            for size in [1, 15, 16, 17, align, 3 * align + 5] {
                let layout = Layout::from_size_align(size, align).unwrap();
                let block = unsafe { Brisk.alloc(layout) };
                assert!(!block.is_null());
                assert_eq!(block as usize % align, 0, "size {} align {}", size, align);
                assert!(owns(block));
                assert!(unsafe { Brisk.usable_size(block) } >= size);
                unsafe {
                    ptr::write_bytes(block, 0xEE, size);
                    Brisk.dealloc(block, layout);
                }
            }
        }
    }

    #[test]
    fn alloc_zeroed_is_zero_even_over_dirty_memory() {
        for &align in &ALIGNMENTS {
            let layout = Layout::from_size_align(3000, align).unwrap();
            // dirty blocks first, so that the zeroed ones may reuse them
            let dirty: Vec<*mut u8> = (0..8)
                .map(|_| unsafe {
                    let block = Brisk.alloc(layout);
                    ptr::write_bytes(block, 0xAB, layout.size());
                    block
                })
                .collect();
            for block in dirty {
                unsafe { Brisk.dealloc(block, layout) };
            }
            for _ in 0..8 {
                let block = unsafe { Brisk.alloc_zeroed(layout) };
                assert_eq!(block as usize % align, 0);
                let bytes = unsafe { std::slice::from_raw_parts(block, layout.size()) };
                assert!(bytes.iter().all(|&b| b == 0), "align {}", align);
                unsafe { Brisk.dealloc(block, layout) };
            }
        }
    }

    #[test]
    fn realloc_keeps_contents_and_alignment() {
        for &align in &ALIGNMENTS {
            let mut layout = Layout::from_size_align(24, align).unwrap();
            let mut block = unsafe { Brisk.alloc(layout) };
            for i in 0..layout.size() {
                unsafe { *block.add(i) = pattern(i, align) };
            }
            // grow past the block, shrink within it, shrink to a quarter, grow again
            for new_size in [5000, 4000, 1000, 300_000, 7] {
                block = unsafe { Brisk.realloc(block, layout, new_size) };
                assert!(!block.is_null());
                assert_eq!(block as usize % align, 0, "align {} size {}", align, new_size);
                let kept = layout.size().min(new_size);
                for i in 0..kept {
                    assert_eq!(unsafe { *block.add(i) }, pattern(i, align), "byte {}", i);
                }
                layout = Layout::from_size_align(new_size, align).unwrap();
                for i in kept..new_size {
                    unsafe { *block.add(i) = pattern(i, align) };
                }
            }
            unsafe { Brisk.dealloc(block, layout) };
        }
    }

    /// A large aligned block shrunk to a sliver moves to a small block, and
    /// one shrunk a little stays where it is.
    #[test]
    fn realloc_aligned_moves_only_when_it_saves_memory() {
        let layout = Layout::from_size_align(1 << 20, 4096).unwrap();
        let block = unsafe { Brisk.alloc(layout) };
        let kept = unsafe { Brisk.realloc(block, layout, (1 << 20) - 4096) };
        assert_eq!(kept, block);
        let shrunk_layout = Layout::from_size_align((1 << 20) - 4096, 4096).unwrap();
        let moved = unsafe { Brisk.realloc(kept, shrunk_layout, 100) };
        assert_ne!(moved, kept);
        assert!(unsafe { Brisk.usable_size(moved) } < 8192);
        unsafe { Brisk.dealloc(moved, Layout::from_size_align(100, 4096).unwrap()) };
    }

    #[test]
    fn owns_tells_brisks_blocks_from_others() {
        let on_stack = 5u64;
        assert!(!owns(&on_stack));
        // System is the C library's malloc, brisk's with the override feature
        let layout = Layout::new::<u64>();
        let from_system = unsafe { std::alloc::System.alloc(layout) };
        assert_eq!(owns(from_system), cfg!(feature = "override"));
        unsafe { std::alloc::System.dealloc(from_system, layout) };
    }

    #[test]
    fn memory_info_sees_a_large_block_come_and_go() {
        let size = 64 << 20;
        let layout = Layout::from_size_align(size, 16).unwrap();
        let before = memory_info();
        let block = unsafe { Brisk.alloc(layout) };
        unsafe { ptr::write_bytes(block, 1, size) };
        let during = memory_info();
        assert!(during.mapped >= before.mapped + size / 2, "{:?} then {:?}", before, during);
        assert!(during.mapped_peak >= during.mapped);
        assert!(during.committed_peak >= during.committed);
        unsafe { Brisk.dealloc(block, layout) };
        collect();
        let after = memory_info();
        assert!(after.committed + size / 2 <= during.committed, "{:?} then {:?}", during, after);
        assert!(after.mapped_peak >= during.mapped);
    }

    #[test]
    fn stats_classes_ascend() {
        // brisk is not this test program's global allocator: a live block
        // of its own makes sure brisk has memory mapped, whichever test ran first
        let layout = Layout::from_size_align(1000, 8).unwrap();
        let block = unsafe { Brisk.alloc(layout) };
        let stats = stats();
        unsafe { Brisk.dealloc(block, layout) };
        let sizes: Vec<u64> = stats.classes().map(|c| c.size).collect();
        assert_eq!(sizes.len(), sys::BRISK_STATS_CLASSES);
        assert_eq!(sizes[0], 16);
        let (last, classes) = sizes.split_last().unwrap();
        assert!(classes.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", sizes);
        assert_eq!(*classes.last().unwrap(), 512 << 10);
        assert_eq!(*last, 0);
        assert!(stats.mapped > 0);
        // calls are counted in the diagnostic modes only
        let diagnostic = ["BRISK_STATS", "BRISK_LEAKS", "BRISK_CHECK"]
            .iter()
            .any(|name| std::env::var_os(name).map_or(false, |v| v != "0" && v != "off"));
        assert_eq!(stats.counting(), diagnostic);
    }

    #[test]
    fn heap_is_consistent_after_churn() {
        let mut blocks = Vec::new();
        for i in 0..10_000usize {
            let layout = Layout::from_size_align(1 + i % 700, 1 << (i % 7)).unwrap();
            blocks.push((unsafe { Brisk.alloc(layout) }, layout));
            if i % 3 == 0 {
                let (block, layout) = blocks.swap_remove(i % blocks.len());
                unsafe { Brisk.dealloc(block, layout) };
            }
        }
        assert_eq!(heap_check(), 0);
        for (block, layout) in blocks {
            unsafe { Brisk.dealloc(block, layout) };
        }
        assert_eq!(heap_check(), 0);
    }
}
