#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of fuzz_alloc (tests/fuzz/corpus/): small programs
that each start the fuzzer in one region of the allocator (small blocks,
cross-thread frees, realloc chains, alignments, huge blocks, failing calls,
thread restarts), in both phase modes. Deterministic: rerunning it rewrites
the same files. The program format is fuzz_alloc.c's: a flags byte, then
5 bytes per operation (opcode, slot, 16-bit size code, parameter).

Usage: tests/fuzz/make_corpus.py [OUTPUT_DIR]
"""
import os
import random
import sys

# Opcodes, as in fuzz_alloc.c.
MALLOC, MALLOC_2, CALLOC, REALLOC, REALLOC_2, ALIGNED_ALLOC, POSIX_MEMALIGN, MEMALIGN = range(8)
FREE, FREE_SIZED, USABLE_SIZE, GIVE, PHASE, HEAP_CHECK, RESTART_B, IMPOSSIBLE = range(8, 16)
SLOTS = 64
VALLOC = 240  # memalign's parameter from here on: valloc (even), pvalloc (odd)
HUGE_BASE = 512 * 1024 - 64


def size_code(n):
    """A size code that decode_size() turns into about n bytes."""
    if n < 128:
        return n
    if n < 1024:
        return 2 << 13 | n
    if n < 8192:
        return 3 << 13 | n
    if n < 8192 * 16:
        return 4 << 13 | n // 16
    if n < 8192 * 64:
        return 5 << 13 | n // 64
    return 7 << 13 | min((n - HUGE_BASE) // 640, 4095)


def alignment_parameter(alignment):
    return alignment.bit_length() - 1  # decode_alignment: 1 << (parameter % 23)


class Program:
    def __init__(self, concurrent):
        self.data = bytearray([1 if concurrent else 0])

    def op(self, code, slot=0, size=0, parameter=0):
        code_value = size_code(size)
        self.data += bytes([code, slot % SLOTS, code_value & 255, code_value >> 8, parameter & 255])
        return self


def a_slot(rng):
    return rng.randrange(0, SLOTS, 2)  # thread A's until given away


def b_slot(rng):
    return rng.randrange(1, SLOTS, 2)


def small_churn(p, rng):
    for _ in range(150):
        slot = rng.randrange(SLOTS)
        if rng.random() < 0.6:
            p.op(MALLOC, slot, rng.choice([0, 1, 8, 16, 17, 24, 100, 128, 500, 1000, 1024, 4000]))
        else:
            p.op(FREE, slot)
    p.op(HEAP_CHECK)


def cross_thread(p, rng):
    for round_ in range(4):
        slots = [a_slot(rng) if round_ % 2 == 0 else b_slot(rng) for _ in range(12)]
        for s in slots:
            p.op(MALLOC, s, rng.choice([16, 48, 200, 3000, 20000, 200000]))
        for s in slots:
            p.op(GIVE, s)
        p.op(PHASE)
        for s in slots:
            p.op(rng.choice([FREE, FREE_SIZED, REALLOC]), s, rng.choice([32, 5000]))
        p.op(HEAP_CHECK)
        p.op(PHASE)


def realloc_chain(p, rng):
    slot = a_slot(rng)
    size = 1
    while size < 3 * 1024 * 1024:
        p.op(REALLOC, slot, size, 1)
        size = size * 3 // 2 + 1
    while size > 8:
        size //= 3
        p.op(REALLOC_2, slot, size, 1)
    p.op(GIVE, slot).op(PHASE).op(REALLOC, slot, 100000, 1).op(REALLOC, slot, 0, 0)


def aligned(p, rng):
    for k in range(23):
        code = [ALIGNED_ALLOC, POSIX_MEMALIGN, MEMALIGN][k % 3]
        p.op(code, rng.randrange(SLOTS), rng.choice([1, 64, 1000, 70000, 600000]), k)
        p.op(USABLE_SIZE, rng.randrange(SLOTS))
    for k, size in enumerate((0, 1, 5000, 700000)):
        p.op(MEMALIGN, rng.randrange(SLOTS), size, VALLOC + k % 2)  # valloc, pvalloc
    p.op(HEAP_CHECK, 0, 0, 4)


def calloc_mix(p, rng):
    for _ in range(40):
        p.op(CALLOC, rng.randrange(SLOTS), rng.choice([0, 7, 64, 4096, 100000, 700000]),
             rng.randrange(8))
        if rng.random() < 0.3:
            p.op(FREE, rng.randrange(SLOTS))


def huge(p, rng):
    for _ in range(10):
        slot = rng.randrange(SLOTS)
        p.op(MALLOC, slot, rng.randrange(600000, 3000000))
        p.op(REALLOC, slot, rng.randrange(600000, 3000000), 1)
        if rng.random() < 0.5:
            p.op(GIVE, slot)
        p.op(PHASE)
    p.op(HEAP_CHECK, 0, 0, 0)  # and brisk_collect


def impossible(p, rng):
    for k in range(12):
        slot = rng.randrange(SLOTS)
        p.op(MALLOC, slot, 300)
        p.op(IMPOSSIBLE, slot, 0, k)


def restarts(p, rng):
    for _ in range(3):
        for _ in range(10):
            p.op(MALLOC, b_slot(rng), rng.choice([24, 700, 9000, 150000, 900000]))
        p.op(RESTART_B)
        for _ in range(5):
            s = b_slot(rng)
            p.op(GIVE, s)
        p.op(PHASE)
        for _ in range(10):
            p.op(FREE, rng.randrange(SLOTS))
        p.op(HEAP_CHECK)


def random_program(p, rng):
    for _ in range(rng.randrange(80, 300)):
        code = rng.randrange(16)
        size = rng.choice([rng.randrange(0, 129), rng.randrange(0, 8193),
                           rng.randrange(8193, 524288), rng.randrange(524288, 3000000)])
        p.op(code, rng.randrange(SLOTS), size, rng.randrange(256))


def parked_pages(p, rng):
    """Fills pages of one size class on thread A (so A parks them as full),
    has B free their blocks (remote frees into parked pages) and A allocate
    again (which takes the parked pages back)."""
    for size in (8192, 20000, 100000, 300000, 500000):
        slots = [2 * k for k in range(12)]
        for s in slots:
            p.op(MALLOC, s, size)
        for s in slots:
            p.op(GIVE, s)
        p.op(PHASE)
        for s in slots[:9]:
            p.op(FREE, s)
        p.op(PHASE)
        for s in slots[:9]:
            p.op(GIVE, s)
        p.op(PHASE)
        for s in slots[:9]:
            p.op(MALLOC, s, size)
        p.op(HEAP_CHECK, 0, 0, 1)
        p.op(PHASE)
        for s in slots:
            p.op(FREE, s)
        p.op(PHASE)


SHAPES = [small_churn, cross_thread, realloc_chain, aligned, calloc_mix, huge, impossible,
          restarts, parked_pages]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261122)
    count = 0
    for shape in SHAPES:
        for concurrent in (False, True):
            p = Program(concurrent)
            shape(p, rng)
            name = "%s-%s" % (shape.__name__.replace("_", "-"), "concurrent" if concurrent else "sequential")
            with open(os.path.join(out, name), "wb") as f:
                f.write(p.data)
            count += 1
    for k in range(16):
        p = Program(k % 2 == 1)
        random_program(p, rng)
        with open(os.path.join(out, "random-%02d" % k), "wb") as f:
            f.write(p.data)
        count += 1
    print("wrote %d programs to %s" % (count, out))


if __name__ == "__main__":
    main()
