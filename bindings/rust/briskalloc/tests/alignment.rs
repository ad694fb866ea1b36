// SPDX-License-Identifier: MIT
//! Every Layout alignment, from 1 byte to 1 MiB, through the global
//! allocator: alloc, alloc_zeroed, realloc up and down, and blocks freed by
//! another thread than the one that allocated them.
use briskalloc::Brisk;
use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
use std::thread;

#[global_allocator]
static GLOBAL: Brisk = Brisk;

fn alignments() -> impl Iterator<Item = usize> {
    (0..=20).map(|shift| 1usize << shift)
}

fn fill(block: *mut u8, from: usize, to: usize, salt: usize) {
    for i in from..to {
        unsafe { *block.add(i) = (i.wrapping_mul(131) ^ salt) as u8 };
    }
}

fn holds(block: *const u8, len: usize, salt: usize) -> bool {
    (0..len).all(|i| unsafe { *block.add(i) } == (i.wrapping_mul(131) ^ salt) as u8)
}

#[test]
fn every_alignment_up_to_one_mib() {
    for align in alignments() {
        for size in [1, align / 2 + 1, align, 2 * align + 3, 100_003] {
            let layout = Layout::from_size_align(size, align).unwrap();
            let block = unsafe { alloc(layout) };
            assert!(!block.is_null());
            assert_eq!(block as usize % align, 0, "alloc size {} align {}", size, align);
            assert!(briskalloc::owns(block));
            fill(block, 0, size, align);

            let grown = 3 * size + align + 1;
            let block = unsafe { realloc(block, layout, grown) };
            assert_eq!(block as usize % align, 0, "realloc up: size {} align {}", grown, align);
            assert!(
                holds(block, size, align),
                "realloc up lost bytes: size {} align {}",
                size,
                align
            );
            fill(block, size, grown, align);

            let shrunk = (size / 3).max(1);
            let grown_layout = Layout::from_size_align(grown, align).unwrap();
            let block = unsafe { realloc(block, grown_layout, shrunk) };
            assert_eq!(block as usize % align, 0, "realloc down: size {} align {}", shrunk, align);
            assert!(holds(block, shrunk, align));
            unsafe { dealloc(block, Layout::from_size_align(shrunk, align).unwrap()) };

            let zeroed = unsafe { alloc_zeroed(layout) };
            assert_eq!(zeroed as usize % align, 0);
            assert!(
                (0..size).all(|i| unsafe { *zeroed.add(i) } == 0),
                "size {} align {}",
                size,
                align
            );
            unsafe { dealloc(zeroed, layout) };
        }
    }
    assert_eq!(briskalloc::heap_check(), 0);
}

#[repr(C, align(4096))]
struct Page([u8; 4096]);

/// A Vec of page-aligned elements regrows through realloc with 4096-byte
/// alignment: each step must keep the alignment and the elements.
#[test]
fn page_aligned_vec_grows() {
    let mut pages: Vec<Page> = Vec::new();
    for i in 0..300 {
        pages.push(Page([i as u8; 4096]));
        assert_eq!(pages.as_ptr() as usize % 4096, 0, "after {} pushes", i + 1);
        assert!(briskalloc::owns(pages.as_ptr()));
    }
    for (i, page) in pages.iter().enumerate() {
        assert!(page.0.iter().all(|&b| b == i as u8), "page {}", i);
    }
    pages.truncate(3);
    pages.shrink_to_fit();
    assert_eq!(pages.as_ptr() as usize % 4096, 0);
    assert!(pages[2].0.iter().all(|&b| b == 2));
}

/// Aligned blocks (interior pointers into brisk's pages) freed by another
/// thread than their owner.
#[test]
fn aligned_blocks_freed_by_another_thread() {
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, usize, usize)>();
    let owner = thread::spawn(move || {
        for i in 0..2000usize {
            let align = 1usize << (i % 21);
            let size = 1 + (i * 37) % 9000;
            let layout = Layout::from_size_align(size, align).unwrap();
            let block = unsafe { alloc(layout) };
            assert_eq!(block as usize % align, 0);
            fill(block, 0, size, i);
            sender.send((block as usize, size, align)).unwrap();
        }
    });
    let freer = thread::spawn(move || {
        let mut freed = 0;
        for (i, (address, size, align)) in receiver.into_iter().enumerate() {
            let block = address as *mut u8;
            assert!(holds(block, size, i), "block {} of {} bytes, align {}", i, size, align);
            unsafe { dealloc(block, Layout::from_size_align(size, align).unwrap()) };
            freed += 1;
        }
        assert_eq!(briskalloc::heap_check(), 0);
        freed
    });
    owner.join().unwrap();
    assert_eq!(freer.join().unwrap(), 2000);
}
