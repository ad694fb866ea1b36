// SPDX-License-Identifier: MIT
//! The workloads, shared by one binary per allocator (src/bin/*.rs: a
//! global allocator is chosen per program). Each prints
//! `seconds peak_rss_kib checksum`; the checksum makes the work observable,
//! so the compiler cannot drop it, and must agree across allocators.
use std::collections::HashMap;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

/// strings: a pool of threads each formats records into Strings, joins
/// them, splits them again into a Vec<String>, upper-cases, keeps a window
/// of the last results: many small, short-lived blocks and growing buffers.
fn strings(threads: usize, scale: usize) -> u64 {
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            thread::spawn(move || {
                let mut sum = 0u64;
                let mut window: Vec<Vec<String>> = Vec::new();
                for round in 0..scale * 20_000 {
                    let fields: Vec<String> = (0..40)
                        .map(|i| format!("user{}-{}:{}", t, round, i * 7919 % 1000))
                        .collect();
                    let line = fields.join(",");
                    let upper: Vec<String> = line.split(',').map(|f| f.to_uppercase()).collect();
                    sum += upper.iter().map(|s| s.len() as u64).sum::<u64>();
                    window.push(upper);
                    if window.len() > 256 {
                        window.drain(..128);
                    }
                }
                sum
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).sum()
}

/// hashmap: each thread keeps a HashMap<u64, Box<Value>> of a few tens of
/// thousands of boxed values of mixed sizes, replacing and removing
/// entries: a cache of objects.
struct Value {
    id: u64,
    payload: Vec<u8>,
    name: String,
}

fn hashmap(threads: usize, scale: usize) -> u64 {
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            thread::spawn(move || {
                let mut map: HashMap<u64, Box<Value>> = HashMap::new();
                let mut sum = 0u64;
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                for _ in 0..scale * 500_000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key = x % 40_000;
                    match x % 8 {
                        0 | 1 => {
                            if let Some(v) = map.remove(&key) {
                                sum += v.payload.len() as u64;
                            }
                        }
                        2 => {
                            sum += map.get(&key).map_or(0, |v| v.id);
                        }
                        _ => {
                            let len = [8, 24, 64, 200, 1000, 4000][(x >> 8) as usize % 6];
                            let value = Box::new(Value {
                                id: key,
                                payload: vec![(x & 0xff) as u8; len],
                                name: format!("key-{}", key),
                            });
                            sum += value.name.len() as u64;
                            map.insert(key, value);
                        }
                    }
                }
                sum + map.len() as u64
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).sum()
}

/// channels: producer threads send boxed messages (a header and a Vec
/// body) to consumer threads, which read and drop them: every free is
/// another thread's block, as in a pipeline of request handlers.
struct Message {
    from: usize,
    seq: u64,
    body: Vec<u64>,
    tag: String,
}

fn channels(threads: usize, scale: usize) -> u64 {
    let consumers = (threads / 2).max(1);
    let producers = threads.max(2) - consumers;
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..consumers).map(|_| mpsc::sync_channel::<Box<Message>>(1024)).unzip();
    let readers: Vec<_> = receivers
        .into_iter()
        .map(|receiver| {
            thread::spawn(move || {
                let mut sum = 0u64;
                for message in receiver {
                    sum +=
                        message.seq + message.body.iter().sum::<u64>() + message.tag.len() as u64;
                    sum += message.from as u64;
                }
                sum
            })
        })
        .collect();
    let writers: Vec<_> = (0..producers)
        .map(|p| {
            let senders = senders.clone();
            thread::spawn(move || {
                for seq in 0..(scale * 1_000_000) as u64 {
                    let len = [2, 6, 16, 40, 120][(seq % 5) as usize];
                    let message = Box::new(Message {
                        from: p,
                        seq,
                        body: (0..len).map(|i| i * seq).collect(),
                        tag: format!("req-{}-{}", p, seq),
                    });
                    senders[(seq as usize + p) % senders.len()].send(message).unwrap();
                }
            })
        })
        .collect();
    drop(senders);
    for w in writers {
        w.join().unwrap();
    }
    readers.into_iter().map(|r| r.join().unwrap()).sum()
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `BIN WORKLOAD THREADS SCALE`
pub fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: {} strings|hashmap|channels THREADS SCALE", args[0]);
        std::process::exit(2);
    }
    let threads: usize = args[2].parse().expect("THREADS");
    let scale: usize = args[3].parse().expect("SCALE");
    let start = Instant::now();
    let checksum = match args[1].as_str() {
        "strings" => strings(threads, scale),
        "hashmap" => hashmap(threads, scale),
        "channels" => channels(threads, scale),
        other => {
            eprintln!("unknown workload {}", other);
            std::process::exit(2);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    println!("{:.4} {} {}", seconds, peak_rss_kib(), checksum);
}
