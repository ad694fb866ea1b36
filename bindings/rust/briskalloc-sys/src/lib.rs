// SPDX-License-Identifier: MIT
//! Raw bindings to brisk, a thread-scalable general-purpose memory
//! allocator written in C: its `brisk_*` API (`include/brisk.h`), built from
//! source by this crate's build script and linked statically.
//!
//! Use the [`briskalloc`](https://docs.rs/briskalloc) crate for a global
//! allocator and safe access to the statistics; this crate is the unsafe
//! layer under it. Every function has the contract of its C namesake
//! (`brisk_malloc` ~ `malloc`, ...), described in brisk.h.
//!
//! # Features
//! - `override`: also link brisk's `malloc`, `free`, `calloc`, `realloc`,
//!   ... and C++ `operator new`/`delete`, so that the C and C++ libraries of
//!   the program (and Rust's `System` allocator) use brisk too. Off by
//!   default: with it off, memory from C libraries stays glibc's, and only
//!   what goes through the `brisk_*` functions (or `briskalloc::Brisk`) is
//!   brisk's. Linux only.
//! - `debug`: brisk's internal assertions and invariant checks (slow).
#![no_std]
#![allow(non_camel_case_types)]

#[cfg(not(all(
    target_arch = "x86_64",
    target_env = "gnu",
    any(target_os = "linux", target_os = "windows")
)))]
compile_error!(
    "brisk supports Linux on x86-64 with glibc (x86_64-unknown-linux-gnu) and 64-bit Windows \
     with MinGW-w64 (x86_64-pc-windows-gnu); a port implements src/platform/platform.h for its OS"
);

pub use core::ffi::c_void;
/// C's `int` on brisk's targets (core::ffi::c_int needs Rust 1.64).
pub type c_int = i32;
/// C's `char` on brisk's targets (x86-64: signed).
pub type c_char = i8;

include!(concat!(env!("OUT_DIR"), "/stats.rs"));

/// `struct brisk_memory_info`: process-wide memory figures, in bytes. Fill
/// it with [`brisk_memory_info_get`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct brisk_memory_info {
    /// Set by the caller to `size_of::<brisk_memory_info>()`.
    pub struct_size: usize,
    /// Address space currently mapped from the OS.
    pub mapped: usize,
    /// High-water mark of `mapped`.
    pub mapped_peak: usize,
    /// Mapped minus purged: an upper bound on resident.
    pub committed: usize,
    /// High-water mark of `committed`.
    pub committed_peak: usize,
    /// Bytes in live blocks served directly by the OS.
    pub large_in_use: usize,
}

impl brisk_memory_info {
    /// All zero, with `struct_size` set: ready for [`brisk_memory_info_get`].
    pub const fn new() -> brisk_memory_info {
        brisk_memory_info {
            struct_size: core::mem::size_of::<brisk_memory_info>(),
            mapped: 0,
            mapped_peak: 0,
            committed: 0,
            committed_peak: 0,
            large_in_use: 0,
        }
    }
}

