// SPDX-License-Identifier: MIT
//! brisk as the global allocator of a program whose threads allocate and
//! free across each other: producers build strings, vectors, boxed slices
//! and maps, consumers check every byte and drop them (brisk's remote-free
//! path), and the producers exit while their blocks still live elsewhere
//! (their heaps are abandoned and taken up again).
use briskalloc::Brisk;
use std::collections::HashMap;
use std::sync::mpsc;
use std::thread;

#[global_allocator]
static GLOBAL: Brisk = Brisk;

const PRODUCERS: usize = 4;
const CONSUMERS: usize = 3;
const MESSAGES: usize = 1500;

enum Message {
    Text(usize, usize, String),
    Numbers(usize, usize, Vec<u64>),
    Bytes(usize, usize, Box<[u8]>),
    Map(usize, usize, HashMap<u32, Box<String>>),
}

fn text(producer: usize, seq: usize) -> String {
    let mut s = String::new();
    for i in 0..(seq % 97) {
        s.push_str(&format!("{}-{}-{};", producer, seq, i));
    }
    s
}

fn numbers(producer: usize, seq: usize) -> Vec<u64> {
    (0..(seq % 513) as u64).map(|i| i * 1_000_003 + (producer * 7 + seq) as u64).collect()
}

fn bytes(producer: usize, seq: usize) -> Box<[u8]> {
    let len = [1, 24, 100, 1000, 5000, 70_000, 300_000][seq % 7];
    (0..len).map(|i| (i ^ producer ^ seq) as u8).collect()
}

fn map(producer: usize, seq: usize) -> HashMap<u32, Box<String>> {
    (0..(seq % 40) as u32).map(|k| (k, Box::new(format!("{}/{}/{}", producer, seq, k)))).collect()
}

fn make(producer: usize, seq: usize) -> Message {
    match seq % 4 {
        0 => Message::Text(producer, seq, text(producer, seq)),
        1 => Message::Numbers(producer, seq, numbers(producer, seq)),
        2 => Message::Bytes(producer, seq, bytes(producer, seq)),
        _ => Message::Map(producer, seq, map(producer, seq)),
    }
}

/// Checks a message's contents against what its producer wrote; the
/// buffers must be brisk's (the global allocator is).
fn check(message: &Message) {
    match message {
        Message::Text(p, s, value) => {
            assert_eq!(*value, text(*p, *s));
            assert!(value.is_empty() || briskalloc::owns(value.as_ptr()));
        }
        Message::Numbers(p, s, value) => {
            assert_eq!(*value, numbers(*p, *s));
            assert!(value.is_empty() || briskalloc::owns(value.as_ptr()));
        }
        Message::Bytes(p, s, value) => {
            assert_eq!(*value, bytes(*p, *s));
            assert!(briskalloc::owns(value.as_ptr()));
        }
        Message::Map(p, s, value) => {
            assert_eq!(*value, map(*p, *s));
            assert!(value.values().all(|v| briskalloc::owns(&**v as *const String)));
        }
    }
}

