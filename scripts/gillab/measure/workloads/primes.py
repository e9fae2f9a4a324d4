"""Document 002's CPU-bound benchmark: count primes in [2, upper) by trial division by odd
numbers up to isqrt(n), in one thread, or in chunks on a ThreadPoolExecutor.

Every run checks its count: 148,933 below 2,000,000 (the document's), otherwise the count of
a sieve of Eratosthenes computed in the same process (not timed).
"""
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from _common import main

KNOWN = {2_000_000: 148_933}


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    r = int(math.isqrt(n))
    for f in range(3, r + 1, 2):
        if n % f == 0:
            return False
    return True


def count_primes_range(a, b):
    cnt = 0
    if a <= 2 < b:
        cnt += 1
    start = max(a, 3)
    if start % 2 == 0:
        start += 1
    for n in range(start, b, 2):
        if is_prime(n):
            cnt += 1
    return cnt


def sieve_count(upper):
    flags = bytearray([1]) * upper
    flags[0:2] = b"\x00\x00"
    for i in range(2, math.isqrt(upper - 1) + 1):
        if flags[i]:
            flags[i * i::i] = bytearray(len(range(i * i, upper, i)))
    return sum(flags)


def run(params):
    upper, chunk, mode = int(params["upper"]), int(params["chunk"]), params["mode"]
    workers = int(params.get("workers") or max(2, os.cpu_count() or 4))
    expected = KNOWN.get(upper) or sieve_count(upper)
    t0 = time.perf_counter()
    if mode == "single":
        total = count_primes_range(2, upper)
    elif mode == "threads":
        chunks = [(lo, min(lo + chunk, upper)) for lo in range(2, upper, chunk)]
        total = 0
        with ThreadPoolExecutor(max_workers=workers) as ex:
            for fut in as_completed([ex.submit(count_primes_range, a, b) for a, b in chunks]):
                total += fut.result()
    else:
        raise ValueError("mode must be single or threads")
    seconds = time.perf_counter() - t0
    if total != expected:
        raise AssertionError("counted %d primes below %d, expected %d" % (total, upper, expected))
    return {"seconds": seconds, "primes": total, "workers": workers if mode == "threads" else 1}


if __name__ == "__main__":
    sys.exit(main(run))