extern "C" {
    /// "major.minor.patch" of the brisk linked in.
    pub fn brisk_version() -> *const c_char;

    pub fn brisk_malloc(size: usize) -> *mut c_void;
    pub fn brisk_calloc(count: usize, size: usize) -> *mut c_void;
    pub fn brisk_realloc(block: *mut c_void, size: usize) -> *mut c_void;
    pub fn brisk_reallocarray(block: *mut c_void, count: usize, size: usize) -> *mut c_void;
    pub fn brisk_free(block: *mut c_void);
    /// free with the size the block was requested with (C23 `free_sized`).
    pub fn brisk_free_sized(block: *mut c_void, size: usize);

    pub fn brisk_aligned_alloc(alignment: usize, size: usize) -> *mut c_void;
    pub fn brisk_posix_memalign(result: *mut *mut c_void, alignment: usize, size: usize) -> c_int;
    pub fn brisk_memalign(alignment: usize, size: usize) -> *mut c_void;
    pub fn brisk_valloc(size: usize) -> *mut c_void;
    pub fn brisk_pvalloc(size: usize) -> *mut c_void;

    /// Bytes usable in the block (>= the size asked for); 0 for NULL.
    pub fn brisk_usable_size(block: *const c_void) -> usize;
    /// Non-zero when block lies in memory brisk manages (any thread's).
    pub fn brisk_owns(block: *const c_void) -> c_int;
    /// Returns unused memory to the OS now.
    pub fn brisk_collect();
    /// Checks the calling thread's heap; the number of problems found (each
    /// described on stderr), 0 when consistent.
    pub fn brisk_heap_check() -> c_int;
    /// Writes the heap profile (the program runs with BRISK_HEAP_PROFILE) to
    /// `path` (a NUL-terminated file name; NULL: the setting's file, numbered);
    /// 0, or -1 with errno set (EINVAL: the heap profile is off).
    pub fn brisk_heap_profile_dump(path: *const c_char) -> c_int;

    /// Fills `*info` (up to `info.struct_size` bytes); 0, or -1 on NULL.
    pub fn brisk_memory_info_get(info: *mut brisk_memory_info) -> c_int;
    /// Fills `*stats` (up to `stats.struct_size` bytes); 0, or -1 on NULL.
    pub fn brisk_stats_get(stats: *mut brisk_stats) -> c_int;
    /// Writes the statistics to the file descriptor, as text or (json != 0) JSON.
    pub fn brisk_stats_print(fd: c_int, json: c_int);
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::ffi::CStr;

    /// brisk_*_get copies min(struct_size, C's size) bytes and writes that
    /// size back: offered more room than it has, C says its own size, which
    /// must be Rust's.
    #[repr(C)]
    struct Roomy<T> {
        value: T,
        slack: [u8; 4096],
    }

    #[test]
    fn stats_struct_has_c_size() {
        let mut roomy = Roomy { value: brisk_stats::new(), slack: [0xA5; 4096] };
        roomy.value.struct_size = core::mem::size_of::<Roomy<brisk_stats>>();
        assert_eq!(unsafe { brisk_stats_get(&mut roomy.value) }, 0);
        assert_eq!(roomy.value.struct_size, core::mem::size_of::<brisk_stats>());
        assert!(roomy.slack.iter().all(|&b| b == 0xA5), "C wrote past Rust's brisk_stats");
    }

    #[test]
    fn memory_info_struct_has_c_size() {
        let mut roomy = Roomy { value: brisk_memory_info::new(), slack: [0xA5; 4096] };
        roomy.value.struct_size = core::mem::size_of::<Roomy<brisk_memory_info>>();
        assert_eq!(unsafe { brisk_memory_info_get(&mut roomy.value) }, 0);
        assert_eq!(roomy.value.struct_size, core::mem::size_of::<brisk_memory_info>());
        assert!(roomy.slack.iter().all(|&b| b == 0xA5));
    }

    #[test]
    fn null_struct_is_refused() {
        unsafe {
            assert_eq!(brisk_stats_get(core::ptr::null_mut()), -1);
            assert_eq!(brisk_memory_info_get(core::ptr::null_mut()), -1);
        }
    }

    /// The fields line up with C's: the class sizes come out as brisk's
    /// classes (16, 32, ... ascending to 512 KiB, then 0 for the blocks
    /// above), the OS figures as possible values.
    #[test]
    fn stats_fields_line_up() {
        let block = unsafe { brisk_malloc(100) };
        assert!(!block.is_null());
        let mut stats = brisk_stats::new();
        assert_eq!(unsafe { brisk_stats_get(&mut stats) }, 0);
        assert_eq!(stats.class_size[0], 16);
        let (last, classes) = stats.class_size.split_last().unwrap();
        assert!(classes.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", classes);
        assert_eq!(classes[classes.len() - 1], 512 << 10);
        assert_eq!(*last, 0);
        assert!(stats.counting <= 1);
        assert!(stats.mapped > 0 && stats.mapped <= stats.mapped_peak);
        assert!(stats.committed <= stats.committed_peak);
        assert!(stats.heaps_created >= 1);
        assert_eq!(BRISK_STATS_FIELD_NAMES[0], "counting");
        unsafe { brisk_free(block) };
    }

    #[test]
    fn version_is_the_crates() {
        let version = unsafe { CStr::from_ptr(brisk_version()) };
        assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn aligned_blocks() {
        for shift in 4..21 {
            let alignment = 1usize << shift;
            let block = unsafe { brisk_aligned_alloc(alignment, 3 * alignment + 1) };
            assert!(!block.is_null());
            assert_eq!(block as usize % alignment, 0, "alignment {}", alignment);
            assert!(unsafe { brisk_usable_size(block) } > 3 * alignment);
            assert_ne!(unsafe { brisk_owns(block) }, 0);
            unsafe { brisk_free_sized(block, 3 * alignment + 1) };
        }
    }
}