#[test]
fn blocks_cross_threads_with_contents_intact() {
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..CONSUMERS).map(|_| mpsc::channel::<Message>()).unzip();
    let consumers: Vec<_> = receivers
        .into_iter()
        .map(|receiver| {
            thread::spawn(move || {
                let mut received = 0;
                // keep a window of messages alive, as a service keeps requests
                let mut window = Vec::new();
                for message in receiver {
                    check(&message);
                    window.push(message);
                    if window.len() > 64 {
                        window.drain(..32);
                    }
                    received += 1;
                }
                window.iter().for_each(check);
                drop(window);
                assert_eq!(briskalloc::heap_check(), 0);
                received
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|producer| {
            let senders = senders.clone();
            thread::spawn(move || {
                for seq in 0..MESSAGES {
                    senders[seq % CONSUMERS].send(make(producer, seq)).unwrap();
                }
                assert_eq!(briskalloc::heap_check(), 0);
            })
        })
        .collect();
    drop(senders);
    for producer in producers {
        producer.join().unwrap();
    }
    let received: usize = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(received, PRODUCERS * MESSAGES);
    assert_eq!(briskalloc::heap_check(), 0);

    if std::env::var_os("BRISKALLOC_TEST_CHECKED").is_some() {
        // checked mode counts every call: the consumers' frees were remote
        let stats = briskalloc::stats();
        assert!(stats.counting());
        assert!(stats.remote_frees > 0, "{:?}", stats);
        assert!(stats.frees > 0 && stats.mallocs >= stats.frees);
        assert!(stats.heaps_created as usize >= PRODUCERS + CONSUMERS);
        let class_mallocs: u64 = stats.classes().map(|c| c.mallocs).sum();
        assert!(class_mallocs > 0 && class_mallocs <= stats.mallocs);
    }
}

/// The same workload in checked mode (BRISK_CHECK=1: canaries past every
/// block, freed memory poisoned, every free checked), in a child process,
/// since brisk reads its options at start-up. A write past a block or a
/// double free in the binding would stop the child with status 86.
#[test]
fn the_same_in_checked_mode() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "blocks_cross_threads_with_contents_intact", "--test-threads=1"])
        .env("BRISK_CHECK", "1")
        .env("BRISKALLOC_TEST_CHECKED", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\n{}\n{}", output.status, stdout, stderr);
    assert!(stdout.contains("1 passed"), "the test did not run:\n{}", stdout);
    // brisk's own word that checked mode was on, and found nothing
    assert!(stderr.contains("checked mode found no errors"), "{}", stderr);
}

#[test]
fn boxes_are_brisks() {
    let boxed = Box::new(7u32);
    assert!(briskalloc::owns(&*boxed as *const u32));
    let on_stack = 7u32;
    assert!(!briskalloc::owns(&on_stack as *const u32));
}

/// A thread-local that owns blocks is dropped as its thread exits, around
/// the time brisk retires the thread's heap; its destructor frees the
/// blocks and allocates anew. The blocks it hands to the main thread
/// outlive their thread.
#[test]
fn thread_local_destructors_allocate_and_free() {
    use std::cell::RefCell;
    use std::sync::mpsc::Sender;

    struct Cache {
        blocks: Vec<Box<[u8]>>,
        report: Option<Sender<Vec<u8>>>,
    }
    impl Drop for Cache {
        fn drop(&mut self) {
            let total: usize = self.blocks.iter().map(|b| b.len()).sum();
            assert!(self.blocks.iter().all(|b| b.iter().all(|&x| x == b.len() as u8)));
            self.blocks.clear();
            // a fresh block, allocated during thread exit, sent to main
            let summary = format!("{}", total).into_bytes();
            if let Some(report) = self.report.take() {
                let _ = report.send(summary);
            }
        }
    }
    thread_local! {
        static CACHE: RefCell<Cache> = RefCell::new(Cache { blocks: Vec::new(), report: None });
    }

    let (sender, receiver) = mpsc::channel();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let sender = sender.clone();
            thread::spawn(move || {
                CACHE.with(|cache| {
                    let mut cache = cache.borrow_mut();
                    cache.report = Some(sender);
                    for i in 0..200 {
                        let len = 1 + (i * 37 + t) % 3000;
                        cache.blocks.push(vec![len as u8; len].into_boxed_slice());
                    }
                });
            })
        })
        .collect();
    drop(sender);
    for thread in threads {
        thread.join().unwrap();
    }
    let summaries: Vec<Vec<u8>> = receiver.iter().collect();
    assert_eq!(summaries.len(), 8);
    for summary in &summaries {
        let total: usize = String::from_utf8(summary.clone()).unwrap().parse().unwrap();
        assert!(total > 200);
        assert!(briskalloc::owns(summary.as_ptr()));
    }
    assert_eq!(briskalloc::heap_check(), 0);
}
