// SPDX-License-Identifier: MIT
//! Whose malloc the program's C code gets: the C library's by default,
//! brisk's with the `override` feature (Linux).
use std::os::raw::{c_char, c_void};

extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(block: *mut c_void);
    #[cfg_attr(not(feature = "override"), allow(dead_code))]
    fn strdup(s: *const c_char) -> *mut c_char;
}

#[cfg(not(feature = "override"))]
#[test]
fn c_malloc_stays_the_c_librarys() {
    unsafe {
        let block = malloc(100);
        assert!(!block.is_null());
        assert!(!briskalloc::owns(block), "malloc is brisk's without the override feature");
        free(block);
    }
}

#[cfg(feature = "override")]
#[test]
fn c_malloc_is_brisks() {
    use std::alloc::{GlobalAlloc, Layout, System};
    unsafe {
        let block = malloc(100);
        assert!(briskalloc::owns(block), "malloc is not brisk's with the override feature");
        free(block);
        // memory libc allocates for the program
        let copy = strdup(b"brisk\0".as_ptr() as *const c_char);
        assert!(briskalloc::owns(copy));
        free(copy as *mut c_void);
        // Rust's System allocator calls malloc
        let layout = Layout::from_size_align(64, 8).unwrap();
        let block = System.alloc(layout);
        assert!(briskalloc::owns(block));
        System.dealloc(block, layout);
    }
}
