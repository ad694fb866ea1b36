# SPDX-License-Identifier: MIT
"""Deterministic workload for Debian's python3 run with PYTHONMALLOC=malloc,
once on glibc's malloc and once with LD_PRELOAD=libbrisk.so; preload_python.sh
compares the two outputs byte for byte.  With --probe FILE it also writes to
FILE whether brisk is loaded and serving Python's object allocations (kept
out of stdout, which must be identical in both runs). --scale PERCENT runs
that share of the loops (a build whose tests run fewer iterations, as under
an emulator: BRISK_TEST_SCALE)."""
import bz2
import collections
import decimal
import fractions
import hashlib
import io
import json
import lzma
import random
import re
import sqlite3
import sys
import threading
import zlib


SCALE = 100  # percent of the loops, --scale


def n(count):
    return max(1, count * SCALE // 100)


def digest(obj):
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:16]


def section(name, value):
    print(f"{name}: {value}")


def dicts_and_strings(rng):
    d = {}
    for i in range(n(200_000)):
        key = f"k{i:06d}-{rng.randrange(1 << 30):x}"
        d[key] = [i, str(i) * (i % 7), {"sq": i * i}]
    for i in range(0, n(200_000), 3):
        d.pop(next(iter(d)))
    words = " ".join(k.split("-")[1] for k in list(d)[:n(50_000)])
    section("dict", f"{len(d)} {digest(sorted(d)[:1000])} {len(words)}")
    counter = collections.Counter(c for c in words)
    section("counter", digest(sorted(counter.items())))
    s = io.StringIO()
    for i in range(n(100_000)):
        s.write(f"{i},{i * 3 % 17},{'x' * (i % 40)}\n")
    text = s.getvalue()
    section("csv", f"{len(text)} {hashlib.md5(text.encode()).hexdigest()}")
    parts = re.findall(r"(\d+),(\d+),(x{30,})", text)
    section("regex", f"{len(parts)} {digest(parts[-5:])}")


def lists_and_sorting(rng):
    data = [rng.random() for _ in range(n(300_000))]
    data.sort()
    tuples = sorted(((rng.randrange(1000), str(rng.random())) for _ in range(n(200_000))),
                    reverse=True)
    strs = sorted(f"{rng.getrandbits(64):016x}" for _ in range(n(100_000)))
    section("sort", f"{digest(data[::1000])} {digest(tuples[::997])} {digest(strs[::501])}")
    big = bytearray()
    for i in range(n(20_000)):
        big += bytes([i % 251]) * (i % 97)  # grows by realloc
    section("bytearray", f"{len(big)} {hashlib.sha1(big).hexdigest()}")


def json_work(rng):
    doc = {
        f"item{i}": {
            "id": i,
            "tags": [f"t{rng.randrange(100)}" for _ in range(rng.randrange(10))],
            "price": round(rng.uniform(0, 1000), 2),
            "nested": {"a": [1, 2, {"b": "c" * (i % 50)}]},
        }
        for i in range(n(30_000))
    }
    dumped = json.dumps(doc, sort_keys=True, indent=1)
    back = json.loads(dumped)
    section("json", f"{len(dumped)} {hashlib.sha256(dumped.encode()).hexdigest()} {back == doc}")


def numbers(rng):
    decimal.getcontext().prec = 200
    x = decimal.Decimal(2).sqrt() * decimal.Decimal(3).ln()
    f = sum(fractions.Fraction(1, k) for k in range(1, 400))
    big = 1
    for k in range(1, 1400):
        big *= k
    section("numbers", f"{str(x)[:60]} {digest(f)} {len(str(big))} {big % 1000003}")


def compression(rng):
    payload = "".join(f"line {i} {rng.randrange(1000)}\n" for i in range(n(100_000))).encode()
    z = zlib.compress(payload, 9)
    b = bz2.compress(payload)
    x = lzma.compress(payload[:500_000])
    ok = zlib.decompress(z) == payload and bz2.decompress(b) == payload
    ok = ok and lzma.decompress(x) == payload[:500_000]
    section("compress", f"{len(payload)} {len(z)} {len(b)} {ok}")


def threads(rng):
    results = [None] * 6

    def work(idx):
        local = random.Random(idx)
        d = {}
        for i in range(n(60_000)):
            d[local.randrange(100_000)] = [str(i)] * (i % 5)
        results[idx] = (len(d), digest(sorted(d.items())[:200]))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    section("threads", digest(results))


def database(rng):
    con = sqlite3.connect(":memory:")
    con.execute("create table t(a integer primary key, b text, c real)")
    con.executemany("insert into t(b, c) values (?, ?)",
                    ((f"row{rng.randrange(10_000)}", rng.random()) for _ in range(n(50_000))))
    con.execute("create index tb on t(b)")
    rows = con.execute("select b, count(*), round(sum(c), 6) from t group by b "
                       "order by 2 desc, 1 limit 20").fetchall()
    section("sqlite3-module", digest(rows))
    con.close()


def probe(path):
    import ctypes
    lib = ctypes.CDLL(None)
    try:
        version = lib.brisk_version
    except AttributeError:
        with open(path, "w") as f:
            f.write("brisk=absent\n")
        return
    version.restype = ctypes.c_char_p
    owns = lib.brisk_owns
    owns.argtypes = [ctypes.c_void_p]
    owns.restype = ctypes.c_int
    small = "abc" * 5          # a small object: pymalloc's unless PYTHONMALLOC=malloc
    big = bytes(1 << 22)       # a large one
    lst = [small] * 1000
    buf = ctypes.create_string_buffer(100)
    checks = {
        "small": owns(id(small)),
        "big": owns(id(big)),
        "list": owns(id(lst)),
        "ctypes": owns(ctypes.addressof(buf)),
    }
    with open(path, "w") as f:
        f.write(f"brisk={version().decode()} "
                + " ".join(f"{k}={v != 0:d}" for k, v in sorted(checks.items())) + "\n")


def main():
    global SCALE
    args = sys.argv[1:]
    if args[:1] == ["--scale"]:
        SCALE = int(args[1])
        args = args[2:]
    rng = random.Random(20240601)
    dicts_and_strings(rng)
    lists_and_sorting(rng)
    json_work(rng)
    numbers(rng)
    compression(rng)
    threads(rng)
    database(rng)
    if len(args) == 2 and args[0] == "--probe":
        probe(args[1])
    print("done")


if __name__ == "__main__":
    main()
